"""Convolution kernels per backend: the table, the three kernel modules against each other.

``kernels/simple.py`` (loops), ``kernels/fast.py`` (Numba) and ``kernels/cuda.py`` (CUDA,
when mt-cuda and a GPU or the simulator are there) must compute the same forward pass and
gradients; each is also checked against the numpy reference, central differences and
PyTorch elsewhere.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch.nn as nn
from minitorch.fast import FastBackend, FastOps, PlainFastBackend
from minitorch.nn import conv as conv_module
from minitorch.tensor import SimpleBackend, SimpleOps, TensorBackend, TensorOps, from_numpy

pytestmark = pytest.mark.task4_2

SRC = Path(nn.__file__).resolve().parent


def _cuda():  # type: ignore[no-untyped-def]
    try:
        import minitorch.cuda as mc
    except ImportError:
        return None
    return mc.CudaBackend if mc.is_available() else None


CUDA = _cuda()


def forward_and_grads(fn, backend, *arrays):  # type: ignore[no-untyped-def]
    """Forward, then backward with a fixed upstream gradient; output and every gradient."""
    leaves = [from_numpy(a, backend).requires_grad_(True) for a in arrays]
    out = fn(*leaves)
    assert out.backend is backend
    g = np.linspace(-1.0, 1.0, out.size).reshape(out.shape)
    out.backward(from_numpy(g, backend))
    return [out.to_numpy()] + [t.grad.to_numpy() for t in leaves]


def assert_same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    for got, expected in zip(a, b, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------------------
# The table


def test_one_kernel_module_per_backend_name() -> None:
    assert set(conv_module.CONV_KERNELS) == {"simple", "fast", "cuda"}
    assert conv_module.kernels_for(SimpleBackend).__name__ == "minitorch.nn.kernels.simple"
    for name in ("simple", "fast"):
        module = importlib.import_module(conv_module.CONV_KERNELS[name])
        assert callable(module.conv_forward)
        assert callable(module.conv_weight_grad)


@pytest.mark.skipif(CUDA is None, reason="mt-cuda, or a GPU / the simulator, is missing")
def test_cuda_tensors_get_the_cuda_kernels() -> None:
    assert conv_module.kernels_for(CUDA).__name__ == "minitorch.nn.kernels.cuda"


class SlowOps(TensorOps):
    """A backend of its own (not derived from a known one), on the simple kernels."""

    name = "slow"
    map_kernel = staticmethod(SimpleOps.map_kernel)
    zip_kernel = staticmethod(SimpleOps.zip_kernel)
    reduce_kernel = staticmethod(SimpleOps.reduce_kernel)
    matmul_kernel = staticmethod(SimpleOps.matmul_kernel)


def test_unknown_backend_raises_naming_it() -> None:
    slow = TensorBackend(SlowOps)
    x, w = from_numpy(np.ones((1, 1, 4)), slow), from_numpy(np.ones((1, 1, 2)), slow)
    with pytest.raises(LookupError, match=r"no kernels for backend 'slow' \(ops SlowOps\).*'fast'"):
        nn.conv1d(x, w)


def test_kernels_are_found_by_the_ops_class_not_the_name_a_caller_gave() -> None:
    # The course's spelling, TensorBackend(FastOps), is the fast backend itself.
    assert TensorBackend(FastOps) is FastBackend
    assert conv_module.kernels_for(TensorBackend(FastOps)) is conv_module.kernels_for(FastBackend)
    # A backend named differently by its caller, and a variant of a known ops class, find
    # the kernels of the ops class they run.
    renamed = TensorBackend(SimpleOps, "my-simple")
    assert renamed.name == "my-simple"
    assert conv_module.kernels_for(renamed).__name__ == "minitorch.nn.kernels.simple"
    variant = TensorBackend(type("TracedSimpleOps", (SimpleOps,), {"name": "traced"}))
    assert conv_module.kernels_for(variant).__name__ == "minitorch.nn.kernels.simple"
    assert conv_module.kernels_for(PlainFastBackend) is conv_module.kernels_for(FastBackend)


def test_conv_on_the_course_spelling_of_the_fast_backend() -> None:
    course = TensorBackend(FastOps)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 2, 3))
    got = nn.conv2d(from_numpy(x, course), from_numpy(w, course))
    expected = nn.conv2d(from_numpy(x, SimpleBackend), from_numpy(w, SimpleBackend))
    assert got.backend is FastBackend
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-10, atol=1e-12)


def test_importing_nn_and_convolving_on_the_cpu_does_not_load_cuda() -> None:
    script = (
        "import sys, numpy as np\n"
        "import minitorch.nn as nn\n"
        "from minitorch.fast import FastBackend\n"
        "from minitorch.tensor import from_numpy, SimpleBackend\n"
        "for b in (SimpleBackend, FastBackend):\n"
        "    nn.conv1d(from_numpy(np.ones((1, 1, 4)), b), from_numpy(np.ones((1, 1, 2)), b))\n"
        "loaded = [m for m in ('minitorch.cuda', 'minitorch.nn.kernels.cuda', 'numba.cuda')\n"
        "          if m in sys.modules]\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _sources() -> list[tuple[Path, ast.Module]]:
    """Every module of mt-nn, the kernel modules (``kernels/``) included."""
    return [(p, ast.parse(p.read_text())) for p in sorted(SRC.rglob("*.py"))]


def test_no_module_switches_on_the_device() -> None:
    # The table picks the kernels; no `backend.cuda` test anywhere in mt-nn.
    found = [
        f"{path.name}:{node.lineno}"
        for path, tree in _sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "cuda"
    ]
    assert found == []


def test_other_layers_are_used_through_their_root_public_names_only() -> None:
    bad = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                parts = node.module.split(".")
                if parts[0] != "minitorch" or parts[:2] == ["minitorch", "nn"]:
                    continue
                if len(parts) != 2:
                    bad.append(f"{path.name}: from {node.module} import ...")
                    continue
                if importlib.util.find_spec(node.module) is None:
                    continue  # an optional layer that is not installed (mt-cuda)
                root = importlib.import_module(node.module)
                bad += [
                    f"{path.name}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name not in root.__all__
                ]
            elif isinstance(node, ast.Import):
                bad += [
                    f"{path.name}: import {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("minitorch.") and alias.name.count(".") > 1
                ]
    assert bad == []


# ---------------------------------------------------------------------------------------
# The kernels against each other


@st.composite
def conv_case(draw: st.DrawFn, max_side: int = 6):  # type: ignore[no-untyped-def]
    dims = draw(st.sampled_from([1, 2]))
    batch, in_ch, out_ch = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    space = [draw(st.integers(1, max_side)) for _ in range(dims)]
    kernel = [draw(st.integers(1, s)) for s in space]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((batch, in_ch, *space))
    w = rng.standard_normal((out_ch, in_ch, *kernel))
    b = rng.standard_normal(out_ch)
    return dims, x, w, b, draw(st.booleans())


def _conv(dims: int, reverse: bool):  # type: ignore[no-untyped-def]
    conv = nn.conv1d if dims == 1 else nn.conv2d
    return lambda a, k, c: conv(a, k, c, reverse)


@given(case=conv_case())
def test_simple_and_fast_kernels_agree(case) -> None:
    dims, x, w, b, reverse = case
    fn = _conv(dims, reverse)
    assert_same(
        forward_and_grads(fn, SimpleBackend, x, w, b), forward_and_grads(fn, FastBackend, x, w, b)
    )


@pytest.mark.skipif(CUDA is None, reason="mt-cuda, or a GPU / the simulator, is missing")
@settings(max_examples=4, deadline=None)
@given(case=conv_case(max_side=3))
def test_cuda_kernels_agree_with_simple(case) -> None:
    dims, x, w, b, reverse = case
    fn = _conv(dims, reverse)
    assert_same(forward_and_grads(fn, CUDA, x, w, b), forward_and_grads(fn, SimpleBackend, x, w, b))


@pytest.mark.parametrize("module", ["simple", "fast"])
def test_kernel_modules_read_a_strided_weight(module, ref) -> None:
    # The storage interface directly: the weight arrives as a permuted view with strides.
    kernels = importlib.import_module(conv_module.CONV_KERNELS[module])
    rng = np.random.default_rng(7)
    x, w_t, b = (
        rng.standard_normal((2, 3, 4, 5)),
        rng.standard_normal((3, 2, 2, 3)),  # stored (in, out, kh, kw)
        rng.standard_normal(2),
    )
    w = w_t.transpose(1, 0, 2, 3)  # the (out, in, kh, kw) view the kernel must read
    strides = tuple(s // 8 for s in w.strides)
    out = np.empty(2 * 2 * 4 * 5)
    sizes = (2, 3, 4, 5, 2, 2, 3)
    kernels.conv_forward(out, x.reshape(-1), w_t.reshape(-1), strides, b, sizes, False)
    np.testing.assert_allclose(out.reshape(2, 2, 4, 5), ref.conv(x, w, b), atol=1e-12)
    g = rng.standard_normal((2, 2, 4, 5))
    gw = np.empty(2 * 3 * 2 * 3)
    kernels.conv_weight_grad(gw, g.reshape(-1), x.reshape(-1), sizes, True)
    # grad_w[o, c, i, j] = sum g[b, o, y, x] * in[b, c, y - i, x - j]
    expected = np.zeros((2, 3, 2, 3))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 0), (2, 0)))
    for i in range(2):
        for j in range(3):
            window = padded[:, :, 1 - i : 1 - i + 4, 2 - j : 2 - j + 5]
            expected[:, :, i, j] = np.einsum("bohw,bchw->oc", g, window)
    np.testing.assert_allclose(gw.reshape(2, 3, 2, 3), expected, atol=1e-12)
