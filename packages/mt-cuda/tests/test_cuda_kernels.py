"""The CUDA kernels against numpy: partial blocks and tiles, broadcasting, batches, strides.

Most tests shrink the launch configuration (``small_blocks``: 8 threads a block, 4 x 4
matmul tiles) so that several blocks, partial last blocks and partial tiles appear with
shapes the simulator runs in milliseconds. A few run the real configuration once.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.cuda import CudaBackend, launch, mm_practice, sum_practice
from minitorch.tensor import IndexingError, SimpleBackend, Tensor, from_numpy
from minitorch.tensor.testing import assert_close

RNG = np.random.default_rng(3)


def cuda_tensor(shape: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> Tensor:
    return from_numpy(RNG.uniform(low, high, size=shape), backend=CudaBackend)


def transposed(shape: tuple[int, int]) -> Tensor:
    """A non-contiguous (m, n) tensor: the transpose of a contiguous (n, m) one."""
    return cuda_tensor(shape[::-1]).permute(1, 0)


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launch 8-thread blocks and 4 x 4 matmul tiles (kernels' buffers stay full size)."""
    monkeypatch.setattr(launch, "THREADS_PER_BLOCK", 8)
    monkeypatch.setattr(launch, "TILE", 4)


# ---------------------------------------------------------------------------------------
# Launch configuration


@pytest.mark.task3_3
def test_launch_configuration() -> None:
    assert launch.elementwise_launch(1) == (1, 1)
    assert launch.elementwise_launch(launch.THREADS_PER_BLOCK) == (1, launch.THREADS_PER_BLOCK)
    assert launch.elementwise_launch(launch.THREADS_PER_BLOCK + 1) == (2, launch.THREADS_PER_BLOCK)
    assert [launch.reduction_threads(n) for n in (0, 1, 2, 3, 5, 200)] == [1, 1, 2, 4, 8, 256]
    assert launch.reduction_threads(10**6) == launch.THREADS_PER_BLOCK
    assert launch.tiles(1, 3, 2) == ((1, 1, 1), (3, 3))
    t = launch.TILE
    assert launch.tiles(5, 2 * t + 1, t) == ((1, 3, 5), (t, t))
    assert launch.tiles(10**6, 1, 1)[0][2] == launch.MAX_GRID_Z
    assert launch.practice_sum(64) == (2, 32)
    assert launch.practice_sum(65) == (3, 32)


# ---------------------------------------------------------------------------------------
# map and zip (task 3.3)


@pytest.mark.task3_3
@pytest.mark.usefixtures("small_blocks")
def test_map_partial_blocks_aligned_and_strided() -> None:
    a = cuda_tensor((3, 7))  # 21 elements: three blocks of 8, the last one partial
    x = a.to_numpy()
    assert_close(-a, -x)  # stride-aligned fast path
    assert_close(-a.permute(1, 0), -x.T)  # strided path
    assert_close(a.permute(1, 0).contiguous(), x.T)
    assert_close(a.permute(1, 0).contiguous().view(21), x.T.reshape(21))


@pytest.mark.task3_3
def test_map_more_elements_than_a_block() -> None:
    n = launch.THREADS_PER_BLOCK + 44
    a = cuda_tensor((n,), 0.1, 2.0)
    x = a.to_numpy()
    assert_close(a.log(), np.log(x))
    assert_close(a.view(1, n).permute(1, 0).exp(), np.exp(x)[:, None])


@pytest.mark.task3_3
@pytest.mark.usefixtures("small_blocks")
def test_map_into_a_broadcast_output() -> None:
    a = cuda_tensor((1, 5))
    out = from_numpy(np.zeros((3, 4, 5)), backend=CudaBackend)
    CudaBackend.id_map(a, out)
    assert_close(out, np.broadcast_to(a.to_numpy(), (3, 4, 5)))
    t = transposed((4, 5))
    t.zero_()  # writes through a strided view
    assert_close(t, np.zeros((4, 5)))


@pytest.mark.task3_3
@pytest.mark.usefixtures("small_blocks")
def test_zip_broadcast_and_strided() -> None:
    a = cuda_tensor((2, 1, 5))
    b = transposed((3, 5))
    x, y = a.to_numpy(), b.to_numpy()
    assert_close(a + b, x + y)
    assert_close(b * a, y * x)
    assert_close(a < b, (x < y).astype(float))
    c = cuda_tensor((2, 3, 5))
    assert_close(c + c, 2 * c.to_numpy())  # aligned
    assert_close(c.permute(2, 1, 0) * c.permute(2, 1, 0), (c.to_numpy() ** 2).transpose(2, 1, 0))


