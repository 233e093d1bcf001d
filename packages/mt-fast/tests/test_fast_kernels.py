"""Kernel-level tests of the fast backend at sizes that run the parallel code paths."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch.tensor as mt
from minitorch.fast import FastBackend, PlainFastBackend, runtime
from minitorch.tensor import IndexingError, Tensor, TensorBackend, from_numpy

F = FastBackend
rng = np.random.default_rng(1234)


def fast(array: np.ndarray, backend: TensorBackend = F) -> Tensor:
    return from_numpy(np.ascontiguousarray(array), backend)


def big(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


BOTH = pytest.mark.parametrize("be", [FastBackend, PlainFastBackend], ids=["tuned", "plain"])
"""Run a test on the tuned kernels (``FastBackend``) and the course's plain ones."""


def test_work_sizes_below_reach_the_parallel_paths() -> None:
    # The sizes in this file are chosen above the single-thread threshold.
    assert runtime.GRAIN < 300 * 400


@BOTH
@pytest.mark.task3_1
@pytest.mark.parametrize(
    ("name", "ref"),
    [("neg_map", np.negative), ("exp_map", np.exp), ("relu_map", lambda x: np.maximum(x, 0))],
)
def test_map_contiguous_and_permuted(name: str, ref: object, be: TensorBackend) -> None:
    x = big(300, 400)
    op = getattr(be, name)
    np.testing.assert_allclose(op(fast(x, be)).to_numpy(), ref(x))  # type: ignore[operator]
    permuted = fast(x.T, be).permute(1, 0)  # same values, transposed storage
    assert not permuted.is_contiguous()
    np.testing.assert_allclose(op(permuted).to_numpy(), ref(x))  # type: ignore[operator]


@pytest.mark.task3_1
def test_map_into_broadcast_output() -> None:
    x = big(1, 500)
    out = F.id_map(fast(x), fast(np.zeros((300, 500))))
    np.testing.assert_array_equal(out.to_numpy(), np.broadcast_to(x, (300, 500)))


@BOTH
@pytest.mark.task3_1
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((300, 400), (300, 400)),
        ((300, 400), (400,)),
        ((300, 1), (1, 400)),
        ((2, 150, 400), (150, 1)),
    ],
)
def test_zip_broadcast(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], be: TensorBackend
) -> None:
    a, b = big(*shape_a), big(*shape_b)
    np.testing.assert_allclose(be.add_zip(fast(a, be), fast(b, be)).to_numpy(), a + b)
    np.testing.assert_allclose(be.mul_zip(fast(a, be), fast(b, be)).to_numpy(), a * b)


@pytest.mark.task3_1
def test_zip_permuted_inputs() -> None:
    a, b = big(400, 300), big(300, 400)
    out = F.mul_zip(fast(a).permute(1, 0), fast(b))
    np.testing.assert_allclose(out.to_numpy(), a.T * b)


@BOTH
@pytest.mark.task3_1
@pytest.mark.parametrize("shape", [(700, 300), (3, 200, 1100), (40000, 1), (1, 40000)])
def test_reduce_every_dim(shape: tuple[int, ...], be: TensorBackend) -> None:
    x = big(*shape)
    for dim in range(len(shape)):
        got = be.add_reduce(fast(x, be), dim).to_numpy()
        np.testing.assert_allclose(got, x.sum(axis=dim, keepdims=True), rtol=1e-9, atol=1e-9)
        got = be.max_reduce(fast(x, be), dim).to_numpy()
        np.testing.assert_array_equal(got, x.max(axis=dim, keepdims=True))


@pytest.mark.task3_1
def test_reduce_permuted_input() -> None:
    x = big(600, 500)
    t = fast(x.T).permute(1, 0)
    for dim in (0, 1):
        np.testing.assert_allclose(
            F.add_reduce(t, dim).to_numpy(), x.sum(axis=dim, keepdims=True), rtol=1e-9
        )


@pytest.mark.task3_1
def test_parallel_reduction_is_deterministic() -> None:
    """The same reduction, many times on many threads, gives bit-identical results."""
    x = fast(big(512, 3000))
    for dim in (0, 1):
        first = F.add_reduce(x, dim).to_numpy().copy()
        for _ in range(20):
            np.testing.assert_array_equal(F.add_reduce(x, dim).to_numpy(), first)


@BOTH
@pytest.mark.task3_2
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((130, 600), (600, 270)),  # crosses every tile edge (64, 128, 512), not a multiple of 4
        ((1, 300), (300, 1)),  # 1xN @ Nx1
        ((300, 1), (1, 300)),  # Nx1 @ 1xN
        ((3, 70, 90), (3, 90, 80)),  # batched
        ((4, 1, 33, 40), (5, 40, 20)),  # broadcast batch dimensions
        ((2, 65, 129), (129, 257)),  # batch against a plain matrix
    ],
)
def test_matmul_against_numpy(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], be: TensorBackend
) -> None:
    a, b = big(*shape_a), big(*shape_b)
    np.testing.assert_allclose((fast(a, be) @ fast(b, be)).to_numpy(), a @ b, rtol=1e-9, atol=1e-9)


@pytest.mark.task3_2
def test_matmul_transposed_views_are_not_copied() -> None:
    a, b = big(150, 130), big(270, 150)
    ta, tb = fast(a).permute(1, 0), fast(b).permute(1, 0)
    np.testing.assert_allclose((ta @ tb).to_numpy(), a.T @ b.T, rtol=1e-9, atol=1e-9)


