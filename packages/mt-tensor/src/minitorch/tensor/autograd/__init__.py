"""Autograd for Tensors: how a Tensor records its graph, and what ``backward()`` does with it.

mt-autodiff's engine (``topological_sort``, ``backpropagate``) walks any graph; this
package is what Tensors bring to it, in PyTorch's vocabulary (``torch.autograd``'s):

- ``function.py``: ``Function`` (``forward``/``backward`` with a ``Context``) and its
  ``apply``, which records a ``History`` on the output;
- ``engine.py``: the body of ``Tensor.backward`` and the rules it runs per node: hooks,
  saved-value checks, gradients summed back to an input's shape, leaves' ``grad``;
- ``graph.py``: the graph as PyTorch shows it: ``grad_fn`` nodes, ``AccumulateGrad``, hook
  handles;
- ``errors.py``: PyTorch's messages;
- ``gradcheck.py``: ``grad_central_difference`` and ``grad_check``.

The operations themselves (``Add``, ``Mul``, ...) are the catalogue in ``functions.py``.
"""

from .function import Function, History
from .gradcheck import grad_central_difference, grad_check
from .graph import AccumulateGrad, Node, RemovableHandle

__all__ = [
    "AccumulateGrad",
    "Function",
    "History",
    "Node",
    "RemovableHandle",
    "grad_central_difference",
    "grad_check",
]
