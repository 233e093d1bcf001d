"""Fast checks of the toy-dataset examples (``train_scalar``, ``train_tensor``) and their
benchmarks: a few epochs of training, the command line, tiny benchmark runs, bench_tensor's
MLP step against PyTorch and its profiler.
"""

from __future__ import annotations

import importlib.metadata
import io
import math
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from minitorch.autodiff import Scalar, topological_sort
from minitorch.tensor import SimpleBackend, available_backends, tensor
from mt_bench import scalar as bench_scalar
from mt_bench import tensor as bench_tensor
from mt_examples import train_scalar, train_tensor
from mt_examples.toy import ToyConfig
from mt_testing import assert_help_is_complete, exit_message

pytestmark = pytest.mark.task2_5
SCRIPTS = [train_scalar, train_tensor]
EXAMPLES = Path(__file__).resolve().parents[1]


@pytest.fixture(params=SCRIPTS, ids=["scalar", "tensor"])
def script(request: pytest.FixtureRequest) -> ModuleType:
    return request.param  # type: ignore[no-any-return]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_train_loss_decreases(script: ModuleType, optimizer: str) -> None:
    config = ToyConfig("simple", points=12, hidden=3, epochs=15, optimizer=optimizer, seed=1)
    result = script.train(config)
    assert len(result.losses) == len(result.accuracies) == 15
    assert all(math.isfinite(x) for x in result.losses)
    assert result.losses[-1] < result.losses[0]
    assert result.final_loss < result.losses[0]
    assert 0.0 <= result.final_accuracy <= 1.0
    assert result.config.lr == (0.5 if optimizer == "sgd" else 0.05)
    assert result.data.N == 12
    assert result.seconds_per_epoch >= 0.0


def test_train_is_reproducible_and_leaves_global_rngs_alone(script: ModuleType) -> None:
    py_state, np_state = random.getstate(), np.random.get_state()
    config = ToyConfig("xor", points=8, hidden=2, epochs=3, seed=7)
    a, b = script.train(config), script.train(config)
    assert random.getstate() == py_state
    assert np.array_equal(np.random.get_state()[1], np_state[1])
    assert a.losses == b.losses
    assert script.train(ToyConfig("xor", points=8, hidden=2, epochs=3, seed=8)).losses != a.losses


def test_scalar_and_tensor_train_on_the_same_points() -> None:
    config = ToyConfig("diag", points=9, hidden=2, epochs=1, seed=3)
    assert train_scalar.train(config).data.X == train_tensor.train(config).data.X


def test_scalar_network_parameters_are_named_scalars() -> None:
    model = train_scalar.Network(3, random.Random(0))
    names = [name for name, _ in model.named_parameters()]
    assert len(names) == 9 + 12 + 4  # 2*3 + 3, 3*3 + 3 and 3*1 + 1 weights and biases
    assert {"layer1.weight_0_0", "layer3.bias_0"} <= set(names)
    assert 0.0 < model.forward((0.2, 0.7)).data < 1.0


def test_losses_are_finite_when_sigmoid_saturates() -> None:
    z = Scalar(50.0)  # sigmoid(50) rounds to 1.0, so a literal -log(1 - p) would be inf
    loss = train_scalar.point_loss(z, 0)
    loss.backward()
    assert (loss.data, z.derivative) == (pytest.approx(50.0), pytest.approx(1.0))
    zt = tensor([[50.0], [-50.0]], requires_grad=True)
    loss_t = train_tensor.bce_loss(zt, tensor([[-1.0], [1.0]]))
    loss_t.backward()
    assert loss_t.item() == pytest.approx(50.0)
    assert zt.grad is not None
    np.testing.assert_allclose(zt.grad.to_numpy(), [[0.5], [-0.5]])


def test_tensor_linear_is_an_affine_map() -> None:
    layer = train_tensor.Linear(3, 2, SimpleBackend, np.random.default_rng(0))
    x = np.arange(12.0).reshape(4, 3) / 10.0
    out = layer.forward(tensor(x.tolist()))
    w, b = layer.weight.value.to_numpy(), layer.bias.value.to_numpy()
    np.testing.assert_allclose(out.to_numpy(), x @ w + b)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    with pytest.raises(ValueError, match=r"shape \(B, 3\), got \(4, 2\)"):
        layer.forward(tensor(np.zeros((4, 2)).tolist()))


