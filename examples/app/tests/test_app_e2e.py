"""End to end: the real server on localhost, each page loaded in headless Chromium.

A page passes when Streamlit reports it connected and idle, its expected text and charts
are drawn, and it shows no exception, no error box and no JavaScript error. Screenshots and
the server's log go to ``test-artifacts/app/``. Without Chromium and chromium-driver
(``examples/app/install-browser.sh``) the test is skipped, except in CI, where it fails.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mt_testing import (
    ARTIFACTS,
    Browser,
    find_browser,
    missing,
    require_app_packages,
    streamlit_server,
    write_fake_mnist,
    write_untrained_checkpoint,
)

require_app_packages()

pytestmark = pytest.mark.task0_5


@pytest.fixture(scope="module")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS.parent / ".gitignore").write_text("# test output, never committed\n*\n")
    return ARTIFACTS


@pytest.fixture(scope="module")
def mnist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for the MNIST page: the real data if ``MINITORCH_DATA`` has it, else fake
    images; the newest checkpoint under runs/, else an untrained one (without mt-nn: none).
    """
    from mt_explorer.mnist import MnistError, find_checkpoint, nn_problem, sample_images

    if nn_problem():
        return {}
    folder = tmp_path_factory.mktemp("mnist")
    env = {}
    try:
        sample_images(None, 1, 0)
    except MnistError:
        env["MINITORCH_DATA"] = str(write_fake_mnist(folder / "data"))
    checkpoint = find_checkpoint() or write_untrained_checkpoint(folder / "mnist.npz")
    env["MINITORCH_CHECKPOINT"] = str(checkpoint)
    return env


