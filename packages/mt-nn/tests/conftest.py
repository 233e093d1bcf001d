"""Shared fixtures of mt-nn's tests: the backends, direct references, torch if present.

mt-nn's tests run with only mt-nn and its dependencies installed. PyTorch is optional: the
tests that compare with ``torch.nn.functional`` skip without it, while the direct numpy
references below always run. CUDA tensors join the comparisons when mt-cuda (the ``cuda``
extra) is installed and a GPU or Numba's simulator is available.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from minitorch.fast import FastBackend
from minitorch.tensor import SimpleBackend, TensorBackend

HOST_BACKENDS = [SimpleBackend, FastBackend]


def cuda_backend() -> TensorBackend | None:
    """``CudaBackend`` if mt-cuda is installed and can run kernels here, else None."""
    try:
        import minitorch.cuda as mc
    except ImportError:
        return None
    return mc.CudaBackend if mc.is_available() else None


@pytest.fixture(params=HOST_BACKENDS, ids=lambda b: b.name)
def backend(request: pytest.FixtureRequest) -> TensorBackend:
    """Each host backend (each runs its own conv kernels: ``kernels/simple.py``, ``fast.py``)."""
    return request.param


def conv_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, reverse: bool = False
) -> np.ndarray:
    """The course's convolution with numpy, independently of mt-nn's kernels (1-D or 2-D).

    ``out[n, o, y, x] = sum_{c, i, j} in[n, c, y + i, x + j] * w[o, c, i, j]`` with zeros
    past the edge: pad after the input, then add one shifted slice per tap. ``reverse``
    (``y - i, x - j``) pads before it and flips the kernel.
    """
    one_d = x.ndim == 3
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
    batch, _, height, width = x.shape
    out_ch, _, kh, kw = w.shape
    if reverse:
        padded = np.pad(x, ((0, 0), (0, 0), (kh - 1, 0), (kw - 1, 0)))
        w = w[:, :, ::-1, ::-1]
    else:
        padded = np.pad(x, ((0, 0), (0, 0), (0, kh - 1), (0, kw - 1)))
    out = np.zeros((batch, out_ch, height, width))
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i : i + height, j : j + width]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out[:, :, 0, :] if one_d else out


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """Direct numpy references."""
    return SimpleNamespace(conv=conv_reference)


def torch_conv(
    torch: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, reverse: bool
) -> Any:
    """The course's convolution with ``torch.nn.functional``: pad, then a plain conv."""
    F = torch.nn.functional
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    tb = None if b is None else torch.from_numpy(b)
    if x.ndim == 3:
        k = w.shape[-1]
        if reverse:
            return F.conv1d(F.pad(tx, (k - 1, 0)), tw.flip(-1), tb)
        return F.conv1d(F.pad(tx, (0, k - 1)), tw, tb)
    kh, kw = w.shape[-2:]
    if reverse:
        return F.conv2d(F.pad(tx, (kw - 1, 0, kh - 1, 0)), tw.flip(-1, -2), tb)
    return F.conv2d(F.pad(tx, (0, kw - 1, 0, kh - 1)), tw, tb)


@pytest.fixture(scope="session")
def torch_ref() -> SimpleNamespace:
    """PyTorch and the conv equivalent; skips the test when torch is not installed."""
    torch = pytest.importorskip("torch")
    return SimpleNamespace(torch=torch, conv=lambda *a: torch_conv(torch, *a))
