"""A student's first steps: the starter installs by its README's commands, verbatim.

A fresh virtual environment, no index but PyPI (this machine's pip configuration is set
aside): the lower layers come from the starter's wheels/, numpy and the test tools from
PyPI. Then the student's tests run and fail with the tasks' NotImplementedError.
"""

import os
import re
import subprocess

import pytest
from config import load_calendar
from course import assign

pytestmark = pytest.mark.packaging


def readme_commands(readme: str) -> list[str]:
    """The commands of the README's "Set up" section, as a student copies them."""
    section = readme.split("## Set up", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "the README's Set up section has no code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_tensor_starter_installs_from_its_readme_with_pypi_only(tmp_path):
    cal = load_calendar()
    out = tmp_path / "mt-tensor"
    assign("tensor", out, week=3, cal=cal)
    commands = readme_commands((out / "README.md").read_text())
    assert any("pip install" in c for c in commands)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    script = (
        "set -euo pipefail\n"
        + "\n".join(commands)
        + "\npython -m pytest -q -p no:cacheprovider -m task2_1\n"
    )
    proc = subprocess.run(
        ["bash", "-c", script], cwd=out, env=env, capture_output=True, text=True, timeout=1200
    )
    output = proc.stdout + proc.stderr
    if proc.returncode != 1:
        pytest.fail(f"expected the task's tests to run and fail (exit 1):\n{output[-4000:]}")
    assert "NotImplementedError" in output or "Task 2.1" in output, output[-2000:]
    assert " error" not in output.splitlines()[-1], output[-2000:]
    py = out / ".venv" / "bin" / "python"
    # Task 2.5's training script runs from the starter folder, up to the student's stub.
    run = subprocess.run(
        [py, "train_tensor.py", "--epochs", "1", "--no-progress"],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert "NotImplementedError" in run.stderr, run.stderr[-2000:]
    shown = subprocess.run(
        [py, "-m", "pip", "show", "mt-operators", "mt-autodiff", "mt-root"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in ("mt-operators", "mt-autodiff"):
        assert f"Name: {name}\nVersion: {cal.layer(name[3:]).solution_version}" in shown
