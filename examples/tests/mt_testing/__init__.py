"""Helpers of the examples' tests: help texts, data files, the server, and Chromium (Selenium).

The browser is Debian's ``chromium`` driven by Debian's ``chromium-driver`` (both installed by
``examples/app/install-browser.sh``); Selenium is given the driver's path, so Selenium
Manager never downloads anything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]  # examples/tests/mt_testing/__init__.py
APP = REPO / "examples" / "app" / "app.py"
#: Screenshots of the end-to-end test (a folder that ignores itself in git).
ARTIFACTS = REPO / "test-artifacts" / "app"


def assert_help_is_complete(parser: argparse.ArgumentParser) -> None:
    """Every option has help text that states its default at most once, never None or False."""
    formatter = parser._get_formatter()
    for action in parser._actions:
        text = formatter._get_help_string(action) or ""
        assert action.help, f"{action.option_strings} has no help"
        assert text.count("(default:") <= 1, text
        assert "(default: None)" not in text
        assert "(default: False)" not in text


def exit_message(main: Callable[[list[str]], Any], argv: str | list[str], code: int = 2) -> str:
    """Run a script's ``main(argv)``, which must exit with ``code``; return its stderr.

    ``argv`` is a list or a string split on spaces. The message must not be a traceback.
    """
    err = io.StringIO()
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(err):
        main(argv.split() if isinstance(argv, str) else argv)
    assert exc.value.code == code, err.getvalue()
    assert "Traceback" not in err.getvalue()
    return err.getvalue()


def missing(what: str, hint: str) -> None:
    """Fail in CI (``CI`` set), else skip the calling module: ``what`` is not available."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI: {hint}", pytrace=False)
    pytest.skip(f"{what} is not available ({hint})", allow_module_level=True)


def require_app_packages() -> None:
    """Skip (or fail in CI) unless every Python package of the app is importable."""
    for name in ("streamlit", "plotly", "graphviz"):
        if importlib.util.find_spec(name) is None:
            missing(f"the Python package {name!r}", f"pip install {name}")


def write_idx(path: Path, array: Any) -> None:
    """Write a uint8 array as a gzipped IDX file (MNIST's format: images 3-D, labels 1-D)."""
    import gzip

    import numpy as np

    header = (0x0800 + array.ndim).to_bytes(4, "big")
    header += b"".join(d.to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + np.asarray(array).astype(np.uint8).tobytes())


def write_fake_mnist(root: Path, count: int = 40, seed: int = 0) -> Path:
    """Write ``count`` random 28 x 28 'test images' in MNIST's file format under ``root/mnist``.

    Returns ``root``, a data folder for ``MINITORCH_DATA``.
    """
    import numpy as np

    folder = root / "mnist"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    write_idx(folder / "t10k-images-idx3-ubyte.gz", rng.integers(0, 256, (count, 28, 28)))
    write_idx(folder / "t10k-labels-idx1-ubyte.gz", rng.integers(0, 10, count))
    return root


def write_untrained_checkpoint(path: Path) -> Path:
    """Save a freshly initialised ``train_mnist.Network`` as a checkpoint (needs mt-nn)."""
    from minitorch.nn import save_checkpoint
    from minitorch.tensor import backend
    from mt_examples.train_mnist import Network

    model = Network(backend("fast"), seed=0)
    return save_checkpoint(model, path, epoch=0, note="untrained, for tests")


def require_mt_nn() -> None:
    """Skip (or fail in CI) unless mt-nn and the MNIST example are available."""
    from mt_explorer.mnist import nn_problem

    problem = nn_problem()
    if problem:
        missing("mt-nn", problem)


# --- the server and the browser ---------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,900",
]  # fmt: skip

# What the page shows: Streamlit marks its root element with the connection and script-run
# states, and an uncaught exception with ``stException``.
_PAGE_STATE = """
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return null;
  const texts = (sel) => Array.from(document.querySelectorAll(sel)).map((e) => e.innerText);
  return {
    connection: app.getAttribute('data-test-connection-state'),
    script: app.getAttribute('data-test-script-state'),
    exceptions: texts('[data-testid="stException"]'),
    errors: texts('[data-testid="stAlertContentError"]'),
    text: document.body.innerText,
    plotly: document.querySelectorAll('.js-plotly-plot .main-svg').length,
    graphviz: document.querySelectorAll('[data-testid="stGraphVizChart"] svg').length,
  };"""


