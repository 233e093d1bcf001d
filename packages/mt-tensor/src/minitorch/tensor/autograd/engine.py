"""What ``Tensor.backward()`` runs: autograd's rules for Tensors, as plain functions.

mt-autodiff's ``backpropagate`` walks the graph (in topological order, iteratively) and
asks each node for the gradients of its inputs (``chain_rule``) and each leaf to keep its
gradient (``accumulate_derivative``). A Tensor answers with the functions here, which
follow PyTorch:

- a tensor's hooks see its gradient first and may replace it; a non-leaf that retains its
  gradient keeps it in ``grad``;
- a gradient of a broadcast shape is summed back to its input's shape, once, for every
  function;
- a leaf adds its gradient into ``grad`` (a private copy the first time), under a lock, so
  backward passes in several threads lose no update;
- ``backward`` frees the values the functions saved as it goes (unless asked to keep them)
  and refuses to run through a saved tensor written in place since.

``Tensor``'s ``backward``, ``chain_rule``, ``accumulate_derivative``, ``register_hook``,
``retain_grad``, ``requires_grad_`` and ``grad`` are one-line calls of these.
"""

from __future__ import annotations

import numbers
import threading
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from minitorch.autodiff import backpropagate, is_grad_enabled, no_grad

from ..backends.protocol import _const, expand
from ..tensor_data import IndexingError, broadcasts_to, shape_broadcast, short_repr
from .errors import FREED_GRAPH, LEAF_IN_PLACE, NON_LEAF_GRAD
from .function import History
from .graph import RemovableHandle, node_name

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "BACKWARD",
    "accumulate_derivative",
    "backward",
    "chain_rule",
    "check_in_place",
    "grad_of",
    "reduce_to_shape",
    "register_hook",
    "requires_grad_",
    "retain_grad",
    "set_grad",
    "store_grad",
]


class _BackwardState(threading.local):
    """Per thread, during ``backward``: whether to keep the graph, and the claimed grads.

    ``claimed`` holds the ids of gradient tensors already stored in some ``.grad`` (or
    passed in by the caller) in this backward pass: a leaf that would receive one of them
    stores a copy, so that an in-place change of one ``.grad`` cannot change another's.
    """

    def __init__(self) -> None:
        self.retain_graph = False
        self.claimed: set[int] | None = None


BACKWARD = _BackwardState()
"""The state of the backward pass running in this thread."""

_ACCUMULATE = threading.Lock()
"""Held while a gradient is added into a ``grad`` (``store_grad``)."""


def backward(t: Tensor, grad_output: Tensor | float | None, retain_graph: bool | None) -> None:
    """Backpropagate from ``t`` under ``no_grad()``: the body of ``Tensor.backward``.

    Raises:
        TypeError: if ``grad_output`` is neither a Tensor nor a real number.
        RuntimeError: on a constant, or on more than one element without ``grad_output``.
        IndexingError: if ``grad_output`` neither has ``t``'s shape nor broadcasts to it.
    """
    if t.is_constant():
        raise RuntimeError(
            "backward() on a tensor that does not require grad (no history): create "
            "inputs with requires_grad=True"
        )
    if grad_output is not None and not isinstance(grad_output, (type(t), numbers.Real)):
        raise TypeError(
            "backward(): grad_output must be a Tensor or a real number, got "
            f"{type(grad_output).__name__} {short_repr(grad_output)}"
        )
    if grad_output is None:
        if t.numel() != 1:
            raise RuntimeError(
                f"backward() on a tensor of shape {t.shape} needs a gradient argument;"
                " gradients can be created implicitly only for one-element outputs"
            )
        grad = _const(t, 1.0, t.shape)
    else:
        grad = t._ensure_tensor(grad_output)
        if grad.shape != t.shape:
            if not broadcasts_to(grad.shape, t.shape):
                raise IndexingError(
                    f"backward(): the gradient of shape {grad.shape} does not match the "
                    f"output's shape {t.shape} (it must equal it or broadcast to it)"
                )
            grad = expand(grad, t.shape)
    state = BACKWARD
    outer = state.retain_graph, state.claimed  # a hook may run a backward of its own
    state.retain_graph, state.claimed = bool(retain_graph), {id(grad)}
    try:
        with no_grad():
            backpropagate(t, grad)
    finally:
        state.retain_graph, state.claimed = outer


