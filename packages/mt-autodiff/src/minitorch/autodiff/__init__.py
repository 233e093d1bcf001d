"""MiniTorch module 1: reverse-mode autodiff on Scalars, and optimizers.

The engine (``Variable``, ``Context``, ``topological_sort``, ``backpropagate``) knows
nothing about Scalars; ``Scalar`` and ``ScalarFunction`` are its first user and Tensors
(mt-tensor) its second.
"""

from .__about__ import __version__
from .core import (
    Context,
    FunctionBase,
    GraphNode,
    Variable,
    backpropagate,
    central_difference,
    is_grad_enabled,
    no_grad,
    topological_sort,
)
from .optim import SGD, Adam, Optimizer
from .scalar import (
    EQ,
    LT,
    Add,
    Exp,
    Inv,
    Log,
    Mul,
    Neg,
    Pow,
    ReLU,
    Scalar,
    ScalarFunction,
    ScalarHistory,
    Sigmoid,
    derivative_check,
)

__all__ = [
    "EQ",
    "LT",
    "SGD",
    "Adam",
    "Add",
    "Context",
    "Exp",
    "FunctionBase",
    "GraphNode",
    "Inv",
    "Log",
    "Mul",
    "Neg",
    "Pow",
    "Optimizer",
    "ReLU",
    "Scalar",
    "ScalarFunction",
    "ScalarHistory",
    "Sigmoid",
    "Variable",
    "__version__",
    "backpropagate",
    "central_difference",
    "derivative_check",
    "is_grad_enabled",
    "no_grad",
    "topological_sort",
]
