"""The autodiff engine: the ``Variable`` protocol, ``Context``, topological sort, backprop.

Nothing here knows about Scalars or Tensors: any class that implements ``Variable`` gets
reverse-mode differentiation. Both the sort and the backward pass are iterative, so graphs
of any depth work without touching Python's recursion limit.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Context",
    "FunctionBase",
    "GraphNode",
    "Variable",
    "backpropagate",
    "central_difference",
    "is_grad_enabled",
    "no_grad",
    "topological_sort",
]


def central_difference(
    f: Callable[..., Any], *vals: Any, arg: int = 0, epsilon: float = 1e-6
) -> float:
    r"""Approximate the partial derivative of ``f`` with respect to argument ``arg``.

    .. math:: \partial_i f(x) \approx \frac{f(x + \epsilon e_i) - f(x - \epsilon e_i)}{2\epsilon}

    Args:
        f: a function of ``len(vals)`` floats returning a float.
        *vals: the point at which to differentiate.
        arg: index of the argument to differentiate with respect to.
        epsilon: half the step of the central difference.

    Raises:
        IndexError: if ``arg`` does not name one of ``vals``.
    """
    if not isinstance(arg, int) or isinstance(arg, bool) or not 0 <= arg < len(vals):
        raise IndexError(
            f"central_difference: arg={arg!r} is not an argument index for {len(vals)} value(s)"
        )
    # BEGIN SOLUTION task1_1
    up = list(vals)
    down = list(vals)
    up[arg] = up[arg] + epsilon
    down[arg] = down[arg] - epsilon
    return float((f(*up) - f(*down)) / (2.0 * epsilon))
    # END SOLUTION


@runtime_checkable
class Variable(Protocol):
    """What the engine needs from a node of a computation graph."""

    @property
    def unique_id(self) -> int:
        """An id that is unique among the live variables of a graph."""
        ...

    def is_leaf(self) -> bool:
        """True for a variable created by the user that wants a derivative."""
        ...

    def is_constant(self) -> bool:
        """True for a variable with no history: it gets no derivative."""
        ...

    @property
    def parents(self) -> Iterable[Variable]:
        """The inputs of the function that produced this variable."""
        ...

    def chain_rule(self, d_output: Any) -> Iterable[tuple[Variable, Any]]:
        """Return ``(input, d_input)`` for each non-constant input given ``d_output``."""
        ...

    def accumulate_derivative(self, x: Any) -> None:
        """Add ``x`` to this leaf's derivative."""
        ...


