"""MNIST: sample test images, the current checkpoint's predictions, the first layer's filters.

What is missing (mt-nn, the data, a checkpoint of ``examples/train_mnist.py``) is named on
the page.
"""

import os
from pathlib import Path

import numpy as np
import streamlit as st

from mt_explorer.mnist import (
    MnistError,
    feature_maps,
    find_checkpoint,
    load_model,
    nn_problem,
    predict,
    sample_images,
)
from mt_explorer.plots import CONFIG, filters_figure

COLUMNS = 8

st.title("MNIST")
st.caption(
    "Handwritten digits from the MNIST test set, what the current checkpoint of "
    "`examples/train_mnist.py` predicts for them, and what its first convolution has learned."
)

problem = nn_problem()
if problem:
    st.info(f"The MNIST page needs mt-nn: {problem}.", icon=":material/info:")
    st.stop()


@st.cache_data(show_spinner=False, max_entries=4)
def _samples(folder: str | None, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    images, labels, where = sample_images(folder, count, seed)
    return images, labels, str(where)


left, middle, right = st.columns([3, 1, 1])
data_dir = left.text_input(
    "Data folder",
    value=os.environ.get("MINITORCH_DATA", ""),
    key="data_dir",
    placeholder="MINITORCH_DATA",
    help="The folder with mnist/t10k-images-idx3-ubyte.gz and mnist/t10k-labels-idx1-ubyte.gz",
)
count = middle.slider("Images", 4, 32, 16, step=4, key="count")
seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="mnist_seed")

try:
    images, labels, folder = _samples(data_dir.strip() or None, int(count), int(seed))
except MnistError as exc:
    st.info(f"MNIST data not available: {exc}", icon=":material/info:")
    st.stop()

checkpoint_text = st.text_input(
    "Checkpoint",
    value=str(find_checkpoint() or ""),
    key="checkpoint",
    help="Default: $MINITORCH_CHECKPOINT, else the newest MNIST checkpoint under runs/",
)
loaded = None
if not checkpoint_text.strip():
    st.info(
        "No checkpoint yet, so no predictions: train one with "
        "`python examples/train_mnist.py --data-dir DATA` (it writes runs/mnist/mnist.npz).",
        icon=":material/info:",
    )
else:
    try:
        loaded = load_model(Path(checkpoint_text.strip()))
    except MnistError as exc:
        st.error(f"Cannot use this checkpoint: {exc}", icon=":material/error:")

predictions = predict(loaded.model, images) if loaded else None
st.subheader(f"{len(images)} test images from {folder}")
columns = st.columns(COLUMNS)
for i, (image, label) in enumerate(zip(images, labels, strict=True)):
    caption = f"label {label}"
    if predictions is not None:
        mark = "✓" if predictions[i] == label else "✗"
        caption += f", predicted {predictions[i]} {mark}"
    columns[i % COLUMNS].image(image, caption=caption, width="stretch")

if loaded is not None and predictions is not None:
    meta = ", ".join(
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in loaded.metadata.items()
    )
    st.metric("correct on these images", f"{np.mean(predictions == labels):.0%}")
    st.caption(f"Checkpoint {loaded.path}" + (f" ({meta})" if meta else ""))
    filters = loaded.model.conv1.weight.value.to_numpy()
    st.subheader(f"First layer `conv1`: {filters.shape[0]} filters of {filters.shape[2:]}")
    st.plotly_chart(
        filters_figure(filters[:, 0], [f"filter {k}" for k in range(len(filters))]),
        key="filters_chart",
        config=CONFIG,
    )
    pick = st.slider("Feature maps of image", 0, len(images) - 1, 0, key="pick")
    maps = feature_maps(loaded.model, images[pick])
    image_column, maps_column = st.columns([1, 6])
    image_column.image(images[pick], caption=f"image {pick}", width="stretch")
    maps_column.plotly_chart(
        filters_figure(maps, [f"conv1 map {k}" for k in range(len(maps))]),
        key="maps_chart",
        config=CONFIG,
    )
