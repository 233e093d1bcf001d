"""A student's own library, end to end: every layer theirs, built on week after week.

The finished starters of operators, autodiff and tensor (every task's code kept) sit side
by side as the course hands them out (``mt-operators``, ``mt-autodiff``, ``mt-tensor``).
The tensor starter is set up as its README says, then the README's "Use your own earlier
layers" commands put the student's operators and autodiff in place of the course's
wheels, in the same environment. ``which_layers.py`` must tell whose each layer is before
and after (and after going back), the student's tests must pass, and task 2.5's network,
trained on the student's three layers as grading trains it, must learn.

Offline: the environment is ``make_venv``'s (pytest, numpy, hypothesis and hatchling come
from the course environment through its ``.pth`` line), ``PIP_NO_INDEX`` keeps pip to
``wheels/`` and the starters' folders, and ``PIP_NO_BUILD_ISOLATION=0`` (pip reads a
"no-" variable inverted: this turns isolation off) builds the editable installs with the
course environment's hatchling instead of downloading it.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from mtcourse.config import load_calendar
from mtcourse.runner import make_venv
from mtcourse.starter import assign

pytestmark = pytest.mark.packaging

CAL = load_calendar()
LAYERS = ("operators", "autodiff", "tensor")


def section_commands(readme: str, title: str) -> list[list[str]]:
    """The lines of each code block of the README's section ``## title``, in order."""
    section = readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [
        [line for line in block.splitlines() if line.strip()]
        for block in re.findall(r"```\n(.*?)```", section, re.S)
    ]


def whose(output: str) -> dict[str, tuple[str, str, str]]:
    """``which_layers.py``'s table: layer -> (whose, from, public tests)."""
    rows = {}
    for line in output.splitlines():
        if line.startswith("minitorch."):
            cells = re.split(r"\s{2,}", line.strip())
            rows[cells[0].removeprefix("minitorch.")] = (cells[2], cells[3], " ".join(cells[4:]))
    return rows


def run(command: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    """Run ``command`` with bash in ``cwd``; fail the test, with its output, unless it exits 0."""
    proc = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"`{command}` exited with {proc.returncode}:\n{output[-4000:]}")
    return output


def test_a_students_own_three_layers_install_together_pass_their_tests_and_train(tmp_path):
    for name in LAYERS:
        layer = CAL.layer(name)
        every = frozenset(layer.task_ids)  # a student's finished starter
        assign(name, tmp_path / layer.package, keep=every, cal=CAL, wheels=name == "tensor")
    starter = tmp_path / "mt-tensor"
    venv = tmp_path / "venv"
    make_venv(venv, starter / "wheels", [])  # an empty environment, offline
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",  # as `. .venv/bin/activate` does
        VIRTUAL_ENV=str(venv),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",
    )
    readme = (starter / "README.md").read_text(encoding="utf-8")
    (setup,) = section_commands(readme, "Set up")
    for command in setup:
        if command.startswith("python -m pip "):  # the environment is made above
            run(command, starter, env)
    before = whose(run("python which_layers.py --no-tests", starter, env))
    assert {n: row[0] for n, row in before.items()} == {
        "operators": "course",
        "autodiff": "course",
        "tensor": "yours",
    }, before
    assert before["operators"][1].startswith("wheels/mt_operators-"), before

    own, back = section_commands(readme, "Use your own earlier layers")
    assert len(own) == len(back) == 2, (own, back)
    for command in own:
        run(command, starter, env)
    report = run("python which_layers.py", starter, env)  # exit 0: every test passed
    after = whose(report)
    assert set(after) == set(LAYERS), report
    for name, (owner, source, tests) in after.items():
        assert owner == "yours", report
        assert source == ("." if name == "tensor" else f"../mt-{name}"), report
        assert re.fullmatch(r"\d+ passed(, \d+ skipped)?", tests), report

    # Task 2.5's network, on the student's three layers, as grading trains it (one dataset:
    # xor, the one a network without a hidden layer cannot learn).
    trained = run("python -m mt_examples.graded task2_5 --dataset xor", starter, env)
    assert re.search(
        r"xor: the trained network labels \d+ of 500 held-out points .*: pass", trained
    ), trained

    # Back to the course's wheels; a wheel's files edited in place are no longer the course's.
    for command in back:
        run(command, starter, env)
    restored = whose(run("python which_layers.py --no-tests", starter, env))
    assert {n: row[0] for n, row in restored.items()} == {n: r[0] for n, r in before.items()}
    python = venv / "bin" / "python"
    init = run(f"{python} -c 'import minitorch.autodiff as m; print(m.__file__)'", starter, env)
    Path(init.strip()).write_text(Path(init.strip()).read_text() + "\n# edited\n")
    edited = whose(run("python which_layers.py --no-tests", starter, env))
    assert edited["autodiff"][0] == "yours", edited
    assert edited["operators"][0] == "course", edited
