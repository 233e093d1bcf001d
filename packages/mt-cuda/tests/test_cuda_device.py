"""Device residency: data stays on the GPU, moves only when asked, and backends do not mix.

Transfers are counted at mt-cuda's own copy functions (``device._to_device`` and
``device._to_host``, the only ones it calls) and at Numba's copy functions below them, so
a copy that bypassed ours (e.g. a host array handed to a kernel) would be counted too. On
the simulator "device" memory is host memory, so the tests count calls, not bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numba import cuda

from minitorch.cuda import CudaBackend, CudaOps, device
from minitorch.tensor import (
    SimpleBackend,
    Tensor,
    TensorData,
    available_backends,
    backend,
    from_numpy,
    tensor,
)
from minitorch.tensor.testing import assert_close

pytestmark = pytest.mark.task3_3


@pytest.fixture
def transfers(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count host/device copies: ``to_device``/``to_host`` (ours) and ``numba`` (any)."""
    counts: Counter[str] = Counter()

    def counting(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(device, "_to_device", counting("to_device", device._to_device))
    monkeypatch.setattr(device, "_to_host", counting("to_host", device._to_host))
    if device.simulator_enabled():
        from numba.cuda.simulator import kernel as sim_kernel
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        class CountingInOut(sim_kernel.InOut):  # type: ignore[misc]
            """A host array handed to a kernel launch (copied in and out on a GPU)."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                counts["numba"] += 1
                super().__init__(*args, **kwargs)

        monkeypatch.setattr(cuda, "to_device", counting("numba", cuda.to_device))
        monkeypatch.setattr(
            FakeCUDAArray, "copy_to_host", counting("numba", FakeCUDAArray.copy_to_host)
        )
        monkeypatch.setattr(sim_kernel, "InOut", CountingInOut)
    else:  # a real GPU: every copy goes through the driver's memcpy wrappers
        from numba.cuda.cudadrv import driver

        for name in ("host_to_device", "device_to_host"):
            monkeypatch.setattr(driver, name, counting("numba", getattr(driver, name)))
    return counts


def cuda_leaf(shape: tuple[int, ...], seed: int) -> Tensor:
    values = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    return from_numpy(values, backend=CudaBackend, requires_grad=True)


def test_forward_and_backward_copy_nothing_until_read(transfers: Counter[str]) -> None:
    x, w, bias = cuda_leaf((4, 3), 0), cuda_leaf((3, 5), 1), cuda_leaf((5,), 2)
    target = cuda_leaf((4, 5), 3).detach()
    assert transfers["to_device"] == 4  # the inputs, created from host values
    transfers.clear()

    # A small network and loss: matmul, broadcasting, constants, maps, zips, reductions,
    # views and copies, comparisons; then the backward pass through all of it.
    h = (x @ w + bias).relu()
    y = (h * 2.0 - target).sigmoid()
    loss = ((y - 0.5) * (y - 0.5)).mean()
    loss = loss + (h.sum(1) + 1.0).log().sum() / 10.0 + (1.0 / (h + 1.0)).mean(0).sum()
    loss = loss + x.permute(1, 0).contiguous().view(12).exp().sum() * 0.01 + (h + 1.0).sqrt().sum()
    mask = (h > 0.1) * (target < 0.5) + (h == 0.0)
    loss = loss + (mask * h).sum() + mask.all()
    loss.backward()
    assert x.grad is not None
    assert w.grad is not None
    assert bias.grad is not None
    assert transfers == Counter(), f"copies during forward and backward: {dict(transfers)}"

    grad_x = x.grad.to_numpy()  # reading a result is the first transfer
    assert transfers["to_host"] == 1
    assert transfers["to_device"] == 0
    value = loss.item()  # one element, read through the device array's own indexing

    # And the values are right: the same computation on the simple backend.
    # Leaves of their own: a copy of a tensor that requires grad is a node of its graph.
    sx, sw, sb = (t.detach().to(SimpleBackend).requires_grad_() for t in (x, w, bias))
    st = target.to(SimpleBackend)
    sh = (sx @ sw + sb).relu()
    sy = (sh * 2.0 - st).sigmoid()
    ref = ((sy - 0.5) * (sy - 0.5)).mean()
    ref = ref + (sh.sum(1) + 1.0).log().sum() / 10.0 + (1.0 / (sh + 1.0)).mean(0).sum()
    ref = ref + sx.permute(1, 0).contiguous().view(12).exp().sum() * 0.01 + (sh + 1.0).sqrt().sum()
    smask = (sh > 0.1) * (st < 0.5) + (sh == 0.0)
    ref = ref + (smask * sh).sum() + smask.all()
    ref.backward()
    assert value == pytest.approx(ref.item(), abs=1e-9)
    assert sx.grad is not None
    np.testing.assert_allclose(grad_x, sx.grad.to_numpy(), atol=1e-9)


def test_transfers_happen_only_where_asked(transfers: Counter[str]) -> None:
    t = tensor([[1.0, 2.0], [3.0, 4.0]], backend=CudaBackend)
    assert transfers["to_device"] == 1
    c = t * 2.5 + 1.0  # scalar constants are written on the device, not copied
    assert transfers["to_device"] == 1
    repr(c)
    assert transfers["to_host"] == 1
    host = c.to(SimpleBackend)
    assert transfers["to_host"] == 2
    assert_close(host, [[3.5, 6.0], [8.5, 11.0]])
    back = host.to(CudaBackend)
    assert transfers["to_device"] == 2
    assert back.backend is CudaBackend
    assert c.to(CudaBackend) is c  # already there: no copy
    assert transfers["to_device"] == 2
    assert transfers["to_host"] == 2


def test_storage_is_device_memory() -> None:
    t = tensor([1.0, 2.0, 3.0], backend=CudaBackend)
    assert CudaOps.is_storage(t._tensor.storage)
    assert not isinstance(t._tensor.storage, np.ndarray)
    assert not CudaOps.is_storage(np.zeros(3))
    assert CudaOps.is_storage(CudaOps.storage_zeros(4))
    np.testing.assert_array_equal(CudaOps.storage_to_numpy(CudaOps.storage_zeros(4)), 0.0)
    np.testing.assert_array_equal(
        CudaOps.storage_to_numpy(CudaOps.storage_from_numpy(np.array([7.0]))), [7.0]
    )
    assert len(CudaOps.storage_zeros(0)) == 0
    assert CudaOps.is_storage(CudaOps.storage_empty(4))
    assert len(CudaOps.storage_empty(4)) == 4
    assert len(CudaOps.storage_empty(0)) == 0
    # Host storage handed to the CUDA backend is copied to the device (like torch's .to).
    moved = Tensor(TensorData(np.array([4.0, 5.0, 6.0]), (3,)), backend=CudaBackend)
    assert CudaOps.is_storage(moved.tensor_data.storage)
    assert moved.to_numpy().tolist() == [4.0, 5.0, 6.0]
    # Element access works on device storage (each one a one-element copy).
    assert t[1] == 2.0
    t[1] = 5.0
    assert t.to_numpy().tolist() == [1.0, 5.0, 3.0]


def test_gpu_and_host_tensors_do_not_mix() -> None:
    a = tensor([[1.0, 2.0], [3.0, 4.0]], backend=CudaBackend, requires_grad=True)
    b = tensor([[1.0, 0.0], [0.0, 1.0]])
    for op in (
        lambda: a + b,
        lambda: b * a,
        lambda: a @ b,
        lambda: b @ a,
        lambda: a < b,
        lambda: CudaBackend.add_zip(a, b.to(CudaBackend)) + b,
    ):
        with pytest.raises(ValueError, match=r"different devices.*cuda \(GPU memory\)"):
            op()
    out = (a @ b.to(CudaBackend)).sum()
    out.backward()
    assert a.grad is not None
    assert a.grad.backend is CudaBackend
    assert_close(a.grad, [[1.0, 1.0], [1.0, 1.0]])


def test_round_trip_through_the_simple_backend() -> None:
    x = np.arange(12.0).reshape(3, 4)
    c = from_numpy(x, backend=CudaBackend).permute(1, 0)  # a strided view moves too
    s = c.to(SimpleBackend)
    assert s.backend is SimpleBackend
    assert s.shape == (4, 3)
    np.testing.assert_array_equal(s.to_numpy(), x.T)
    back = s.to(CudaBackend)
    np.testing.assert_array_equal(back.to_numpy(), x.T)
    s[0, 0] = -1.0  # copies, not views of each other
    assert back[0, 0] == 0.0


def test_round_trip_through_the_fast_backend() -> None:
    fast = pytest.importorskip("minitorch.fast", reason="mt-fast is not installed")
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    c = from_numpy(x, backend=CudaBackend)
    f = c.to(fast.FastBackend)
    assert f.backend is fast.FastBackend
    np.testing.assert_array_equal((f * 2.0).to(CudaBackend).to_numpy(), 2.0 * x)


def test_registered_as_the_cuda_backend() -> None:
    assert "cuda" in available_backends()
    assert backend("cuda") is CudaBackend
    assert CudaBackend.cuda


NO_GPU_SCRIPT = textwrap.dedent(
    """
    import minitorch.cuda as mc
    from minitorch.tensor import backend, tensor, zeros

    assert mc.is_available() is False
    assert backend("cuda") is mc.CudaBackend
    attempts = {
        "tensor": lambda: tensor([1.0, 2.0], backend=mc.CudaBackend),
        "zeros": lambda: zeros((2, 2), backend=mc.CudaBackend),
        "to": lambda: tensor([1.0, 2.0]).to(mc.CudaBackend),
        "require_device": mc.require_device,
        "to_device": lambda: mc.to_device([1.0, 2.0]),
        "device_zeros": lambda: mc.device_zeros(3),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
        except RuntimeError as e:
            message = str(e)
            assert "no CUDA GPU was found" in message, message
            assert "NUMBA_ENABLE_CUDASIM=1" in message, message
        else:
            raise AssertionError(f"{name} worked without a GPU")
    print("ok")
    """
)


def test_without_a_gpu_import_works_and_use_fails_clearly() -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run(
        [sys.executable, "-c", NO_GPU_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"
