"""The course's six toy datasets: points in the unit square with a binary label.

Each generator is ``f(N, seed=None) -> Graph`` and uses its own ``random.Random(seed)``,
so it never touches the global random state.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Graph", "circle", "datasets", "diag", "simple", "spiral", "split", "xor"]


class Graph(NamedTuple):
    """A dataset: ``N`` points ``X`` (pairs in [0, 1]^2) with labels ``y`` (0 or 1)."""

    N: int
    X: list[tuple[float, float]]
    y: list[int]


def _points(n: int, rng: random.Random) -> list[tuple[float, float]]:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"N must be a non-negative int, got {n!r}")
    return [(rng.random(), rng.random()) for _ in range(n)]


def _labelled(n: int, seed: int | None, rule: Callable[[float, float], bool]) -> Graph:
    rng = random.Random(seed)
    points = _points(n, rng)
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


datasets: dict[str, Callable[..., Graph]] = {
    "simple": simple,
    "diag": diag,
    "split": split,
    "xor": xor,
    "circle": circle,
    "spiral": spiral,
}
