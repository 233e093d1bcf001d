"""The matrix multiply's register-blocked micro-kernel (``minitorch.fast.microkernel``).

Products are compared with NumPy's to 1e-12 relative to ``|A| @ |B|``, the size of the sums
each output adds up: any two orders of summation agree that closely (rounding errors grow
with ``k * eps * sum |a_ik b_kj|``), while a relative error per element would fail wherever
the terms cancel, for both libraries alike. Shapes cross every edge of the blocks: the
register block (6 rows by 4, 8 or 16 columns), the 72-row and 256-column tasks and the
256-step slices of k. The course's starter leaves this file out with the tuned kernels.
"""

from __future__ import annotations

import platform
import re
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from minitorch.fast import FastBackend, microkernel
from minitorch.fast.kernels import tuned
from minitorch.fast.microkernel import Shape, micro_kernel, shifted_micro_kernel
from minitorch.tensor import Tensor, TensorData, from_numpy

F = FastBackend
pytestmark = pytest.mark.task3_2

RTOL = 1e-12


def assert_close_to_numpy(got: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """``got`` is ``a @ b`` to ``RTOL`` of the sums of magnitudes (see the module's doc)."""
    expected = a @ b
    assert got.shape == expected.shape
    scale = np.abs(a) @ np.abs(b)
    excess = np.abs(got - expected) - RTOL * scale
    assert np.all(excess <= 1e-300), f"off by {np.max(np.abs(got - expected) / (scale + 1e-300))}"


def layout(x: np.ndarray, how: str) -> Tensor:
    """``x`` as a tensor whose storage is laid out ``how``: the same values, other strides.

    ``contiguous``; ``transposed``: the last two dimensions swapped in memory (a permuted
    view); ``spaced``: every other element of a larger buffer, rows padded (no unit stride).
    """
    if how == "contiguous":
        return from_numpy(np.ascontiguousarray(x), F)
    if how == "transposed":
        order = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
        return from_numpy(np.ascontiguousarray(x.transpose(order)), F).permute(*order)
    buffer = np.full((*x.shape[:-1], 2 * x.shape[-1] + 3), np.nan)
    view = buffer[..., : 2 * x.shape[-1] : 2]
    view[...] = x
    strides = tuple(s // 8 for s in view.strides)
    return Tensor(TensorData(buffer.ravel(), x.shape, strides), backend=F)


def test_the_block_is_this_cpus() -> None:
    lanes = microkernel.vector_lanes(microkernel.target_features())
    assert microkernel.shape() == Shape(6, lanes, 2) == tuned.SHAPE
    assert tuned.SHAPE.cols == 2 * lanes
    assert str(Shape(6, 4, 2)) == "6x8 doubles (AVX/AVX2, 4 lanes)"


@pytest.mark.parametrize(
    ("features", "lanes"),
    [
        ("+avx512f,+avx2,+avx,+fma,+sse2", 8),
        ("-avx512f,+avx2,+avx,+fma,+sse2", 4),
        ("+avx,-avx2,+sse2", 4),
        ("-avx,-avx2,+sse4.2,+sse2", 2),
        ("+neon,+fp-armv8", 2),
        ("", 2),
    ],
)
def test_vector_lanes_follow_the_features(features: str, lanes: int) -> None:
    assert microkernel.vector_lanes(features) == lanes


def test_the_micro_kernel_runs_in_vector_registers() -> None:
    # The point of it: twelve vector accumulators and packed fused multiply-adds, no
    # scalar ones. (Hand-unrolled scalar locals stay scalar: Numba turns SLP off.)
    features = microkernel.target_features()
    if platform.machine() not in ("x86_64", "AMD64") or "+fma" not in features.split(","):
        pytest.skip("the instruction check reads x86-64 FMA assembly")
    rows, lanes, vectors = tuned.SHAPE

    @njit(cache=False)
    def panel_product(a, b, c, depth):  # type: ignore[no-untyped-def]
        micro_kernel(depth, a, 0, b, 0, c, 0, lanes * vectors, False, rows, lanes, vectors)

    depth = 37
    a = np.random.default_rng(0).standard_normal(depth * rows)
    b = np.random.default_rng(1).standard_normal(depth * lanes * vectors)
    c = np.full(rows * lanes * vectors, np.nan)
    panel_product(a, b, c, depth)
    expected = a.reshape(depth, rows).T @ b.reshape(depth, lanes * vectors)
    assert_close_to_numpy(c.reshape(rows, -1), a.reshape(depth, rows).T, b.reshape(depth, -1))
    np.testing.assert_allclose(c.reshape(rows, -1), expected, rtol=1e-13)
    asm = panel_product.inspect_asm(panel_product.signatures[0])
    register = {4: "ymm", 8: "zmm", 2: "xmm"}[lanes]
    packed = re.findall(rf"vfmadd\w+pd\s+.*%({register}\d+)$", asm, flags=re.M)
    assert len(set(packed)) >= rows * vectors, packed
    assert not re.search(r"vfmadd\w+sd", asm), "a scalar multiply-add in the micro-kernel"


@pytest.mark.parametrize("rows", [4, 6])
def test_the_shifted_micro_kernel_reads_b_as_runs_at_its_offsets(rows: int) -> None:
    # Row k of B is the run of ``cols`` values at ``b_start + offsets[k]`` (a direct
    # convolution's taps): offsets that go back and forth, overlap and repeat, against
    # the product of the gathered rows; C's rows ``c_row`` apart, added to when asked.
    _, lanes, vectors = tuned.SHAPE
    cols = lanes * vectors

    @njit(cache=False)
    def product(a, b, b_start, offsets, c, c_start, c_row, depth, accumulate):  # type: ignore[no-untyped-def]
        shifted_micro_kernel(
            depth, a, 3, b, b_start, offsets, c, c_start, c_row, accumulate, rows, lanes, vectors
        )

    rng = np.random.default_rng(rows)
    depth = 11
    a = rng.standard_normal(3 + depth * rows)
    b = rng.standard_normal(200)
    offsets = np.array([0, 37, 1, 1, 90, 12, 5, 60, 2, 37, 100][:depth], np.int64)
    b_start = 7
    gathered = np.stack([b[b_start + o : b_start + o + cols] for o in offsets])
    panel = a[3:].reshape(depth, rows).T
    c = np.full(5 + rows * (cols + 3), np.nan)
    product(a, b, b_start, offsets, c, 5, cols + 3, depth, False)
    got = np.stack([c[5 + i * (cols + 3) : 5 + i * (cols + 3) + cols] for i in range(rows)])
    assert_close_to_numpy(got, panel, gathered)
    assert np.isnan(c[:5]).all()
    assert all(
        np.isnan(c[5 + i * (cols + 3) + cols : 5 + (i + 1) * (cols + 3)]).all() for i in range(rows)
    )
    product(a, b, b_start, offsets, c, 5, cols + 3, depth, True)  # C + A @ B
    again = np.stack([c[5 + i * (cols + 3) : 5 + i * (cols + 3) + cols] for i in range(rows)])
    np.testing.assert_allclose(again, 2 * got, rtol=1e-15)


@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((73, 257), (257, 259)),  # one past every block: rows 72, k 256, columns 256
        ((2, 150, 600), (600, 530)),  # several tasks and slices of k, a broadcast b
        ((1, 5, 300), (3, 300, 9)),  # a batch of one against three, edges of the block
        ((500, 20), (20, 17)),  # the shortest inner dimension the blocked kernel runs
    ],
)
def test_blocked_products_against_numpy(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> None:
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    assert_close_to_numpy((from_numpy(a, F) @ from_numpy(b, F)).to_numpy(), a, b)


DIMS = st.one_of(st.integers(0, 20), st.sampled_from([71, 72, 73, 255, 256, 257]))


@given(
    batch=st.sampled_from([(), (1,), (3,)]),
    broadcast=st.sampled_from(["none", "a", "b"]),
    m=DIMS,
    k=DIMS,
    n=DIMS,
    how_a=st.sampled_from(["contiguous", "transposed", "spaced"]),
    how_b=st.sampled_from(["contiguous", "transposed", "spaced"]),
    seed=st.integers(0, 2**32 - 1),
    blocked=st.booleans(),
)
def test_products_of_any_shape_and_layout_match_numpy(
    blocked: bool,
    batch: tuple[int, ...],
    broadcast: str,
    m: int,
    k: int,
    n: int,
    how_a: str,
    how_b: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    a_batch = (1,) if batch and broadcast == "a" else batch
    b_batch = (1,) if batch and broadcast == "b" else batch
    a = rng.standard_normal((*a_batch, m, k))
    b = rng.standard_normal((*b_batch, k, n))
    with pytest.MonkeyPatch.context() as patch:
        if blocked:  # the blocked kernel for every shape, however small or short
            patch.setattr(tuned, "GRAIN", 0)
            patch.setattr(tuned, "_ROWS_MAX_INNER", -1)
        got = (layout(a, how_a) @ layout(b, how_b)).to_numpy()
    assert_close_to_numpy(got, a, b)


@pytest.mark.parametrize("lanes", [2, 4, 8], ids=["sse2-neon", "avx2", "avx512"])
def test_every_machines_block_computes_the_same(lanes: int) -> None:
    # The blocks other CPUs choose, run here (LLVM splits a vector wider than the machine's):
    # a transposed batch of A against a spaced, broadcast B, into an output with gaps.
    rng = np.random.default_rng(lanes)
    a, b = rng.standard_normal((2, 79, 300)), rng.standard_normal((300, 53))
    a_storage = np.ascontiguousarray(a.transpose(0, 2, 1)).ravel()
    b_storage = np.full((300, 2 * 53), np.nan)
    b_storage[:, ::2] = b
    out = np.full(2 * 79 * 60, np.nan)

    def array(*values: int) -> np.ndarray:
        return np.array(values, np.int64)

    tuned.matmul(
        *(out, array(2, 79, 53), array(79 * 60, 60, 1)),
        *(a_storage, array(2, 79, 300), array(300 * 79, 1, 79)),
        *(b_storage.ravel(), array(1, 300, 53), array(0, 2 * 53, 2)),
        block=Shape(6, lanes, 2),
    )
    assert_close_to_numpy(out.reshape(2, 79, 60)[:, :, :53], a, b)
    assert np.isnan(out.reshape(2, 79, 60)[:, :, 53:]).all(), "wrote outside the output"


def test_nan_and_inf_reach_only_their_rows_and_columns() -> None:
    # Zero padding at the block edges must not turn into NaN (0 * inf) where it is read.
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((75, 260)), rng.standard_normal((260, 259))
    a[74, 3], b[5, 258] = np.inf, np.nan
    got = (from_numpy(a, F) @ from_numpy(b, F)).to_numpy()
    with np.errstate(invalid="ignore"):
        expected = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    assert_close_to_numpy(got[:74, :258], a[:74], b[:, :258])


def test_packing_reuses_this_threads_buffers_and_never_another_threads() -> None:
    # The packed panels go into buffers each thread keeps between products (``_workspace``):
    # a smaller product after a larger one reuses them (stale panels must not leak into it),
    # another thread gets its own, and a product past the limit allocates without keeping.
    rng = np.random.default_rng(11)
    shapes = [((150, 300), (300, 260)), ((80, 100), (100, 90)), ((7, 40), (40, 300))]
    operands = [(rng.standard_normal(sa), rng.standard_normal(sb)) for sa, sb in shapes]

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (from_numpy(a, F) @ from_numpy(b, F)).to_numpy()

    assert_close_to_numpy(product(*operands[0]), *operands[0])
    kept = list(tuned._WORKSPACE.buffers)
    for a, b in operands[1:]:
        assert_close_to_numpy(product(a, b), a, b)
    assert all(x is y for x, y in zip(tuned._WORKSPACE.buffers, kept, strict=True))

    theirs: list[list[np.ndarray]] = []

    def other() -> None:
        assert_close_to_numpy(product(*operands[0]), *operands[0])
        theirs.append(list(tuned._WORKSPACE.buffers))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert len(theirs) == 1, "the other thread's product failed"
    assert not any(np.shares_memory(x, y) for x in theirs[0] for y in kept)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tuned, "_WORKSPACE_KEEP", 1000)
        assert_close_to_numpy(product(*operands[0]), *operands[0])
    assert all(x is y for x, y in zip(tuned._WORKSPACE.buffers, kept, strict=True))


def test_tall_tasks_and_staged_blocks_match_numpy() -> None:
    # Tasks twice as tall (what a packed B past ``_TALL_BYTES`` gets), forced on products
    # whose rows split unevenly between them (150 rows: 25 panels, two tasks of 12 and 13),
    # batched, with more than one slice of k (C summed in the task's own block) and one.
    rng = np.random.default_rng(13)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tuned, "_TALL_BYTES", 0)
        for shape_a, shape_b in [((2, 150, 600), (600, 530)), ((289, 200), (200, 70))]:
            a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
            assert_close_to_numpy((from_numpy(a, F) @ from_numpy(b, F)).to_numpy(), a, b)


