"""Smoke tests of the module 4 examples on tiny generated data (no downloads, a few seconds).

``train_mnist.py`` and ``train_sentiment.py`` train for an epoch or two on a few dozen
generated examples; ``bench_nn.py`` times a couple of steps. The real runs, on the shared
data, are in mt-nn's README.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import shutil
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from mt_testing import assert_help_is_complete, exit_message, write_idx

pytest.importorskip("minitorch.nn", reason="mt-nn is not installed")
pytestmark = pytest.mark.task4_5

from mt_bench import nn as bench_nn  # noqa: E402
from mt_examples import train_mnist, train_sentiment  # noqa: E402

SCRIPTS = [train_mnist, train_sentiment]


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny MNIST: a bright square top-left for even labels, bottom-right for odd ones."""
    root = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(0)
    for stem, n in (("train", 96), ("t10k", 32)):
        labels = rng.integers(0, 10, n)
        images = rng.integers(0, 40, (n, 28, 28))
        for k, y in enumerate(labels):
            r = 2 if y % 2 == 0 else 16
            images[k, r : r + 10, r : r + 10] = 255
        (root / "mnist").mkdir(exist_ok=True)
        write_idx(root / "mnist" / f"{stem}-images-idx3-ubyte.gz", images)
        write_idx(root / "mnist" / f"{stem}-labels-idx1-ubyte.gz", labels)
    return root


def _plot_flag() -> list[str]:
    return [] if importlib.util.find_spec("matplotlib") else ["--no-plot"]


