"""Small work of one layout: FastOps' ``map`` and ``zip`` call the same-layout kernel
themselves, through Numba's compiled entry point once it is known (``runtime.direct``).

The entry point does not check its arguments' types as Numba's dispatch does, so these
cases give it storages of every kind a TensorData may hold (strided, read-only, offset
views of a larger buffer) after it is in use, and compare with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitorch.fast import FastBackend, PlainFastBackend, runtime
from minitorch.tensor import Tensor, TensorBackend, TensorData

BOTH = pytest.mark.parametrize("be", [FastBackend, PlainFastBackend], ids=["tuned", "plain"])


def _over(storage: np.ndarray, be: TensorBackend) -> Tensor:
    return Tensor(TensorData(storage, (len(storage),)), backend=be)


def _storages() -> dict[str, np.ndarray]:
    base = np.arange(1.0, 25.0)
    ro = base[:6].copy()
    ro.flags.writeable = False
    return {
        "strided": base[::4],  # 6 elements, strides (32,)
        "read-only": ro,
        "offset view": base[3:9],
        "one of a stride": base[5:6],
        "plain": base[:6].copy(),
    }


@pytest.mark.task3_1
@BOTH
@pytest.mark.parametrize("kind", list(_storages()))
def test_small_maps_and_zips_read_every_kind_of_storage(kind: str, be: TensorBackend) -> None:
    for _ in range(3):  # the entry point is learnt on the first call
        warm = _over(np.arange(6.0), be)
        (warm + warm).to_numpy()
        (-warm).to_numpy()
    storage = _storages()[kind]
    x = _over(storage, be)
    y = _over(np.linspace(-1.0, 1.0, len(storage)), be)
    np.testing.assert_array_equal((x + y).to_numpy(), storage + y.to_numpy())
    np.testing.assert_array_equal((x * x).to_numpy(), storage * storage)
    np.testing.assert_array_equal((-x).to_numpy(), -storage)
    np.testing.assert_allclose(x.exp().to_numpy(), np.exp(storage), rtol=1e-15)
    np.testing.assert_array_equal(storage, _storages()[kind])  # inputs untouched


@pytest.mark.task3_1
@BOTH
def test_a_small_map_into_a_view_writes_only_the_view(be: TensorBackend) -> None:
    base = np.zeros(8)
    out = Tensor(TensorData(base, (4,), (2,)), backend=be)  # every other element
    a = _over(np.arange(1.0, 5.0), be)
    before = out.version
    be.neg_map(a, out)
    np.testing.assert_array_equal(base, [-1, 0, -2, 0, -3, 0, -4, 0])
    assert out.version == before + 1


@pytest.mark.task3_1
def test_direct_is_refused_for_arguments_it_would_not_check() -> None:
    from numba import njit

    @njit
    def same(out, a, shape, strides):  # type: ignore[no-untyped-def]
        for i in range(out.size):
            out.flat[i] = a.flat[i]

    shape = np.array([3], np.int64)
    good = (np.empty(3), np.ones(3), shape, shape)
    same(*good)
    assert runtime.direct(same, good) is not None
    ro = np.empty(3)
    ro.flags.writeable = False
    bad = {
        "2-D storage": (np.empty(3), np.ones((3, 1)), shape, shape),
        "strided storage": (np.empty(3), np.ones(6)[::2], shape, shape),
        "int32 shape": (np.empty(3), np.ones(3), shape.astype(np.int32), shape),
        "float32 storage": (np.empty(3), np.ones(3, np.float32), shape, shape),
        "read-only output": (ro, np.ones(3), shape, shape),
    }
    for name, args in bad.items():
        if name != "read-only output":
            same(*args)
        assert runtime.direct(same, args) is None, name
    assert runtime.direct(same, (np.empty(4), np.ones(4), shape)) is None  # never compiled


@pytest.mark.task3_1
@BOTH
def test_a_map_into_a_tensor_it_does_not_broadcast_to_names_both_shapes(
    be: TensorBackend,
) -> None:
    from minitorch.tensor import IndexingError

    out = _over(np.zeros(2), be)
    with pytest.raises(IndexingError, match=r"\(3,\).*\(2,\)"):
        be.neg_map(_over(np.ones(3), be), out)
    assert out.version == 0
    np.testing.assert_array_equal(out.to_numpy(), [0.0, 0.0])
