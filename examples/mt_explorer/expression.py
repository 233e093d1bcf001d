"""Evaluate a typed expression over Scalars without ``eval``.

The text is parsed with ``ast`` and interpreted node by node; only this small language is
accepted, anything else is an ``ExpressionError`` that says what was not allowed:

- names of the declared variables, and numbers (``2``, ``0.5``, ``1e-3``);
- ``a + b``, ``a - b``, ``a * b``, ``a / b`` and ``-a``, with parentheses;
- the methods ``.log()``, ``.exp()``, ``.sigmoid()`` and ``.relu()``, without arguments.

Example::

    variables = parse_variables("x = 2, y = 0.5")
    result = evaluate("(x * y + x.exp()).log()", variables)
    result.output.backward()
"""

from __future__ import annotations

import ast
import keyword
import math
import operator
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from minitorch.autodiff import Scalar

#: The methods an expression may call.
METHODS = ("log", "exp", "sigmoid", "relu")
#: The longest expression accepted, in characters (keeps the graph readable).
MAX_LENGTH = 300

_BINARY: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_SYMBOLS = {
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.UAdd: "unary +",
    ast.Not: "not",
    ast.Invert: "~",
}
_ALLOWED = "allowed: variables, numbers, + - * /, unary -, and .log() .exp() .sigmoid() .relu()"


class ExpressionError(ValueError):
    """An expression or variable list that is not valid or not allowed."""


@dataclass(frozen=True)
class Evaluation:
    """The result of ``evaluate``.

    Attributes:
        output: the Scalar the expression computes.
        variables: the leaf Scalar made for each declared variable, by name.
    """

    output: Scalar
    variables: dict[str, Scalar]


def parse_variables(text: str) -> dict[str, float]:
    """Parse ``"x = 2, y = 0.5"`` into ``{"x": 2.0, "y": 0.5}``.

    Raises:
        ExpressionError: for an entry that is not ``name = number``, a name that is not a
            Python identifier (or is a keyword or a method name), or a repeated name.
    """
    values: dict[str, float] = {}
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        # Python reads identifiers in NFKC form (full-width x is x), so declarations do too.
        name, sep, number = (unicodedata.normalize("NFKC", s).strip() for s in part.partition("="))
        if not sep:
            raise ExpressionError(f"variable {part.strip()!r} needs a value: write {name} = 1.0")
        if not name.isidentifier() or keyword.iskeyword(name) or name in METHODS:
            raise ExpressionError(f"{name!r} is not a usable variable name")
        if name in values:
            raise ExpressionError(f"variable {name!r} is declared twice")
        try:
            value = float(number)
        except ValueError:
            raise ExpressionError(f"the value of {name} is not a number: {number!r}") from None
        if not math.isfinite(value):
            raise ExpressionError(f"the value of {name} must be finite, got {number!r}")
        values[name] = value
    if not values:
        raise ExpressionError("declare at least one variable, e.g. x = 2, y = 0.5")
    return values


def evaluate(text: str, values: Mapping[str, float]) -> Evaluation:
    """Build the Scalar graph of ``text`` with one leaf Scalar per variable in ``values``.

    Raises:
        ExpressionError: if the text is empty, too long, not an expression, uses anything
            outside the whitelist or an undeclared name, divides by zero (an exact 0, whatever
            Scalar division would give), or does not depend on any variable.
    """
    text = text.strip()
    if not text:
        raise ExpressionError("type an expression, e.g. (x * y + x.exp()).log()")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"the expression is {len(text)} characters long; at most {MAX_LENGTH}"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise ExpressionError(f"not a valid expression{where}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError("the expression is nested too deeply") from None

    names = {unicodedata.normalize("NFKC", name): v for name, v in values.items()}
    leaves = {name: Scalar(float(v), name=name) for name, v in names.items()}
    try:
        output = _interpret(tree.body, leaves)
    except ZeroDivisionError:
        raise ExpressionError("division by zero") from None
    except OverflowError:
        raise ExpressionError("a number is too large") from None
    if not isinstance(output, Scalar) or output.is_constant():
        raise ExpressionError("the expression does not use any variable, so it has no graph")
    return Evaluation(output, leaves)


def _interpret(node: ast.expr, leaves: Mapping[str, Scalar]) -> Scalar | float:
    """Compute one node of the whitelist; raise ``ExpressionError`` for any other node."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ExpressionError(f"only numbers are allowed as constants, not {value!r}")
    if isinstance(node, ast.Name):
        if node.id not in leaves:
            declared = ", ".join(leaves)
            raise ExpressionError(f"unknown name {node.id!r}: declared variables are {declared}")
        return leaves[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_interpret(node.operand, leaves)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _interpret(node.left, leaves)
        right = _interpret(node.right, leaves)
        if isinstance(node.op, ast.Div) and (getattr(right, "data", right) == 0.0):
            raise ZeroDivisionError  # Scalar division gives inf; the contract says an error
        return _BINARY[type(node.op)](left, right)  # type: ignore[return-value]
    if isinstance(node, ast.Call):
        return _call(node, leaves)
    raise ExpressionError(f"{_describe(node)} is not allowed ({_ALLOWED})")


def _call(node: ast.Call, leaves: Mapping[str, Scalar]) -> Scalar:
    """Interpret ``receiver.method()`` for a method in ``METHODS``."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        name = func.id if isinstance(func, ast.Name) else ast.unparse(func)
        raise ExpressionError(
            f"calling {name}(...) is not allowed; write the method form, e.g. x.{METHODS[0]}()"
        )
    if func.attr not in METHODS:
        allowed = " ".join(f".{m}()" for m in METHODS)
        raise ExpressionError(f"method .{func.attr}() is not allowed; use one of {allowed}")
    if node.args or node.keywords:
        raise ExpressionError(f".{func.attr}() takes no arguments")
    receiver = _interpret(func.value, leaves)
    if not isinstance(receiver, Scalar):
        receiver = Scalar(receiver, requires_grad=False)
    method: Callable[[], Scalar] = getattr(receiver, func.attr)
    return method()


def _describe(node: ast.AST) -> str:
    """Name a disallowed node for an error message."""
    op = getattr(node, "op", None)
    if op is not None and type(op) in _SYMBOLS:
        return f"the operator {_SYMBOLS[type(op)]}"
    if isinstance(node, ast.Attribute):
        return f"the attribute .{node.attr}"
    if isinstance(node, ast.Compare):
        return "a comparison"
    return f"{type(node).__name__} ({ast.unparse(node)})"