def test_train_mnist_runs_and_writes_plot_and_checkpoint(mnist_dir, tmp_path) -> None:
    out = tmp_path / "run"
    argv = ["--data-dir", str(mnist_dir), "--epochs", "2", "--batch-size", "16"]
    argv += ["--out-dir", str(out), "--no-progress", "--val-size", "16", *_plot_flag()]
    result = train_mnist.main(argv)
    history = result["history"]
    assert len(history["held_out_accuracy"]) == 2
    assert history["train_loss"][1] < history["train_loss"][0]
    assert result["held_out"] == "held-out"
    assert result["train_images"] == 80
    assert result["test_images"] == 32
    assert 0.0 <= result["test_accuracy"] <= 1.0
    assert len(result["epoch_seconds"]) == 2
    assert (out / "mnist.npz").is_file()
    if result["plot"] is not None:
        assert result["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Resuming from the checkpoint works; a checkpoint of another model is a clear error.
    again = train_mnist.main([*argv, "--epochs", "1", "--resume", str(out / "mnist.npz")])
    assert again["train_images"] == 80


def test_train_mnist_rejects_a_checkpoint_of_another_model(mnist_dir, tmp_path) -> None:
    from minitorch.nn import Linear, save_checkpoint

    other = save_checkpoint(Linear(3, 2), tmp_path / "other.npz")
    argv = ["--data-dir", str(mnist_dir), "--resume", str(other), "--no-progress"]
    assert "does not match Network" in exit_message(train_mnist.main, argv)


def test_train_mnist_missing_data_is_a_clear_error(tmp_path) -> None:
    err = exit_message(train_mnist.main, ["--data-dir", str(tmp_path), "--no-progress"])
    assert "train-images-idx3-ubyte" in err
    assert "Download" in err


@pytest.fixture(scope="module")
def sst2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny SST-2: 'good'/'great' sentences are positive, 'bad'/'awful' ones negative."""
    root = tmp_path_factory.mktemp("sst")
    rng = np.random.default_rng(1)
    filler = ["the", "film", "was", "a", "plot", "and"]
    words = {1: ["good", "great"], 0: ["bad", "awful"]}
    for split, n in (("train", 64), ("dev", 16)):
        rows = ["sentence\tlabel"]
        for _ in range(n):
            y = int(rng.integers(0, 2))
            tokens = [*rng.choice(filler, 4), str(rng.choice(words[y]))]
            rng.shuffle(tokens)
            rows.append(" ".join(tokens) + f"\t{y}")
        (root / "sst2").mkdir(exist_ok=True)
        (root / "sst2" / f"{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    vectors = [
        w + " " + " ".join(f"{v:.3f}" for v in rng.standard_normal(50))
        for w in filler + words[0] + words[1]
    ]
    (root / "glove").mkdir()
    (root / "glove" / "glove.6B.50d.txt").write_text("\n".join(vectors) + "\n", encoding="utf-8")
    return root


def test_train_sentiment_runs(sst2_dir) -> None:
    options = "--epochs 2 --batch-size 16 --filters 8 --no-progress --lr 0.01"
    result = train_sentiment.main(["--data-dir", str(sst2_dir), *options.split()])
    assert result["train_phrases"] == 64
    assert result["dev_sentences"] == 16
    assert len(result["history"]["dev_accuracy"]) == 2
    assert result["history"]["train_loss"][1] < result["history"]["train_loss"][0]
    assert result["glove_coverage"] == 1.0


def _copy(source: Path, target: Path, *names: str) -> list[str]:
    """Copy the data files ``names`` of ``source`` to ``target``; return the script options."""
    for name in names:
        (target / name).parent.mkdir(exist_ok=True)
        (target / name).write_bytes((source / name).read_bytes())
    return ["--data-dir", str(target), "--no-progress"]


def test_train_sentiment_refuses_a_max_length_below_the_widest_kernel(sst2_dir, monkeypatch):
    # issue: --max-length 1 trained until conv1d said "kernel (3,) does not fit the input's (1,)"
    for step in ("load", "download"):
        monkeypatch.setattr(train_sentiment.SST2, step, lambda *a, s=step, **k: pytest.fail(s))
    argv = ["--data-dir", str(sst2_dir), "--no-progress", "--download", "--max-length", "4"]
    message = "--max-length 4 is shorter than the widest convolution kernel (5 tokens)"
    assert f"{message}: use --max-length 5 or more" in exit_message(train_sentiment.main, argv)
    config = train_sentiment.SentimentConfig(data_dir=str(sst2_dir), max_length=1)
    with pytest.raises(ValueError, match="use --max-length 5 or more"):
        train_sentiment.train(config, progress=False)


def test_train_sentiment_runs_at_the_smallest_max_length(sst2_dir) -> None:
    options = "--epochs 1 --batch-size 32 --filters 2 --no-progress --max-length 5"
    result = train_sentiment.main(["--data-dir", str(sst2_dir), *options.split()])
    assert result["train_phrases"] == 64


def test_train_sentiment_missing_glove(sst2_dir, tmp_path) -> None:
    argv = _copy(sst2_dir, tmp_path, "sst2/train.tsv", "sst2/dev.tsv")
    assert "glove.6B.50d.txt" in exit_message(train_sentiment.main, argv)


def test_bench_nn_step_without_and_with_torch() -> None:
    row = bench_nn.bench_step(batch=4, threads=1, repeat=2, torch=None, dtype=None)
    assert row.ours is not None
    assert row.ours_median is not None
    assert 0.0 < row.ours <= row.ours_median
    assert row.torch is None
    assert "-" in bench_nn.line(row, 4, 1)
    torch = pytest.importorskip("torch")
    row = bench_nn.bench_step(batch=4, threads=1, repeat=2, torch=torch, dtype=torch.float64)
    assert row.torch is not None
    assert row.torch > 0.0
    assert "x" in bench_nn.line(row, 4, 1)


@pytest.mark.parametrize("module", SCRIPTS, ids=["mnist", "sentiment"])
def test_both_scripts_take_the_shared_run_options(module: ModuleType) -> None:
    argv = "--data-dir d --backend simple --epochs 2 --batch-size 8 --seed 3 --threads 1"
    args = module.build_parser().parse_args([*argv.split(), "--no-progress"])
    assert (args.data_dir, args.backend, args.epochs, args.batch_size) == ("d", "simple", 2, 8)
    assert (args.seed, args.threads, args.no_progress) == (3, 1, True)
    defaults = module.build_parser().parse_args([])
    assert (defaults.epochs, defaults.batch_size) == (
        module.DEFAULTS.epochs,
        module.DEFAULTS.batch_size,
    )
    assert_help_is_complete(module.build_parser())


@pytest.mark.parametrize("module", SCRIPTS, ids=["mnist", "sentiment"])
@pytest.mark.parametrize(
    "argv",
    ["--lr inf", "--lr nan", "--lr 0", "--epochs 0", "--epochs 99999999999999999999999",
     "--dropout 1.5"],
)  # fmt: skip
def test_bad_options_are_refused_before_training(module: ModuleType, argv: str) -> None:
    assert f"argument {argv.split()[0]}: expected" in exit_message(module.main, argv)


def test_train_mnist_out_dir_that_is_a_file_fails_before_training(
    mnist_dir, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(train_mnist.MNIST, "load", lambda *a: pytest.fail("loaded the data"))
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    argv = ["--data-dir", str(mnist_dir), "--out-dir", str(taken), "--no-progress"]
    assert f"{taken} is a file, not a folder" in exit_message(train_mnist.main, argv)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--checkpoint ck.pt", "checkpoint path must end in .npz, got ck.pt"),
        ("--resume missing.npz", "the checkpoint to resume from, missing.npz, does not exist"),
    ],
)
def test_train_mnist_checks_checkpoint_options_before_training(
    mnist_dir, tmp_path, monkeypatch, option, message
) -> None:
    # Regression: --checkpoint ck.pt trained and evaluated a whole epoch before it was refused
    monkeypatch.setattr(train_mnist.MNIST, "load", lambda *a: pytest.fail("loaded the data"))
    monkeypatch.chdir(tmp_path)
    argv = ["--data-dir", str(mnist_dir), "--out-dir", str(tmp_path), "--no-progress"]
    assert message in exit_message(train_mnist.main, [*argv, *option.split()])


def test_train_mnist_stops_when_the_loss_diverges(mnist_dir, tmp_path) -> None:
    options = "--lr 1e300 --optimizer sgd --epochs 3 --batch-size 16 --no-progress"
    argv = ["--data-dir", str(mnist_dir), "--out-dir", str(tmp_path), *options.split()]
    assert "training diverged" in exit_message(train_mnist.main, argv, code=1)


def test_train_sentiment_header_only_train_split_is_a_clear_error(sst2_dir, tmp_path) -> None:
    argv = _copy(sst2_dir, tmp_path, "sst2/dev.tsv", "glove/glove.6B.50d.txt")
    (tmp_path / "sst2" / "train.tsv").write_text("sentence\tlabel\n", encoding="utf-8")
    assert "train.tsv: a header and no sentences" in exit_message(train_sentiment.main, argv)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server on 127.0.0.1 serving the folder it yields (no internet)."""
    root = tmp_path / "mirror"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        handler.log_message = lambda *a: None  # type: ignore[attr-defined]
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_address[1]}", root
        server.shutdown()