@dataclass
class Context:
    """What a ``Function.forward`` leaves for its ``backward``.

    Attributes:
        no_grad: True when no backward pass will run, so nothing needs saving.
        saved_values: the values passed to ``save_for_backward``.
    """

    no_grad: bool = False
    saved_values: tuple[Any, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        """Store ``values`` for the backward pass (skipped under ``no_grad``)."""
        if self.no_grad:
            return
        self.saved_values = values

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """PyTorch's name for ``saved_values``."""
        return self.saved_values


class FunctionBase:
    """What the engine needs from a differentiable function: ``derivatives``.

    ``ScalarFunction`` (this package) and mt-tensor's ``Function`` derive from it. A subclass
    defines ``backward(ctx, d_output)`` returning one derivative per input, or the one
    derivative of a one-input function as it is; ``derivatives`` gives the engine a tuple
    either way.
    """

    @staticmethod
    def backward(ctx: Context, d_output: Any) -> Any:
        """Return the derivative with respect to each input (one value or a tuple)."""
        raise NotImplementedError

    @classmethod
    def derivatives(cls, ctx: Context, d_output: Any) -> tuple[Any, ...]:
        """Run ``backward`` and return its derivatives as a tuple (one per input)."""
        d = cls.backward(ctx, d_output)
        return d if isinstance(d, tuple) else (d,)


class GraphNode:
    """The ``Variable`` protocol for values that record a ``history``.

    A subclass (``Scalar``, ``Tensor``) keeps in ``history`` either None (a constant) or an
    object with ``last_fn`` (None for a leaf, else a ``FunctionBase``), ``ctx`` and
    ``inputs``; ``last_fn.derivatives(ctx, d_output)`` returns one derivative per input,
    and a slot ``_name`` behind ``name``. The subclass adds ``chain_rule`` (what to do with
    each input's derivative) and ``accumulate_derivative``.
    """

    __slots__ = ()
    history: Any
    _name: str | None

    @property
    def unique_id(self) -> int:
        """Identity of this value (``id``), unique among live objects."""
        return id(self)

    @property
    def name(self) -> str:
        """The label given at creation, else the value's unique id as a string.

        The course's default: its graph drawings label every node by name.
        """
        return self._name if self._name is not None else str(self.unique_id)

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value  # type: ignore[misc]  # the subclass declares the slot

    def is_leaf(self) -> bool:
        """True for a value created by the user that wants a derivative."""
        return self.history is not None and self.history.last_fn is None

    def is_constant(self) -> bool:
        """True for a value with no history: it gets no derivative."""
        return self.history is None

    @property
    def requires_grad(self) -> bool:
        """True if derivatives flow to or through this value."""
        return self.history is not None

    @property
    def parents(self) -> Sequence[Any]:
        """The inputs of the function that made this value."""
        return () if self.history is None else self.history.inputs

    def _input_derivatives(self, d_output: Any) -> list[tuple[Any, Any]]:
        """Return ``(input, d_input)`` for each input of this value's function, in order.

        Constant inputs are included (the course's contract: one pair per input); the
        engine skips them.

        Raises:
            RuntimeError: if the backward returns a different number of derivatives than
                the function had inputs.
        """
        h = self.history
        if h is None or h.last_fn is None or h.ctx is None:
            return []
        grads = h.last_fn.derivatives(h.ctx, d_output)
        if len(grads) != len(h.inputs):
            raise RuntimeError(
                f"{h.last_fn.__name__}.backward returned {len(grads)} derivative(s) "
                f"for {len(h.inputs)} input(s)"
            )
        return list(zip(h.inputs, grads, strict=True))


class _GradState(threading.local):
    """Per thread: whether gradients are recorded, and the states the open blocks found."""

    def __init__(self) -> None:
        self.grad_enabled = True  # each thread starts with gradients enabled
        self.saved: list[bool] = []


_state = _GradState()


def is_grad_enabled() -> bool:
    """Return False inside a ``no_grad()`` block (per thread), True otherwise."""
    return _state.grad_enabled


class no_grad(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Context manager in which operations record no history (as ``torch.no_grad``).

    Also a decorator (``@no_grad()``). Blocks nest; each restores the state it found, per
    thread, even when the block raises. The found states are kept per thread, not on the
    object, so one decorated function can run in several threads at once.
    """

    def __enter__(self) -> None:
        state = _state
        state.saved.append(state.grad_enabled)
        state.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        state = _state
        state.grad_enabled = state.saved.pop()


def topological_sort(variable: Variable) -> list[Variable]:
    """Return the non-constant variables that ``variable`` depends on, output first.

    Every variable comes before all of its parents, so derivatives can flow in list order.
    The walk is an iterative depth-first search.
    """
    # BEGIN SOLUTION task1_4
    if variable.is_constant():
        return []
    order: list[Variable] = []
    visited: set[int] = set()
    # Each stack entry is (variable, parents_pushed): a variable is emitted after its parents.
    stack: list[tuple[Variable, bool]] = [(variable, False)]
    while stack:
        var, expanded = stack.pop()
        if expanded:
            order.append(var)
            continue
        key = var.unique_id
        if key in visited:
            continue  # pushed twice (two children share it): visited by the first pop
        visited.add(key)
        stack.append((var, True))
        if not var.is_leaf():
            for parent in var.parents:
                if not parent.is_constant():
                    stack.append((parent, False))
    order.reverse()
    return order
    # END SOLUTION


def backpropagate(variable: Variable, deriv: Any) -> None:
    """Run the backward pass from ``variable`` with output derivative ``deriv``.

    Leaves receive their derivative through ``accumulate_derivative`` (so it adds to
    what they already hold); intermediate derivatives live only in a local dict.
    """
    # BEGIN SOLUTION task1_4
    derivatives: dict[int, Any] = {variable.unique_id: deriv}
    for var in topological_sort(variable):
        d = derivatives.pop(var.unique_id, None)
        if d is None:
            continue
        if var.is_leaf():
            var.accumulate_derivative(d)
            continue
        for parent, d_parent in var.chain_rule(d):
            if parent.is_constant():
                continue
            key = parent.unique_id
            before = derivatives.get(key)
            derivatives[key] = d_parent if before is None else before + d_parent
    # END SOLUTION
