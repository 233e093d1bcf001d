"""MiniTorch explorer: the data, a network set by hand, the training, the graphs, the strides.

Start it with ``hatch run app`` (or ``streamlit run examples/app/app.py``). Each page is a
script in ``views/``; what the pages compute lives in ``mt_explorer``
(``examples/mt_explorer``).
"""

import streamlit as st

st.set_page_config(page_title="MiniTorch explorer", page_icon=":material/hub:", layout="wide")

PAGES = [
    st.Page("views/datasets.py", title="Datasets", icon=":material/scatter_plot:", default=True),
    st.Page("views/manual.py", title="Manual", icon=":material/tune:"),
    st.Page("views/train.py", title="Train", icon=":material/model_training:"),
    st.Page("views/autodiff.py", title="Autodiff graph", icon=":material/account_tree:"),
    st.Page("views/strides.py", title="Strides", icon=":material/grid_on:"),
    st.Page("views/mnist.py", title="MNIST", icon=":material/draw:"),
]

st.navigation(PAGES).run()
