"""The tuned kernels (``minitorch.fast.kernels.tuned``, ``vecmath``): what only the solution has.

The course's starter of mt-fast leaves the tuned kernels out (``solution-only`` in
course.toml): its ``FastBackend`` runs the plain kernels the student writes. The shared
backend suite and the kernel tests of ``test_fast_kernels.py`` run on both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch.fast import FastBackend, vecmath
from minitorch.fast._cache import DependencyAwareLocator
from minitorch.fast.kernels import tuned
from minitorch.operators import scalar as ops
from minitorch.tensor import Tensor, TensorData, from_numpy

F = FastBackend
rng = np.random.default_rng(1234)


def test_fast_backend_runs_the_tuned_kernels() -> None:
    assert F.ops.kernel_module() is tuned  # type: ignore[attr-defined]


@pytest.mark.task3_1
def test_every_kernel_is_cached_through_the_dependency_aware_locator() -> None:
    F.neg_map(
        from_numpy(rng.standard_normal((2, 2)), F)
    )  # make sure at least one closure kernel exists
    assert "matmul" in tuned.KERNELS
    assert "map[neg]" in tuned.KERNELS
    for name, kernel in tuned.KERNELS.items():
        cache = kernel._cache
        assert type(cache).__name__ == "FunctionCache", name
        assert isinstance(cache._impl.locator, DependencyAwareLocator), name


SPECIAL = [0.0, -0.0, 1e-300, -1e-300, 0.5, -0.5, 36.0, -36.0, 709.0, 710.0, -709.0, -710.0]
SPECIAL += [745.0, -745.0, 746.0, -746.0, 1e308, -1e308, np.inf, -np.inf, np.nan]


def special_and_random(n: int) -> np.ndarray:
    """Every special value, then random values of every magnitude (n is not a round size)."""
    values = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 30.0, 800.0], n)
    values[: len(SPECIAL)] = SPECIAL
    return values


def assert_matches_operator(got: np.ndarray, x: np.ndarray, op: object) -> None:
    expected = np.array([op(v) for v in x])  # type: ignore[operator]
    # libmvec's exp is accurate to a few ULP; special values must match exactly.
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])
    np.testing.assert_array_equal(got[expected == 0.0], expected[expected == 0.0])
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0.0)


@pytest.mark.task3_1
def test_vector_math_is_on_where_glibc_and_avx2_are() -> None:
    # So a broken loader cannot silently fall back to the slow path on Linux x86-64 CI.
    import platform

    from llvmlite import binding

    if sys.platform != "linux" or platform.machine() != "x86_64":
        pytest.skip("libmvec is glibc's x86-64 vector math library")
    if not binding.get_host_cpu_features().get("avx2") or os.environ.get("MINITORCH_NO_LIBMVEC"):
        pytest.skip("no AVX2 here, or the vector path is switched off")
    assert vecmath.LIBRARY is not None
    assert vecmath.WIDTH in (4, 8)
    assert set(vecmath.VECTOR_MAPS) == {ops.exp, ops.sigmoid}


@pytest.mark.task3_1
@pytest.mark.parametrize("name", ["sigmoid", "exp"])
@pytest.mark.parametrize("n", [3, 3 * vecmath.CHUNK + 5, 100_003])
def test_vector_maps_match_the_scalar_operator(name: str, n: int) -> None:
    x = special_and_random(n) if n > len(SPECIAL) else np.array([-1.0, 0.0, 2.0])
    with np.errstate(over="ignore"):
        got = getattr(F, f"{name}_map")(from_numpy(x, F)).to_numpy()
    assert_matches_operator(got, x, getattr(ops, name))


@pytest.mark.task3_1
@pytest.mark.parametrize("name", ["sigmoid", "exp"])
def test_vector_maps_read_strided_storage(name: str) -> None:
    # Storage may be any 1-D array, e.g. every other element of a numpy buffer.
    x = special_and_random(2 * 5000)[::2]
    t = Tensor(TensorData(x, (5000,)), backend=F)
    with np.errstate(over="ignore"):
        got = getattr(F, f"{name}_map")(t).to_numpy()
    assert_matches_operator(got, x, getattr(ops, name))


@pytest.mark.task3_1
def test_vector_sigmoid_in_place() -> None:
    # The block keeps exp(-|x|) in scratch, so writing over the input is safe.
    x = special_and_random(5000)
    expected = x.copy()
    shape, strides = np.array([5000]), np.array([1])
    tuned.make_map(ops.sigmoid)(x, shape, strides, x, shape, strides)
    assert_matches_operator(x, expected, ops.sigmoid)


@pytest.mark.task3_1
def test_vector_math_can_be_switched_off() -> None:
    # Off, the same kernels run the scalar operator (the path of every non-glibc machine).
    code = (
        "import numpy as np\n"
        "from minitorch.fast import FastBackend, vecmath\n"
        "from minitorch.tensor import from_numpy\n"
        "assert vecmath.LIBRARY is None and vecmath.VECTOR_MAPS == {}, vecmath.LIBRARY\n"
        "x = np.linspace(-40.0, 40.0, 70001)\n"
        "got = FastBackend.sigmoid_map(from_numpy(x, FastBackend)).to_numpy()\n"
        "np.testing.assert_allclose(got, 1 / (1 + np.exp(-x)), rtol=1e-13)\n"
    )
    env = {**os.environ, "MINITORCH_NO_LIBMVEC": "1"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


@pytest.mark.task3_1
@pytest.mark.parametrize("name", ["neg", "exp"])
def test_small_operands_of_the_outputs_layout_take_the_same_layout_kernel(name: str) -> None:
    # A fresh launcher and kernels: which of them compiled shows which one ran.
    from minitorch.fast.fast_ops import FastOps, _Operation

    fn = getattr(ops, name)
    launch = _Operation(FastOps, "make_map", fn, 0)
    x = rng.standard_normal((4, 3))
    # Transposed input and output of one layout: the same cached shape and stride arrays.
    a = from_numpy(x, F).permute(1, 0)
    out = from_numpy(np.full((4, 3), np.nan), F).permute(1, 0)
    launch(*out.tuple(), *a.tuple())
    same, serial = tuned.KERNELS[f"map[{name}].same"], tuned.KERNELS[f"map[{name}]"]
    assert same.signatures, "the same-layout kernel did not run"
    assert not serial.signatures, "the general kernel ran"
    np.testing.assert_allclose(out.to_numpy(), np.vectorize(fn)(x.T), rtol=1e-15)

    # A row-major output of the transposed input: another layout, the general kernel.
    fresh = from_numpy(np.full((3, 4), np.nan), F)
    launch(*fresh.tuple(), *a.tuple())
    assert serial.signatures
    np.testing.assert_allclose(fresh.to_numpy(), np.vectorize(fn)(x.T), rtol=1e-15)


@pytest.mark.task3_1
def test_same_layout_zip_kernel_on_a_strided_layout() -> None:
    # The tensor API only reaches it with row-major operands (a zip's output is new); the
    # kernel takes any layout its three operands share.
    kernel = tuned.make_zip(ops.mul)
    x, y = rng.standard_normal(20), rng.standard_normal(20)
    out = np.full(20, np.nan)
    shape, strides = np.array([3, 2], np.int64), np.array([2, 7], np.int64)  # 6 of 20
    kernel.same(out, x, y, shape, strides)
    used = [i * 2 + j * 7 for i in range(3) for j in range(2)]
    np.testing.assert_array_equal(out[used], x[used] * y[used])
    assert np.isnan(np.delete(out, used)).all(), "wrote outside the layout"


# --- Broadcast maps and zips by runs, short folds straight into the output -------------


@st.composite
def strided_case(draw: st.DrawFn) -> tuple[Any, ...]:
    """An output layout (maybe permuted, maybe with gaps) and two operands broadcast to it.

    Each operand keeps a random subset of the output's trailing dimensions, each either
    whole or of size 1 (a broadcast), stored in a random order of its own.
    """
    dims = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 5, 8]), min_size=dims, max_size=dims)))

    def layout(shape: tuple[int, ...], gap: int) -> tuple[np.ndarray, np.ndarray]:
        order = draw(st.permutations(range(len(shape))))
        strides = [0] * len(shape)
        step = gap
        for d in reversed(order):
            strides[d] = step
            step *= shape[d]
        return np.array(shape, np.int64), np.array(strides, np.int64)

    out = layout(shape, draw(st.sampled_from([1, 1, 2])))
    operands = []
    for _ in range(2):
        keep = draw(st.integers(0, dims))
        own = tuple(n if draw(st.booleans()) else 1 for n in shape[dims - keep :]) or (1,)
        operands.append(layout(own, 1))
    return out, operands


def _values(shape: np.ndarray, strides: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Storage for ``(shape, strides)`` filled with values, and the logical array it holds."""
    size = int(sum((n - 1) * s for n, s in zip(shape, strides, strict=True))) + 1
    storage = np.random.default_rng(seed).standard_normal(size)
    view = np.lib.stride_tricks.as_strided(storage, tuple(shape), tuple(8 * strides))
    return storage, view.copy()


