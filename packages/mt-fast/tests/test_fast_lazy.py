"""No import-time side effects, and the one private Numba API mt-fast uses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minitorch.fast import _cache

SCRIPT = """
import sys
import minitorch.fast
from minitorch.fast import FastBackend, FastOps
from minitorch.tensor import backend, tensor
assert backend("fast") is FastBackend
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite"))
assert not heavy, f"importing minitorch.fast imported {heavy[:5]}"
print(FastBackend.neg_map(tensor([1.0, 2.0], backend=FastBackend)).to_numpy().tolist())
assert "numba" in sys.modules  # the first kernel brought it in
"""


@pytest.mark.task3_1
def test_importing_the_package_imports_no_numba() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[-1.0, -2.0]"


@pytest.mark.task3_1
def test_numba_private_cache_api_has_the_shape_we_extend() -> None:
    # Fails, saying what changed, on a Numba release that reshapes numba.core.caching.
    _cache.check_numba_api()


@pytest.mark.task3_1
def test_a_changed_private_api_is_reported_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(_cache.caching, "_CacheLocator")
    with pytest.raises(_cache.NumbaCacheAPIError, match=r"_CacheLocator is not a class"):
        _cache.check_numba_api()
    with pytest.warns(RuntimeWarning, match="clear Numba's cache"):
        _cache.install(__file__, [])
    assert __file__ not in _cache._DEPENDENCY_HASHES
