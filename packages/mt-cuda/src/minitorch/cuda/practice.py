"""The course's CUDA warm-ups: a block sum and a one-block shared-memory matrix multiply.

Both take tensors on ``CudaBackend`` and return a new one, so they run (and are tested)
like the real kernels, on a GPU or on the simulator.
"""

from __future__ import annotations

from numba import cuda, types

from minitorch.tensor import Tensor, TensorData, matmul_shape

from . import device, launch
from .cuda_ops import CudaBackend

__all__ = ["mm_practice", "sum_practice"]

_BLOCK = launch.PRACTICE_BLOCK


@cuda.jit
def _sum_practice(out, a, size):  # type: ignore[no-untyped-def]
    # BEGIN SOLUTION task3_3
    cache = cuda.shared.array(_BLOCK, types.float64)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    pos = cuda.threadIdx.x
    cache[pos] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if pos < stride:
            cache[pos] += cache[pos + stride]
        cuda.syncthreads()
        stride //= 2
    if pos == 0:
        out[cuda.blockIdx.x] = cache[0]
    # END SOLUTION


@cuda.jit
def _mm_practice(out, a, b, m, n, p):  # type: ignore[no-untyped-def]
    # BEGIN SOLUTION task3_4
    a_shared = cuda.shared.array((_BLOCK, _BLOCK), types.float64)
    b_shared = cuda.shared.array((_BLOCK, _BLOCK), types.float64)
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    # Each thread copies one element of each matrix into shared memory ...
    if i < m and j < n:
        a_shared[i, j] = a[i * n + j]
    if i < n and j < p:
        b_shared[i, j] = b[i * p + j]
    cuda.syncthreads()
    # ... then computes one output element from shared memory only.
    if i < m and j < p:
        acc = 0.0
        for k in range(n):
            acc += a_shared[i, k] * b_shared[k, j]
        out[i * p + j] = acc
    # END SOLUTION


def _on_cuda(t: Tensor, name: str) -> Tensor:
    if t.backend != CudaBackend:
        raise ValueError(
            f"{name} needs a tensor on CudaBackend, got one on {t.backend.name}; "
            "move it with .to(CudaBackend)"
        )
    return t.contiguous()


def sum_practice(a: Tensor) -> Tensor:
    """Sum each block of 32 consecutive values of a 1-D tensor in shared memory.

    Returns a tensor of ``ceil(size / 32)`` partial sums on ``CudaBackend``: ``out[k] =
    a[32 k] + ... + a[32 k + 31]``, so ``out.sum()`` is the sum of ``a``.

    Raises:
        ValueError: if ``a`` is not 1-D or not on ``CudaBackend``.
    """
    if a.dims != 1:
        raise ValueError(f"sum_practice needs a 1-D tensor, got shape {a.shape}")
    a = _on_cuda(a, "sum_practice")
    blocks, threads = launch.practice_sum(a.numel())
    out = device.device_zeros(blocks)
    _sum_practice[blocks, threads](out, a.tensor_data.storage, a.numel())
    return Tensor(TensorData(out, (blocks,)), backend=CudaBackend)


def mm_practice(a: Tensor, b: Tensor) -> Tensor:
    """Multiply ``(m, n) @ (n, p)`` matrices (every size at most 32) in one block.

    Raises:
        ValueError: if a matrix is not 2-D, larger than 32 x 32, or not on ``CudaBackend``.
        IndexingError: if the inner dimensions differ.
    """
    if a.dims != 2 or b.dims != 2:
        raise ValueError(f"mm_practice needs 2-D matrices, got {a.shape} @ {b.shape}")
    m, p = matmul_shape(a.shape, b.shape)
    n = a.shape[1]
    if max(m, n, p) > _BLOCK:
        raise ValueError(
            f"mm_practice runs one block, so sizes are at most {_BLOCK}; got {a.shape} @ "
            f"{b.shape} (use a @ b for larger matrices)"
        )
    a, b = _on_cuda(a, "mm_practice"), _on_cuda(b, "mm_practice")
    out = device.device_zeros(m * p)
    blocks, threads = launch.practice_mm(m, n, p)
    _mm_practice[blocks, threads](out, a._tensor.storage, b._tensor.storage, m, n, p)
    return Tensor(TensorData(out, (m, p)), backend=CudaBackend)
