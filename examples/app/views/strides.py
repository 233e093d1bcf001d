"""Strides: a tensor's storage as a strip, the tensor as a grid, and which cell each index reads."""

import pandas as pd
import streamlit as st

from mt_explorer.plots import CONFIG, storage_figure, tensor_figure
from mt_explorer.strides import StrideError, explore, parse_shape, position_formula

st.title("Strides")
st.caption(
    "`t` is a contiguous tensor holding 0, 1, 2, ... in its storage. `permute` and `view` "
    "make new tensors over the *same* storage with other shapes and strides; `contiguous()` "
    "copies. The element at an index is read from storage position "
    "`sum(index[d] * strides[d])`. Same colour = same storage cell."
)

EXAMPLES = {
    "transpose": ("2, 3", "t.permute(1, 0)"),
    "view as 3 x 2": ("2, 3", "t.view(3, 2)"),
    "permute 3-D": ("2, 3, 4", "t.permute(2, 0, 1)"),
    "view after permute (fails)": ("2, 3", "t.permute(1, 0).view(6)"),
    "permute, copy, view": ("2, 3", "t.permute(1, 0).contiguous().view(6)"),
    "no change": ("3, 4", "t"),
}


def _load_example() -> None:
    if st.session_state["example"] is None:
        return
    shape, code = EXAMPLES[st.session_state["example"]]
    st.session_state["shape"] = shape
    st.session_state["code"] = code


# The first visit starts from the URL (``/strides?shape=2,3,4&code=t.permute(2,0,1)``) or
# the first example.
st.session_state.setdefault("shape", st.query_params.get("shape", EXAMPLES["transpose"][0]))
st.session_state.setdefault("code", st.query_params.get("code", EXAMPLES["transpose"][1]))

left, middle, right = st.columns([1, 1, 2])
left.selectbox(
    "Example",
    list(EXAMPLES),
    index=None,
    placeholder="Load an example",
    key="example",
    on_change=_load_example,
)
shape_text = middle.text_input("Shape of t", key="shape")
code = right.text_input(
    "Calls on t", key="code", help="A chain of .permute(...), .view(...), .contiguous()"
)

try:
    view = explore(parse_shape(shape_text), code)
except StrideError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

columns = ["tensor", "shape", "strides", "contiguous", "same storage as t"]
steps = [(s.code, str(s.shape), str(s.strides), s.contiguous, s.shares_storage) for s in view.steps]
st.dataframe(pd.DataFrame(steps, columns=columns), hide_index=True, key="steps")

st.subheader(f"Pick an index of the result (shape {view.shape}, strides {view.strides})")
index_columns = st.columns(max(len(view.shape), 1) + 2)
index = tuple(
    int(index_columns[d].number_input(f"index[{d}]", 0, size - 1, key=f"index_{d}_of_{view.shape}"))
    for d, size in enumerate(view.shape)
)
position = int(view.positions[index])
st.markdown(
    f"`t{list(index)}` reads storage position **{position}**: "
    f"`{position_formula(index, view.strides)}`; its value is **{view.storage[position]:g}**."
)

st.plotly_chart(
    tensor_figure(view.positions, view.values, index),
    key="tensor_chart",
    config=CONFIG,
    width="content",
)
st.plotly_chart(
    storage_figure(view.storage, position), key="storage_chart", config=CONFIG, width="content"
)
