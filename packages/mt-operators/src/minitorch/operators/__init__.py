"""MiniTorch module 0: scalar operators, functional helpers, modules and toy datasets.

Everything here is plain Python on floats; the higher layers (autodiff, tensors, kernels)
build on these names.
"""

from .__about__ import __version__
from .functional import add_lists, map, neg_list, prod, reduce, sum, zip_with
from .module import Module, Parameter
from .scalar import (
    add,
    div,
    eq,
    exp,
    id,
    inv,
    inv_back,
    is_close,
    log,
    log_back,
    lt,
    max,
    mul,
    neg,
    pow,
    relu,
    relu_back,
    sigmoid,
    sigmoid_back,
    sqrt,
)
from .testing import MathTest, MathTestVariable
from .toy_data import DatasetTable, Graph, datasets

# The course's camelCase names of the functional helpers (its tests call them).
addLists = add_lists  # noqa: N816
negList = neg_list  # noqa: N816
zipWith = zip_with  # noqa: N816

__all__ = [
    "DatasetTable",
    "Graph",
    "MathTest",
    "MathTestVariable",
    "Module",
    "Parameter",
    "__version__",
    "add",
    "add_lists",
    "addLists",
    "datasets",
    "div",
    "eq",
    "exp",
    "id",
    "inv",
    "inv_back",
    "is_close",
    "log",
    "log_back",
    "lt",
    "map",
    "max",
    "mul",
    "neg",
    "neg_list",
    "negList",
    "pow",
    "prod",
    "reduce",
    "relu",
    "relu_back",
    "sigmoid",
    "sigmoid_back",
    "sqrt",
    "sum",
    "zip_with",
    "zipWith",
]
