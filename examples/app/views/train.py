"""Train: fit the course's network on a toy dataset, watching the loss and the boundary.

A background ``TrainingJob`` runs the examples' own ``train(...)``; a fragment redraws its
progress every half second, so the page and its Stop button stay live. The URL can preset
the form: ``/train?dataset=spiral&backend=simple&epochs=100``.
"""

import streamlit as st

from minitorch.operators import datasets
from mt_explorer.plots import CONFIG, boundary_figure, loss_figure
from mt_explorer.training import (
    BACKENDS,
    TrainingConfig,
    TrainingJob,
    backend_problem,
    config_from_query,
)

POLL_SECONDS = 0.5
RATES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]

st.title("Train")
st.caption(
    "A network with two hidden ReLU layers and a sigmoid output, trained by full-batch "
    "gradient descent on the mean binary cross-entropy (`examples/train_scalar.py` and "
    "`examples/train_tensor.py`). The shading is the model's P(y = 1); the black line is "
    "its decision boundary."
)


def start_training() -> None:
    """Start a job with the form's values (a callback: it runs before the page is drawn)."""
    state = st.session_state
    job = state.get("train_job")
    if job is not None and not job.snapshot().finished:
        return
    fields = ("dataset", "backend", "hidden", "lr", "epochs", "points", "seed")
    state["train_job"] = TrainingJob(TrainingConfig(**{k: state[k] for k in fields})).start()


def stop_training() -> None:
    """Ask the running job to stop after its current epoch."""
    job = st.session_state.get("train_job")
    if job is not None:
        job.stop()


job: TrainingJob | None = st.session_state.get("train_job")
running = job is not None and not job.snapshot().finished
available = [name for name in BACKENDS if backend_problem(name) is None]
preset = config_from_query(st.query_params.to_dict())
rates = sorted({*RATES, preset.lr})

with st.form("settings", border=False):
    row1 = st.columns(4)
    names = list(datasets)
    row1[0].selectbox("Dataset", names, index=names.index(preset.dataset), key="dataset")
    row1[1].selectbox(
        "Backend",
        available,
        index=available.index(preset.backend) if preset.backend in available else 0,
        key="backend",
        help="\n".join(f"- **{name}**: {text}" for name, text in BACKENDS.items()),
    )
    row1[2].slider("Hidden size", 2, 50, min(preset.hidden, 50), key="hidden")
    row1[3].select_slider("Learning rate", rates, value=preset.lr, key="lr")
    row2 = st.columns(4)
    row2[0].number_input("Epochs", 1, 5000, min(preset.epochs, 5000), 50, key="epochs")
    row2[1].slider("Points", 10, 200, min(max(preset.points, 10), 200), 10, key="points")
    row2[2].number_input("Seed", 0, 2**31 - 1, preset.seed, key="seed")
    row2[3].form_submit_button(
        "Train",
        type="primary",
        disabled=running,
        icon=":material/play_arrow:",
        key="train",
        on_click=start_training,
    )

missing = [name for name in BACKENDS if name not in available]
if missing:
    st.caption(" ".join(f"{name}: {backend_problem(name)}." for name in missing))

if running:
    st.button("Stop", icon=":material/stop:", key="stop", on_click=stop_training)


@st.fragment(run_every=POLL_SECONDS if running else None)
def progress_view() -> None:
    """Draw the job's progress; rerun the whole page once it has finished."""
    job: TrainingJob | None = st.session_state.get("train_job")
    if job is None:
        st.info("Choose the settings and press **Train**.")
        return
    p = job.snapshot()
    cfg = job.config
    done = len(p.losses)
    if p.status == "waiting":
        st.info("Waiting for another training run in this server to finish...")
    elif p.status == "running" and done == 0:
        fast = cfg.backend == "fast"
        compiling = " and compiles the fast kernels (up to a minute the first time)" if fast else ""
        st.info(f"Starting: the first epoch builds the model{compiling}.")
    st.progress(done / p.epochs, text=f"{cfg.backend} on {cfg.dataset}: epoch {done}/{p.epochs}")
    metrics = st.columns(4)
    metrics[0].metric("epoch", f"{done}/{p.epochs}")
    metrics[1].metric("loss", f"{p.losses[-1]:.4f}" if p.losses else "-")
    metrics[2].metric("accuracy", f"{p.accuracies[-1]:.1%}" if p.accuracies else "-")
    final = f"{p.final_accuracy:.1%}" if p.final_accuracy is not None else "-"
    metrics[3].metric("final accuracy", final)
    left, right = st.columns(2)
    title = f"Decision boundary after epoch {p.boundary_epoch}"
    left.plotly_chart(
        boundary_figure(p.data, p.boundary, title), key="boundary_chart", config=CONFIG
    )
    right.plotly_chart(loss_figure(p.losses, p.accuracies), key="loss_chart", config=CONFIG)

    if p.status == "done":
        st.success(f"Done in {p.seconds:.1f} s: final accuracy {final}.")
    elif p.status == "stopped":
        st.warning(f"Stopped after {done} of {p.epochs} epochs: accuracy {final}.")
    elif p.status == "failed":
        st.error(f"Training failed: {p.error}")
    if p.finished and running:
        st.rerun()  # the whole page: stop polling, enable Train again


progress_view()
