"""The backward graph as PyTorch shows it: ``grad_fn`` nodes, ``AccumulateGrad``, hook handles.

A Tensor records how it was made in its ``History`` (function, context, inputs); that is
the whole graph, and the engine walks it. The objects here are *views* of that graph in
PyTorch's vocabulary, made lazily when a program asks for ``t.grad_fn`` (never on the hot
path of ``Function.apply``): a ``Node`` per function application, named as PyTorch names
it (``MulBackward0``), whose ``next_functions`` lead to the nodes of its inputs, to an
``AccumulateGrad`` for a leaf that requires grad, or to None for a constant.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from minitorch.autodiff import GraphNode

from .errors import FREED_GRAPH

if TYPE_CHECKING:
    from ..tensor import Tensor
    from .function import Function, History

__all__ = ["AccumulateGrad", "Node", "RemovableHandle", "grad_fn_of", "node_name"]


def node_name(fn: type[Function]) -> str:
    """The name of ``fn``'s backward node: its ``grad_fn_name``, else ``<class>Backward``.

    Built-in functions give PyTorch's name (``MulBackward0``); a ``Function`` subclass
    that sets none is named as PyTorch names a custom ``autograd.Function``.
    """
    name = fn.__dict__.get("grad_fn_name")
    return name if isinstance(name, str) else f"{fn.__name__}Backward"


class Node:
    """One function application of the backward graph (``torch.autograd.graph.Node``).

    ``type(node).__name__`` and ``node.name()`` are PyTorch's names (``MulBackward0``); a
    node holds the history of the tensor it made, not the tensor.
    """

    __slots__ = ("__weakref__", "_history", "metadata")

    def __init__(self, history: History) -> None:
        self._history = history
        self.metadata: dict[str, Any] = {}

    def name(self) -> str:
        """The node's name, e.g. ``"MulBackward0"``."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One ``(node, 0)`` per input: its ``grad_fn``, an ``AccumulateGrad``, or None.

        An input that is a leaf requiring grad gives its ``AccumulateGrad``; a constant
        (no gradient flows to it) gives None, as in PyTorch.
        """
        return tuple((_node_of(t), 0) for t in self._history.inputs)

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """The tensors the function saved for its backward pass.

        Raises:
            RuntimeError: if ``backward()`` has run without ``retain_graph=True`` since
                (they are freed), with PyTorch's message.
        """
        h = self._history
        if h.freed:
            raise RuntimeError(FREED_GRAPH)
        values = h.ctx.saved_values if h.ctx is not None else ()
        return tuple(v for v in values if isinstance(v, GraphNode))  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node that adds a gradient into a leaf's ``.grad`` (PyTorch's ``AccumulateGrad``).

    It refers to its leaf weakly, as PyTorch's does, so a graph does not keep leaves alive.
    """

    __slots__ = ("_variable",)

    def __init__(self, history: History, variable: Tensor) -> None:
        super().__init__(history)
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Tensor | None:
        """The leaf this node accumulates into (None once that tensor is gone)."""
        return self._variable()

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """Empty: a leaf ends the graph."""
        return ()


_NODE_CLASSES: dict[str, type[Node]] = {}


def grad_fn_of(history: History) -> Node:
    """The node of a non-leaf's history: the same object for as long as one is held.

    The history keeps its node weakly (the node keeps the history), so asking for a
    ``grad_fn`` makes no reference cycle.
    """
    node = history.node() if history.node is not None else None
    if node is None:
        assert history.last_fn is not None
        name = node_name(history.last_fn)
        cls = _NODE_CLASSES.get(name)
        if cls is None:
            cls = _NODE_CLASSES[name] = type(name, (Node,), {"__slots__": ()})
        node = cls(history)
        history.node = weakref.ref(node)
    return node


def _node_of(t: Tensor) -> Node | None:
    """What a graph edge to ``t`` leads to: its grad_fn, its AccumulateGrad, or None."""
    h = t.history
    if h is None:
        return None
    if h.last_fn is not None:
        return grad_fn_of(h)
    node = h.node() if h.node is not None else None
    if not isinstance(node, AccumulateGrad) or node.variable is not t:
        node = AccumulateGrad(h, t)
        h.node = weakref.ref(node)
    return node


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit, as PyTorch's. Every handle gets
    an id never given before (PyTorch's ``RemovableHandle.next_id``), so removing a hook
    twice cannot remove a hook registered later under a reused id.
    """

    __slots__ = ("_hooks", "id")

    _next_id = itertools.count()  # ``next`` on a count is atomic: handles of any thread

    def __init__(self, hooks: dict[int, Callable[[Any], Any]], hook: Callable[[Any], Any]) -> None:
        self._hooks = hooks
        self.id = next(RemovableHandle._next_id)  # ids grow: the dict keeps hooks in order
        hooks[self.id] = hook

    def remove(self) -> None:
        """Unregister the hook (a second call does nothing)."""
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
