"""Autodiff graph: type an expression over Scalars and see its graph after ``backward()``."""

import pandas as pd
import streamlit as st

from minitorch.autodiff import central_difference
from mt_explorer.autodiff_graph import graph_nodes, to_dot
from mt_explorer.expression import ExpressionError, evaluate, parse_variables

st.title("Autodiff graph")
st.caption(
    "Each variable becomes a leaf `Scalar`; every operation records its inputs in "
    "`history`. After `out.backward()` each node shows its value and `grad`, the derivative "
    "of the output with respect to it. `a - b` is recorded as `Add(a, Neg(b))` and `a / b` "
    "as `Mul(a, Inv(b))`."
)

left, right = st.columns([2, 1])
expression = left.text_input(
    "Expression",
    value="(x * y + x.exp()).log()",
    key="expression",
    help="Variables, numbers, + - * /, unary -, and the methods .log() .exp() .sigmoid() "
    ".relu(). Nothing else is evaluated.",
)
variables_text = right.text_input("Variables", value="x = 2.0, y = 0.5", key="variables")

try:
    values = parse_variables(variables_text)
    result = evaluate(expression, values)
except ExpressionError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

out = result.output
out.backward()

cols = st.columns(1 + len(result.variables))
cols[0].metric("out", f"{out.data:.6g}")
for col, (name, leaf) in zip(cols[1:], result.variables.items(), strict=True):
    col.metric(
        f"d out / d {name}", "unused" if leaf.derivative is None else f"{leaf.derivative:.6g}"
    )

nodes = graph_nodes(out)
st.graphviz_chart(to_dot(nodes), width="stretch")


names = list(values)


def as_function(*xs: float) -> float:
    """The expression as a function of floats, for ``central_difference``."""
    return evaluate(expression, dict(zip(names, xs, strict=True))).output.data


with st.expander("Check the derivatives against central differences", expanded=False):
    columns = ["variable", "value", "backward()", "central difference"]
    rows = [
        (
            name,
            leaf.data,
            leaf.derivative or 0.0,
            central_difference(as_function, *values.values(), arg=i),
        )
        for i, (name, leaf) in enumerate(result.variables.items())
    ]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, key="check")

with st.expander("Every node", expanded=False):
    columns = ["node", "kind", "label", "value", "grad", "inputs"]
    rows = [(n.key, n.kind, n.label, n.value, n.derivative, ", ".join(n.inputs)) for n in nodes]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, key="nodes")
