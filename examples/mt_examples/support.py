"""What the training scripts share: argparse validators and options, optimizers, progress.

Progress bars degrade to a one-line hint without tqdm, and ``check_finite`` stops a run
whose loss became NaN.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from typing import Any, NoReturn

#: The most epochs any script accepts: far beyond a useful run, far below an overflow.
MAX_EPOCHS = 1_000_000


class DivergedError(ArithmeticError):
    """The loss became NaN or infinite: training cannot go on (lower the learning rate)."""


# --- argparse ``type=`` validators ------------------------------------------------------


def int_between(low: int, high: int) -> Callable[[str], int]:
    """Return an ``argparse`` ``type=`` that parses an integer in ``[low, high]``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer in [{low}, {high}], got {text}")
        return value

    parse.__name__ = f"integer in [{low}, {high}]"
    return parse


#: An integer >= 1 (at most 10**9), for sizes and counts.
positive_int = int_between(1, 10**9)
#: An integer >= 0 (at most 10**9).
non_negative_int = int_between(0, 10**9)


def _float_type(what: str, ok: Callable[[float], bool]) -> Callable[[str], float]:
    """Return an ``argparse`` ``type=`` that parses a number for which ``ok`` holds."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    parse.__name__ = what
    return parse


#: A finite number > 0 (``inf`` and ``nan`` are refused), for learning rates.
positive_float = _float_type("a positive finite number", lambda v: v > 0.0 and math.isfinite(v))
#: A number in ``[0, 1)``, for dropout rates.
unit_interval = _float_type("a number in [0, 1)", lambda v: 0.0 <= v < 1.0)


# --- options, backends, optimizers ------------------------------------------------------


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show each option's default once: not again when its help says it, nor None or False."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "(default" in text or any(action.default is v for v in (None, False, argparse.SUPPRESS)):
            return text
        return super()._get_help_string(action)


@dataclass(frozen=True)
class NNConfig:
    """What every nn training script trains with; each script's config adds its own fields.

    Attributes:
        epochs: passes over the training set.
        batch_size: examples per step.
        lr: learning rate.
        dropout: dropout rate.
        train_size: train on at most this many examples of a seeded shuffle (None: all).
        seed: seeds the shuffle, the initial weights and dropout.
        backend: a backend name (``fast``, ``cuda``, ``simple``) or a backend.
        data_dir: the data folder (None: ``$MINITORCH_DATA``, else ``./data``).
    """

    epochs: int = 1
    batch_size: int = 32
    lr: float = 1e-3
    dropout: float = 0.25
    train_size: int | None = None
    seed: int | None = 0
    backend: Any = "fast"
    data_dir: str | None = None


def nn_parser(prog: str, description: str, defaults: NNConfig) -> argparse.ArgumentParser:
    """Return a parser with the options every nn training script takes (see ``nn_run``).

    ``defaults`` gives the defaults of ``--backend``, ``--epochs``, ``--batch-size``,
    ``--lr``, ``--dropout`` and ``--seed``.
    """
    parser = argparse.ArgumentParser(prog, description=description, formatter_class=HelpFormatter)
    add = parser.add_argument
    add("--data-dir", help="data folder (default: $MINITORCH_DATA, else ./data)")
    add("--download", action="store_true",
        help="first fetch the data files that are missing into the data folder "
        "(checked against their SHA-256)")  # fmt: skip
    add("--mirror", metavar="URL",
        help="with --download: fetch <URL>/<dataset>/<file> instead of the usual public "
        "sources (default: $MINITORCH_MIRROR)")  # fmt: skip
    add("--backend", default=defaults.backend, choices=["fast", "cuda", "simple"],
        help="tensor backend")  # fmt: skip
    add("--epochs", type=int_between(1, MAX_EPOCHS), default=defaults.epochs,
        help="passes over the data")  # fmt: skip
    add("--batch-size", type=positive_int, default=defaults.batch_size,
        help="examples per step")  # fmt: skip
    add("--lr", type=positive_float, default=defaults.lr, help="learning rate")
    add("--dropout", type=unit_interval, default=defaults.dropout, help="dropout rate")
    add("--seed", type=int, default=defaults.seed, help="random seed")
    add("--threads", type=positive_int,
        help="Numba threads (default: all cores; 1 can be faster on a busy machine)")  # fmt: skip
    add("--no-progress", action="store_true", help="hide the progress bars")
    return parser


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
                parser.error(
                    f"argument --backend: {name}: no CUDA GPU found (and the simulator is off)"
                )
    except LookupError as exc:
        parser.error(f"argument --backend: {exc}")
    except (ImportError, TypeError) as exc:
        parser.error(f"argument --backend: backend {name!r} failed to load: {exc}")
    if threads is not None:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return found


def make_optimizer(name: str, parameters: Iterable[Any], lr: float, momentum: float = 0.0) -> Any:
    """Return the optimizer ``name`` (``"sgd"``, with ``momentum``, or ``"adam"``).

    Raises:
        ValueError: for another name.
    """
    from minitorch.autodiff import SGD, Adam

    if name == "sgd":
        return SGD(list(parameters), lr=lr, momentum=momentum)
    if name == "adam":
        return Adam(list(parameters), lr=lr)
    raise ValueError(f"unknown optimizer {name!r}: choose 'sgd' or 'adam'")


# --- progress, optional libraries, failures ---------------------------------------------

_hinted: set[str] = set()


def hint_missing(package: str, what: str) -> None:
    """Say once, on one stderr line, that ``what`` is skipped because ``package`` is missing."""
    if package not in _hinted:
        _hinted.add(package)
        print(
            f"note: {package} is not installed, so {what} (pip install {package})", file=sys.stderr
        )


def progress_bar(total: int, desc: str, unit: str, show: bool = True) -> Any:
    """Return a tqdm bar over ``total`` steps, or None if ``show`` is off or tqdm is missing.

    There is no bar when stderr is not a terminal (a log file, a pipe, CI): its carriage
    returns would interleave with the per-epoch lines there.
    """
    if not show:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        hint_missing("tqdm", "there is no progress bar")
        return None
    if not sys.stderr.isatty():
        return None
    return tqdm(total=total, desc=desc, unit=unit, leave=False, mininterval=0.1)


def check_finite(loss: float, epoch: int | str) -> float:
    """Return ``loss``; raise ``DivergedError`` if it is NaN or infinite."""
    if not math.isfinite(loss):
        raise DivergedError(
            f"the loss became {loss} in epoch {epoch}: training diverged "
            "(try a smaller --lr); stopped"
        )
    return loss


def exit_with(prog: str, exc: BaseException) -> NoReturn:
    """End the script with ``prog: error: <exc>`` on stderr and exit status 1."""
    print(f"{prog}: error: {exc}", file=sys.stderr)
    raise SystemExit(1)


def nn_fit(
    model: Any,
    opt: Any,
    make_batch: Callable[[Any], tuple[Any, Any]],
    size: int,
    measure: Callable[[int], tuple[dict[str, float], str]],
    *,
    epochs: int,
    batch_size: int,
    rng: Any,
    progress: bool,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Train an mt-nn classifier for ``epochs`` passes over ``size`` examples, shuffled by ``rng``.

    ``make_batch(indices)`` returns the input tensor and int labels of those examples. Each
    step zeroes the gradients and runs forward, negative log-likelihood, backward, step. After
    each pass ``measure(epoch)`` returns the held-out figures and their words in its log line.

    Returns:
        ``history`` (per pass: ``train_loss`` and ``train_accuracy``, running over the pass,
        and what ``measure`` returned), ``epoch_seconds``, ``seconds_per_epoch``, ``model``.

    Raises:
        DivergedError: as soon as a step's loss is NaN or infinite.
    """
    import time

    import numpy as np

    from minitorch.nn import nll_loss

    history: dict[str, list[float]] = {"train_loss": [], "train_accuracy": []}
    seconds: list[float] = []
    steps = -(-size // batch_size)
    for epoch in range(1, epochs + 1):
        label, order = f"{epoch}/{epochs}", rng.permutation(size)
        bar = progress_bar(steps, f"epoch {label}", "step", progress)
        total, correct, start = 0.0, 0, time.perf_counter()
        try:
            for first in range(0, size, batch_size):
                x, y = make_batch(order[first : first + batch_size])
                opt.zero_grad()
                out = model(x)
                loss = nll_loss(out, y)
                loss.backward()
                opt.step()
                total += check_finite(loss.item(), label) * len(y)
                correct += int(np.sum(np.argmax(out.to_numpy(), axis=1) == y))
                if bar is not None:
                    seen = first + len(y)
                    bar.update(1)
                    bar.set_postfix(
                        loss=f"{total / seen:.4f}", acc=f"{correct / seen:.3f}", refresh=False
                    )
        finally:
            if bar is not None:
                bar.close()
        seconds.append(time.perf_counter() - start)
        figures, words = measure(epoch)
        loss, acc = total / max(1, size), correct / max(1, size)
        for key, value in {"train_loss": loss, "train_accuracy": acc, **figures}.items():
            history.setdefault(key, []).append(value)
        took, ms = seconds[-1], f"{seconds[-1] / steps * 1000:.1f} ms/step"
        log(f"epoch {label}  train loss {loss:.4f} acc {acc:.4f}  {words}  {took:.1f} s ({ms})")
    mean = sum(seconds) / len(seconds) if seconds else 0.0
    return {"history": history, "epoch_seconds": seconds, "seconds_per_epoch": mean, "model": model}


def nn_run(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    title: str,
    train: Callable[..., dict[str, Any]],
    defaults: NNConfig,
    readers: Iterable[Any],
    usage_errors: tuple[type[BaseException], ...],
    **extra: Any,
) -> dict[str, Any]:
    """Run an nn script's ``train`` from its parsed ``args``; one line, not a traceback, if not.

    Loads ``--backend`` (with ``--threads``), fetches with ``--download`` what each mt-nn
    reader of ``readers`` (``MNIST``, ``SST2``...) is missing, prints the config (``defaults``
    with every field that ``args`` sets) and calls ``train(config, progress=..., **extra)``.
    A failed download or one of ``usage_errors`` ends the script with status 2, a diverged
    loss with status 1.
    """
    from minitorch.nn import DownloadError

    be = backend_from_args(parser, args.backend, args.threads)
    names = [f.name for f in fields(defaults) if f.name != "backend"]
    config = replace(defaults, backend=be, **{k: getattr(args, k) for k in names})
    try:
        for reader in readers if args.download else ():
            reader.download(args.data_dir, mirror=args.mirror, progress=not args.no_progress)
        shown = " ".join(f"{k}={getattr(config, k)}" for k in names)
        print(f"{title}: {shown} backend={be.name}")
        return train(config, progress=not args.no_progress, **extra)
    except DivergedError as exc:
        exit_with(parser.prog, exc)
    except (DownloadError, *usage_errors) as exc:
        parser.error(str(exc))