@pytest.mark.task3_3
def test_zip_more_elements_than_a_block() -> None:
    """The real launch: the threads of the last block past the end write nothing.

    (``small_blocks`` changes the launch in this process only; a grader that runs the
    kernels elsewhere launches them as they are, so this test uses sizes past 256.)
    """
    n = launch.THREADS_PER_BLOCK + 44
    a, b = cuda_tensor((n,)), cuda_tensor((n,))
    x, y = a.to_numpy(), b.to_numpy()
    assert_close(a * b, x * y)  # aligned: one block and a partial one
    c = cuda_tensor((3, 1))
    assert_close(c + a, c.to_numpy() + x)  # broadcast: 3 x 300 elements, four blocks
    assert_close(a.view(1, n).permute(1, 0) - c.view(1, 3), x[:, None] - c.to_numpy().T)


@pytest.mark.task3_3
def test_backend_primitives_on_custom_functions() -> None:
    """A backend lifts any Numba-compilable scalar function, not only the built-in ones."""

    def clamp01(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    def hypot2(x: float, y: float) -> float:
        return x * x + y * y

    ops = CudaBackend.ops
    a = cuda_tensor((2, 3), -2.0, 2.0)
    b = cuda_tensor((3,))
    assert_close(ops.map(clamp01)(a), np.clip(a.to_numpy(), 0.0, 1.0))
    assert_close(ops.zip(hypot2)(a, b), a.to_numpy() ** 2 + b.to_numpy() ** 2)


# ---------------------------------------------------------------------------------------
# reduce (task 3.3)


@pytest.mark.task3_3
@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("n", [1, 5, 8, 9, 37])
def test_reduce_sizes_around_the_block(n: int) -> None:
    """Reduced sizes below, at, and several times above the 8-thread block."""
    a = cuda_tensor((2, n, 3), 0.5, 1.5)
    x = a.to_numpy()
    assert_close(CudaBackend.add_reduce(a, 1), x.sum(1, keepdims=True))
    assert_close(CudaBackend.mul_reduce(a, 1), x.prod(1, keepdims=True))
    assert_close(CudaBackend.max_reduce(a, 1), x.max(1, keepdims=True))
    p = a.permute(1, 2, 0)  # the reduced dimension first, with a stride of 3
    assert_close(CudaBackend.add_reduce(p, 0), x.transpose(1, 2, 0).sum(0, keepdims=True))


@pytest.mark.task3_3
def test_reduce_larger_than_a_full_block() -> None:
    n = 2 * launch.THREADS_PER_BLOCK + 88
    a = cuda_tensor((2, n))
    x = a.to_numpy()
    assert_close(a.sum(1), x.sum(1, keepdims=True), tol=1e-9)
    assert_close(CudaBackend.max_reduce(a.permute(1, 0), 0), x.max(1)[None, :])
    assert_close(a.sum(), np.array([x.sum()]), tol=1e-9)


@pytest.mark.task3_3
def test_reduce_of_an_empty_dimension_is_the_start_value() -> None:
    a = from_numpy(np.zeros((0, 3)), backend=CudaBackend)
    s = from_numpy(np.zeros((0, 3)))
    for name in ("add_reduce", "mul_reduce", "max_reduce"):
        got = getattr(CudaBackend, name)(a, 0)
        expected = getattr(SimpleBackend, name)(s, 0)
        assert got.shape == (1, 3)
        np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())


@pytest.mark.task3_3
def test_reduce_kernel_folds_a_custom_function() -> None:
    def absmax(x: float, y: float) -> float:
        return max(abs(x), abs(y))

    a = cuda_tensor((4, 6))
    got = CudaBackend.ops.reduce(absmax, 0.0)(a, 1)
    assert_close(got, np.abs(a.to_numpy()).max(1, keepdims=True))


# ---------------------------------------------------------------------------------------
# matrix multiply (task 3.4)


def check_matmul(a: Tensor, b: Tensor) -> None:
    expected = a.to_numpy() @ b.to_numpy()
    got = a @ b
    assert got.backend is CudaBackend
    assert_close(got, expected, tol=1e-9)


@pytest.mark.task3_4
def test_matmul_partial_tiles_full_size() -> None:
    """33 x 17 @ 17 x 35 with 16 x 16 tiles: partial tiles in rows, columns and inner."""
    check_matmul(cuda_tensor((33, 17)), cuda_tensor((17, 35)))


