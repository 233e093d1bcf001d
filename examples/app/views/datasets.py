"""Datasets: the six toy datasets as scatter plots, with N and the seed adjustable."""

import streamlit as st

from minitorch.operators import datasets
from mt_explorer.plots import CONFIG, dataset_figure

st.title("Datasets")
st.caption(
    "The course's toy datasets: N points in the unit square, labelled 0 (blue) or 1 (red). "
    "`datasets[name](N, seed=...)` returns `Graph(N, X, y)`; `spiral` ignores the seed."
)

left, right = st.columns(2)
n_points = left.slider("Points (N)", min_value=10, max_value=500, value=100, step=10, key="n")
seed = right.number_input("Seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key="seed")

columns = st.columns(3)
for i, name in enumerate(datasets):
    data = datasets[name](int(n_points), seed=int(seed))
    ones = sum(data.y)
    title = f"{name}: {ones} of {data.N} labelled 1"
    with columns[i % 3]:
        st.plotly_chart(dataset_figure(data, title), key=f"chart_{name}", config=CONFIG)