@settings(deadline=None)
@given(case=strided_case(), twin=st.sampled_from(["serial", "parallel"]))
def test_broadcast_maps_and_zips_walk_runs_of_any_layout(case: Any, twin: str) -> None:
    # ``_run`` merges the trailing dimensions every operand walks evenly into one run;
    # any layout, broadcast and gap must still give NumPy's values at every output
    # position, and leave the gaps between them alone.
    (out_shape, out_strides), ((a_shape, a_strides), (b_shape, b_strides)) = case
    a, a_logical = _values(a_shape, a_strides, 1)
    b, b_logical = _values(b_shape, b_strides, 2)
    size = int(sum((n - 1) * s for n, s in zip(out_shape, out_strides, strict=True))) + 1
    zipped = tuned.make_zip(ops.add)
    mapped = tuned.make_map(ops.neg)
    for kernel, args, expected in [
        (zipped, (a, a_shape, a_strides, b, b_shape, b_strides), a_logical + b_logical),
        (mapped, (a, a_shape, a_strides), -a_logical),
    ]:
        out = np.full(size, np.nan)
        getattr(kernel, twin)(out, out_shape, out_strides, *args)
        view = np.lib.stride_tricks.as_strided(out, tuple(out_shape), tuple(8 * out_strides))
        np.testing.assert_array_equal(view, np.broadcast_to(expected, tuple(out_shape)))
        assert np.isnan(out).sum() == size - int(np.prod(out_shape)), "wrote into a gap"