@pytest.mark.task3_4
@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((5, 7), (7, 6)),  # partial 4 x 4 tiles everywhere
        ((8, 4), (4, 8)),  # exact tiles
        ((1, 9), (9, 1)),  # row times column
        ((9, 1), (1, 9)),  # outer product
        ((3, 5, 6), (3, 6, 2)),  # batched
        ((2, 1, 5, 6), (3, 6, 7)),  # broadcast batch: (2, 3, 5, 7)
        ((5, 6), (2, 6, 3)),  # a plain matrix against a batch
        ((2, 5, 6), (6, 3)),
    ],
)
def test_matmul_shapes(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> None:
    check_matmul(cuda_tensor(shape_a), cuda_tensor(shape_b))


@pytest.mark.task3_4
@pytest.mark.usefixtures("small_blocks")
def test_matmul_non_contiguous_operands() -> None:
    check_matmul(transposed((5, 6)), transposed((6, 7)))
    a3 = cuda_tensor((2, 6, 5)).permute(0, 2, 1)  # (2, 5, 6), transposed matrices
    b3 = cuda_tensor((6, 2, 3)).permute(1, 0, 2)  # (2, 6, 3), batch not outermost
    check_matmul(a3, b3)
    check_matmul(a3, transposed((6, 3)))


@pytest.mark.task3_4
@pytest.mark.usefixtures("small_blocks")
def test_matmul_more_batches_than_the_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "MAX_GRID_Z", 2)  # the kernel strides over the other 3
    check_matmul(cuda_tensor((5, 3, 4)), cuda_tensor((5, 4, 2)))


@pytest.mark.task3_4
@pytest.mark.usefixtures("small_blocks")
def test_matmul_backward_matches_the_simple_backend() -> None:
    x, y = RNG.normal(size=(2, 5, 6)), RNG.normal(size=(6, 3))
    grads = []
    for backend in (CudaBackend, SimpleBackend):
        a = from_numpy(x, backend=backend, requires_grad=True)
        b = from_numpy(y, backend=backend, requires_grad=True)
        ((a @ b).relu() * 3.0).sum().backward()
        assert a.grad is not None
        assert b.grad is not None
        grads.append((a.grad.to_numpy(), b.grad.to_numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], atol=1e-9)
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=1e-9)


@pytest.mark.task3_4
def test_matmul_mismatched_shapes_raise() -> None:
    with pytest.raises(IndexingError, match=r"\(3, 4\).*\(5, 2\)"):
        cuda_tensor((3, 4)) @ cuda_tensor((5, 2))


# ---------------------------------------------------------------------------------------
# The practice kernels


@pytest.mark.task3_3
@pytest.mark.parametrize("size", [1, 16, 32, 64, 70])
def test_sum_practice(size: int) -> None:
    a = cuda_tensor((size,))
    x = a.to_numpy()
    out = sum_practice(a)
    blocks = -(-size // 32)
    assert out.shape == (blocks,)
    assert out.backend is CudaBackend
    expected = [x[32 * k : 32 * k + 32].sum() for k in range(blocks)]
    assert_close(out, expected, tol=1e-12)


@pytest.mark.task3_3
def test_sum_practice_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="1-D"):
        sum_practice(cuda_tensor((2, 2)))
    with pytest.raises(ValueError, match="CudaBackend"):
        sum_practice(from_numpy(np.ones(4)))


@pytest.mark.task3_4
@pytest.mark.parametrize(("m", "n", "p"), [(1, 1, 1), (2, 2, 2), (8, 8, 8), (5, 7, 3)])
def test_mm_practice(m: int, n: int, p: int) -> None:
    a, b = cuda_tensor((m, n)), cuda_tensor((n, p))
    out = mm_practice(a, b)
    assert out.backend is CudaBackend
    assert_close(out, a.to_numpy() @ b.to_numpy(), tol=1e-12)


@pytest.mark.task3_4
def test_mm_practice_at_the_block_limit() -> None:
    a, b = transposed((32, 32)), cuda_tensor((32, 32))
    assert_close(mm_practice(a, b), a.to_numpy() @ b.to_numpy(), tol=1e-12)


@pytest.mark.task3_4
def test_mm_practice_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at most 32"):
        mm_practice(cuda_tensor((33, 2)), cuda_tensor((2, 2)))
    with pytest.raises(ValueError, match="2-D"):
        mm_practice(cuda_tensor((2, 2, 2)), cuda_tensor((2, 2)))
    with pytest.raises(IndexingError):
        mm_practice(cuda_tensor((2, 3)), cuda_tensor((2, 3)))
    with pytest.raises(ValueError, match="CudaBackend"):
        mm_practice(from_numpy(np.ones((2, 2))), cuda_tensor((2, 2)))
