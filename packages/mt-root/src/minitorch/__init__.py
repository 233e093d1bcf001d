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

Two more things let the course's programs run as written:

- the course's module paths (``minitorch.fast_ops``, ``minitorch.tensor_data``, ...) are
  aliases of the layer that holds their names (``COURSE_MODULES``): ``minitorch.fast_ops``
  *is* ``minitorch.fast``, found by attribute or by ``import minitorch.fast_ops``;
- the course's code reads ``numba.cuda`` after a plain ``import numba`` (the course's own
  package imported it). Numba does not import that submodule itself, so once Numba is
  imported its ``cuda`` attribute imports ``numba.cuda`` on first use. Nothing is imported
  until then: ``import minitorch`` still imports no layer, no numpy, no Numba.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import pkgutil
import sys
from types import ModuleType
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
    **dict.fromkeys(["CudaOps", "CudaBackend", "sum_practice", "mm_practice"], "cuda"),
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

COURSE_MODULES = {
    "module": "operators",
    "testing": "operators",
    "scalar": "autodiff",
    "scalar_functions": "autodiff",
    "optim": "autodiff",
    "tensor_data": "tensor",
    "tensor_ops": "tensor",
    "tensor_functions": "tensor",
    "fast_ops": "fast",
    "cuda_ops": "cuda",
    "fast_conv": "nn",
    "cuda_conv": "nn",
}
"""The course's module (``minitorch.fast_ops``) -> the subpackage it is an alias of."""

__all__ = ["COURSE_MODULES", "FLAT_NAMES", "LAYERS", "__version__"]


def _layer(name: str, layer: str) -> ModuleType:
    """Import subpackage ``layer`` for ``minitorch.<name>``; say which wheel is missing."""
    module_name = f"minitorch.{layer}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:  # the layer is there but one of its dependencies is not
            raise
        raise AttributeError(
            f"minitorch.{name} comes from {module_name}, which is not installed: "
            f"pip install {LAYERS[layer]}"
        ) from None


def __getattr__(name: str) -> Any:
    """Import the layer behind a flat name, a subpackage or a course module on first use."""
    if name in COURSE_MODULES:
        return importlib.import_module(f"minitorch.{name}")  # through _CourseModules
    layer = name if name in LAYERS else FLAT_NAMES.get(name)
    if layer is None:
        raise AttributeError(f"module 'minitorch' has no attribute {name!r}")
    module = _layer(name, layer)
    value = module if name == layer else getattr(module, name)
    globals()[name] = value
    return value


class _CourseModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``minitorch.<course module>`` as the layer it is an alias of."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        """A spec for the course's module names, None for every other name."""
        prefix, _, name = fullname.partition(".")
        if prefix != __name__ or name not in COURSE_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The layer's module itself (it keeps its own name and spec)."""
        name = spec.name.partition(".")[2]
        try:
            return _layer(name, COURSE_MODULES[name])
        except AttributeError as error:
            raise ModuleNotFoundError(str(error), name=spec.name) from None

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the layer was imported by ``create_module``."""


def _numba_cuda_on_first_use(numba: ModuleType) -> None:
    """Give ``numba`` a module ``__getattr__`` that imports ``numba.cuda`` when read."""
    if "cuda" in vars(numba) or "__getattr__" in vars(numba):
        return

    def __getattr__(name: str) -> Any:  # noqa: N807 (PEP 562's name)
        if name == "cuda":
            return importlib.import_module("numba.cuda")
        raise AttributeError(f"module 'numba' has no attribute {name!r}")

    numba.__getattr__ = __getattr__  # type: ignore[method-assign]


class _NumbaWatch(importlib.abc.MetaPathFinder):
    """Waits for ``import numba`` (one look at one name), then steps aside."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        """Numba's own spec, whose loader then adds the ``cuda`` attribute."""
        if fullname != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("numba")
        loader = spec.loader if spec is not None else None
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module: ModuleType) -> None:
                run(module)
                _numba_cuda_on_first_use(module)

            loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if not any(isinstance(f, _CourseModules) for f in sys.meta_path):
    sys.meta_path.append(_CourseModules())
if "numba" in sys.modules:
    _numba_cuda_on_first_use(sys.modules["numba"])
elif not any(isinstance(f, _NumbaWatch) for f in sys.meta_path):
    sys.meta_path.insert(0, _NumbaWatch())


def __dir__() -> list[str]:
    return sorted({*globals(), *LAYERS, *FLAT_NAMES, *COURSE_MODULES})
