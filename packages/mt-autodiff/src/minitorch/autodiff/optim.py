"""Optimizers: ``SGD`` (with momentum) and ``Adam``.

They work on any ``Parameter`` whose value has ``grad`` (None until a backward pass),
``detach()`` and ``zero_grad_()``: a Scalar (whose ``grad`` is a float) or a Tensor (whose
``grad`` is a Tensor). Each optimizer gives a parameter's step as ``(d, scale)``: the
value moves to ``x - scale * d``, computed with the value type's own arithmetic under
``no_grad()``. A value with ``sub_`` (a Tensor) takes it in place, ``x.sub_(d,
alpha=scale)``, one pass into its storage, as PyTorch's optimizers write: every reference
to it sees the step, and its ``grad`` stays until ``zero_grad()``; one with only ``copy_``
gets the new value copied in. Another value (a Scalar) is replaced with
``Parameter.update`` and keeps its derivative the same way.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

from minitorch.operators import Parameter

from .core import no_grad

__all__ = ["SGD", "Adam", "Optimizer"]


def _number(name: str, value: object) -> float:
    """``value`` as a float, or a TypeError naming the argument ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def _in_range(name: str, value: object, low: float, high: float, closed_high: bool) -> float:
    """``value`` as a float in ``[low, high)`` (``[low, high]`` if closed), else an error."""
    x = _number(name, value)
    if not (low <= x <= high if closed_high else low <= x < high):
        bracket = "]" if closed_high else ")"
        raise ValueError(f"{name} must be in [{low:g}, {high:g}{bracket}, got {value!r}")
    return x


def _learning_rate(lr: object) -> float:
    """A positive finite learning rate, else an error naming ``lr``."""
    x = _number("lr", lr)
    if not 0.0 < x < math.inf:
        raise ValueError(f"learning rate must be positive and finite, got lr={lr!r}")
    return x


def _decayed(grad: Any, data: Any, weight_decay: float) -> Any:
    """``grad + weight_decay * data``: a Scalar's derivative is a float, so use its value."""
    value = data.data if isinstance(grad, float) else data
    return grad + value * weight_decay


def _sqrt(x: Any) -> Any:
    """Square root of a float (a Scalar's moment estimate) or a Tensor."""
    return math.sqrt(x) if isinstance(x, float) else x.sqrt()


class Optimizer:
    """Base class: holds the parameters and clears their derivatives.

    Args:
        parameters: the parameters to train (``model.parameters()``).

    Raises:
        TypeError: if an element is not a ``Parameter``.
    """

    def __init__(self, parameters: Iterable[Parameter]) -> None:
        self.parameters: Sequence[Parameter] = list(parameters)
        for p in self.parameters:
            if not isinstance(p, Parameter):
                raise TypeError(f"optimizers take Parameters, got {type(p).__name__}")

    def zero_grad(self) -> None:
        """Forget every parameter's accumulated derivative."""
        for p in self.parameters:
            if hasattr(p.value, "zero_grad_"):
                p.value.zero_grad_()

    def step(self) -> None:
        """Update every parameter that has a derivative; the derivative is kept (``zero_grad``)."""
        with no_grad():
            for i, p in enumerate(self.parameters):
                value = p.value
                g = getattr(value, "grad", None)
                if g is None:
                    continue
                data = value.detach()
                d, scale = self._direction(i, data, g)
                if hasattr(value, "sub_"):  # a Tensor: x -= scale * d in its storage, one pass
                    value.sub_(d, alpha=scale)
                    continue
                new = data - (d if scale == 1.0 else d * scale)
                if hasattr(value, "copy_"):
                    value.copy_(new)  # in place: the same tensor, its grad and its views
                else:
                    p.update(new)
                    p.value.grad = g

    def _direction(self, index: int, data: Any, grad: Any) -> tuple[Any, float]:
        """The step of parameter ``index``: ``(d, scale)``, it moves to ``data - scale * d``."""
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (as ``torch.optim.SGD``).

    ``v = momentum * v + g``; ``x = x - lr * v``.

    Args:
        parameters: the parameters to train.
        lr: learning rate, positive and finite.
        momentum: momentum factor in [0, 1); 0 is plain SGD.
        weight_decay: L2 penalty, ``>= 0`` (adds ``weight_decay * x`` to the gradient).

    Raises:
        TypeError: if a setting is not a real number.
        ValueError: if a setting is out of its range (named in the message).
    """

    def __init__(
        self,
        parameters: Iterable[Parameter],
        lr: float = 1.0,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ):
        super().__init__(parameters)
        self.lr = _learning_rate(lr)
        self.momentum = _in_range("momentum", momentum, 0.0, 1.0, closed_high=False)
        self.weight_decay = _in_range("weight_decay", weight_decay, 0.0, math.inf, False)
        self._velocity: dict[int, Any] = {}

    def _direction(self, index: int, data: Any, grad: Any) -> tuple[Any, float]:
        """``(v, lr)``: the gradient with weight decay and momentum, scaled by ``lr``."""
        if self.weight_decay:
            grad = _decayed(grad, data, self.weight_decay)
        if self.momentum:
            v = self._velocity.get(index)
            v = grad if v is None else v * self.momentum + grad
            self._velocity[index] = v
            grad = v
        return grad, self.lr


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), as ``torch.optim.Adam``.

    Args:
        parameters: the parameters to train.
        lr: learning rate, positive and finite.
        betas: decay rates of the first and second moment estimates, each in [0, 1).
        eps: added to the denominator for numerical stability, ``>= 0`` and finite.
        weight_decay: L2 penalty, ``>= 0`` (adds ``weight_decay * x`` to the gradient).

    Raises:
        TypeError: if a setting is not a real number (or ``betas`` not a pair of them).
        ValueError: if a setting is out of its range (named in the message).
    """

    def __init__(
        self,
        parameters: Iterable[Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        super().__init__(parameters)
        self.lr = _learning_rate(lr)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        b1, b2 = (_number(f"betas[{i}]", b) for i, b in enumerate(betas))
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"betas must be in [0, 1), got betas={tuple(betas)!r}")
        self.betas = (b1, b2)
        self.eps = _in_range("eps", eps, 0.0, math.inf, closed_high=False)
        self.weight_decay = _in_range("weight_decay", weight_decay, 0.0, math.inf, False)
        self._m: dict[int, Any] = {}
        self._v: dict[int, Any] = {}
        self._t: dict[int, int] = {}

    def _direction(self, index: int, data: Any, grad: Any) -> tuple[Any, float]:
        """``(lr * m_hat / (sqrt(v_hat) + eps), 1)``, the moments updated with ``grad``."""
        if self.weight_decay:
            grad = _decayed(grad, data, self.weight_decay)
        b1, b2 = self.betas
        t = self._t.get(index, 0) + 1
        self._t[index] = t
        m = self._m.get(index)
        v = self._v.get(index)
        m = grad * (1.0 - b1) if m is None else m * b1 + grad * (1.0 - b1)
        v = grad * grad * (1.0 - b2) if v is None else v * b2 + grad * grad * (1.0 - b2)
        self._m[index], self._v[index] = m, v
        m_hat = m * (1.0 / (1.0 - b1**t))
        v_hat = v * (1.0 / (1.0 - b2**t))
        return m_hat * self.lr / (_sqrt(v_hat) + self.eps), 1.0