def _remote(path: Path) -> Any:
    """The mt-nn download entry of a generated file: its name and checksum, no public home."""
    from minitorch.nn.download import Remote

    data = path.read_bytes()
    return Remote(path.name, (), hashlib.sha256(data).hexdigest(), len(data))


def test_train_mnist_downloads_from_a_mirror(mnist_dir, mirror, tmp_path, monkeypatch) -> None:
    url, served = mirror
    shutil.copytree(mnist_dir / "mnist", served / "mnist")
    remotes = [_remote(p) for p in sorted((served / "mnist").iterdir())]
    monkeypatch.setattr(train_mnist.MNIST, "REMOTES", remotes)
    data = tmp_path / "data"
    argv = ["--download", "--mirror", url, "--data-dir", str(data), "--out-dir", str(tmp_path)]
    result = train_mnist.main([*argv, "--epochs", "1", "--no-progress", "--no-plot"])
    assert result["train_images"] == 96
    for remote in remotes:
        assert (data / "mnist" / remote.name).read_bytes() == (
            served / "mnist" / remote.name
        ).read_bytes()


def test_train_sentiment_downloads_from_a_mirror(sst2_dir, mirror, tmp_path, monkeypatch) -> None:
    url, served = mirror
    for folder, archive, members in (
        (
            "sst2",
            "SST-2.zip",
            {"SST-2/train.tsv": "sst2/train.tsv", "SST-2/dev.tsv": "sst2/dev.tsv"},
        ),
        ("glove", "glove.6B.zip", {"glove.6B.50d.txt": "glove/glove.6B.50d.txt"}),
    ):
        (served / folder).mkdir()
        with zipfile.ZipFile(served / folder / archive, "w") as z:
            for name, source in members.items():
                z.write(sst2_dir / source, name)
        owner = train_sentiment.SST2 if folder == "sst2" else train_sentiment.GloVe
        monkeypatch.setattr(owner, "REMOTE", _remote(served / folder / archive))
    data = tmp_path / "data"
    argv = ["--download", "--mirror", url, "--data-dir", str(data), "--filters", "4"]
    result = train_sentiment.main([*argv, "--epochs", "1", "--no-progress"])
    assert result["train_phrases"] == 64
    assert (data / "glove" / "glove.6B.50d.txt").is_file()


