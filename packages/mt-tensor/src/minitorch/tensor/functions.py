"""The differentiable operations on Tensors (tasks 2.3 and 2.4): one ``Function`` each.

Every operation is a ``Function`` with a ``forward`` written with the backend's primitives
(``t.backend``) and a ``backward`` that returns one gradient per tensor input. Shapes, dims
and permutation orders are plain Python values passed to ``apply`` alongside the tensors;
they get no gradient. Gradients of broadcast inputs are summed back to each input's shape
by the engine (``autograd/engine.py``), once, for every function.

This is the catalogue only: ``Function`` and what runs the graph live in ``autograd/``.
It needs no ``Tensor`` at run time (``tensor.py`` imports it, not the reverse): new tensors
are made with the public ``make``/``zeros`` of an input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from minitorch.autodiff import Context

from .autograd import Function
from .backends.protocol import _const, _like, expand
from .tensor_data import TensorData

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = [
    "EQ",
    "GT",
    "LT",
    "Abs",
    "Add",
    "All",
    "Copy",
    "Div",
    "Exp",
    "Index",
    "IndexRows",
    "Inv",
    "IsClose",
    "Log",
    "MatMul",
    "Max",
    "Mean",
    "Mul",
    "Neg",
    "Permute",
    "Pow",
    "RPow",
    "ReLU",
    "Sigmoid",
    "Sqrt",
    "Sum",
    "View",
    "is_max",
    "max_mask",
    "power",
]


class Neg(Function):
    """``-a``."""

    grad_fn_name = "NegBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Negate."""
        # BEGIN SOLUTION task2_3
        return a.backend.neg_map(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input."""
        # BEGIN SOLUTION task2_4
        return grad_output.backend.neg_map(grad_output)
        # END SOLUTION


class Inv(Function):
    """``1 / a``."""

    grad_fn_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Invert."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a)
        return a.backend.inv_map(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input."""
        # BEGIN SOLUTION task2_4
        a: Tensor
        (a,) = ctx.saved_values
        return a.backend.inv_back_zip(a, grad_output)
        # END SOLUTION


class Add(Function):
    """``a + b``."""

    grad_fn_name = "AddBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Add."""
        # BEGIN SOLUTION task2_3
        return a.backend.add_zip(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor, Tensor]:
        """The gradients of both inputs."""
        # BEGIN SOLUTION task2_4
        return grad_output, grad_output
        # END SOLUTION


class Mul(Function):
    """``a * b``."""

    grad_fn_name = "MulBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Multiply."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a, b)
        return a.backend.mul_zip(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor, Tensor]:
        """The gradients of both inputs."""
        # BEGIN SOLUTION task2_4
        a, b = ctx.saved_values
        f = grad_output.backend
        return f.mul_zip(grad_output, b), f.mul_zip(grad_output, a)
        # END SOLUTION


class Div(Function):
    """``a / b``, divided directly (``a * (1 / b)`` overflows for a subnormal ``b``)."""

    grad_fn_name = "DivBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Divide."""
        ctx.save_for_backward(a, b)
        return a.backend.div_zip(a, b)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        """``g / b`` and ``-g * ((a / b) / b)`` (PyTorch's order of operations)."""
        a, b = ctx.saved_values
        f = grad_output.backend
        return (
            None if a.is_constant() else f.div_zip(grad_output, b),
            None
            if b.is_constant()
            else f.neg_map(f.mul_zip(grad_output, f.div_zip(f.div_zip(a, b), b))),
        )


