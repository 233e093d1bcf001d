"""What the example scripts share: argparse validators, timing, epoch reports, loading.

``examples/`` is a folder of scripts, not a package. ``python examples/<name>.py`` puts this
folder on ``sys.path``, so a script imports this module with ``from example_support import
...``. Code that loads a script from elsewhere (the tests, the explorer app) first puts this
folder on ``sys.path`` (``examples/tests/conftest.py``, ``examples/app/explorer/examples.py``)
and then calls ``load_example(name)``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

__all__ = [
    "EXAMPLES_DIR",
    "EpochReport",
    "add_run_options",
    "backend_from_args",
    "best_time",
    "load_example",
    "microseconds_per_call",
    "non_negative_int",
    "positive_float",
    "positive_int",
]

#: The ``examples/`` folder, where the scripts live.
EXAMPLES_DIR = Path(__file__).resolve().parent


# --- argparse ``type=`` validators ------------------------------------------------------


def _int_at_least(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    """Parse an integer >= 1, for ``argparse``'s ``type=``."""
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """Parse an integer >= 0, for ``argparse``'s ``type=``."""
    return _int_at_least(text, 0, "an integer >= 0")


def positive_float(text: str) -> float:
    """Parse a finite number > 0, for ``argparse``'s ``type=``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text}")
    return value


# --- the nn training scripts ------------------------------------------------------------


def add_run_options(parser: argparse.ArgumentParser, defaults: dict[str, Any]) -> None:
    """Add the options every nn training script takes.

    ``--data-dir``, ``--backend``, ``--epochs``, ``--batch-size``, ``--seed``, ``--threads``
    and ``--no-progress``; ``defaults`` gives ``backend``, ``epochs``, ``batch_size`` and
    ``seed``. Pass ``--backend`` and ``--threads`` on to ``backend_from_args``.
    """
    parser.add_argument(
        "--data-dir", default=None, help="data folder (default: $MINITORCH_DATA or ./data)"
    )
    parser.add_argument(
        "--backend",
        default=defaults["backend"],
        choices=["fast", "cuda", "simple"],
        help="tensor backend",
    )
    parser.add_argument(
        "--epochs", type=positive_int, default=defaults["epochs"], help="passes over the data"
    )
    parser.add_argument(
        "--batch-size", type=positive_int, default=defaults["batch_size"], help="examples per step"
    )
    parser.add_argument("--seed", type=int, default=defaults["seed"], help="random seed")
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="Numba threads (default: all cores; 1 can be faster on a busy machine)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def backend_from_args(
    parser: argparse.ArgumentParser, name: str, threads: int | None = None
) -> Any:
    """Return the backend named by ``--backend`` and apply ``--threads``.

    A backend that is not installed, or ``cuda`` without a GPU or the simulator, becomes an
    argparse error (exit status 2) that says why.
    """
    from minitorch.tensor import backend

    try:
        found = backend(name)
        if found.cuda:
            from minitorch.cuda import is_available

            if not is_available():
                parser.error(f"--backend {name}: no CUDA GPU found (and the simulator is off)")
    except (LookupError, ImportError) as exc:
        parser.error(f"--backend {name}: {exc}")
    if threads is not None:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return found


# --- timing -----------------------------------------------------------------------------


def best_time(fn: Callable[[], Any], repeat: int, sync: Callable[[], None] | None = None) -> float:
    """Return the best wall time of ``repeat`` calls of ``fn``, after one warm-up call.

    Args:
        fn: the call to time.
        repeat: how many timed calls.
        sync: called after each call, inside the timing, to wait for work that ``fn`` only
            queues (a GPU's kernels); ``None`` for work that is done when ``fn`` returns.
    """
    fn()
    if sync is not None:
        sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        times.append(time.perf_counter() - t0)
    return min(times)


def microseconds_per_call(seconds: Sequence[float], calls: int) -> dict[str, float]:
    """Return ``{"best": us, "median": us}`` per call, for rounds of ``calls`` calls each.

    Args:
        seconds: the time of each round.
        calls: how many calls (operations) each round made.
    """
    per_call = [s / calls * 1e6 for s in seconds]
    return {"best": min(per_call), "median": statistics.median(per_call)}


# --- per-epoch reports of the training scripts ------------------------------------------


class EpochReport:
    """The epochs of a training run, with its progress bar, log lines and callback.

    Iterate over it for the epoch numbers ``1..epochs`` (through a tqdm bar if
    ``progress``) and call ``report`` once per epoch; use it as a context manager so that
    the bar is closed however training ends. While the bar is shown, log lines go through
    ``bar.write`` so that they do not break it.

    Args:
        epochs: number of epochs.
        desc: the bar's label.
        progress: show a tqdm progress bar.
        log: where the per-epoch lines go (default ``print``).
        log_every: call ``log`` every this many epochs and on the last (0: never).
        on_epoch: called after each report with ``{"epoch", "loss", "accuracy"}`` and the
            keyword arguments of ``report`` (for live plots); what it raises propagates.
    """

    def __init__(
        self,
        epochs: int,
        *,
        desc: str,
        progress: bool = False,
        log: Callable[[str], None] | None = None,
        log_every: int = 0,
        on_epoch: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.epochs = epochs
        self.log = print if log is None else log
        self.log_every = log_every
        self.on_epoch = on_epoch
        self.bar: Any = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(range(1, epochs + 1), desc=desc, unit="epoch", leave=False)
            self.log = self.bar.write

    def __iter__(self) -> Iterator[int]:
        return iter(self.bar if self.bar is not None else range(1, self.epochs + 1))

    def report(self, epoch: int, loss: float, correct: int, n: int, **extra: Any) -> None:
        """Show one epoch's loss and ``correct`` out of ``n``; pass them on to ``on_epoch``."""
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", acc=f"{correct / n:.2f}")
        if self.log_every and (epoch % self.log_every == 0 or epoch == self.epochs):
            self.log(
                f"epoch {epoch:>5}/{self.epochs}  loss {loss:.4f}  "
                f"accuracy {correct}/{n} ({correct / n:.1%})"
            )
        if self.on_epoch is not None:
            stats = {"epoch": epoch, "loss": loss, "accuracy": correct / n}
            self.on_epoch({**stats, **extra})

    def close(self) -> None:
        """Close the progress bar, if there is one."""
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> EpochReport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# --- loading a script by its path -------------------------------------------------------


def load_example(name: str) -> ModuleType:
    """Return the module of ``examples/<name>.py``, importing it on first use.

    The module is registered in ``sys.modules`` as ``minitorch_examples_<name>``, so every
    caller in one process (tests, the app) shares it.

    Raises:
        FileNotFoundError: if there is no such script.
    """
    module_name = f"minitorch_examples_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = EXAMPLES_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"example script {path} not found")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
