"""Seeds: the one check of a ``seed`` argument, and the generator it gives.

Everything random in MiniTorch (``rand``, ``uniform_``, ``normal_``, mt-nn's layers and
``dropout``) takes ``seed``: an int, a ``numpy.random.Generator``, or None for fresh
entropy. None of it touches the global random state.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np

__all__ = ["Seed", "check_seed", "seeded_rng"]

Seed: TypeAlias = "int | np.random.Generator | None"
"""What a ``seed`` argument may be."""


def check_seed(seed: object, where: str) -> None:
    """Check a ``seed`` argument: an int (not a bool) >= 0, a ``numpy.random.Generator``, or None.

    Args:
        seed: the value given.
        where: what took the seed, for the message (``"rand()"``, ``"Linear"``).

    Raises:
        TypeError: naming ``where`` and the seed, for a seed of another type (numpy's own
            message names neither).
        ValueError: for a negative int.
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)):
        raise TypeError(
            f"{where}: seed must be an int, a numpy.random.Generator or None, got "
            f"{type(seed).__name__} {seed!r}"
        )
    if seed < 0:
        raise ValueError(f"{where}: seed must be non-negative, got {seed}")


def seeded_rng(seed: object, where: str) -> np.random.Generator:
    """The generator for ``seed``: itself if a Generator, else a new one seeded with it.

    ``seed`` is checked by ``check_seed`` (``where`` names what took it in the message).
    """
    check_seed(seed, where)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)):
        return np.random.default_rng(int(seed))
    return np.random.default_rng()  # None: fresh entropy