def find_browser() -> tuple[str, str] | None:
    """Return Chromium and its driver, or None.

    ``$CHROMIUM`` and ``$CHROMEDRIVER`` if set, else ``chromium`` and ``chromedriver`` on
    PATH (or in ``$CHROMEWEBDRIVER``, where GitHub's runners keep theirs).
    """
    web_driver = os.path.join(os.environ.get("CHROMEWEBDRIVER", ""), "chromedriver")
    candidates = {
        "CHROMIUM": [shutil.which("chromium"), shutil.which("chromium-browser")],
        "CHROMEDRIVER": [shutil.which("chromedriver"), web_driver],
    }
    found = []
    for env, paths in candidates.items():
        path = os.environ.get(env) or next((p for p in paths if p and os.access(p, os.X_OK)), "")
        if not os.access(path, os.X_OK):
            return None
        found.append(path)
    return found[0], found[1]


def _wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
    return result


@contextlib.contextmanager
def streamlit_server(
    log_path: Path, env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[str]:
    """Run the app on a free localhost port, its output in ``log_path``; yield its URL.

    Raises:
        RuntimeError: if the server exits or is not healthy within ``timeout`` seconds.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [
        sys.executable, "-m", "streamlit", "run", str(APP), "--server.headless=true",
        "--server.address=127.0.0.1", f"--server.port={port}", "--server.fileWatcherType=none",
        "--browser.gatherUsageStats=false", "--client.toolbarMode=viewer",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )

        def healthy() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with {proc.returncode}:\n{log_path.read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    return bool(r.read().strip() == b"ok")
            except OSError:
                return False

        try:
            _wait_until(healthy, timeout, f"the streamlit server at {url}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@dataclass
class PageState:
    """What a loaded page showed (see ``_PAGE_STATE``)."""

    connection: str
    script: str
    exceptions: list[str]
    errors: list[str]
    text: str
    plotly: int
    graphviz: int


class Browser:
    """Headless Chromium, driven by Selenium through chromium-driver; a context manager."""

    def __init__(self, chromium: str, driver: str) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.TemporaryDirectory(prefix="mt-chrome-")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={self._profile.name}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
        self.driver = webdriver.Chrome(options=options, service=Service(executable_path=driver))
        self.js_errors: list[str] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.driver.quit()
        self._profile.cleanup()

    def state(self) -> PageState | None:
        """Return what the page shows now, or None before Streamlit's root exists."""
        value = self.driver.execute_script(_PAGE_STATE)
        self.js_errors += [
            e["message"] for e in self.driver.get_log("browser") if "Uncaught" in e["message"]
        ]
        return PageState(**value) if value else None

    def load(
        self, url: str, expect: str, timeout: float = 60.0, charts: str | None = None
    ) -> PageState:
        """Open ``url`` and wait as ``wait_for`` does."""
        self.driver.get(url)
        return self.wait_for(expect, timeout=timeout, charts=charts)

    def wait_for(self, expect: str, timeout: float = 60.0, charts: str | None = None) -> PageState:
        """Wait until the page is idle and shows ``expect`` (and ``charts``, if given).

        Idle: Streamlit is connected and its script has finished; ``charts`` is a kind
        (``"plotly"``, ``"graphviz"``) that must be drawn. An exception on the page ends the
        wait early (the caller reports it).

        Raises:
            TimeoutError: naming what was last seen, if that does not happen in time.
        """
        last: list[PageState | None] = [None]

        def ready() -> PageState | None:
            state = last[0] = self.state()
            if state is None or state.exceptions:
                return state
            idle = state.connection == "CONNECTED" and state.script == "notRunning"
            drawn = charts is None or getattr(state, charts) > 0
            return state if idle and drawn and expect in state.text else None

        try:
            return _wait_until(ready, timeout, f"{expect!r} on the page")  # type: ignore[no-any-return]
        except TimeoutError as exc:
            seen = last[0]
            summary = f"{seen.connection} {seen.script} {seen.text[:300]!r}" if seen else "nothing"
            raise TimeoutError(f"{exc}; last seen: {summary}") from None

    def click_button(self, label: str) -> None:
        """Click the first button whose text ends with ``label``.

        One round trip, so that a page that re-renders twice a second cannot replace the
        button between finding and clicking it.

        Raises:
            LookupError: if there is no such button.
        """
        clicked = self.driver.execute_script(
            "const b = Array.from(document.querySelectorAll('button'))"
            ".find((e) => e.innerText.trim().endsWith(arguments[0]));"
            " if (!b) return false; b.click(); return true;",
            label,
        )
        if not clicked:
            raise LookupError(f"no button {label!r} on the page")

    def screenshot(self, path: Path) -> None:
        """Save the visible page as a PNG."""
        self.driver.save_screenshot(str(path))