class Sigmoid(Function):
    """Elementwise logistic sigmoid."""

    grad_fn_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Sigmoid."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a)
        return a.backend.sigmoid_map(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input (from the saved output)."""
        # BEGIN SOLUTION task2_4
        a: Tensor
        (a,) = ctx.saved_values
        return a.backend.sigmoid_back_zip(a, grad_output)
        # END SOLUTION


class ReLU(Function):
    """Elementwise ``max(a, 0)``."""

    grad_fn_name = "ReluBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """ReLU."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a)
        return a.backend.relu_map(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input (the derivative is taken as 0 at 0, as PyTorch)."""
        # BEGIN SOLUTION task2_4
        a: Tensor
        (a,) = ctx.saved_values
        return a.backend.relu_back_zip(a, grad_output)
        # END SOLUTION


class Log(Function):
    """Elementwise natural log."""

    grad_fn_name = "LogBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Log."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a)
        return a.backend.log_map(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input."""
        # BEGIN SOLUTION task2_4
        a: Tensor
        (a,) = ctx.saved_values
        return a.backend.log_back_zip(a, grad_output)
        # END SOLUTION


class Exp(Function):
    """Elementwise exponential."""

    grad_fn_name = "ExpBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Exp."""
        # BEGIN SOLUTION task2_3
        out = a.backend.exp_map(a)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input."""
        # BEGIN SOLUTION task2_4
        out: Tensor
        (out,) = ctx.saved_values
        return out.backend.mul_zip(grad_output, out)
        # END SOLUTION


class Sqrt(Function):
    """Elementwise square root."""

    grad_fn_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Square root."""
        out = a.backend.sqrt_map(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g / (2 sqrt(a))``."""
        out: Tensor
        (out,) = ctx.saved_values
        f = out.backend
        half = _const(out, 0.5)
        return f.mul_zip(f.mul_zip(grad_output, f.inv_map(out)), half)


def _reduce_all(a: Tensor, fn_reduce: Callable[[Tensor, int], Tensor]) -> Tensor:
    """Reduce every dimension with a backend reduction, giving shape ``(1,)``."""
    if a.dims != 1:
        a = a.contiguous()
        a = _like(a, a.tensor_data.view((a.numel(),)))  # a view, without View.apply's graph
    return fn_reduce(a, 0)


class Sum(Function):
    """Sum over one dimension (kept) or over everything."""

    grad_fn_name = "SumBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int | None) -> Tensor:
        """Sum."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape)
        if dim is None:
            return _reduce_all(a, a.backend.add_reduce)
        return a.backend.add_reduce(a, dim)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient broadcast back over the summed dimension(s)."""
        # BEGIN SOLUTION task2_4
        (shape,) = ctx.saved_values
        if grad_output.shape == shape:
            return grad_output  # nothing was summed (a sum over a dimension of size 1)
        if grad_output.shape == (1,) and len(shape) != 1:
            grad_output = grad_output.view(*([1] * len(shape)))
        return expand(grad_output, shape)
        # END SOLUTION


class Mean(Function):
    """Mean over one dimension (kept) or over everything."""

    grad_fn_name = "MeanBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int | None) -> Tensor:
        """Mean."""
        n = a.numel() if dim is None else a.shape[dim]
        ctx.save_for_backward(a.shape, n)
        total = (
            _reduce_all(a, a.backend.add_reduce) if dim is None else a.backend.add_reduce(a, dim)
        )
        scale = _const(a, 1.0 / n if n else float("nan"))
        return a.backend.mul_zip(total, scale)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient divided by the count, broadcast back."""
        shape, n = ctx.saved_values
        f = grad_output.backend
        if grad_output.shape == (1,) and len(shape) != 1:
            ones = (1,) * len(shape)
            grad_output = _like(grad_output, grad_output.tensor_data.view(ones))
        scale = _const(grad_output, 1.0 / n if n else float("nan"))
        return f.mul_zip(expand(grad_output, shape), scale)


class All(Function):
    """1.0 if every element (over ``dim``) is non-zero."""

    grad_fn_name = "AllBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int | None) -> Tensor:
        """All."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape)
        f = a.backend
        nonzero = f.eq_zip(f.eq_zip(a, a.zeros((1,))), a.zeros((1,)))
        if dim is None:
            return _reduce_all(nonzero, f.mul_reduce)
        return f.mul_reduce(nonzero, dim)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """Zero: ``all`` is piecewise constant."""
        (shape,) = ctx.saved_values
        return grad_output.zeros(shape)


class LT(Function):
    """``a < b`` as 1.0/0.0: piecewise constant, so its gradients are zero."""

    grad_fn_name = "LtBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Less than."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape, b.shape)
        return a.backend.lt_zip(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor, Tensor]:
        """Zero gradients, one of each input's shape (the rule of every comparison)."""
        # BEGIN SOLUTION task2_4
        a_shape, b_shape = ctx.saved_values
        return grad_output.zeros(a_shape), grad_output.zeros(b_shape)
        # END SOLUTION


class _Comparison(Function):
    """A comparison besides ``LT``: 1.0/0.0, piecewise constant, so its gradients are zero.

    Its ``backward`` is ``LT``'s zero-gradient rule, called by name: task 2.4 writes that
    rule once, in ``LT.backward``, and every comparison's forward saves what it needs (the
    two input shapes).
    """

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor, Tensor]:
        """Zero gradients, one of each input's shape (``LT.backward``)."""
        return LT.backward(ctx, grad_output)


class GT(_Comparison):
    """``a > b`` as 1.0/0.0."""

    grad_fn_name = "GtBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Greater than."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape, b.shape)
        return a.backend.lt_zip(b, a)
        # END SOLUTION


class EQ(_Comparison):
    """``a == b`` as 1.0/0.0."""

    grad_fn_name = "EqBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Equal."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape, b.shape)
        return a.backend.eq_zip(a, b)
        # END SOLUTION


