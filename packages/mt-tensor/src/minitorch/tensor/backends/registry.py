"""Finding backends by name, and the default backend for new tensors.

Higher layers register their backends in the entry-point group ``minitorch.backends``
(mt-fast's ``fast``, mt-cuda's ``cuda``); ``backend(name)`` imports one only when asked,
so importing ``minitorch.tensor`` never imports Numba. ``tensor zeros ones rand
from_numpy`` and mt-nn's layers put new tensors on the default backend, as
``torch.set_default_device`` does.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata

from .protocol import TensorBackend
from .simple import SimpleBackend

__all__ = [
    "ENTRY_POINT_GROUP",
    "available_backends",
    "backend",
    "default_backend",
    "get_default_backend",
    "resolve_backend",
    "set_default_backend",
]

ENTRY_POINT_GROUP = "minitorch.backends"
"""Entry-point group in which higher layers register their backends by name."""

_HINTS = {
    "fast": "mt-fast (pip install mt-fast)",
    "cuda": "mt-cuda (pip install mt-cuda)",
}


def available_backends() -> dict[str, str]:
    """Return ``name -> "module:attribute"`` for every registered backend."""
    found = {"simple": "minitorch.tensor:SimpleBackend"}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = ep.value
    return found


def backend(name: str) -> TensorBackend:
    """Return the backend registered as ``name`` (``simple``, ``fast``, ``cuda``, ...).

    Backends register under the ``minitorch.backends`` entry-point group; the package is
    imported only when asked for, so importing ``minitorch.tensor`` never imports numba.

    Raises:
        LookupError: if no installed package provides ``name`` (says what to install).
    """
    if name == "simple":
        return SimpleBackend
    registry = available_backends()
    if name not in registry:
        hint = _HINTS.get(name)
        where = f"install {hint}" if hint else f"known backends: {sorted(registry)}"
        raise LookupError(f"backend {name!r} is not installed; {where}")
    module_name, _, attr = registry[name].partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, TensorBackend):
        raise TypeError(f"entry point {name!r} = {registry[name]!r} is not a TensorBackend")
    return obj


# ---------------------------------------------------------------------------------------
# The default backend: where ``tensor zeros ones rand from_numpy`` and mt-nn's layers put
# new tensors when no backend is given (like ``torch.set_default_device``).

_default: TensorBackend = SimpleBackend


def resolve_backend(which: TensorBackend | str | None) -> TensorBackend:
    """Return the backend ``which`` names: itself, a registered name, or None for the default.

    Raises:
        TypeError: if ``which`` is neither a TensorBackend, a name nor None.
        LookupError: for a name no installed package provides.
    """
    if which is None:
        return _default
    if isinstance(which, TensorBackend):
        return which
    if isinstance(which, str):
        return backend(which)
    raise TypeError(
        f"a backend is a TensorBackend or a name like 'fast', got {type(which).__name__}: {which!r}"
    )


def get_default_backend() -> TensorBackend:
    """Return the backend new tensors get when none is given (``SimpleBackend`` at start)."""
    return _default


def set_default_backend(which: TensorBackend | str) -> None:
    """Make ``which`` (a TensorBackend or a name like ``"fast"``) the default backend.

    The setting is process-wide; prefer ``with default_backend(...)`` for a block of code.

    Raises:
        TypeError: if ``which`` is not a TensorBackend or a name.
        LookupError: for a name no installed package provides.
    """
    global _default
    if which is None:
        raise TypeError("set_default_backend(None): pass a TensorBackend or a name like 'fast'")
    _default = resolve_backend(which)


@contextmanager
def default_backend(which: TensorBackend | str) -> Iterator[TensorBackend]:
    """Use ``which`` as the default backend inside a ``with`` block, then restore the old one.

    ``with default_backend("fast"): x = rand(2, 2)`` makes ``x`` on the fast backend.
    """
    previous = get_default_backend()
    set_default_backend(which)
    try:
        yield _default
    finally:
        set_default_backend(previous)