def test_a_failed_download_is_a_one_line_error(mirror, tmp_path, monkeypatch) -> None:
    url, served = mirror  # serves nothing: every file is a 404
    (served / "mnist").mkdir()
    (served / "mnist" / "x.gz").write_bytes(b"x")
    monkeypatch.setattr(train_mnist.MNIST, "REMOTES", [_remote(served / "mnist" / "x.gz")])
    (served / "mnist" / "x.gz").unlink()
    argv = ["--download", "--mirror", url, "--data-dir", str(tmp_path), "--no-progress"]
    assert "x.gz" in exit_message(train_mnist.main, argv)


@pytest.fixture
def small_graded_subset(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The graded subset's counts cut to the tiny generated data (the command is unchanged)."""
    from mt_examples import subset

    counts = {"mnist-train": 80, "mnist-test": 32, "sst2-train": 48, "sst2-dev": 16}
    monkeypatch.setattr(subset, "GRADED", counts)
    return counts


def test_graded_task_4_5_trains_mnist_on_the_subset_and_prints_its_score(
    mnist_dir, small_graded_subset, capsys
) -> None:
    from mt_examples import graded

    argv = ["task4_5", "--dataset", "mnist", "--epochs", "1", "--data-dir", str(mnist_dir)]
    status = graded.main(argv)
    out = capsys.readouterr().out
    assert f"graded subset of {mnist_dir}: the first 80 of mnist-train, 32 of mnist-test" in out
    assert "$ python train_mnist.py --data-dir " in out
    assert " --epochs 1 --no-plot" in out
    assert "done: 80 training images" in out  # the subset's first 80, not the 96 of the folder
    line = next(s for s in out.splitlines() if s.startswith("mnist: the trained network"))
    assert " of 32 test images correctly " in line
    assert "at least 75% is needed" in line
    assert status == (0 if line.endswith("pass") else 1)
    assert "(trained 1 epochs, not the graded number)" in out


def test_graded_mnist_score_is_the_scripts_own_test_accuracy(mnist_dir, tmp_path) -> None:
    from mt_examples import graded

    net = graded.NETWORKS["task4_5"][0]
    result = graded.train_network(net, train_mnist, mnist_dir, tmp_path, epochs=2)
    score = graded.score_network(net, result["model"], mnist_dir)
    assert score.total == 32
    assert score.correct == round(result["test_accuracy"] * 32)


def test_graded_task_4_5_trains_the_sentiment_network_on_the_subset(
    sst2_dir, small_graded_subset, capsys
) -> None:
    from mt_examples import graded

    graded.main(["task4_5", "--dataset", "sst2", "--epochs", "1", "--data-dir", str(sst2_dir)])
    out = capsys.readouterr().out
    assert "the first 48 of sst2-train, 16 of sst2-dev" in out
    assert "$ python train_sentiment.py --data-dir " in out
    assert " of 16 dev sentences correctly " in out
    assert "at least 65% is needed" in out


def test_graded_task_4_5_without_data_says_how_to_fetch_it(tmp_path, capsys) -> None:
    from mt_examples import graded

    assert graded.main(["task4_5", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"error: {tmp_path}: none of mnist/train-images-idx3-ubyte.gz" in err
    assert "--download" in err


def test_graded_task_4_5_refuses_a_toy_dataset(capsys) -> None:
    from mt_examples import graded

    with pytest.raises(SystemExit):
        graded.main(["task4_5", "--dataset", "xor"])
    assert "task4_5 trains on mnist, sst2, not xor" in capsys.readouterr().err