class IsClose(_Comparison):
    """``|a - b| < 1e-2`` as 1.0/0.0; its gradients are zero, as every comparison's."""

    grad_fn_name = "IscloseBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Is close."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(a.shape, b.shape)
        return a.backend.is_close_zip(a, b)
        # END SOLUTION


class Permute(Function):
    """Reorder dimensions (a view, no copy)."""

    grad_fn_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, order: tuple[int, ...]) -> Tensor:
        """Permute."""
        # BEGIN SOLUTION task2_3
        ctx.save_for_backward(order)
        return _like(a, a.tensor_data.permute(*order))
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """The gradient of the input, in the input's order of dimensions."""
        # BEGIN SOLUTION task2_4
        (order,) = ctx.saved_values
        inverse = tuple(sorted(range(len(order)), key=lambda i: order[i]))
        return _like(grad_output, grad_output.tensor_data.permute(*inverse))
        # END SOLUTION


class View(Function):
    """A new shape over the same contiguous storage."""

    grad_fn_name = "ViewBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: tuple[int, ...]) -> Tensor:
        """View."""
        if not a.is_contiguous():
            raise RuntimeError(
                f"view() needs a contiguous tensor (shape {a.shape}, strides "
                f"{a.tensor_data.strides}); call .contiguous() first"
            )
        ctx.save_for_backward(a.shape)
        return _like(a, a.tensor_data.view(shape))

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """View the gradient back to the input shape."""
        (shape,) = ctx.saved_values
        g = grad_output.contiguous()
        return _like(g, g.tensor_data.view(shape))


class Copy(Function):
    """A contiguous copy."""

    grad_fn_name = "CloneBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """Copy."""
        return a.backend.id_map(a)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g``."""
        return grad_output


