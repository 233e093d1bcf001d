"""Higher-order functions over iterables, and list helpers built from them.

``map``, ``zip_with`` and ``reduce`` take a function and return a new function, so that
``neg_list = map(neg)`` reads like the math it implements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from .scalar import add, mul, neg

__all__ = ["add_lists", "map", "neg_list", "prod", "reduce", "sum", "zip_with"]

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")


# The course's name; it shadows the builtin ``map`` inside this module.
def map(fn: Callable[[A], B]) -> Callable[[Iterable[A]], list[B]]:
    """Lift ``fn`` to lists: ``map(fn)(xs) == [fn(x) for x in xs]``."""

    def apply(xs: Iterable[A]) -> list[B]:
        # BEGIN SOLUTION task0_3
        return [fn(x) for x in xs]
        # END SOLUTION

    return apply


def zip_with(fn: Callable[[A, B], C]) -> Callable[[Iterable[A], Iterable[B]], list[C]]:
    """Lift a two-argument ``fn`` to pairs of lists of equal length.

    Raises:
        ValueError: if the two iterables have different lengths.
    """

    def apply(xs: Iterable[A], ys: Iterable[B]) -> list[C]:
        # BEGIN SOLUTION task0_3
        left, right = list(xs), list(ys)
        if len(left) != len(right):
            raise ValueError(f"zip_with needs equal lengths, got {len(left)} and {len(right)}")
        return [fn(x, y) for x, y in zip(left, right, strict=True)]
        # END SOLUTION

    return apply


def reduce(fn: Callable[[A, B], A], start: A) -> Callable[[Iterable[B]], A]:
    """Fold ``fn`` over an iterable from the left, starting at ``start``.

    ``reduce(fn, x0)([x1, x2, x3]) == fn(fn(fn(x0, x1), x2), x3)``.
    """

    def apply(xs: Iterable[B]) -> A:
        # BEGIN SOLUTION task0_3
        acc = start
        for x in xs:
            acc = fn(acc, x)
        return acc
        # END SOLUTION

    return apply


_neg_list = map(neg)
_add_lists = zip_with(add)
_sum = reduce(add, 0.0)
_prod = reduce(mul, 1.0)


def neg_list(ls: Iterable[float]) -> list[float]:
    """Negate every element of ``ls``."""
    # BEGIN SOLUTION task0_3
    return _neg_list(ls)
    # END SOLUTION


def add_lists(ls1: Iterable[float], ls2: Iterable[float]) -> list[float]:
    """Add two lists elementwise; they must have the same length."""
    # BEGIN SOLUTION task0_3
    return _add_lists(ls1, ls2)
    # END SOLUTION


def sum(ls: Iterable[float]) -> float:  # the course's name; shadows the builtin
    """Return the sum of ``ls`` (0.0 for an empty list)."""
    # BEGIN SOLUTION task0_3
    return _sum(ls)
    # END SOLUTION


def prod(ls: Iterable[float]) -> float:
    """Return the product of ``ls`` (1.0 for an empty list)."""
    # BEGIN SOLUTION task0_3
    return _prod(ls)
    # END SOLUTION