def chain_rule(t: Tensor, d_output: Tensor) -> list[tuple[Tensor, Tensor]]:
    """Return ``(input, gradient)`` for each input of ``t`` that needs one, summed to its shape.

    ``t``'s hooks see ``d_output`` first (and may replace it); a tensor that retains its
    gradient keeps it. Unless the running ``backward`` keeps the graph, the function's
    saved values are then freed.

    Raises:
        RuntimeError: if a tensor the function saved was written in place since, or if the
            saved values were freed by an earlier backward pass.
    """
    h = t.history
    if h is None:
        return []
    if h.hooks is not None or h.retains_grad:
        d_output = _run_hooks(t, h, d_output)
    if h.freed:
        raise RuntimeError(f"{FREED_GRAPH} ({node_name(h.last_fn) if h.last_fn else '?'})")
    if h.saved_versions:
        h.check_saved_versions()
    pairs = [
        (x, g if g._tensor.shape == x._tensor.shape else reduce_to_shape(x, g))
        for x, g in t._input_derivatives(d_output)
        if x.history is not None  # a constant's gradient would be summed for nothing
    ]
    if h.saved_versions and not BACKWARD.retain_graph:
        h.free()
    return pairs


def accumulate_derivative(t: Tensor, x: Tensor) -> None:
    """Add ``x`` (summed to ``t``'s shape) to the leaf ``t``'s ``grad``, after its hooks.

    Raises:
        RuntimeError: on a tensor that is not a leaf requiring grad.
    """
    h = t.history
    if h is None or h.last_fn is not None:
        raise RuntimeError("only leaf tensors that require grad accumulate a gradient")
    if x.shape != t.shape:
        x = reduce_to_shape(t, x)
    if h.hooks:
        x = _run_hooks(t, h, x)
    store_grad(t, x)


def _run_hooks(t: Tensor, h: History, grad: Tensor) -> Tensor:
    """Run ``t``'s hooks on ``grad``; keep the result in ``grad`` if ``t`` retains it."""
    if h.hooks:
        for hook in list(h.hooks.values()):
            new = hook(grad)
            if new is not None:
                if not isinstance(new, type(grad)) or new.shape != grad.shape:
                    raise RuntimeError(
                        f"hook {getattr(hook, '__name__', hook)!r} returned "
                        f"{short_repr(new)}; a hook must return None or a Tensor of the "
                        f"gradient's shape {grad.shape}"
                    )
                grad = new
    if h.retains_grad and h.last_fn is not None:
        store_grad(t, grad)
    return grad


def store_grad(t: Tensor, grad: Tensor) -> None:
    """Add ``grad`` to ``t.grad``, storing a private copy the first time.

    A gradient tensor the engine hands to two tensors (``a + b`` gives both the same one),
    a broadcast view, or the caller's ``backward(g)`` is copied, so that writing into one
    ``.grad`` in place never changes another. The read and the write of ``grad`` hold a
    lock, as PyTorch's ``AccumulateGrad`` does, so backward passes in several threads into
    one shared leaf lose no update.
    """
    if grad.backend is not t.backend:  # from an operation on another host backend
        grad = type(t)(grad._tensor, backend=t.backend)
    with _ACCUMULATE:
        if t._grad is not None:
            t._grad = t.backend.add_zip(t._grad, grad)
            return
        claimed = BACKWARD.claimed
        if not grad._tensor.is_contiguous() or (claimed is not None and id(grad) in claimed):
            grad = t.backend.id_map(grad)
        if claimed is not None:
            claimed.add(id(grad))
        t._grad = grad