@pytest.mark.parametrize("inner", [200, 300], ids=["one-slice", "two-slices"])
def test_an_output_without_unit_column_stride_is_written_from_the_tasks_block(inner: int) -> None:
    # A column-major output (column stride = rows) cannot take the micro-kernel's stores in
    # place: every task sums into its own block and stores it element by element.
    rng = np.random.default_rng(inner)
    a, b = rng.standard_normal((79, inner)), rng.standard_normal((inner, 53))
    out = np.full(80 * 53, np.nan)  # columns of 80 for 79 rows: one gap per column

    def array(*values: int) -> np.ndarray:
        return np.array(values, np.int64)

    tuned.matmul(
        *(out, array(1, 79, 53), array(0, 1, 80)),
        *(a.ravel(), array(1, 79, inner), array(0, inner, 1)),
        *(b.ravel(), array(1, inner, 53), array(0, 53, 1)),
        block=tuned.SHAPE,
    )
    columns = out.reshape(53, 80)
    assert_close_to_numpy(columns[:, :79].T, a, b)
    assert np.isnan(columns[:, 79]).all(), "wrote into the gaps between columns"


def test_large_packing_buffers_start_on_a_huge_page() -> None:
    # Buffers of two huge pages or more are aligned to one and advised to use them; a
    # product whose panels are such buffers (none kept) still equals NumPy's.
    big = tuned._buffer(1 << 20)  # 8 MiB
    assert big.shape == (1 << 20,)
    assert big.dtype == np.float64
    assert big.flags.writeable
    if tuned._MADVISE is not None:
        assert big.ctypes.data % tuned._HUGE == 0
    small = tuned._buffer(1000)
    assert small.shape == (1000,)
    rng = np.random.default_rng(17)
    a, b = rng.standard_normal((800, 700)), rng.standard_normal((700, 760))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tuned, "_WORKSPACE_KEEP", 1000)
        assert_close_to_numpy((from_numpy(a, F) @ from_numpy(b, F)).to_numpy(), a, b)
