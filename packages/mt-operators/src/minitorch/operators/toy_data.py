"""The course's six toy datasets: points in the unit square with a binary label.

Each generator is ``f(N, seed=None) -> Graph``. With a seed it draws from its own
``random.Random(seed)`` and leaves the global random state alone; without one it draws from
Python's global ``random``, as the course's datasets do, so ``random.seed(n)`` reproduces
them.

``datasets`` maps each name to its generator; its keys are lowercase and a lookup ignores
case, so the course's ``datasets["Simple"]`` works too.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

__all__ = [
    "DatasetTable",
    "Graph",
    "circle",
    "datasets",
    "diag",
    "simple",
    "spiral",
    "split",
    "xor",
]


class Graph(NamedTuple):
    """A dataset: ``N`` points ``X`` (pairs in [0, 1]^2) with labels ``y`` (0 or 1)."""

    N: int
    X: list[tuple[float, float]]
    y: list[int]


def _points(n: int, draw: Callable[[], float]) -> list[tuple[float, float]]:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"N must be a non-negative int, got {n!r}")
    return [(draw(), draw()) for _ in range(n)]


def _labelled(n: int, seed: int | None, rule: Callable[[float, float], bool]) -> Graph:
    draw = random.random if seed is None else random.Random(seed).random
    points = _points(n, draw)
    return Graph(n, points, [1 if rule(x1, x2) else 0 for x1, x2 in points])


def simple(N: int, seed: int | None = None) -> Graph:
    """Label 1 left of the vertical line ``x1 = 0.5``."""
    return _labelled(N, seed, lambda x1, x2: x1 < 0.5)


def diag(N: int, seed: int | None = None) -> Graph:
    """Label 1 below the anti-diagonal ``x1 + x2 = 0.5``."""
    return _labelled(N, seed, lambda x1, x2: x1 + x2 < 0.5)


def split(N: int, seed: int | None = None) -> Graph:
    """Label 1 in the two vertical bands ``x1 < 0.2`` and ``x1 > 0.8``."""
    return _labelled(N, seed, lambda x1, x2: x1 < 0.2 or x1 > 0.8)


def xor(N: int, seed: int | None = None) -> Graph:
    """Label 1 in the top-left and bottom-right quadrants."""
    return _labelled(N, seed, lambda x1, x2: (x1 < 0.5) != (x2 < 0.5))


def circle(N: int, seed: int | None = None) -> Graph:
    """Label 1 outside the circle of radius ``sqrt(0.1)`` around the centre."""
    return _labelled(N, seed, lambda x1, x2: (x1 - 0.5) ** 2 + (x2 - 0.5) ** 2 > 0.1)


def spiral(N: int, seed: int | None = None) -> Graph:
    """Two interleaved spirals: ``N - N // 2`` points labelled 0, then ``N // 2`` labelled 1.

    The points are deterministic; ``seed`` is accepted for a uniform signature.
    """
    if not isinstance(N, int) or isinstance(N, bool) or N < 0:
        raise ValueError(f"N must be a non-negative int, got {N!r}")
    half = N // 2

    def arm(t: float, sign: float) -> tuple[float, float]:
        r = t / 10.0
        return (0.5 + sign * r * math.cos(t) / 2.0, 0.5 + sign * r * math.sin(t) / 2.0)

    def ts(n: int) -> list[float]:
        return [5.0 + 5.0 * i / max(n - 1, 1) for i in range(n)]

    points = [arm(t, 1.0) for t in ts(N - half)] + [arm(t, -1.0) for t in ts(half)]
    y = [0] * (N - half) + [1] * half
    return Graph(N, points, y)


class DatasetTable(Mapping[str, Callable[..., Graph]]):
    """A read-only table of dataset generators whose lookups ignore case.

    Iterating gives the lowercase names (``simple``, ...); ``table["Simple"]`` (the course's
    spelling) and ``"XOR" in table`` find the same generator.
    """

    def __init__(self, generators: Mapping[str, Callable[..., Graph]]) -> None:
        self._generators = {name.lower(): fn for name, fn in generators.items()}

    def __getitem__(self, name: str) -> Callable[..., Graph]:
        key = name.lower() if isinstance(name, str) else name
        try:
            return self._generators[key]
        except KeyError:
            raise KeyError(
                f"no dataset named {name!r}; the datasets are {sorted(self._generators)}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._generators)

    def __len__(self) -> int:
        return len(self._generators)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._generators

    def __repr__(self) -> str:
        return f"DatasetTable({sorted(self._generators)})"


datasets = DatasetTable(
    {
        "simple": simple,
        "diag": diag,
        "split": split,
        "xor": xor,
        "circle": circle,
        "spiral": spiral,
    }
)
"""The six toy datasets by name (lookups ignore case: ``datasets["Xor"]``)."""