@settings(deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
    data=st.data(),
    twin=st.sampled_from(["serial", "parallel"]),
)
def test_short_folds_and_row_major_folds_match_a_fold_in_order(
    shape: list[int], data: st.DataObject, twin: str
) -> None:
    # Folding at most ``_REDUCE_BLOCKS`` rows of another dimension goes straight into the
    # output row, and the last dimension of a row-major input by runs at ``i * n``: both
    # must equal the fold in order from the start value, bit for bit where they fold in
    # that order (longer folds keep partial sums: close to it).
    dim = data.draw(st.integers(0, len(shape) - 1))
    order = data.draw(st.permutations(range(len(shape))))
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    a, logical = _values(np.array(shape, np.int64), np.array(strides, np.int64), 3)
    out_shape = list(shape)
    out_shape[dim] = 1
    out = np.full(int(np.prod(out_shape)), np.nan)
    out_strides = np.array([int(np.prod(out_shape[d + 1 :])) for d in range(len(shape))])
    kernel = tuned.make_reduce(ops.add)
    getattr(kernel, twin)(
        out, np.array(out_shape), out_strides, a, np.array(shape), np.array(strides), dim, 0.0
    )
    expected = np.zeros(out_shape)
    for k in range(shape[dim]):
        expected = expected + np.take(logical, [k], axis=dim)
    got = out.reshape(out_shape)
    n = shape[dim]
    along_rows = dim == len(shape) - 1 or out_shape[-1] == 1  # one fold per output element
    if n <= tuned._REDUCE_BLOCKS or (along_rows and n < 16):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-13)
