"""A student's first steps: each layer's starter installs by its README's commands, verbatim.

A fresh virtual environment, no index but PyPI (this machine's pip configuration is set
aside): the lower layers come from the starter's wheels/, numpy, numba and the test tools
from PyPI. Then one task's tests run (stopping at the first failure, to keep CI short: the
whole suite of every starter is `course check`'s job) and fail with the task's
NotImplementedError, and the week's training script runs up to the student's stub.
"""

import os
import re
import subprocess

import pytest

from mtcourse.config import load_calendar
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()
WEEK = {name: w.week for w in CAL.weeks for name in w.starters}

# The training script each starter runs from its folder, and what it must show: the stub's
# error (the network is the student's), or its help where it needs data to get that far.
SCRIPTS = {
    "autodiff": (["train_scalar.py", "--epochs", "1", "--no-progress"], "NotImplementedError"),
    "tensor": (["train_tensor.py", "--epochs", "1", "--no-progress"], "NotImplementedError"),
    # The fast backend's kernels are the student's too: the first stub reached raises.
    "fast": (
        ["train_tensor.py", "--backend", "fast", "--epochs", "1", "--no-progress"],
        "NotImplementedError: Task 3.",
    ),
    "nn": (["train_mnist.py", "--help"], "--train-size"),
}


def readme_commands(readme: str) -> list[str]:
    """The commands of the README's "Set up" section, as a student copies them."""
    section = readme.split("## Set up", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "the README's Set up section has no code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def readme_test_prefix(readme: str, task: str) -> str:
    """The environment the README puts before ``pytest -m TASK`` (the CUDA simulator), if any."""
    return max(re.findall(rf"`((?:\w+=\S+ )*)pytest -m {task}`", readme), key=len, default="")


@pytest.mark.parametrize("layer", list(CAL.layers))
def test_starter_installs_from_its_readme_with_pypi_only(tmp_path, layer):
    cal = CAL
    out = tmp_path / f"mt-{layer}"
    assign(layer, out, week=WEEK[layer], cal=cal)
    readme = (out / "README.md").read_text()
    commands = readme_commands(readme)
    assert any("pip install" in c for c in commands)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL"))}
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # only what the README says
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    task = cal.layer(layer).task_ids[0]
    prefix = readme_test_prefix(readme, task)
    script = (
        "set -euo pipefail\n"
        + "\n".join(commands)
        + f"\n{prefix}python -m pytest -q -x -p no:cacheprovider -m {task}\n"
    )
    proc = subprocess.run(
        ["bash", "-c", script], cwd=out, env=env, capture_output=True, text=True, timeout=1200
    )
    output = proc.stdout + proc.stderr
    if proc.returncode != 1:
        pytest.fail(f"expected the task's tests to run and fail (exit 1):\n{output[-4000:]}")
    number = task[4:].replace("_", ".")
    assert f"Task {number}" in output, output[-2000:]
    assert " error" not in output.splitlines()[-1], output[-2000:]
    py = out / ".venv" / "bin" / "python"
    shown = subprocess.run(
        [py, "-m", "pip", "show", *(f"mt-{d}" for d in cal.closure(layer)), "mt-root"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in cal.closure(layer):
        assert f"Name: mt-{name}\nVersion: {cal.layer(name).solution_version}" in shown
    if layer in SCRIPTS:
        # The week's training script runs from the starter folder, up to the student's part.
        argv, expected = SCRIPTS[layer]
        run = subprocess.run(
            [py, *argv], cwd=out, env=env, capture_output=True, text=True, timeout=600
        )
        assert expected in run.stdout + run.stderr, (run.stdout + run.stderr)[-2000:]
