"""The course's flat names (issue 13): after ``import minitorch`` every name the course's
material uses from modules 0-4 resolves to the layer that defines it.

The list below is the course's, written out independently of mt-root's table, so a name
missing from the table (or pointing at the wrong layer) fails here.
"""

from __future__ import annotations

import importlib
import types

import pytest

import minitorch

COURSE_NAMES = {
    "minitorch.operators": ["Module", "Parameter", "datasets", "prod"],
    "minitorch.autodiff": [
        "Scalar",
        "ScalarFunction",
        "Context",
        "central_difference",
        "derivative_check",
        "topological_sort",
        "backpropagate",
        "SGD",
    ],
    "minitorch.tensor": [
        "Tensor",
        "TensorData",
        "TensorBackend",
        "SimpleOps",
        "IndexingError",
        "shape_broadcast",
        "grad_check",
        "rand",
        "zeros",
        "UserShape",
        "UserIndex",
    ],
    "minitorch.fast": ["FastOps"],
    "minitorch.cuda": ["CudaOps"],
    "minitorch.nn": [
        "conv1d",
        "conv2d",
        "Conv1dFun",
        "Conv2dFun",
        "avgpool2d",
        "maxpool2d",
        "max",
        "argmax",
        "softmax",
        "logsoftmax",
        "dropout",
        "tile",
    ],
}


@pytest.mark.parametrize(
    ("module", "name"),
    [(module, name) for module, names in COURSE_NAMES.items() for name in names],
)
def test_course_name_resolves_to_its_layer(module, name):
    assert getattr(minitorch, name) is getattr(importlib.import_module(module), name)
    assert name in dir(minitorch)


@pytest.mark.parametrize("layer", ["operators", "autodiff", "tensor", "fast", "cuda", "nn"])
def test_layers_are_attributes_of_the_namespace(layer):
    assert getattr(minitorch, layer) is importlib.import_module(f"minitorch.{layer}")


@pytest.mark.parametrize(
    ("alias", "name"), [("addLists", "add_lists"), ("negList", "neg_list"), ("zipWith", "zip_with")]
)
def test_operators_camel_case_aliases(alias, name):
    assert getattr(minitorch.operators, alias) is getattr(minitorch.operators, name)
    assert alias in minitorch.operators.__all__


def test_operators_camel_case_aliases_compute():
    ops = minitorch.operators
    assert ops.addLists([1.0, 2.0], [3.0, 4.0]) == [4.0, 6.0]
    assert ops.negList([1.0, -2.0]) == [-1.0, 2.0]
    assert ops.zipWith(ops.mul)([1.0, 2.0], [3.0, 4.0]) == [3.0, 8.0]


def test_tensor_is_the_subpackage_and_the_factory():
    # minitorch.tensor is mt-tensor's subpackage, and calling it calls tensor().
    assert isinstance(minitorch.tensor, types.ModuleType)
    assert minitorch.tensor is importlib.import_module("minitorch.tensor")
    t = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert isinstance(t, minitorch.Tensor)
    assert t.shape == (2, 2)
    assert t.requires_grad
    assert [t[i, j] for i in range(2) for j in range(2)] == [1.0, 2.0, 3.0, 4.0]
    assert minitorch.tensor.Tensor is minitorch.Tensor
    from minitorch.tensor import tensor

    assert isinstance(tensor, types.FunctionType)


def test_course_style_code():
    # As the course writes it: flat names, TensorBackend(...) of an ops class.
    backend = minitorch.TensorBackend(minitorch.SimpleOps)
    x = minitorch.tensor([1.0, 2.0, 3.0], backend=backend, requires_grad=True)
    (x * x).sum().backward()
    assert [x.grad[i] for i in range(3)] == [2.0, 4.0, 6.0]  # d/dx sum(x^2) = 2x
    s = minitorch.Scalar(2.0)
    (s * s).backward()
    assert s.derivative == 4.0
    assert minitorch.zeros((2, 3)).shape == (2, 3)
    assert minitorch.shape_broadcast((2, 1), (1, 3)) == (2, 3)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Tensr'"):
        _ = minitorch.Tensr