@pytest.fixture(scope="module")
def manual_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Manual page's export: the course's weights, but simple's bias at -5 (a line at
    x1 = -0.5, so every point gets label 0), which the browser test moves to 5."""
    from mt_examples import run_manual

    networks = run_manual.load_export(Path(run_manual.__file__).with_name(run_manual.EXPORT_NAME))
    networks["simple"]["output.bias_0"] = -5.0
    path = tmp_path_factory.mktemp("manual") / run_manual.EXPORT_NAME
    run_manual.write_export(path, networks)
    return path


@pytest.fixture(scope="module")
def server(
    artifacts: Path, mnist: dict[str, str], manual_export: Path, browser: Browser
) -> Iterator[str]:
    env = {**mnist, "MINITORCH_MANUAL_EXPORT": str(manual_export)}
    with streamlit_server(artifacts / "server.log", env=env) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    found = find_browser()
    if found is None:  # a failure in CI, of these tests only; a skip elsewhere
        missing("Chromium and chromium-driver", "sh examples/app/install-browser.sh")
    assert found is not None
    with Browser(*found) as b:
        yield b


#: Each page: its name (and path), a text it shows when drawn, the kind of chart it draws.
PAGES = [
    ("datasets", "spiral:", "plotly"),
    ("manual", "Set the weights by hand", "plotly"),
    ("train", "Choose the settings", None),
    ("autodiff", "d out / d x", "graphviz"),
    ("strides", "reads storage position", "plotly"),
    ("mnist", "correct on these images", "plotly"),
]


@pytest.mark.parametrize("page", PAGES, ids=[page[0] for page in PAGES])
def test_page_renders_without_errors(
    server: str, browser: Browser, artifacts: Path, mnist: dict[str, str], page: tuple
) -> None:
    name, expect, charts = page
    path = "" if name == "datasets" else name
    if name == "mnist" and not mnist:
        expect, charts = "The MNIST page needs mt-nn", None
    js_errors = len(browser.js_errors)
    # The MNIST page's first load may compile the fast backend's conv kernels (minutes on a
    # busy machine with a cold Numba cache).
    timeout = 300 if name == "mnist" else 60
    state = browser.load(f"{server}/{path}", expect, timeout=timeout, charts=charts)
    browser.screenshot(artifacts / f"{name}.png")
    assert not state.exceptions, state.exceptions
    assert not state.errors, state.errors
    assert browser.js_errors[js_errors:] == []


def test_training_streams_progress_to_the_browser(
    server: str, browser: Browser, artifacts: Path
) -> None:
    # Long enough that it cannot finish before Stop lands, on any machine; the test presses
    # Stop as soon as it has seen an intermediate epoch.
    epochs = 5000
    query = f"dataset=xor&backend=simple&epochs={epochs}&points=16&hidden=4"
    browser.load(f"{server}/train?{query}", "Choose the settings")
    browser.click_button("Train")

    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = browser.state()
        assert state is not None
        assert not state.exceptions, state.exceptions
        seen.update(int(n) for n in re.findall(rf"epoch (\d+)/{epochs}", state.text))
        if any(0 < n < epochs for n in seen) or "Done in" in state.text:
            break
        time.sleep(0.25)
    assert any(0 < n < epochs for n in seen), f"no progress seen before the end: {sorted(seen)}"

    # The page re-renders twice a second, so a click can land on a button that is being
    # replaced: click again until the stop shows (bounded). A click that worked removes the
    # button, so a missing button is no reason to stop waiting for the page to say so.
    tries: list[str] = []
    for _ in range(10):
        with contextlib.suppress(LookupError):
            browser.click_button("Stop")
        try:
            state = browser.wait_for("Stopped after", timeout=6, charts="plotly")
            break
        except TimeoutError as exc:
            tries.append(str(exc)[-300:])
    else:
        pytest.fail("pressing Stop never stopped the training run: " + "\n".join(tries))
    time.sleep(0.5)  # let Plotly finish its transition before the picture
    browser.screenshot(artifacts / "train-stopped.png")
    assert not state.errors, state.errors
    assert re.search(rf"Stopped after \d+ of {epochs} epochs: accuracy \d+\.\d%", state.text)


def test_manual_weights_set_in_the_browser_are_saved_and_pass(
    server: str, browser: Browser, artifacts: Path, manual_export: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from mt_examples import run_manual

    data = run_manual.graded_data("simple")
    before = f"{1 - sum(data.y) / data.N:.0%}"  # every point labelled 0
    state = browser.load(f"{server}/manual", "Set the weights by hand", charts="plotly")
    assert before in state.text
    assert "100%" not in state.text

    # Streamlit's slider is a visually hidden <input type="range"> (react-aria) under its
    # thumb: focus it, as a click on the thumb would, and press the arrow keys.
    bias = browser.driver.find_element(
        By.CSS_SELECTOR, 'input[type="range"][aria-label="output.bias_0"]'
    )
    assert bias.get_attribute("value") == "-5"
    browser.driver.execute_script("arguments[0].focus();", bias)
    keys = ActionChains(browser.driver)
    for _ in range(20):  # -5 to 5 in steps of 0.5
        keys.send_keys(Keys.ARROW_RIGHT)
    keys.perform()
    state = browser.wait_for("100%", timeout=60, charts="plotly")
    bias = browser.driver.find_element(
        By.CSS_SELECTOR, 'input[type="range"][aria-label="output.bias_0"]'
    )
    assert bias.get_attribute("value") == "5"
    browser.click_button("Save")
    state = browser.wait_for("Saved to", timeout=60)
    browser.screenshot(artifacts / "manual-saved.png")
    assert not state.errors, state.errors
    saved = run_manual.load_export(manual_export)
    assert saved["simple"]["output.bias_0"] == 5.0
    # What the page saved is the course's export, which the grader grades in full
    # (tools/course/tests/test_grade.py).
    course = Path(run_manual.__file__).with_name(run_manual.EXPORT_NAME)
    assert saved == run_manual.load_export(course)
    for dataset, values in saved.items():
        score = run_manual.score(dataset, run_manual.build(dataset, values))
        assert score.passed, score.message