class MatMul(Function):
    """Batched matrix product with broadcast batch dimensions."""

    grad_fn_name = "MmBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        """Matrix multiply."""
        ctx.save_for_backward(a, b)
        return a.backend.matrix_multiply(a, b)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        """``g @ b^T`` and ``a^T @ g`` (transposes are views; batches summed back).

        The gradient of a constant input is not computed (None, as PyTorch's functions
        return for an input that needs none): the data of a layer, for instance.
        """
        a, b = ctx.saved_values
        f = grad_output.backend
        return (
            None if a.is_constant() else f.matrix_multiply(grad_output, _transpose(b)),
            None if b.is_constant() else f.matrix_multiply(_transpose(a), grad_output),
        )


def _transpose(t: Tensor) -> Tensor:
    """A view of ``t`` with its last two dimensions swapped."""
    td = t.tensor_data
    shape, strides = list(td.shape), list(td.strides)
    shape[-2:] = shape[-1], shape[-2]
    strides[-2:] = strides[-1], strides[-2]
    return _like(t, TensorData._view(td.storage, tuple(shape), tuple(strides), td.version_counter))


def _sign(a: Tensor) -> Tensor:
    """``sign(a)``: 1, 0 or -1 elementwise (0 at 0, as PyTorch's gradient of ``abs``)."""
    f = a.backend
    zero = a.zeros((1,))
    return f.add_zip(f.lt_zip(zero, a), f.neg_map(f.lt_zip(a, zero)))


class Abs(Function):
    """Elementwise ``|a|``."""

    grad_fn_name = "AbsBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        """``relu(a) + relu(-a)``."""
        ctx.save_for_backward(a)
        f = a.backend
        return f.add_zip(f.relu_map(a), f.relu_map(f.neg_map(a)))

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g * sign(a)`` (0 at 0)."""
        a: Tensor
        (a,) = ctx.saved_values
        return a.backend.mul_zip(grad_output, _sign(a))


def power(a: Tensor, p: float) -> Tensor:
    """``a ** p`` elementwise for a number ``p``, from the backend primitives (no history).

    C's ``pow`` (``operators.pow``, one zip), with the special values of IEEE-754 that
    ``numpy.power`` and ``torch.pow`` follow: ``x ** 0`` and ``1 ** p`` are 1 even for NaN,
    ``(-1) ** ±inf`` is 1, ``x ** inf`` is 0 for ``|x| < 1`` and ``inf`` for ``|x| > 1``, a
    negative base to a non-integer power is NaN. The exponents PyTorch computes another
    way are computed its way: ``p = 2`` multiplies, ``p = -1`` divides, ``p = ±0.5`` is the
    square root (and its inverse), so ``(-inf) ** 0.5`` is NaN and ``(-0) ** -0.5`` is
    ``-inf`` as in ``torch.pow``, where C's ``pow`` gives ``inf`` and ``inf``. (It was
    ``exp(p * log(a))`` for a non-integer ``p``: NaN for ``1 ** nan`` and ``x ** inf``.)
    """
    f = a.backend
    if p == 2:
        return f.mul_zip(a, a)
    if p == -1:
        return f.inv_map(a)
    if abs(p) == 0.5:
        root = f.sqrt_map(a)
        return f.inv_map(root) if p < 0 else root
    return f.pow_zip(a, _const(a, float(p), ()))


class Pow(Function):
    """``a ** p`` for a number ``p`` (the exponent gets no gradient)."""

    grad_fn_name = "PowBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, p: float) -> Tensor:
        """Power."""
        ctx.save_for_backward(a, p)
        return power(a, p)

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g * (p * a ** (p - 1))``, and 0 for ``p == 0`` (even at NaN), as PyTorch's."""
        a, p = ctx.saved_values
        f = a.backend
        if p == 0:
            return grad_output.zeros(a.shape)
        out: Tensor = f.mul_zip(grad_output, f.mul_zip(_const(a, float(p), ()), power(a, p - 1)))
        return out


class RPow(Function):
    """``base ** t`` for a number ``base`` (``torch.pow(base, t)``; the base gets no gradient).

    ``apply(t, base)``. The values are ``operators.pow``'s (C's ``pow``): ``1 ** t`` is 1
    for every ``t``, NaN included; a negative base gives NaN at a non-integer ``t``.
    """

    grad_fn_name = "PowBackward2"

    @staticmethod
    def forward(ctx: Context, t: Tensor, base: float) -> Tensor:
        """``base ** t`` elementwise."""
        out = t.backend.pow_zip(_const(t, float(base), ()), t)
        ctx.save_for_backward(t, base, out)
        return out

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g * (base ** t * log(base))``, 0 where ``base == 0`` and ``t >= 0`` (PyTorch's)."""
        t, base, out = ctx.saved_values
        f = t.backend
        if base != 0:
            log_base = _const(t, float(np.log(base)) if base > 0 else np.nan, ())
            grad: Tensor = f.mul_zip(grad_output, f.mul_zip(out, log_base))
            return grad
        # log(0) is -inf, so where t < 0 the gradient is -inf * out; where t >= 0 PyTorch
        # masks it to 0 (out * log(0) there is 0 * -inf or 1 * -inf). log(t >= 0) is 0
        # exactly there and -inf below: out * log(t >= 0), with NaN kept for a NaN t.
        at_or_above = f.add_zip(_const(t, 1.0, ()), f.neg_map(f.lt_zip(t, _const(t, 0.0, ()))))
        masked: Tensor = f.mul_zip(grad_output, f.mul_zip(out, f.log_map(at_or_above)))
        return masked


def is_max(a: Tensor, values: Tensor) -> Tensor:
    """1.0 where ``a`` equals its maximum ``values`` (broadcast), else 0.0; NaN counts.

    ``values`` is a maximum of ``a`` (``max_reduce``), so it is NaN wherever ``a`` holds a
    NaN: there the NaNs of ``a`` are the maximal elements, as PyTorch's ``max`` takes them
    (``eq`` alone finds none, NaN being unequal to itself). Three ``eq_zip`` calls:
    ``(a == values) == (a == a)``.
    """
    f = a.backend
    return f.eq_zip(f.eq_zip(a, values), f.eq_zip(a, a))


def max_mask(a: Tensor, dim: int, values: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Return ``(values, indices, first)`` of the maximum of ``a`` over ``dim`` (kept, size 1).

    ``indices`` holds the position of the first maximal value (PyTorch's choice on ties; a
    NaN is the maximum, as in PyTorch) and ``first`` is 1.0 there and 0.0 elsewhere, in
    ``a``'s shape. Only backend primitives. ``values``, if given, is that maximum already
    computed (it is not reduced again).
    """
    f = a.backend
    n = a.shape[dim]
    values = f.max_reduce(a, dim) if values is None else values
    shape = [1] * a.dims
    shape[dim] = n
    # rank is n, n-1, ..., 1 along dim: the largest rank among the maxima is the first one.
    rank = a.make([float(n - k) for k in range(n)], tuple(shape), backend=a.backend)
    ranked = f.mul_zip(is_max(a, values), rank)
    top = f.max_reduce(ranked, dim)
    first = f.mul_zip(f.eq_zip(ranked, top), f.lt_zip(a.zeros((1,)), ranked))
    indices = f.add_zip(f.neg_map(top), _const(a, float(n)))
    return values, indices, first


class Max(Function):
    """The maximum over ``dim`` (kept with size 1); a NaN is the maximum, as in PyTorch.

    The forward pass is one reduction; the backward pass finds where the maximum was taken.
    The gradient goes to the first maximal position (PyTorch's ``max(dim)``), or with
    ``split`` is shared equally by every maximal element (PyTorch's ``max()``, and with
    ``amax`` too ``torch.amax``'s, which finds maximal elements by ``==`` alone, so a NaN
    maximum gives NaN gradients, as there).
    """

    grad_fn_name = "MaxBackward0"

    @staticmethod
    def forward(
        ctx: Context, a: Tensor, dim: int, split: bool = False, amax: bool = False
    ) -> Tensor:
        """Max."""
        values = a.backend.max_reduce(a, dim)
        ctx.save_for_backward(a, values, dim, split, amax)
        return values

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """``g`` where the maximum was taken (split between ties with ``split``), else 0."""
        a, values, dim, split, amax = ctx.saved_values
        f = a.backend
        if split:
            ties = f.eq_zip(a, values) if amax else is_max(a, values)
            share = f.mul_zip(ties, f.inv_map(f.add_reduce(ties, dim)))
        else:
            share = max_mask(a, dim, values)[2]
        out: Tensor = f.mul_zip(grad_output, share)
        return out


class Index(Function):
    """A view of part of ``a``: ``t[0]``, ``t[:, 1]``, ``t[0:4:2]`` (no copy)."""

    grad_fn_name = "IndexBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, view: Callable[[TensorData], TensorData]) -> Tensor:
        """Index: ``view`` maps ``a``'s TensorData to the viewed part."""
        ctx.save_for_backward(a.shape, view)
        return _like(a, view(a.tensor_data))

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """Zeros in the input's shape with the gradient written into the viewed part."""
        shape, view = ctx.saved_values
        grad = grad_output.zeros(shape)
        grad_output.backend.id_map(grad_output, _like(grad, view(grad.tensor_data)))
        return grad


def _row(t: Tensor, i: int) -> Tensor:
    """The constant view ``t[i]`` of a tensor of at least one dimension (no graph)."""
    td = t.tensor_data
    offset = i * int(td.strides[0])
    storage = td.storage[offset:] if offset else td.storage
    return _like(t, TensorData._view(storage, td.shape[1:], td.strides[1:], td.version_counter))


class IndexRows(Function):
    """``t[[i, j, ...]]``: the rows ``i, j, ...`` of ``t`` (its first dimension), copied.

    An index list selects along the first dimension, as in PyTorch and NumPy (advanced
    indexing): the result has shape ``(len(rows), *t.shape[1:])`` and does not share
    ``t``'s storage. Each row is one ``id_map``; the backward pass adds each row's gradient
    back into its row (a row taken twice gets both).
    """

    grad_fn_name = "IndexBackward0"

    @staticmethod
    def forward(ctx: Context, a: Tensor, rows: tuple[int, ...]) -> Tensor:
        """Copy the rows (each entry of ``rows`` is in ``range(a.shape[0])``)."""
        ctx.save_for_backward(a.shape, rows)
        f = a.backend
        out = a.zeros((len(rows), *a.shape[1:]))
        for k, i in enumerate(rows):
            f.id_map(_row(a, i), _row(out, k))
        return out

    @staticmethod
    def backward(ctx: Context, grad_output: Tensor) -> Tensor:
        """Zeros in the input's shape with each row's gradient added into its row."""
        shape, rows = ctx.saved_values
        f = grad_output.backend
        grad = grad_output.zeros(shape)
        done: set[int] = set()
        for k, i in enumerate(rows):
            target, g = _row(grad, i), _row(grad_output, k)
            f.id_map(f.add_zip(target, g) if i in done else g, target)
            done.add(i)
        return grad
