"""Each page of the explorer driven by Streamlit's AppTest: set inputs, run, check the output.

The app is started from its entry point (``app.py``, which declares the pages with
``st.navigation``) and each test switches to its page, as a user would.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mt_testing import (
    APP,
    missing,
    require_app_packages,
    require_mt_nn,
    write_fake_mnist,
    write_untrained_checkpoint,
)

require_app_packages()

from streamlit.testing.v1 import AppTest  # noqa: E402

from minitorch.operators import datasets  # noqa: E402

TIMEOUT = 60  # seconds for one script run (the first imports plotly, pandas, ...)


def open_page(page: str, query: dict[str, str] | None = None) -> AppTest:
    """Run the app and switch to ``views/<page>.py``."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page != "datasets":
        at.switch_page(f"views/{page}.py").run()
    assert not at.exception, at.exception
    return at


def charts(at: AppTest) -> list[dict[str, Any]]:
    """The Plotly figures on the page, as the JSON the browser receives."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def traces(figure: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t.get("name", t["type"]): t for t in figure["data"]}


def images(at: AppTest) -> list[Any]:
    """The ``st.image`` elements on the page (the element type was renamed in Streamlit 1.5x)."""
    return list(at.get("image")) or list(at.get("imgs"))


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# --- Datasets ------------------------------------------------------------------------------


def _chart_of(at: AppTest, name: str) -> dict[str, dict[str, Any]]:
    """The traces of dataset ``name``'s chart."""
    (figure,) = [f for f in charts(at) if f["layout"]["title"]["text"].startswith(f"{name}:")]
    return traces(figure)


@pytest.mark.task0_5
def test_datasets_page_plots_all_six_with_n_points_and_the_seed() -> None:
    at = open_page("datasets")
    figures = charts(at)
    assert len(figures) == 6
    titles = [f["layout"]["title"]["text"] for f in figures]
    assert sorted(t.split(":")[0] for t in titles) == sorted(datasets)
    for figure in figures:
        assert sum(len(t["x"]) for t in figure["data"]) == 100

    at.slider(key="n").set_value(40).run()
    assert not at.exception
    assert all(sum(len(t["x"]) for t in f["data"]) == 40 for f in charts(at))

    before = _chart_of(at, "simple")  # label 1 left of x1 = 0.5
    at.number_input(key="seed").set_value(7).run()
    after = _chart_of(at, "simple")
    assert before["y = 0"]["x"] != after["y = 0"]["x"]
    assert all(x < 0.5 for x in after["y = 1"]["x"])
    assert all(x >= 0.5 for x in after["y = 0"]["x"])


# --- Manual ----------------------------------------------------------------------------------


@pytest.mark.task0_5
def test_manual_page_redraws_with_the_sliders_and_saves_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mt_examples import run_manual

    export = tmp_path / "manual_weights.json"
    monkeypatch.setenv("MINITORCH_MANUAL_EXPORT", str(export))
    at = open_page("manual")
    data = run_manual.graded_data("simple")
    # Every weight 0: P(y = 1) = 0.5 everywhere, so every point gets label 0.
    assert metrics(at)["accuracy"] == f"{1 - sum(data.y) / data.N:.0%}"
    (figure,) = charts(at)
    assert {t["type"] for t in figure["data"]} == {"contour", "scatter"}

    at.slider(key="manual_simple_output.weight_0_0").set_value(-10.0).run()
    at.slider(key="manual_simple_output.bias_0").set_value(5.0).run()
    assert not at.exception, at.exception
    assert metrics(at)["accuracy"] == "100%"
    (figure,) = charts(at)
    shade = next(t for t in figure["data"] if t["type"] == "contour")["z"]
    assert shade[0][0] > 0.5 > shade[0][-1]  # label 1 left of x1 = 0.5

    # Another dataset and back: the weights set are kept, saved or not.
    at.radio(key="manual_dataset").set_value("split").run()
    assert len(at.slider) == 9  # a hidden layer of two: 6 + 3 weights
    at.slider(key="manual_split_layer1.bias_1").set_value(-3.5).run()
    at.radio(key="manual_dataset").set_value("simple").run()
    assert metrics(at)["accuracy"] == "100%"

    at.button(key="manual_save").click().run()
    assert not at.exception, at.exception
    assert "Saved to" in at.success[0].value
    saved = run_manual.read_export(export.read_text())
    assert set(saved) == {"simple", "split"}
    assert saved["simple"]["output.bias_0"] == 5.0
    assert saved["split"]["layer1.bias_1"] == -3.5
    assert json.loads(export.read_text())["networks"]["simple"]["accuracy"] == 1.0

    fresh = open_page("manual")  # a new session starts from the export
    assert metrics(fresh)["accuracy"] == "100%"


