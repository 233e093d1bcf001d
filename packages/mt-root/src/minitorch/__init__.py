"""MiniTorch: ``import minitorch``, then the course's flat names (``minitorch.Tensor``, ...).

Every layer is its own wheel and ships one subpackage (mt-tensor ships ``minitorch.tensor``,
...). This file, the only one of the mt-root wheel that every layer depends on, does two
things:

- it keeps the namespace open to every layer, wherever each is installed, in the order
  of ``sys.path`` like a PEP 420 namespace (``pkgutil.extend_path``: one
  ``site-packages``, or one folder per layer as in the editable development workspace);
- it resolves the course's flat names lazily, through the table below: ``minitorch.Tensor``
  imports ``minitorch.tensor`` on first use. Importing a layer therefore never imports a
  higher one, and a name whose layer is not installed raises an ``AttributeError`` that
  names the wheel to install.

``minitorch.tensor`` is both the course's factory and mt-tensor's subpackage: the
subpackage is callable (``minitorch.tensor([1, 2])`` calls ``minitorch.tensor.tensor``).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from .__about__ import __version__

# Every minitorch/ folder on sys.path, in sys.path's order, as a PEP 420 namespace has them:
# a layer earlier on sys.path wins over the same layer installed later (not this folder's).
__path__ = pkgutil.extend_path([], __name__) or __path__

LAYERS = {
    "operators": "mt-operators",
    "autodiff": "mt-autodiff",
    "tensor": "mt-tensor",
    "fast": "mt-fast",
    "cuda": "mt-cuda",
    "nn": "mt-nn",
}
"""Subpackage -> the wheel that ships it."""

FLAT_NAMES = {
    **dict.fromkeys(
        ["Module", "Parameter", "datasets", "prod", "MathTest", "MathTestVariable"], "operators"
    ),
    **dict.fromkeys(
        [
            "Scalar",
            "ScalarFunction",
            "ScalarHistory",
            "Context",
            "Variable",
            "central_difference",
            "derivative_check",
            "topological_sort",
            "backpropagate",
            "no_grad",
            "Optimizer",
            "SGD",
            "Adam",
        ],
        "autodiff",
    ),
    **dict.fromkeys(
        [
            "Tensor",
            "TensorData",
            "TensorOps",
            "TensorBackend",
            "SimpleOps",
            "SimpleBackend",
            "Function",
            "IndexingError",
            "MAX_DIMS",
            "UserIndex",
            "UserShape",
            "index_to_position",
            "to_index",
            "broadcast_index",
            "shape_broadcast",
            "strides_from_shape",
            "grad_central_difference",
            "grad_check",
            "rand",
            "zeros",
            "ones",
            "from_numpy",
            "get_default_backend",
            "set_default_backend",
            "default_backend",
        ],
        "tensor",
    ),
    **dict.fromkeys(["FastOps", "FastBackend", "PlainFastOps", "PlainFastBackend"], "fast"),
    **dict.fromkeys(["CudaOps", "CudaBackend"], "cuda"),
    **dict.fromkeys(
        [
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
            "Linear",
            "Conv1d",
            "Conv2d",
        ],
        "nn",
    ),
}
"""Flat name -> the subpackage whose public API (root ``__all__``) defines it."""

__all__ = ["FLAT_NAMES", "LAYERS", "__version__"]


def __getattr__(name: str) -> Any:
    """Import the layer behind a flat name (or a subpackage) on first use."""
    layer = name if name in LAYERS else FLAT_NAMES.get(name)
    if layer is None:
        raise AttributeError(f"module 'minitorch' has no attribute {name!r}")
    module_name = f"minitorch.{layer}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:  # the layer is there but one of its dependencies is not
            raise
        wheel = LAYERS[layer]
        raise AttributeError(
            f"minitorch.{name} comes from {module_name}, which is not installed: "
            f"pip install {wheel}"
        ) from None
    value = module if name == layer else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAYERS, *FLAT_NAMES})
