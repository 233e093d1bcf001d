"""``Function``: a differentiable operation on Tensors, and the ``History`` it records.

``Function.apply`` runs an operation's ``forward`` and, when an input needs a gradient,
records on the output how it was made: the function, its context, its inputs and the
versions of the tensors it saved. That ``History`` is the whole graph; the engine
(``engine.py``) walks it backward, and ``graph.py`` shows it as PyTorch's nodes.

Nothing here needs ``Tensor`` at run time: ``apply`` recognises tensors as graph nodes on a
``TensorBackend``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from minitorch.autodiff import Context, FunctionBase, GraphNode, is_grad_enabled, no_grad

from ..backends.protocol import TensorBackend, check_same_device
from .graph import node_name

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Function", "History"]


@dataclass(slots=True, eq=False)
class History:
    """How a Tensor was made: the function, its context and its tensor inputs.

    A leaf (a tensor that requires a gradient) has a history with no function. Besides the
    graph, a history keeps what PyTorch keeps on a tensor's autograd metadata: the tensor's
    hooks, whether it retains its gradient, whether its saved values were freed by a
    backward pass, and (weakly) the ``grad_fn`` node shown for it.
    """

    last_fn: type[Function] | None = None
    ctx: Context | None = None
    inputs: Sequence[Tensor] = ()
    saved_versions: Sequence[tuple[Tensor, int]] = ()
    hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
    retains_grad: bool = False
    freed: bool = False
    node: Callable[[], Any] | None = None  # a weakref to the graph.Node shown for it

    def free(self) -> None:
        """Drop the saved values (a backward pass without ``retain_graph`` ran through)."""
        self.freed = True
        self.saved_versions = ()
        if self.ctx is not None:
            self.ctx.saved_values = ()

    def check_saved_versions(self) -> None:
        """Refuse a backward pass through tensors written in place after they were saved.

        Raises:
            RuntimeError: naming the function and the tensor's shape and versions.
        """
        for t, version in self.saved_versions:
            now = t.version
            if now != version:
                name = node_name(self.last_fn) if self.last_fn is not None else "?"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a tensor of shape {t.shape} that {name} saved "
                    f"is at version {now}; expected version {version} instead. Write into a "
                    "copy instead, or before using it"
                )


class Function(FunctionBase):
    """A differentiable operation on Tensors.

    Subclasses define ``forward(ctx, *args)`` with the backend primitives (``t.backend``)
    and ``backward(ctx, grad_output)`` returning one gradient per *tensor* argument, in
    order (None for an input that is a constant, which gets no gradient). Non-tensor
    arguments (dims, shapes, orders) are passed to ``forward`` as they are.

    ``grad_fn_name`` names the node ``t.grad_fn`` shows for an output (PyTorch's name for
    the built-in operations); a subclass that sets none is ``<ClassName>Backward``, as
    PyTorch names the node of a custom ``autograd.Function``.
    """

    grad_fn_name: ClassVar[str | None] = None

    @staticmethod
    def forward(ctx: Context, *args: Any) -> Tensor:
        """Compute the output (a constant tensor)."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor | tuple[Tensor | None, ...]:
        """Return the gradient of each tensor input."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *vals: Any) -> Tensor:
        """Run ``forward`` and, if any tensor input needs a gradient, record the history.

        Without a gradient to record (constant inputs, or inside ``no_grad()``), ``forward``
        gets a shared context that keeps nothing, and no ``History`` is made.
        """
        # The common case first: one or two tensors of one backend, nothing else. Speed:
        # the general loop below was about a sixth of a one-element ``a + b``.
        n = len(vals)
        fast = record = False
        try:
            if n == 2:
                a, b = vals
                fast = (
                    isinstance(a, GraphNode)
                    and isinstance(b, GraphNode)
                    and a.backend is b.backend  # type: ignore[attr-defined]
                    and isinstance(a.backend, TensorBackend)  # type: ignore[attr-defined]
                )
                record = fast and (a.history is not None or b.history is not None)
            elif n == 1:
                a = vals[0]
                fast = isinstance(a, GraphNode) and isinstance(a.backend, TensorBackend)  # type: ignore[attr-defined]
                record = fast and a.history is not None
        except AttributeError:  # a graph node without a backend (a Scalar): refused below
            fast = False
        if fast:
            if record and is_grad_enabled():
                return cls._record(vals, vals)
            if n == 2:
                return cls.forward(_NO_GRAD_CONTEXT, a, b)
            return cls.forward(_NO_GRAD_CONTEXT, a)
        first: Any = None
        need_grad = False
        count = 0
        for v in vals:
            if not isinstance(v, GraphNode):
                continue  # a dim, shape or order
            count += 1
            if v.history is not None:
                need_grad = True
            try:
                backend = v.backend  # type: ignore[attr-defined]
            except AttributeError:  # a Scalar
                backend = None
            if backend is first:
                continue  # the common case: the first tensor's backend object
            if not isinstance(backend, TensorBackend):
                raise TypeError(f"{cls.__name__}.apply takes Tensors, got {type(v).__name__}")
            if first is None:
                first = backend
            else:
                check_same_device(cls.__name__, first, backend)
        if first is None:
            raise TypeError(f"{cls.__name__}.apply needs at least one Tensor argument")
        if not (need_grad and is_grad_enabled()):
            return cls.forward(_NO_GRAD_CONTEXT, *vals)
        # (Annotations, not ``cast`` calls: this runs on every recorded operation.)
        tensors: Sequence[Tensor] = (
            vals if count == len(vals) else [v for v in vals if isinstance(v, GraphNode)]  # type: ignore[misc]
        )
        return cls._record(vals, tensors)

    @classmethod
    def _record(cls, vals: tuple[Any, ...], tensors: Sequence[Tensor]) -> Tensor:
        """Run ``forward`` on ``vals`` with a new context and record its ``History``."""
        ctx = Context()
        with _NO_GRAD:
            out = cls.forward(ctx, *vals)
        values: tuple[Tensor, ...] = ctx.saved_values  # shapes and numbers too
        saved = [(v, v.version) for v in values if isinstance(v, GraphNode)]
        out.history = History(cls, ctx, tensors, saved)
        return out


_NO_GRAD = no_grad()
"""The block around a recording ``forward`` (one object: ``no_grad`` keeps its state per thread)."""

_NO_GRAD_CONTEXT = Context(no_grad=True)
"""The context of every forward that records nothing: ``save_for_backward`` keeps nothing."""
