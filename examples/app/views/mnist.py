"""MNIST: sample test images, the current checkpoint's predictions, the first layer's filters.

Needs the MNIST files (``MINITORCH_DATA`` or the folder typed below) for the images, and
mt-nn with a checkpoint of ``examples/train_mnist.py`` for predictions and filters. Each
missing piece is named on the page; the rest still shows.
"""

import os
from pathlib import Path

import numpy as np
import streamlit as st
from explorer.mnist import (
    DATA_ENV,
    MnistError,
    find_checkpoint,
    find_mnist_dir,
    first_layer,
    load_model,
    model_problem,
    predict,
    sample_images,
)
from explorer.plots import CONFIG, filters_figure


@st.cache_data(show_spinner=False, max_entries=4)
def _samples(folder: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return sample_images(Path(folder), count, seed)


st.title("MNIST")
st.caption(
    "Handwritten digits from the MNIST test set, what the current checkpoint predicts for "
    "them, and what its first convolution layer has learned."
)

left, middle, right = st.columns([3, 1, 1])
data_dir = left.text_input(
    "Data folder", value=os.environ.get(DATA_ENV, ""), key="data_dir", placeholder=DATA_ENV
)
count = middle.slider("Images", 4, 32, 16, step=4, key="count")
seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="mnist_seed")

try:
    folder = find_mnist_dir(data_dir.strip() or None)
    images, labels = _samples(str(folder), int(count), int(seed))
except MnistError as exc:
    st.info(f"MNIST data not available: {exc}.", icon=":material/info:")
    st.stop()

predictions: np.ndarray | None = None
layer = None
problem = model_problem()
if problem is None:
    checkpoint = find_checkpoint(st.session_state.get("checkpoint") or None)
    st.text_input(
        "Checkpoint",
        value=str(checkpoint or ""),
        key="checkpoint",
        help="Default: $MINITORCH_CHECKPOINT, else the newest MNIST checkpoint under runs/",
    )
    if checkpoint is None:
        problem = "no checkpoint found; train one with examples/train_mnist.py"
    else:
        try:
            model = load_model(checkpoint)
            predictions = predict(model, images)
            layer = first_layer(model)
        except MnistError as exc:
            problem = str(exc)
if problem:
    st.info(f"Showing the images only: {problem}.", icon=":material/info:")

st.subheader(f"{len(images)} test images from {folder}")
columns = st.columns(8)
for i, (image, label) in enumerate(zip(images, labels, strict=True)):
    caption = f"label {label}"
    if predictions is not None:
        mark = "✓" if predictions[i] == label else "✗"
        caption += f", predicted {predictions[i]} {mark}"
    columns[i % 8].image(image, caption=caption, width="stretch", clamp=True)
if predictions is not None:
    st.metric("accuracy on these images", f"{np.mean(predictions == labels):.0%}")

if layer is not None:
    filters = layer.filters
    st.subheader(f"First layer `{layer.name}`: {filters.shape[0]} filters of {filters.shape[2:]}")
    st.plotly_chart(
        filters_figure(filters[:, 0], [f"filter {k}" for k in range(len(filters))]),
        key="filters_chart",
        config=CONFIG,
    )
    pick = st.slider("Feature maps of image", 0, len(images) - 1, 0, key="pick")
    maps = layer.feature_maps(images[pick])
    st.plotly_chart(
        filters_figure(maps, [f"map {k}" for k in range(len(maps))]),
        key="maps_chart",
        config=CONFIG,
    )