def test_main_prints_progress_and_summary(
    script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = "--dataset diag --points 6 --hidden 2 --epochs 4 --log-every 2 --no-progress"
    result = script.main(argv.split())
    out = capsys.readouterr().out
    for text in ("epoch     2/4", "epoch     4/4", "final accuracy", "s/epoch", "backend="):
        assert text in out
    assert (result.config.dataset, result.config.epochs) == ("diag", 4)


@pytest.mark.parametrize("name", ["XOR", "Xor", "xor", "Simple"])
def test_dataset_names_ignore_case_on_the_command_line(
    script: ModuleType, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the README says and ``datasets["Xor"]`` does (``--dataset XOR`` was refused)."""
    argv = f"--dataset {name} --points 6 --hidden 2 --epochs 1 --log-every 0 --no-progress"
    result = script.main(argv.split())
    assert result.config.dataset == name.lower()
    assert f"dataset={name.lower()}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("--dataset moons", "invalid choice: 'moons'"),
        ("--dataset MOONS", "invalid choice: 'moons'"),
        ("--points 0", "expected an integer in [1,"),
        ("--lr -1", "expected a positive finite number"),
        ("--lr inf", "expected a positive finite number"),
        ("--lr nan", "expected a positive finite number"),
        ("--optimizer rmsprop", "invalid choice: 'rmsprop'"),
        ("--epochs 99999999999999999999999", "expected an integer in [1, 1000000]"),
    ],
)
def test_cli_rejects_bad_arguments(script: ModuleType, argv: str, message: str) -> None:
    assert message in exit_message(script.main, argv)


def test_a_diverging_loss_stops_with_one_line(script: ModuleType) -> None:
    argv = "--points 6 --hidden 3 --epochs 50 --lr 1e300 --optimizer sgd --no-progress"
    err = exit_message(script.main, argv, code=1).strip()
    assert "training diverged (try a smaller --lr); stopped" in err
    assert len(err.splitlines()) == 1


def test_train_rejects_a_bad_config(script: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown dataset 'moons'"):
        script.train(ToyConfig("moons"))
    with pytest.raises(ValueError, match="lr must be positive and finite"):
        script.train(ToyConfig(lr=float("inf")))


def test_on_epoch_reports_each_epoch_and_can_stop_training(script: ModuleType) -> None:
    seen: list[dict[str, object]] = []

    class Stop(Exception):
        pass

    def on_epoch(info: dict[str, object]) -> None:
        seen.append(info)
        if info["epoch"] == 3:
            raise Stop

    with pytest.raises(Stop):
        script.train(ToyConfig("split", points=6, hidden=2, epochs=10), on_epoch=on_epoch)
    assert [info["epoch"] for info in seen] == [1, 2, 3]
    assert set(seen[0]) == {"epoch", "loss", "accuracy", "model", "data"}


@pytest.fixture
def no_backend_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide every installed backend package (as if only mt-tensor were installed)."""
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: ())
    assert list(available_backends()) == ["simple"]


@pytest.mark.usefixtures("no_backend_packages")
@pytest.mark.parametrize("module", [train_tensor, bench_tensor], ids=["train", "bench"])
def test_backend_not_installed_is_an_argparse_error(module: ModuleType) -> None:
    err = exit_message(module.main, "--backend fast")
    assert "argument --backend: backend 'fast' is not installed" in err
    assert "pip install mt-fast" in err


def test_unknown_backend_lists_the_known_ones() -> None:
    assert "known backends: [" in exit_message(train_tensor.main, "--backend no-such-backend")


def test_cuda_without_a_gpu_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("minitorch.cuda")
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr("minitorch.cuda.is_available", lambda: False)
    assert "no CUDA GPU found" in exit_message(train_tensor.main, "--backend cuda --epochs 1")


def test_help_shows_each_default_once_and_helps_every_option(script: ModuleType) -> None:
    assert_help_is_complete(script.build_parser())
    assert "(default: 0.5 for sgd, 0.05 for adam)" in script.build_parser().format_help()


def test_scripts_run_as_files_without_a_traceback(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLES / "train_tensor.py"), "--lr", "nan"]
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "expected a positive finite number, got nan" in run.stderr


@pytest.mark.task1_5
def test_bench_scalar_runs_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    results = bench_scalar.main(["--ops", "50", "--repeat", "2"])
    assert set(results) == {"forward", "backward", "forward (no_grad)"}
    for stats in results.values():
        assert 0.0 < stats["best"] <= stats["median"]
    assert "us per op" in capsys.readouterr().out


@pytest.mark.task1_5
@pytest.mark.parametrize("n_ops", [1, 7, 8, 13, 100])
def test_bench_graph_has_exactly_n_ops(n_ops: int) -> None:
    out = bench_scalar.build_graph(n_ops, random.Random(0))
    assert sum(1 for v in topological_sort(out) if not v.is_leaf()) == n_ops
    assert math.isfinite(out.data)


def test_bench_tensor_runs_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    results = bench_tensor.main(["--number", "2", "--repeat", "2", "--no-torch"])
    assert list(results) == ["minitorch:simple"]
    for stats in results["minitorch:simple"].values():
        assert 0.0 < stats["best"] <= stats["median"]
    out = capsys.readouterr().out
    assert "fwd+bwd" in out
    assert "PyTorch column skipped (--no-torch)" in out


def test_bench_tensor_notes_missing_torch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_tensor, "import_torch", lambda: None)
    results = bench_tensor.main(["--number", "1", "--repeat", "1", "--timer", "cpu"])
    assert "torch" not in results
    out = capsys.readouterr().out
    assert "torch is not importable" in out
    assert "cpu microseconds per call" in out


