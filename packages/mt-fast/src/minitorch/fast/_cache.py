"""Numba's on-disk cache, made safe against changes in the code our kernels inline.

Numba keys a cached kernel on the source of the file that defines it, so editing an
operator (mt-operators) or an index helper (mt-tensor) would leave a stale kernel that
silently computes the old function. The locator below wraps the one Numba would choose
for our kernel files and adds the hash of every source file the kernels compile in to the
freshness stamp: any change to them recompiles.

Numba has no public hook for this, so this module is the one place mt-fast uses Numba's
private API: the locator base class ``numba.core.caching._CacheLocator`` and the list of
locator classes ``CacheImpl._locator_classes``. ``check_numba_api`` verifies both still
have the shape used here (``tests/test_fast_cache.py`` runs it, so a Numba release that
changes them fails the tests with a message saying what changed); where they do not,
``install`` warns and leaves Numba's own cache key alone.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import warnings
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import numba
from numba.core import caching

# Kernel file (absolute path) -> hash of the sources its kernels compile in.
_DEPENDENCY_HASHES: dict[str, bytes] = {}


def _hash_sources(modules: Iterable[ModuleType]) -> bytes:
    digest = hashlib.sha256()
    for module in modules:
        path = inspect.getfile(module)
        with open(path, "rb") as f:
            digest.update(os.path.basename(path).encode() + b"\0" + f.read())
    return digest.digest()


# What this module relies on: the methods every Numba locator implements (the wrapper
# delegates them) and ``from_function(py_func, py_file)``, the constructor Numba calls.
_LOCATOR_METHODS = (
    "ensure_cache_path",
    "get_cache_path",
    "get_source_stamp",
    "get_disambiguator",
    "from_function",
)


class NumbaCacheAPIError(RuntimeError):
    """Numba's private cache API no longer has the shape ``minitorch.fast._cache`` needs."""


def check_numba_api() -> None:
    """Raise ``NumbaCacheAPIError`` naming what changed if the private API is not as used here."""
    problems = []
    base = getattr(caching, "_CacheLocator", None)
    if not isinstance(base, type):
        problems.append("numba.core.caching._CacheLocator is not a class any more")
    else:
        problems += [
            f"_CacheLocator.{name} is missing"
            for name in _LOCATOR_METHODS
            if not callable(getattr(base, name, None))
        ]
        from_function = getattr(base, "from_function", None)
        if callable(from_function):
            params = list(inspect.signature(from_function).parameters)
            if params != ["py_func", "py_file"]:
                problems.append(
                    f"_CacheLocator.from_function takes {params}, not (py_func, py_file)"
                )
    locators = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not isinstance(locators, list) or not all(isinstance(c, type) for c in locators):
        problems.append("numba.core.caching.CacheImpl._locator_classes is not a list of classes")
    if problems:
        raise NumbaCacheAPIError(
            f"Numba {numba.__version__} changed the private cache API that "
            f"minitorch.fast._cache extends: {'; '.join(problems)}. Update _cache.py for it."
        )


class DependencyAwareLocator(caching._CacheLocator):
    """A cache locator whose freshness stamp covers the kernels' dependencies too."""

    def __init__(self, inner: Any, dependency_hash: bytes) -> None:
        self._inner = inner
        self._dependency_hash = dependency_hash

    def __getattr__(self, name: str) -> Any:
        # Numba reads a few private attributes (``_py_file``, ...) of its locators.
        return getattr(self._inner, name)

    def ensure_cache_path(self) -> None:
        """Create the cache directory (delegated)."""
        self._inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        """Where the cache lives: wherever Numba would have put it."""
        return str(self._inner.get_cache_path())

    def get_source_stamp(self) -> Any:
        """The kernel file's own stamp plus the hash of every dependency's source."""
        return (self._inner.get_source_stamp(), self._dependency_hash)

    def get_disambiguator(self) -> str:
        """Disambiguate functions in the same file (delegated)."""
        return str(self._inner.get_disambiguator())

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> DependencyAwareLocator | None:
        """Claim only our kernel files; wrap the locator Numba would pick for them."""
        dependency_hash = _DEPENDENCY_HASHES.get(os.path.abspath(py_file))
        if dependency_hash is None:
            return None
        for other in caching.CacheImpl._locator_classes:
            if other is cls:
                continue
            inner = other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, dependency_hash)
        return None


def install(kernel_module_file: str, dependencies: Iterable[ModuleType]) -> None:
    """Key the on-disk cache of kernels in ``kernel_module_file`` on ``dependencies`` too.

    Call it at import of a kernel module, before its kernels compile:
    ``cache_kernels_of(__file__, [minitorch.operators.scalar, ...])``. If this Numba's
    private cache API is not the one ``check_numba_api`` expects, warns and does nothing:
    kernels are then cached by Numba's own key (their file only).
    """
    try:
        check_numba_api()
    except NumbaCacheAPIError as e:
        warnings.warn(
            f"{e} Until then, clear Numba's cache after editing mt-operators or mt-tensor.",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _DEPENDENCY_HASHES[os.path.abspath(kernel_module_file)] = _hash_sources(dependencies)
    if DependencyAwareLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, DependencyAwareLocator)