@pytest.mark.task0_5
def test_the_starters_page_runs_as_a_script_under_streamlit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python run_manual.py --app` (a starter has no explorer) runs the script itself under
    # Streamlit: it must draw the page, not end the run as its command line does.
    from mt_examples import run_manual

    monkeypatch.setenv("MINITORCH_MANUAL_EXPORT", str(tmp_path / "manual_weights.json"))
    at = AppTest.from_file(run_manual.__file__, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Set the weights by hand"
    assert metrics(at)["accuracy"].endswith("%")


@pytest.mark.task0_5
def test_manual_page_says_when_the_export_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "manual_weights.json"
    export.write_text("{")
    monkeypatch.setenv("MINITORCH_MANUAL_EXPORT", str(export))
    at = open_page("manual")
    assert "cannot be read" in at.error[0].value
    assert metrics(at)["accuracy"]


# --- Train -----------------------------------------------------------------------------------


def _start_training(at: AppTest, stop_training: list) -> Any:
    at.button(key="train").click().run()
    assert not at.exception, at.exception
    job = at.session_state["train_job"]
    stop_training.append(job)
    return job


@pytest.mark.parametrize(
    ("backend", "dataset", "grid"),
    [
        pytest.param("simple", "simple", 21, marks=pytest.mark.task2_5),
        pytest.param("scalar", "diag", 21, marks=pytest.mark.task1_5),  # a network of Scalars
        pytest.param("fast", "xor", 41, marks=pytest.mark.task3_5),  # it draws a finer grid
    ],
)
def test_train_page_trains(backend: str, dataset: str, grid: int, stop_training: list) -> None:
    from mt_explorer.training import backend_problem

    if backend_problem(backend):
        missing(f"the {backend} backend", backend_problem(backend) or "")
    at = open_page("train", {"backend": backend, "epochs": "4", "points": "10", "hidden": "3"})
    assert at.selectbox(key="backend").value == backend
    assert at.info[0].value.startswith("Choose the settings")
    at.selectbox(key="dataset").set_value(dataset)

    job = _start_training(at, stop_training)
    assert (job.config.backend, job.config.dataset) == (backend, dataset)
    assert job.join(timeout=300)  # the first fast run may compile the kernels
    at.run()
    assert not at.exception
    p = job.snapshot()
    assert p.status == "done", p.error
    assert len(p.accuracies) == 4
    shown = metrics(at)
    assert shown["epoch"] == "4/4"
    assert shown["final accuracy"] == f"{p.final_accuracy:.1%}"
    assert at.success[0].value.endswith(f"final accuracy {p.final_accuracy:.1%}.")

    boundary, loss = charts(at)
    assert traces(loss)["loss"]["y"] == pytest.approx(p.losses)
    assert len(p.losses) == 4
    probs = traces(boundary)["P(y = 1)"]["z"]
    assert len(probs) == len(probs[0]) == grid
    assert len(traces(boundary)["y = 0"]["x"]) + len(traces(boundary)["y = 1"]["x"]) == 10
    assert at.button(key="train").disabled is False


@pytest.mark.task2_5
def test_train_page_stays_live_while_training_and_stop_works(stop_training: list) -> None:
    at = open_page("train", {"backend": "simple", "epochs": "5000", "points": "10", "hidden": "2"})
    job = _start_training(at, stop_training)
    # The run that started training returned at once: the page is drawn while the
    # background thread trains, with the Train button disabled and a Stop button.
    assert at.button(key="train").disabled is True
    deadline = time.monotonic() + 60
    while len(job.snapshot().losses) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    at.run()  # what the polling fragment shows mid-training
    epoch = int(metrics(at)["epoch"].split("/")[0])
    assert 1 <= epoch < 5000
    assert job.snapshot().status == "running"

    at.button(key="stop").click().run()
    assert job.join(timeout=60)
    at.run()
    assert not at.exception
    p = job.snapshot()
    assert p.status == "stopped"
    assert 0 < len(p.losses) < 5000
    assert p.final_accuracy is not None
    assert at.warning[0].value.startswith(f"Stopped after {len(p.losses)} of 5000 epochs")


# --- Autodiff graph ----------------------------------------------------------------------------


@pytest.mark.task1_4
def test_autodiff_page_shows_values_derivatives_and_the_graph() -> None:
    at = open_page("autodiff")
    x, y = 2.0, 0.5
    inner = x * y + math.exp(x)
    shown = metrics(at)
    assert float(shown["out"]) == pytest.approx(math.log(inner), rel=1e-5)
    assert float(shown["d out / d x"]) == pytest.approx((y + math.exp(x)) / inner, rel=1e-5)
    assert float(shown["d out / d y"]) == pytest.approx(x / inner, rel=1e-5)
    (graph,) = at.get("graphviz_chart")
    dot = graph.proto.spec
    for label in ("Log (output)", "Exp", "Mul", "Add", "x\\nvalue 2", "y\\nvalue 0.5"):
        assert label in dot
    check = at.dataframe[0].value
    assert check["backward()"].to_numpy() == pytest.approx(
        check["central difference"].to_numpy(), rel=1e-4
    )


@pytest.mark.task1_4
def test_autodiff_page_new_expression_and_variables_and_refused_code() -> None:
    at = open_page("autodiff")
    at.text_input(key="variables").set_value("a = -1, b = 3").run()
    at.text_input(key="expression").set_value("(a * b).relu() + b.sigmoid()").run()
    assert not at.exception
    shown = metrics(at)
    assert float(shown["d out / d a"]) == 0.0  # the relu is off
    s = 1 / (1 + math.exp(-3))
    assert float(shown["d out / d b"]) == pytest.approx(s * (1 - s), rel=1e-5)
    assert "ReLU" in at.get("graphviz_chart")[0].proto.spec
    for expression, message in [
        ("__import__('os').system('echo hacked')", "is not allowed"),
        ("a ** 2", "the operator ** is not allowed"),
        ("a + w", "unknown name 'w'"),
    ]:
        at.text_input(key="expression").set_value(expression).run()
        assert not at.exception
        assert message in at.error[0].value
        assert not at.get("graphviz_chart")


# --- Strides ---------------------------------------------------------------------------------


@pytest.mark.task2_1
def test_strides_page_shows_which_cell_each_index_reads() -> None:
    at = open_page("strides")
    steps = at.dataframe[0].value
    assert steps["strides"].tolist() == ["(3, 1)", "(1, 3)"]
    assert steps["contiguous"].tolist() == [True, False]

    at.number_input(key="index_0_of_(3, 2)").set_value(2)
    at.number_input(key="index_1_of_(3, 2)").set_value(1).run()
    assert "reads storage position **5**: `2*1 + 1*3 = 5`" in at.markdown[0].value
    grid, strip = charts(at)
    cells = grid["data"][0]["z"]  # storage position of each index
    assert cells == [[0, 3], [1, 4], [2, 5]]
    highlight = [s for s in strip["layout"]["shapes"]]
    assert highlight[0]["x0"] == pytest.approx(4.5)  # the storage strip marks cell 5


@pytest.mark.task2_1
def test_strides_page_starts_from_the_url() -> None:
    at = open_page("strides", {"shape": "4, 2", "code": "t.permute(1, 0)"})
    assert at.dataframe[0].value["strides"].tolist() == ["(2, 1)", "(1, 2)"]


@pytest.mark.task2_1
def test_strides_page_examples_and_errors() -> None:
    at = open_page("strides")
    at.selectbox(key="example").set_value("view after permute (fails)").run()
    assert not at.exception
    assert "call .contiguous() first" in at.error[0].value

    at.selectbox(key="example").set_value("permute, copy, view").run()
    steps = at.dataframe[0].value
    assert steps["same storage as t"].tolist() == [True, True, False, False]

    at.text_input(key="shape").set_value("2, 3, 4").run()
    at.text_input(key="code").set_value("t.permute(2, 0, 1)").run()
    assert not at.error
    grid = charts(at)[0]
    assert len(grid["data"]) == 4  # one grid per index of the first dimension (size 4)


# --- MNIST -----------------------------------------------------------------------------------


@pytest.fixture
def mnist_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake MNIST test files in ``MINITORCH_DATA``, and no checkpoint anywhere (yet)."""
    require_mt_nn()
    from mt_explorer import mnist as explorer_mnist

    monkeypatch.setenv("MINITORCH_DATA", str(write_fake_mnist(tmp_path / "data")))
    monkeypatch.delenv("MINITORCH_CHECKPOINT", raising=False)
    monkeypatch.setattr(explorer_mnist, "RUNS_DIR", tmp_path / "runs")
    return tmp_path


@pytest.mark.task4_5
def test_mnist_page_without_mt_nn_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from mt_explorer import mnist as explorer_mnist

    monkeypatch.setattr(explorer_mnist, "nn_problem", lambda: "mt-nn is not installed (...)")
    at = open_page("mnist")
    assert at.info[0].value.startswith("The MNIST page needs mt-nn: mt-nn is not installed")
    assert not images(at)


@pytest.mark.task4_5
def test_mnist_page_without_data_says_where_to_put_it(
    mnist_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITORCH_DATA", str(mnist_env / "empty"))
    at = open_page("mnist")
    message = at.info[0].value
    assert message.startswith("MNIST data not available")
    assert "t10k-images-idx3-ubyte" in message
    assert "MINITORCH_DATA" in message
    assert not images(at)


@pytest.mark.task4_5
def test_mnist_page_reports_a_corrupt_file(mnist_env: Path) -> None:
    labels = mnist_env / "data" / "mnist" / "t10k-labels-idx1-ubyte.gz"
    labels.write_bytes(b"not gzip")
    at = open_page("mnist")
    assert not at.exception
    assert "cannot be read" in at.info[0].value


@pytest.mark.task4_5
def test_mnist_page_shows_images_and_asks_for_a_checkpoint(mnist_env: Path) -> None:
    at = open_page("mnist")
    assert not at.exception
    assert len(images(at)) == 16
    assert at.subheader[0].value.startswith("16 test images")
    assert "No checkpoint yet" in at.info[0].value
    at.slider(key="count").set_value(8).run()
    assert len(images(at)) == 8


@pytest.mark.task4_5
def test_mnist_page_with_a_checkpoint_shows_predictions_filters_and_maps(
    mnist_env: Path,
) -> None:
    checkpoint = write_untrained_checkpoint(mnist_env / "runs" / "mnist" / "mnist.npz")
    at = open_page("mnist")
    assert not at.exception
    assert at.text_input(key="checkpoint").value == str(checkpoint)
    captions = [img.proto.imgs[0].caption for img in images(at)]
    assert len(captions) == 16 + 1  # the samples and the image of the feature maps
    assert all(re.fullmatch(r"label \d, predicted \d [✓✗]", c) for c in captions[:16])
    filters, maps = charts(at)
    assert len(filters["data"]) == 4  # conv1: 4 filters of 3 x 3
    assert len(filters["data"][0]["z"]) == 3
    assert len(maps["data"]) == 4  # and 4 feature maps of 28 x 28
    assert len(maps["data"][0]["z"]) == 28
    at.slider(key="pick").set_value(3).run()
    assert not at.exception


@pytest.mark.task4_5
def test_mnist_page_rejects_a_checkpoint_of_another_model(mnist_env: Path) -> None:

    wrong = mnist_env / "other.npz"
    np.savez(wrong, weight=np.zeros((2, 2)))
    at = open_page("mnist")
    at.text_input(key="checkpoint").set_value(str(wrong)).run()
    assert not at.exception
    assert "does not match Network" in at.error[0].value
    assert len(images(at)) == 16  # the images still show
