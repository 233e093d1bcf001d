"""``Module`` and ``Parameter``: a tree of named, trainable values.

A ``Module`` records every attribute that is a ``Module`` (a child) or a ``Parameter`` as
it is assigned, so that ``named_parameters()`` can walk the tree and name each parameter by
its dotted path (``layer1.weight``), as in PyTorch.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["Module", "Parameter"]


def _value(x: Any) -> Any:
    """A Parameter's value, anything else as it is (the other operand of an operator)."""
    return x.value if isinstance(x, Parameter) else x


class Parameter:
    """A trainable value held by a ``Module``.

    The value can be anything: a Scalar, a Tensor, a float. If the value supports
    ``requires_grad_`` it is marked as needing a gradient whenever it is set (unless
    ``requires_grad_(False)`` switched that off); a value that is the result of an
    expression (not a leaf) is detached first, so ``Parameter(rand(3) * 2 - 1)`` is a leaf
    that receives a gradient, as in PyTorch.

    Where PyTorch code expects the parameter to be its tensor, it stands for its value:
    ``p.grad``, ``p.data`` (read and assigned) and any other attribute of the value
    (``p.shape``, ``p.fill_(1)``) are the value's, and so are the numeric operators, on
    either side (``p * 2``, ``2 * p``, ``x @ p``, ``-p``, ``p < 0``). ``==`` is not
    forwarded: parameters compare (and hash) by identity, so a list of them can be searched.
    ``p.value`` is the course's spelling.
    """

    def __init__(self, x: Any, name: str | None = None) -> None:
        self._requires_grad = True
        self.value = x
        self.name = name
        self._mark()

    @property
    def requires_grad(self) -> bool:
        """Whether the value is kept as a leaf that receives a gradient (default True)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Parameter:
        """Switch gradients for this parameter on or off (it stays so across ``update``)."""
        self._requires_grad = bool(requires_grad)
        self._mark()
        return self

    @property
    def grad(self) -> Any:
        """The value's ``grad`` (PyTorch's ``p.grad``)."""
        return self.value.grad

    @grad.setter
    def grad(self, g: Any) -> None:
        self.value.grad = g

    @property
    def data(self) -> Any:
        """The value's ``data`` (PyTorch's ``p.data``: the values without the graph)."""
        return self.value.data

    @data.setter
    def data(self, x: Any) -> None:
        self.value.data = x

    def __getattr__(self, key: str) -> Any:
        # Only called when normal lookup fails: the value's attributes (``p.shape``,
        # ``p.fill_``). Private names are not forwarded, so copying and pickling (which
        # look some up before ``value`` exists) do not recurse.
        if key.startswith("_") or key == "value":
            raise AttributeError(f"'Parameter' object has no attribute {key!r}")
        return getattr(self.value, key)

    def _mark(self) -> None:
        # A value computed by an expression (``rand(3) * 2 - 1``) is not a leaf: marking it
        # would leave it without a gradient, so training silently did nothing. Detach it
        # first (duck-typed: Scalars and Tensors both have ``is_leaf`` and ``detach``).
        is_leaf = getattr(self.value, "is_leaf", None)
        detach = getattr(self.value, "detach", None)
        if callable(is_leaf) and callable(detach) and not is_leaf():
            self.value = detach()
        if hasattr(self.value, "requires_grad_"):
            self.value.requires_grad_(self._requires_grad)
        if self.name is not None and hasattr(self.value, "name"):
            self.value.name = self.name

    def update(self, x: Any) -> None:
        """Replace the value (an optimizer step does this) and mark it as trainable."""
        self.value = x
        self._mark()

    # The numeric operators, forwarded to the value (Python looks them up on the class,
    # never through ``__getattr__``). The other operand may be a Parameter too.
    def __add__(self, other: Any) -> Any:
        return self.value + _value(other)

    def __radd__(self, other: Any) -> Any:
        return _value(other) + self.value

    def __sub__(self, other: Any) -> Any:
        return self.value - _value(other)

    def __rsub__(self, other: Any) -> Any:
        return _value(other) - self.value

    def __mul__(self, other: Any) -> Any:
        return self.value * _value(other)

    def __rmul__(self, other: Any) -> Any:
        return _value(other) * self.value

    def __truediv__(self, other: Any) -> Any:
        return self.value / _value(other)

    def __rtruediv__(self, other: Any) -> Any:
        return _value(other) / self.value

    def __matmul__(self, other: Any) -> Any:
        return operator.matmul(self.value, _value(other))

    def __rmatmul__(self, other: Any) -> Any:
        return operator.matmul(_value(other), self.value)

    def __pow__(self, other: Any) -> Any:
        return self.value ** _value(other)

    def __rpow__(self, other: Any) -> Any:
        return _value(other) ** self.value

    def __neg__(self) -> Any:
        return -self.value

    def __pos__(self) -> Any:
        return +self.value

    def __abs__(self) -> Any:
        return abs(self.value)

    def __lt__(self, other: Any) -> Any:
        return self.value < _value(other)

    def __le__(self, other: Any) -> Any:
        return self.value <= _value(other)

    def __gt__(self, other: Any) -> Any:
        return self.value > _value(other)

    def __ge__(self, other: Any) -> Any:
        return self.value >= _value(other)

    def __repr__(self) -> str:
        return f"Parameter({self.value!r})"

    def __str__(self) -> str:
        return str(self.value)


class Module:
    """Base class of every model: a tree of child modules and parameters.

    Subclasses assign children and parameters as attributes in ``__init__`` (after calling
    ``super().__init__()``) and implement ``forward``; calling the module calls ``forward``.

    Attributes:
        training: True in training mode (the default), False after ``eval()``.
    """

    training: bool

    def __init__(self) -> None:
        self.__dict__["_modules"] = {}
        self.__dict__["_parameters"] = {}
        self.__dict__["training"] = True

    def _registries(self) -> tuple[dict[str, Module], dict[str, Parameter | None]]:
        try:
            return self.__dict__["_modules"], self.__dict__["_parameters"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning attributes"
            ) from None

    def __setattr__(self, key: str, value: Any) -> None:
        modules, parameters = self._registries()
        if key in parameters and not isinstance(value, Parameter):
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__!r} as parameter {key!r} (Parameter "
                    f"or None expected); to change its value use self.{key}.update(x), or "
                    f"del self.{key} first to make it a plain attribute"
                )
            parameters[key] = None  # still a parameter's name, holding none (as PyTorch)
            return
        modules.pop(key, None)
        parameters.pop(key, None)
        if isinstance(value, (Parameter, Module)):
            # A plain attribute of the same name would shadow the registry entry.
            self.__dict__.pop(key, None)
        if isinstance(value, Parameter):
            if value.name is None:
                value.name = key
                value._mark()
            parameters[key] = value
        elif isinstance(value, Module):
            modules[key] = value
        else:
            super().__setattr__(key, value)

    def __getattr__(self, key: str) -> Any:
        # Only called when normal lookup fails: children and parameters live in registries.
        d = self.__dict__
        if "_parameters" in d and key in d["_parameters"]:
            return d["_parameters"][key]
        if "_modules" in d and key in d["_modules"]:
            return d["_modules"][key]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")

    def __delattr__(self, key: str) -> None:
        modules, parameters = self._registries()
        if key in modules:
            del modules[key]
        elif key in parameters:
            del parameters[key]
        else:
            super().__delattr__(key)

    def children(self) -> list[Module]:
        """Return the direct child modules, in assignment order."""
        # BEGIN SOLUTION task0_4
        return list(self.__dict__["_modules"].values())
        # END SOLUTION

    def named_children(self) -> list[tuple[str, Module]]:
        """Return ``(name, module)`` for each direct child."""
        # BEGIN SOLUTION task0_4
        return list(self.__dict__["_modules"].items())
        # END SOLUTION

    def modules(self) -> list[Module]:
        """Return this module and every descendant, depth first (as PyTorch does)."""
        # BEGIN SOLUTION task0_4
        return [m for _, m in self.named_modules()]
        # END SOLUTION

    def named_modules(self, prefix: str = "") -> list[tuple[str, Module]]:
        """Return ``(dotted_name, module)`` for this module (name ``prefix``) and descendants."""
        # BEGIN SOLUTION task0_4
        out: list[tuple[str, Module]] = []
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            out.append((name, module))
            kids = [
                (f"{name}.{k}" if name else k, m) for k, m in module.__dict__["_modules"].items()
            ]
            stack.extend(reversed(kids))
        return out
        # END SOLUTION

    def named_parameters(self) -> list[tuple[str, Parameter]]:
        """Return ``(dotted_name, parameter)`` for every parameter in the tree.

        Names are dotted paths from this module: ``layer1.weight``. A parameter registered
        under several names is listed once, under the first (as PyTorch); a name set to
        None holds no parameter and is left out.
        """
        # BEGIN SOLUTION task0_4
        out: list[tuple[str, Parameter]] = []
        seen: set[int] = set()
        for prefix, module in self.named_modules():
            for k, p in module.__dict__["_parameters"].items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                out.append((f"{prefix}.{k}" if prefix else k, p))
        return out
        # END SOLUTION

    def parameters(self) -> list[Parameter]:
        """Return every parameter in the tree."""
        # BEGIN SOLUTION task0_4
        return [p for _, p in self.named_parameters()]
        # END SOLUTION

    def add_parameter(self, k: str, v: Any) -> Parameter:
        """Wrap ``v`` in a ``Parameter`` named ``k``, register it and return it."""
        p = Parameter(v, k)
        self.__setattr__(k, p)
        return p

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch gradients on or off for every parameter in the tree; return self.

        As ``torch.nn.Module.requires_grad_``: with False the parameters' values become
        constants (no gradient is computed for them), and stay so after optimizer updates.
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def train(self, mode: bool = True) -> Module:
        """Put this module and every descendant in training mode; return self."""
        # BEGIN SOLUTION task0_4
        for m in self.modules():
            m.__dict__["training"] = mode
        return self
        # END SOLUTION

    def eval(self) -> Module:
        """Put this module and every descendant in evaluation mode; return self."""
        # BEGIN SOLUTION task0_4
        return self.train(False)
        # END SOLUTION

    @property
    def mode(self) -> str:
        """``"train"`` or ``"eval"``, following ``training`` (the course's programs read it)."""
        return "train" if self.training else "eval"

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in ("train", "eval"):
            raise ValueError(f"mode must be 'train' or 'eval', got {value!r}")
        self.train(value == "train")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call ``forward`` with the same arguments, like ``torch.nn.Module``."""
        return self.forward(*args, **kwargs)

    def __repr__(self) -> str:
        lines = []
        for key, module in self.__dict__["_modules"].items():
            body = repr(module).replace("\n", "\n  ")
            lines.append(f"({key}): {body}")
        for key, p in self.__dict__["_parameters"].items():
            if p is None:
                lines.append(f"({key}): None")
                continue
            shape = getattr(p.value, "shape", None)
            desc = f"shape={tuple(shape)}" if shape is not None else repr(p.value)
            lines.append(f"({key}): Parameter({desc})")
        name = type(self).__name__
        if not lines:
            return f"{name}()"
        return name + "(\n  " + "\n  ".join(lines) + "\n)"
