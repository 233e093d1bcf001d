"""Shapes, strides and storage: which storage cell each index of a tensor reads.

The explorer starts from ``t``, a contiguous tensor whose storage holds ``0, 1, 2, ...``,
applies the calls the user typed (``t.permute(1, 0).contiguous().view(6)``) with the
library's own ``Tensor`` methods, and reports each step's shape and strides and, for the
final tensor, the storage position ``index_to_position(index, strides)`` of every index.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import numpy as np

from minitorch.tensor import Tensor, index_to_position, tensor

#: The most dimensions the page draws (a grid per index of the first of three).
MAX_DIMS = 3
#: The most elements the page draws.
MAX_SIZE = 120
_METHODS = ("permute", "view", "contiguous")


class StrideError(ValueError):
    """A shape or a list of calls the explorer cannot show."""


@dataclass(frozen=True)
class Step:
    """One tensor along the chain of calls.

    Attributes:
        code: the code that made it (``t`` or ``t.permute(1, 0)``).
        contiguous: whether its strides are row-major for its shape.
        shares_storage: whether it reads the same storage as ``t``.
    """

    code: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    contiguous: bool
    shares_storage: bool


@dataclass(frozen=True)
class StrideView:
    """The final tensor of a chain of calls, laid out for drawing.

    Attributes:
        steps: every tensor along the chain, ``t`` first.
        storage: the values of the final tensor's storage, in storage order.
        positions: the storage position each index reads, as an array of ``shape``.
        values: the value at each index, as an array of ``shape``.
    """

    steps: tuple[Step, ...]
    storage: np.ndarray
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    positions: np.ndarray
    values: np.ndarray


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse ``"2, 3, 4"`` (or ``"(2, 3, 4)"``) into a shape the page can draw.

    Raises:
        StrideError: for anything but 1 to ``MAX_DIMS`` positive sizes with at most
            ``MAX_SIZE`` elements.
    """
    parts = [p.strip() for p in text.strip().strip("()[]").split(",") if p.strip()]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise StrideError(f"a shape is a list of whole numbers like 2, 3; got {text!r}") from None
    if not 1 <= len(shape) <= MAX_DIMS:
        raise StrideError(f"the page draws 1 to {MAX_DIMS} dimensions; got shape {shape}")
    if any(s < 1 for s in shape):
        raise StrideError(f"sizes must be at least 1; got shape {shape}")
    if math.prod(shape) > MAX_SIZE:
        raise StrideError(
            f"shape {shape} has {math.prod(shape)} elements; the page draws at most {MAX_SIZE}"
        )
    return shape


def _parse_calls(code: str) -> list[tuple[str, tuple[int, ...]]]:
    """Parse ``t.permute(1, 0).view(6)`` into ``[("permute", (1, 0)), ("view", (6,))]``.

    Only ``permute``, ``view`` and ``contiguous`` with integer arguments are accepted; the
    text is read with ``ast``, never run.
    """
    code = code.strip()
    if len(code) > 200:
        raise StrideError("the code is too long; at most 200 characters")
    if not code or code == "t":
        return []
    if code.startswith("."):
        code = "t" + code
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError as exc:
        raise StrideError(f"not valid code: {exc.msg}") from None
    calls: list[tuple[str, tuple[int, ...]]] = []
    while not (isinstance(node, ast.Name) and node.id == "t"):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            raise StrideError(
                "write a chain of calls on t, e.g. t.permute(1, 0).contiguous().view(6)"
            )
        name = node.func.attr
        if name not in _METHODS:
            raise StrideError(f".{name}() is not one of .permute() .view() .contiguous()")
        if node.keywords:
            raise StrideError(f".{name}() takes no keyword arguments here")
        args = []
        for arg in node.args:
            try:
                value = ast.literal_eval(arg)
            except ValueError:
                raise StrideError(f"arguments of .{name}() must be integers") from None
            if not isinstance(value, int) or isinstance(value, bool):
                raise StrideError(f"arguments of .{name}() must be integers, got {value!r}")
            args.append(value)
        calls.append((name, tuple(args)))
        node = node.func.value
    calls.reverse()
    return calls


def _step(code: str, t: Tensor, base: Tensor) -> Step:
    storage, shape, strides = t.tuple()
    return Step(
        code=code,
        shape=tuple(int(s) for s in shape),
        strides=tuple(int(s) for s in strides),
        contiguous=t.is_contiguous(),
        shares_storage=storage is base.tuple()[0],
    )


def explore(shape: tuple[int, ...], code: str) -> StrideView:
    """Apply ``code`` to ``t``, a contiguous tensor of ``shape`` holding 0, 1, 2, ...

    Raises:
        StrideError: if the code is not a chain of permute/view/contiguous calls, or the
            library rejects a call (its message is kept, e.g. view of a non-contiguous
            tensor).
    """
    size = math.prod(shape)
    base = tensor([float(i) for i in range(size)]).view(*shape)
    t = base
    text = "t"
    steps = [_step(text, t, base)]
    for name, args in _parse_calls(code):
        text += f".{name}({', '.join(str(a) for a in args)})"
        try:
            t = getattr(t, name)(*args)
        except (IndexError, RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise StrideError(f"{text} failed: {exc}") from None
        steps.append(_step(text, t, base))
    if t.dims > MAX_DIMS:
        raise StrideError(f"{text} has {t.dims} dimensions; the page draws at most {MAX_DIMS}")

    storage, _, strides_array = t.tuple()
    final_shape = tuple(int(s) for s in t.shape)
    positions = np.zeros(final_shape, dtype=np.int64)
    for index in np.ndindex(*final_shape):
        positions[index] = index_to_position(np.array(index, dtype=np.int64), strides_array)
    host = np.asarray(storage, dtype=np.float64)
    return StrideView(
        steps=tuple(steps),
        storage=host.copy(),
        shape=final_shape,
        strides=tuple(int(s) for s in strides_array),
        positions=positions,
        values=host[positions],
    )


def position_formula(index: tuple[int, ...], strides: tuple[int, ...]) -> str:
    """Spell out ``index_to_position``: ``1*4 + 2*1 = 6``."""
    terms = " + ".join(f"{i}*{s}" for i, s in zip(index, strides, strict=True))
    total = sum(i * s for i, s in zip(index, strides, strict=True))
    return f"{terms} = {total}"