def test_bench_tensor_cases_compute_the_expression() -> None:
    fns = bench_tensor.minitorch_cases(SimpleBackend)
    assert set(fns) == set(bench_tensor.CASES)
    assert fns["a + b"]().item() == pytest.approx(0.9)
    assert fns["a + b (grad)"]().requires_grad
    for _ in range(2):
        assert fns["fwd+bwd"]() is None


def test_the_nine_operation_case_computes_pytorchs_gradients() -> None:
    torch = pytest.importorskip("torch")
    ours = bench_tensor.minitorch_cases(SimpleBackend)["9 ops"]
    theirs = bench_tensor.torch_cases(torch)["9 ops"]
    ours()
    theirs()

    def leaves(fn):  # the case's own leaves ``ca`` and ``cb``
        closure = [c.cell_contents for c in fn.__closure__]
        return dict(zip(fn.__code__.co_freevars, closure, strict=True))

    mine, reference = leaves(ours), leaves(theirs)
    for name in ("ca", "cb"):
        expected = reference[name].grad.numpy()
        assert np.isfinite(expected).all()
        assert mine[name].grad.to_numpy() == pytest.approx(expected, rel=1e-12)


def test_mlp_step_matches_pytorch_step_by_step() -> None:
    torch = pytest.importorskip("torch")
    ours = bench_tensor.minitorch_cases(SimpleBackend)["mlp step"]
    theirs = bench_tensor.torch_cases(torch)["mlp step"]
    losses = [(ours().item(), theirs().item()) for _ in range(3)]
    for mine, reference in losses:
        assert mine == pytest.approx(reference, rel=1e-9)
    assert losses[2][0] < losses[0][0]  # SGD is training the network


def test_mlp_data_is_the_documented_batch() -> None:
    x, sign, weights = bench_tensor.mlp_data()
    assert x.shape == (bench_tensor.MLP_BATCH, bench_tensor.MLP_IN)
    assert set(sign.ravel()) <= {1.0, -1.0}
    assert [w.shape for w in weights] == [(2, 64), (64,), (64, 1), (1,)]


def test_profile_prints_where_the_time_goes(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_tensor.main(["--profile", "a + b", "--number", "5", "--no-torch"]) == {}
    out = capsys.readouterr().out
    assert "cProfile of 5 calls of 'a + b' on simple" in out
    assert "tottime" in out
    assert "apply" in out  # Function.apply is on the path of every operation


def test_no_progress_bar_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: in a log file or pipe the bar's carriage returns interleaved with the lines
    pytest.importorskip("tqdm")
    log = io.StringIO()  # not a terminal, like a CI log
    monkeypatch.setattr(sys, "stderr", log)
    train_tensor.train(ToyConfig(points=4, hidden=1, epochs=200), log_every=50, progress=True)
    assert log.getvalue() == ""
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert all(line.startswith("epoch ") and "\r" not in line for line in lines)


def test_progress_bar_is_shown_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    from mt_examples.support import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress_bar(3, "x", "step")
    assert bar is not None
    bar.close()
    assert progress_bar(3, "x", "step", show=False) is None


def test_epoch_lines_and_the_summary_say_when_they_measure(
    script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: the last epoch line (94.0%) and the final line (92.0%) disagreed unexplained:
    # an epoch line measures the model before that epoch's step, the summary after the last
    argv = "--dataset xor --points 20 --hidden 3 --epochs 6 --log-every 1 --no-progress"
    result = script.main(argv.split())
    lines = capsys.readouterr().out.splitlines()
    last = next(line for line in reversed(lines) if line.startswith("epoch "))
    done = next(line for line in lines if line.startswith("done: "))
    assert f"({result.accuracies[-1]:.1%}) before its step" in last
    assert f"after the last step: final accuracy {result.final_accuracy:.1%}" in done


def test_scripts_run_without_tqdm_or_matplotlib(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from mt_examples import support

    monkeypatch.setattr(support, "_hinted", set())
    for name in ("tqdm", "matplotlib"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    result = train_scalar.main(["--points", "4", "--hidden", "1", "--epochs", "3"])
    assert len(result.losses) == 3
    hint = "note: tqdm is not installed, so there is no progress bar (pip install tqdm)"
    assert capsys.readouterr().err.strip() == hint
    pytest.importorskip("minitorch.nn")
    from mt_examples.train_mnist import plot_curves

    history = {k: [1.0] for k in ("train_loss", "held_out_loss")}
    assert plot_curves(history, tmp_path / "x.png", "test") is None
    assert "matplotlib is not installed, so no plot is written" in capsys.readouterr().err


def test_the_root_readme_names_every_option_of_the_main_job() -> None:
    """The README listed five of train's nine options."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme.split())  # its sentences wrap
    parser = train_scalar.build_parser()
    for action in parser._actions:
        longs = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
        for option in longs:
            assert f"`{option}`" in text, option
        for choice in action.choices or ():
            assert choice in text, f"{longs}: {choice}"
