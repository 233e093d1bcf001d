"""Run the explorer's server and drive headless Chromium over the DevTools protocol.

Only the Python packages the app already needs are used: ``websockets`` (a Streamlit
dependency) speaks the protocol. Chromium is Debian's ``chromium`` package; it is started
with a fresh profile and the flags that keep it quiet on a machine without internet.

Every wait is bounded, and both processes are always ended (their whole process group).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]

# What the page shows, read in the browser: Streamlit marks its root element with the
# connection and script-run states, and an uncaught exception with ``stException``.
_PAGE_STATE = """(() => {
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
    images: Array.from(document.querySelectorAll('[data-testid="stImage"] img'))
      .filter((i) => i.complete && i.naturalWidth > 0).length,
    images_total: document.querySelectorAll('[data-testid="stImage"] img').length,
  };
})()"""


def find_chromium() -> str | None:
    """Return the Chromium executable, or None: ``$CHROMIUM`` if set (and executable), else
    ``chromium`` or ``chromium-browser`` on PATH.
    """
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    """Return a TCP port on localhost that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _end(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Terminate ``proc`` and its process group (started with a new session); then kill."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout)
    else:  # the leader is gone; children of the group may remain
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _wait_until(check: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


@contextlib.contextmanager
def streamlit_server(
    script: Path, log_path: Path, env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[str]:
    """Run ``streamlit run script`` on a free localhost port; yield its URL.

    The server's output goes to ``log_path``. It is terminated on exit, whatever happens.

    Raises:
        RuntimeError: if the server exits or is not healthy within ``timeout`` seconds.
    """
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.headless=true",
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--server.fileWatcherType=none",
        "--browser.gatherUsageStats=false",
        "--client.toolbarMode=viewer",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        try:

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

            _wait_until(healthy, timeout, f"the streamlit server at {url}", interval=0.3)
            yield url
        finally:
            _end(proc)


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
    images: int
    images_total: int


class Browser:
    """Headless Chromium with one tab, driven over the DevTools protocol.

    Use as a context manager; ``load`` opens a URL and waits for Streamlit to finish.
    """

    def __init__(self, executable: str, width: int = 1280, height: int = 900) -> None:
        self.executable = executable
        self.width = width
        self.height = height
        self.js_errors: list[str] = []
        self._next_id = 0
        self._ws: ClientConnection | None = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Browser:
        with self._stack as stack:  # on an error: undo what was started, in reverse
            profile = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mt-chrome-")))
            log = stack.enter_context(open(profile / "chromium.log", "wb"))
            command = [
                self.executable,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile / 'profile'}",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ]
            proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            stack.callback(_end, proc)
            port_file = profile / "profile" / "DevToolsActivePort"

            def port() -> int | None:
                if proc.poll() is not None:
                    output = (profile / "chromium.log").read_text(errors="replace")
                    raise RuntimeError(f"chromium exited with {proc.returncode}:\n{output}")
                lines = port_file.read_text().split() if port_file.exists() else []
                return int(lines[0]) if lines else None

            devtools = _wait_until(port, 30, "chromium's DevTools port")
            with urllib.request.urlopen(f"http://127.0.0.1:{devtools}/json/list", timeout=5) as r:
                targets = json.load(r)
            page = next(t for t in targets if t.get("type") == "page")
            self._ws = stack.enter_context(
                connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
            )
            self.call("Runtime.enable")
            self.call("Page.enable")
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=self.width,
                height=self.height,
                deviceScaleFactor=1,
                mobile=False,
            )
            self._stack = stack.pop_all()  # started: keep everything until __exit__
        return self

    def __exit__(self, *exc: object) -> None:
        self._ws = None
        self._stack.close()

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events are collected meanwhile).

        Raises:
            RuntimeError: if Chromium answers with an error.
            TimeoutError: if it does not answer within ``timeout`` seconds.
        """
        assert self._ws is not None
        self._next_id += 1
        self._ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {method} within {timeout:.0f} s")
            message = json.loads(self._ws.recv(timeout=left))
            if message.get("method") == "Runtime.exceptionThrown":
                details = message["params"]["exceptionDetails"]
                description = details.get("exception", {}).get("description") or details["text"]
                self.js_errors.append(description)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        """Evaluate JavaScript in the page and return its (JSON) value."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def state(self) -> PageState | None:
        """Return what the page shows now, or None before Streamlit's root exists."""
        value = self.evaluate(_PAGE_STATE)
        return PageState(**value) if value else None

    def load(
        self, url: str, expect: str, timeout: float = 60.0, charts: str | None = None
    ) -> PageState:
        """Open ``url`` and wait until Streamlit is connected, the script has finished,
        ``expect`` is in the page's text and, if given, a ``charts`` kind is drawn
        (``"plotly"``, ``"graphviz"`` or ``"images"``).

        Raises:
            TimeoutError: naming what was last seen, if that does not happen in time.
        """
        self.call("Page.navigate", url=url)
        return self.wait_for(expect, timeout=timeout, charts=charts)

    def wait_for(self, expect: str, timeout: float = 60.0, charts: str | None = None) -> PageState:
        """Wait until the page is idle and shows ``expect`` (see ``load``)."""
        last: list[PageState | None] = [None]

        def ready() -> PageState | None:
            state = last[0] = self.state()
            if state is None or state.exceptions:
                return state  # an exception: stop waiting, the caller reports it
            idle = state.connection == "CONNECTED" and state.script == "notRunning"
            drawn = charts is None or getattr(state, charts) > 0
            if charts == "images":
                drawn = drawn and state.images == state.images_total
            return state if idle and drawn and expect in state.text else None

        try:
            state: PageState = _wait_until(ready, timeout, f"{expect!r} on the page", 0.25)
            return state
        except TimeoutError as exc:
            seen = last[0]
            summary = (
                "nothing"
                if seen is None
                else (
                    f"connection={seen.connection} script={seen.script} plotly={seen.plotly} "
                    f"graphviz={seen.graphviz} images={seen.images} text={seen.text[:300]!r}"
                )
            )
            raise TimeoutError(f"{exc}; last seen: {summary}") from None

    def click_button(self, label: str) -> None:
        """Click the first button whose text is ``label``.

        Raises:
            LookupError: if there is no such button.
        """
        clicked = self.evaluate(
            "(() => { const b = Array.from(document.querySelectorAll('button'))"
            f".find((e) => e.innerText.trim().endsWith({json.dumps(label)}));"
            " if (!b) return false; b.click(); return true; })()"
        )
        if not clicked:
            raise LookupError(f"no button {label!r} on the page")

    def screenshot(self, path: Path) -> None:
        """Save the visible page as a PNG."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
