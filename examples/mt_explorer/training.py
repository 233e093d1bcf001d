"""Train in a background thread so the page stays live, reusing ``examples/train_*.py``.

``TrainingJob`` calls the examples' own ``train(config)`` in a daemon thread with an
``on_epoch`` callback, which records each epoch, now and then draws the decision boundary,
and raises ``TrainingStopped`` when the page asked to stop; the page polls ``snapshot()``.
One job trains at a time in a process: Numba's thread pool must not be entered from two
threads at once. Backend ``scalar`` is ``train_scalar.py``; ``simple`` and ``fast`` are
``train_tensor.py`` on that backend.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from minitorch.autodiff import no_grad
from minitorch.operators import Graph, Module
from mt_examples.toy import ToyConfig, ToyResult

#: Backend name -> what it is, in the order the page offers them.
BACKENDS = {
    "fast": "tensors, parallel Numba kernels (mt-fast)",
    "simple": "tensors, the pure-Python reference backend",
    "scalar": "a network of Scalars, one number at a time",
}
#: Grid points per side of the decision-boundary picture (slow backends get fewer).
GRID_SIZE = {"scalar": 21, "simple": 21, "fast": 41}

_ONE_AT_A_TIME = threading.Lock()


class TrainingStopped(Exception):  # noqa: N818 - a signal, not an error
    """Raised by the ``on_epoch`` callback to end training early."""


@dataclass(frozen=True)
class TrainingConfig(ToyConfig):
    """What to train (the examples' ``ToyConfig``), with the Train page's defaults."""

    dataset: str = "xor"
    lr: float | None = 0.5
    epochs: int = 300
    seed: int | None = 0
    backend: str = "fast"


@dataclass
class Progress:
    """A copy of a job's state, safe to read while training goes on.

    Attributes:
        status: ``"waiting"`` (for another job), ``"running"``, ``"done"``, ``"stopped"``
            or ``"failed"``.
        epochs: the number of epochs asked for.
        losses: the mean loss of each finished epoch.
        accuracies: the training accuracy of each finished epoch.
        data: the training points (known after the first epoch).
        boundary: ``P(y = 1)`` on a grid over the unit square, rows along ``x2``.
        boundary_epoch: the epoch the boundary was drawn after.
        final_accuracy: the trained model's accuracy, once finished.
        error: why training failed.
        seconds: time since the start.
    """

    status: str
    epochs: int
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)
    data: Graph | None = None
    boundary: np.ndarray | None = None
    boundary_epoch: int = 0
    final_accuracy: float | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def finished(self) -> bool:
        """True once training is over, for whatever reason."""
        return self.status not in ("waiting", "running")


def config_from_query(params: Mapping[str, str]) -> TrainingConfig:
    """Return the default config with the fields a page URL sets (``?dataset=xor&epochs=50``).

    Values that are not valid for a field are ignored, so a stale link still opens.
    """
    config = TrainingConfig()
    for f in fields(TrainingConfig):
        text = params.get(f.name)
        if text is None:
            continue
        try:
            value = type(getattr(config, f.name))(text)
            candidate = replace(config, **{f.name: value})
            candidate.checked()  # the examples' own validation: sizes, rate, names
        except ValueError:
            continue
        if (f.name == "backend" and value not in BACKENDS) or (f.name == "seed" and value < 0):
            continue
        config = candidate
    return config


def backend_problem(name: str) -> str | None:
    """Return why backend ``name`` cannot train here, or None if it can."""
    if name not in BACKENDS:
        return f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}"
    if name == "scalar":
        return None
    try:
        from minitorch.tensor import available_backends
    except ImportError:
        return "tensor backends need mt-tensor: pip install -e packages/mt-tensor"
    if name not in available_backends():
        return f"backend {name!r} is not installed: pip install -e packages/mt-{name}"
    return None


def probability_grid(model: Module, backend: str, size: int) -> np.ndarray:
    """Return the model's ``P(y = 1)`` on a ``size`` x ``size`` grid over ``[0, 1]^2``.

    Row ``i`` is ``x2 = i / (size - 1)`` and column ``j`` is ``x1 = j / (size - 1)``.
    """
    ticks = np.linspace(0.0, 1.0, size)
    points = [(float(x1), float(x2)) for x2 in ticks for x1 in ticks]
    with no_grad():
        if backend == "scalar":
            probs = np.array([model.forward(p).data for p in points])
        else:
            from minitorch.tensor import backend as find_backend
            from minitorch.tensor import tensor

            batch = tensor(points, backend=find_backend(backend))
            probs = model.forward(batch).to_numpy()[:, 0]
    return probs.reshape(size, size)


class TrainingJob:
    """One training run in a daemon thread; ``snapshot()`` reads its progress.

    Args:
        config: what to train.
        draw_share: at most this share of the time goes to drawing the boundary.
    """

    def __init__(self, config: TrainingConfig, draw_share: float = 0.2) -> None:
        problem = backend_problem(config.backend)
        if problem:
            raise ValueError(problem)
        self.config = config
        self._draw_share = draw_share
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._progress = Progress(status="waiting", epochs=config.epochs)
        self._model: Module | None = None
        self._next_draw = 0.0
        self._start = 0.0
        self._thread = threading.Thread(target=self._run, name="minitorch-train", daemon=True)

    def start(self) -> TrainingJob:
        """Start training; return at once."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask training to stop after the current epoch."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the thread; return True if it finished."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def snapshot(self) -> Progress:
        """Return a copy of the progress so far."""
        with self._lock:
            p = self._progress
            copy = replace(p, losses=list(p.losses), accuracies=list(p.accuracies))
        copy.seconds = time.perf_counter() - self._start if self._start else 0.0
        return copy

    # -- the training thread -------------------------------------------------------------
    def _run(self) -> None:
        with _ONE_AT_A_TIME:
            with self._lock:
                self._progress.status = "stopped" if self._stop.is_set() else "running"
                if self._stop.is_set():
                    return
            self._start = time.perf_counter()
            try:
                self._train()
            except Exception as exc:  # shown on the page, never swallowed silently
                with self._lock:
                    self._progress.status = "failed"
                    self._progress.error = f"{type(exc).__name__}: {exc}"

    def _train(self) -> None:
        from mt_examples import train_scalar, train_tensor

        module = train_scalar if self.config.backend == "scalar" else train_tensor
        try:
            result: ToyResult = module.train(self.config, on_epoch=self._on_epoch)
        except TrainingStopped:
            self._finish("stopped")
            return
        self._model = result.model
        self._finish("done", result.final_accuracy)

    def _on_epoch(self, info: dict[str, Any]) -> None:
        """Record one epoch; draw the boundary now and then; stop if asked."""
        self._model = info["model"]
        with self._lock:
            self._progress.losses.append(float(info["loss"]))
            self._progress.accuracies.append(float(info["accuracy"]))
            if self._progress.data is None:
                self._progress.data = info["data"]
        if self._stop.is_set():
            raise TrainingStopped
        now = time.perf_counter()
        if now >= self._next_draw:
            self._draw(info["epoch"])
            cost = time.perf_counter() - now
            self._next_draw = time.perf_counter() + max(0.3, cost / self._draw_share)

    def _draw(self, epoch: int) -> None:
        if self._model is None:
            return
        grid = probability_grid(self._model, self.config.backend, GRID_SIZE[self.config.backend])
        with self._lock:
            self._progress.boundary = grid
            self._progress.boundary_epoch = epoch

    def _finish(self, status: str, final_accuracy: float | None = None) -> None:
        """Draw the final boundary and record the final accuracy and status."""
        with self._lock:
            epochs_done = len(self._progress.losses)
            data = self._progress.data
        self._draw(epochs_done)
        if final_accuracy is None and self._model is not None and data is not None:
            final_accuracy = _accuracy(self._model, data, self.config)
        with self._lock:
            self._progress.final_accuracy = final_accuracy
            self._progress.status = status


def _accuracy(model: Module, data: Graph, cfg: TrainingConfig) -> float:
    """The examples' own ``accuracy`` of ``model`` on ``data``."""
    if cfg.backend == "scalar":
        from mt_examples.train_scalar import accuracy

        return float(accuracy(model, data))  # type: ignore[arg-type]
    from minitorch.tensor import backend as find_backend
    from mt_examples.train_tensor import accuracy as tensor_accuracy

    return float(tensor_accuracy(model, data, find_backend(cfg.backend)))  # type: ignore[arg-type]
