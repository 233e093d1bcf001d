"""The computation graph of a Scalar: its nodes, their derivatives, and a Graphviz drawing.

``backward()`` stores derivatives only on the leaves; to show the derivative of the output
with respect to *every* node, ``node_derivatives`` repeats the walk ``backpropagate`` does
(``topological_sort``, then ``chain_rule`` node by node) and keeps each node's value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import graphviz

from minitorch.autodiff import Scalar, topological_sort


@dataclass(frozen=True)
class GraphNode:
    """One node of a computation graph, ready to display.

    Attributes:
        key: a short stable id (``n0`` is the output).
        label: the variable name, the function name (``Mul``), or ``const``.
        kind: ``"output"``, ``"function"``, ``"variable"`` or ``"constant"``.
        value: the node's value.
        derivative: d output / d node (None for constants).
        inputs: the keys of the nodes this one was computed from.
    """

    key: str
    label: str
    kind: str
    value: float
    derivative: float | None
    inputs: tuple[str, ...]


def node_derivatives(output: Scalar) -> dict[int, float]:
    """Return ``d output / d node`` for every non-constant node, keyed by ``unique_id``.

    The same walk as ``backpropagate``: nodes come output first from
    ``topological_sort``, and each passes its derivative to its inputs by ``chain_rule``.
    """
    derivatives: dict[int, float] = {output.unique_id: 1.0}
    for node in topological_sort(output):
        d = derivatives.get(node.unique_id)
        if d is None or node.is_leaf():
            continue
        for parent, d_parent in node.chain_rule(d):
            derivatives[parent.unique_id] = derivatives.get(parent.unique_id, 0.0) + d_parent
    return derivatives


def graph_nodes(output: Scalar) -> list[GraphNode]:
    """List every node ``output`` depends on, constants included, output first."""
    derivatives = node_derivatives(output)
    keys: dict[int, str] = {}
    order: list[Scalar] = []
    stack = [output]
    while stack:  # depth-first, so the drawing's node order follows the expression
        node = stack.pop()
        if id(node) in keys:
            continue
        keys[id(node)] = f"n{len(keys)}"
        order.append(node)
        stack.extend(reversed(node.parents))

    nodes = []
    for node in order:
        history = node.history
        fn = history.last_fn if history is not None else None
        if node is output:
            kind = "output"
        elif fn is not None:
            kind = "function"
        elif node.is_leaf():
            kind = "variable"
        else:
            kind = "constant"
        if fn is not None:
            label = fn.__name__ + (" (output)" if node is output else "")
        else:
            named = node.name != str(node.unique_id)  # unnamed nodes default to their id
            label = node.name if named else ("const" if node.is_constant() else "leaf")
        nodes.append(
            GraphNode(
                key=keys[id(node)],
                label=label,
                kind=kind,
                value=node.data,
                derivative=None if node.is_constant() else derivatives.get(node.unique_id, 0.0),
                inputs=tuple(keys[id(p)] for p in node.parents),
            )
        )
    return nodes


def _number(x: float) -> str:
    return str(x) if not math.isfinite(x) else f"{x:.4g}"


_STYLE = {
    "output": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#fde2b8"},
    "function": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8eef7"},
    "variable": {"shape": "ellipse", "style": "filled", "fillcolor": "#cfe8cf"},
    "constant": {"shape": "plaintext", "fontcolor": "#666666"},
}


def to_dot(nodes: list[GraphNode]) -> graphviz.Digraph:
    """Draw the nodes as a left-to-right Graphviz digraph, inputs on the left.

    Each node shows its value and its derivative (``grad``); constants show their value.
    """
    dot = graphviz.Digraph("computation", graph_attr={"rankdir": "LR"})
    dot.attr("node", fontname="Helvetica", fontsize="11")
    for node in nodes:
        if node.kind == "constant":
            text = _number(node.value)
        else:
            grad = _number(node.derivative) if node.derivative is not None else "-"
            text = f"{node.label}\\nvalue {_number(node.value)}\\ngrad {grad}"
        dot.node(node.key, text, **_STYLE[node.kind])
        for source in node.inputs:
            dot.edge(source, node.key)
    return dot