@pytest.mark.task3_2
@pytest.mark.parametrize("transpose", ["a", "b", "both"])
def test_matmul_packed_operand_broadcast_over_a_batch(transpose: str) -> None:
    # A transposed operand is packed; packed or not, a batch of 1 must broadcast.
    a, b = big(3, 67, 90), big(90, 131)
    ta = fast(a.transpose(0, 2, 1)).permute(0, 2, 1) if transpose != "b" else fast(a)
    tb = fast(b.T).permute(1, 0) if transpose != "a" else fast(b)
    np.testing.assert_allclose((ta @ tb).to_numpy(), a @ b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        (tb.permute(1, 0) @ ta.permute(0, 2, 1)).to_numpy(),
        b.T @ a.transpose(0, 2, 1),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.task3_2
def test_matmul_empty_inner_dimension_gives_zeros() -> None:
    out = fast(np.ones((70, 0))) @ fast(np.ones((0, 140)))
    np.testing.assert_array_equal(out.to_numpy(), np.zeros((70, 140)))


@pytest.mark.task3_2
def test_matmul_propagates_nan_and_inf_like_numpy() -> None:
    # The kernel reorders sums for speed but must not assume finite inputs.
    a, b = big(70, 90), big(90, 140)
    a[3, 5] = np.nan
    a[10, 7] = np.inf
    b[7, :] = 0.0  # inf * 0 is NaN
    b[2, 11] = -np.inf
    got = (fast(a) @ fast(b)).to_numpy()
    with np.errstate(invalid="ignore"):
        expected = a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-9)


@pytest.mark.task3_2
def test_matmul_is_deterministic() -> None:
    a, b = fast(big(300, 700)), fast(big(700, 200))
    first = (a @ b).to_numpy().copy()
    for _ in range(10):
        np.testing.assert_array_equal((a @ b).to_numpy(), first)


@pytest.mark.task3_2
def test_matmul_backward_against_formula() -> None:
    a, b, g = big(70, 90), big(90, 300), big(70, 300)
    ta, tb = fast(a).requires_grad_(), fast(b).requires_grad_()
    (ta @ tb).backward(fast(g))
    assert ta.grad is not None
    assert tb.grad is not None
    np.testing.assert_allclose(ta.grad.to_numpy(), g @ b.T, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(tb.grad.to_numpy(), a.T @ g, rtol=1e-9, atol=1e-9)


@pytest.mark.task3_2
def test_matmul_backward_skips_a_constant_input() -> None:
    # A layer's data needs no gradient: MatMul.backward returns None for it, and the
    # weight's gradient is still a.T @ g.
    a, b, g = big(40, 12), big(12, 30), big(40, 30)
    ta, tb = fast(a), fast(b).requires_grad_()
    out = ta @ tb
    history = out.history
    assert history is not None
    assert history.last_fn is not None
    assert history.ctx is not None
    grads = history.last_fn.derivatives(history.ctx, fast(g))
    assert grads[0] is None
    out.backward(fast(g))
    assert ta.grad is None
    assert tb.grad is not None
    np.testing.assert_allclose(tb.grad.to_numpy(), a.T @ g, rtol=1e-9, atol=1e-9)


@BOTH
@pytest.mark.task3_2
@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(400, 12, 300), (20, 3, 7), (300, 8, 2), (50, 16, 3)],
    ids=["parallel", "serial", "two-columns", "k16"],
)
@pytest.mark.parametrize("layout", ["plain", "a-transposed", "b-transposed", "both"])
def test_matmul_short_inner_dimension(
    m: int, k: int, n: int, layout: str, be: TensorBackend
) -> None:
    # Inner dimensions up to 16 take the tuned kernels' unpacked path (_matmul_rows), with
    # unit-stride rows of b or strided dot products, on one thread or in parallel.
    a, b = big(m, k), big(k, n)
    ta = fast(a.T, be).permute(1, 0) if layout in ("a-transposed", "both") else fast(a, be)
    tb = fast(b.T, be).permute(1, 0) if layout in ("b-transposed", "both") else fast(b, be)
    np.testing.assert_allclose((ta @ tb).to_numpy(), a @ b, rtol=1e-9, atol=1e-9)


@BOTH
@pytest.mark.task3_2
@pytest.mark.parametrize("b_batch", [1, 3], ids=["b-broadcast", "b-batched"])
def test_matmul_short_inner_batched_transposed_b(b_batch: int, be: TensorBackend) -> None:
    # A transposed b is packed to unit-stride rows once per batch (or once, broadcast).
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((3, 9, 5)), rng.standard_normal((b_batch, 5, 6))
    tb = fast(np.ascontiguousarray(b.transpose(0, 2, 1)), be).permute(0, 2, 1)
    np.testing.assert_allclose((fast(a, be) @ tb).to_numpy(), a @ b, rtol=1e-9, atol=1e-9)


@pytest.mark.task3_2
def test_matmul_mismatch_is_an_indexing_error() -> None:
    with pytest.raises(IndexingError, match=r"\(3, 4\) @ \(5, 2\)"):
        fast(big(3, 4)) @ fast(big(5, 2))


@pytest.mark.task3_1
def test_backend_found_by_name() -> None:
    assert mt.backend("fast") is FastBackend
