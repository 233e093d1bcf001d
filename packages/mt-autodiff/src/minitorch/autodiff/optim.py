"""Optimizers: ``SGD`` (with momentum) and ``Adam``.

They work on any ``Parameter`` whose value has ``grad`` (None until a backward pass),
``detach()`` and ``zero_grad_()``: a Scalar (whose ``grad`` is a float) or a Tensor (whose
``grad`` is a Tensor). The update is computed with the value type's own arithmetic under
``no_grad()`` and written back with ``Parameter.update``, which marks the new value as
trainable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from minitorch.operators import Parameter

from .core import no_grad

__all__ = ["SGD", "Adam", "Optimizer"]


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
        """Update every parameter that has a derivative."""
        with no_grad():
            for i, p in enumerate(self.parameters):
                g = getattr(p.value, "grad", None)
                if g is None:
                    continue
                p.update(self._update(i, p.value.detach(), g))

    def _update(self, index: int, data: Any, grad: Any) -> Any:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (as ``torch.optim.SGD``).

    ``v = momentum * v + g``; ``x = x - lr * v``.

    Args:
        parameters: the parameters to train.
        lr: learning rate.
        momentum: momentum factor in [0, 1); 0 is plain SGD.
    """

    def __init__(self, parameters: Iterable[Parameter], lr: float = 1.0, momentum: float = 0.0):
        super().__init__(parameters)
        if not lr > 0.0:
            raise ValueError(f"learning rate must be positive, got {lr}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.lr = lr
        self.momentum = momentum
        self._velocity: dict[int, Any] = {}

    def _update(self, index: int, data: Any, grad: Any) -> Any:
        if self.momentum:
            v = self._velocity.get(index)
            v = grad if v is None else v * self.momentum + grad
            self._velocity[index] = v
            grad = v
        return data - grad * self.lr


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), as ``torch.optim.Adam`` without weight decay.

    Args:
        parameters: the parameters to train.
        lr: learning rate.
        betas: decay rates of the first and second moment estimates.
        eps: added to the denominator for numerical stability.
    """

    def __init__(
        self,
        parameters: Iterable[Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        super().__init__(parameters)
        if not lr > 0.0:
            raise ValueError(f"learning rate must be positive, got {lr}")
        if not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"betas must be in [0, 1), got {betas}")
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self._m: dict[int, Any] = {}
        self._v: dict[int, Any] = {}
        self._t: dict[int, int] = {}

    def _update(self, index: int, data: Any, grad: Any) -> Any:
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
        return data - m_hat * self.lr / (_sqrt(v_hat) + self.eps)