def reduce_to_shape(t: Tensor, grad: Tensor) -> Tensor:
    """Sum a gradient of a broadcast shape back to ``t``'s shape."""
    if grad.shape == t.shape:
        return grad
    shape_broadcast(t.shape, grad.shape)  # raises if they are unrelated
    extra = grad.dims - t.dims
    if extra < 0:
        if grad.numel() != t.numel():
            raise RuntimeError(f"gradient of shape {grad.shape} does not fit {t.shape}")
        return grad.contiguous().view(*t.shape)
    out = grad
    for dim in range(grad.dims):
        own = t.shape[dim - extra] if dim >= extra else 1
        if own == 1 and grad.shape[dim] != 1:
            out = t.backend.add_reduce(out, dim)
    if out.numel() != t.numel():
        raise RuntimeError(f"gradient of shape {grad.shape} does not fit {t.shape}")
    return out.contiguous().view(*t.shape) if out.shape != t.shape else out


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """Register ``hook`` on ``t``'s gradient (see ``Tensor.register_hook``).

    Raises:
        TypeError: if ``hook`` is not callable.
        RuntimeError: on a tensor that does not require grad (as PyTorch).
    """
    if not callable(hook):
        raise TypeError(f"register_hook needs a callable, got {type(hook).__name__}")
    h = t.history
    if h is None:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if h.hooks is None:
        h.hooks = {}
    return RemovableHandle(h.hooks, hook)


def retain_grad(t: Tensor) -> None:
    """Keep the non-leaf ``t``'s gradient in ``grad`` during ``backward()`` (a leaf: no-op).

    Raises:
        RuntimeError: on a tensor that does not require grad.
    """
    h = t.history
    if h is None:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if h.last_fn is not None:
        h.retains_grad = True


def check_in_place(t: Tensor, op: str) -> None:
    """Refuse an in-place write to ``t`` that the graph cannot record (outside ``no_grad``).

    Raises:
        RuntimeError: on a leaf that requires grad (PyTorch's message), or on a tensor made
            by a recorded operation.
    """
    h = t.history
    if h is None or not is_grad_enabled():
        return
    if h.last_fn is None:
        raise RuntimeError(f"{op}: {LEAF_IN_PLACE}")
    raise RuntimeError(
        f"{op} on a tensor made by an operation that records a gradient (grad_fn="
        f"{node_name(h.last_fn)}): MiniTorch's graph links tensors, not nodes, so it "
        "cannot record an in-place change (PyTorch can); write under no_grad() or "
        "use an out-of-place operation"
    )


def requires_grad_(t: Tensor, requires_grad: bool, how: str = "requires_grad_") -> Tensor:
    """Make ``t`` a leaf that accumulates a gradient, or a constant (``Tensor.requires_grad_``).

    ``how`` names the call in errors: ``"requires_grad_"`` or the ``"requires_grad"`` setter.

    Raises:
        TypeError: if ``requires_grad`` is not a bool (``'False'`` is true), as PyTorch's.
        RuntimeError: ``requires_grad_(False)`` on a non-leaf, with PyTorch's message.
    """
    if not isinstance(requires_grad, (bool, np.bool_)):
        kind = f"{type(requires_grad).__name__} ({requires_grad!r})"
        if how == "requires_grad":
            raise TypeError(f"requires_grad must be a bool, got {kind}")
        raise TypeError(f"requires_grad_(): argument 'requires_grad' must be bool, not {kind}")
    requires_grad = bool(requires_grad)
    h = t.history
    if h is not None and h.last_fn is not None:
        if requires_grad:
            return t  # it already requires grad, through its inputs
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to "
            "use a computed variable in a subgraph that doesn't require differentiation "
            "use var_no_grad = var.detach()."
        )
    if requires_grad:
        if h is None:
            t.history = History()
    else:
        t.history = None
    return t


def grad_of(t: Tensor) -> Tensor | None:
    """``t.grad``, with PyTorch's UserWarning for a non-leaf that does not retain it."""
    g = t._grad
    if g is None:
        h = t.history
        if h is not None and h.last_fn is not None and not h.retains_grad:
            warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=3)
    return g


def set_grad(t: Tensor, value: Tensor | None) -> None:
    """``t.grad = value``: None, or a Tensor of ``t``'s shape.

    Raises:
        TypeError: for a value that is neither None nor a Tensor.
        RuntimeError: for a tensor of another shape (PyTorch's message).
    """
    if value is not None:
        if not isinstance(value, type(t)):
            raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
        if value.shape != t.shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: {value.shape} for a tensor "
                f"of shape {t.shape}"
            )
    t._grad = value
