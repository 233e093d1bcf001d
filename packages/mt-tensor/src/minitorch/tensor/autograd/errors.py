"""PyTorch's autograd messages, word for word, so that a search for one finds its answer."""

from __future__ import annotations

__all__ = ["FREED_GRAPH", "LEAF_IN_PLACE", "NON_LEAF_GRAD"]

FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
"""A second backward through a graph whose saved values are freed (a RuntimeError)."""

NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead."
)
"""Reading ``.grad`` of a non-leaf that did not retain it (a UserWarning)."""

LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."
"""An in-place operation on a leaf that requires grad, outside no_grad (a RuntimeError)."""
