"""Gradient checking: backprop through any function of tensors against central differences.

``grad_check`` is ``torch.autograd.gradcheck`` for MiniTorch: it runs ``backward`` and
compares each input's gradient with a central difference of the function's summed output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["grad_central_difference", "grad_check"]


def _shifted_value(
    f: Callable[..., Tensor], vals: Sequence[Tensor], arg: int, ind: Sequence[int], shift: float
) -> float:
    """``f(*vals).sum()`` with entry ``ind`` of ``vals[arg]`` moved by ``shift``."""
    x = vals[arg]
    arr = np.array(x.to_numpy(), dtype=np.float64)  # a C-contiguous copy
    arr[tuple(ind)] += shift
    args = list(vals)
    args[arg] = x.make(arr.reshape(-1), x.shape, backend=x.backend)
    return f(*args).sum().item()


def grad_central_difference(
    f: Callable[..., Tensor],
    *vals: Tensor,
    arg: int = 0,
    epsilon: float = 1e-6,
    ind: Sequence[int] = (),
) -> float:
    """Central-difference estimate of ``d f(*vals).sum() / d vals[arg][ind]``."""
    up = _shifted_value(f, vals, arg, ind, epsilon)
    down = _shifted_value(f, vals, arg, ind, -epsilon)
    return (up - down) / (2.0 * epsilon)


def grad_check(
    f: Callable[..., Tensor],
    *vals: Tensor,
    rtol: float = 1e-2,
    atol: float = 1e-2,
    samples: int | None = 5,
    seed: int = 0,
) -> None:
    """Check backprop through ``f`` (its output summed) against central differences.

    Args:
        f: a function of tensors returning a tensor.
        *vals: the inputs; they are made leaves that require gradients.
        rtol: relative tolerance.
        atol: absolute tolerance.
        samples: how many random entries of each input to check (None: every entry).
        seed: seed for picking the entries.

    An entry where ``f`` has no derivative is not checked: where the one-sided differences
    disagree (a jump, as ``a < b`` at ``a == b``, or a kink, as ``relu`` at 0), backprop's
    value is a convention and the central difference measures the jump.

    Raises:
        AssertionError: naming the input and index whose gradient disagrees.
    """
    leaves = [v.detach().requires_grad_(True) for v in vals]
    out = f(*leaves)
    total = out.sum()
    total.backward()
    at = total.item()
    rng = random.Random(seed)
    for i, x in enumerate(leaves):
        grad = x.grad
        if grad is None:
            raise AssertionError(f"input {i} of {f!r} received no gradient")
        got_all = grad.to_numpy()
        indices = list(x.tensor_data.indices())
        if samples is not None and len(indices) > samples:
            indices = rng.sample(indices, samples)
        for ind in indices:
            expected = grad_central_difference(f, *leaves, arg=i, ind=ind)
            got = float(got_all[ind])
            if not np.isclose(got, expected, rtol=rtol, atol=atol):
                eps = 1e-6
                right = (_shifted_value(f, leaves, i, ind, eps) - at) / eps
                left = (at - _shifted_value(f, leaves, i, ind, -eps)) / eps
                if not np.isclose(left, right, rtol=rtol, atol=atol):
                    continue  # no derivative at this point: nothing to check
                raise AssertionError(
                    f"gradient check failed for {f!r}: input {i} index {ind}: backprop "
                    f"gives {got}, central difference gives {expected}"
                )
