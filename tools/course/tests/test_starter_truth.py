"""What a starter tells a student is true: every command, path and option it names exists.

The README, the workflow and the training scripts' docstrings name commands (``pytest -m
task2_1``, ``python train_tensor.py --dataset xor``, ``python -m mt_examples.graded
task2_5``); each must work in the starter as written: the file or module is there, the
options are the script's, the task marker has tests. The graded training settings are
stated once (``examples/mt_examples/graded.py``), used by the course's training tests, and
what their docstrings (the README's Training section) say must agree with them.
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from mtcourse.config import REPO, load_calendar
from mtcourse.runner import make_venv
from mtcourse.starter import assign
from mtcourse.suite import wheelhouse

sys.path.insert(0, str(REPO / "examples"))
from mt_examples import graded  # (stdlib only at import)

CAL = load_calendar()
SHIPPED_SUFFIXES = {".py", ".md", ".yml", ".toml"}


def shipped_text(starter: Path) -> dict[str, str]:
    """Every text file a starter ships (not its wheels), by path relative to the starter."""
    return {
        str(p.relative_to(starter)): p.read_text(encoding="utf-8")
        for p in sorted(starter.rglob("*"))
        if p.is_file() and p.suffix in SHIPPED_SUFFIXES and "wheels" not in p.parts
    }


def named_commands(text: str) -> list[str]:
    """The ``python ...`` and ``pytest ...`` commands a text names, in code spans or blocks."""
    spans = re.findall(r"``?([^`\n]+)``?", text)
    spans += [ln.strip() for ln in text.splitlines() if ln.strip().startswith(("python ", "run: "))]
    out = []
    for span in spans:
        span = span.removeprefix("run: ").split("  #")[0].strip()
        m = re.search(r"(?:^|\s)((?:python|pytest) .*)$", span)
        if m:
            out.append(m.group(1).strip())
    return out


def options_of(paths: list[Path]) -> set[str]:
    """Every ``--option`` these files define (their string literals that look like one)."""
    options = {"--help"}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            literal = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if literal and re.fullmatch(r"--[a-z][a-z-]*", node.value):
                options.add(node.value)
    return options


def marked_tasks(starter: Path) -> set[str]:
    """The task markers the starter's tests use."""
    text = "".join(p.read_text(encoding="utf-8") for p in (starter / "tests").rglob("*.py"))
    return set(re.findall(r"\btask\d+_\d+\b", text))


@pytest.mark.parametrize("layer", list(CAL.layers))
def test_every_command_a_starter_names_exists_in_it(tmp_path, layer):
    starter = tmp_path / layer
    assign(layer, starter, cal=CAL, wheels=False)
    files = shipped_text(starter)
    helpers = sorted((starter / "mt_examples").glob("*.py"))  # the scripts' shared parsers
    tasks = marked_tasks(starter)
    problems = []
    for rel, text in files.items():
        if re.search(r"\bhatch run\b|python examples/", text):
            problems.append(f"{rel}: names a command of the repository, not of the starter")
        for cmd in named_commands(text):
            words = cmd.split()
            if words[0] == "pytest" or words[:3] == ["python", "-m", "pytest"]:
                problems += [
                    f"{rel}: `{cmd}`: no test is marked {t}"
                    for t in re.findall(r"-m (task\d+_\d+)", cmd)
                    if t not in tasks
                ]
                continue
            if words[:2] == ["python", "-m"]:
                module = words[2]
                if module in {"pip", "venv"}:
                    continue
                name = module.replace(".", "/") + ".py"
                where = [starter / name, starter / "src" / name]
                target = next((w for w in where if w.is_file()), None)
                if target is None:
                    problems.append(f"{rel}: `{cmd}`: no module {module} in the starter")
                    continue
            elif words[0] == "python" and words[1].endswith(".py"):
                if not (starter / words[1]).is_file():
                    problems.append(f"{rel}: `{cmd}`: no {words[1]} in the starter")
                    continue
                # A launcher runs its namesake in mt_examples/; another script runs itself.
                target = starter / "mt_examples" / words[1]
                if not target.is_file():
                    target = starter / words[1]
            else:
                continue
            known = options_of([target, *helpers] if target.is_file() else helpers)
            for opt in (w.split("=")[0].strip("[]") for w in words if "--" in w):
                if opt.startswith("--") and opt not in known:
                    problems.append(f"{rel}: `{cmd}`: {target.name} has no option {opt}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("layer", list(CAL.layers))
def test_every_module_of_its_own_package_a_starter_names_is_in_it(tmp_path, layer):
    # A starter leaves the tuned kernels out (``solution-only``): a docstring naming
    # ``minitorch.fast.tuned`` as what runs would not be true there.
    starter = tmp_path / layer
    assign(layer, starter, cal=CAL, wheels=False)
    package = starter / "src" / "minitorch" / layer
    exported = package_names(package / "__init__.py")
    problems = [
        f"{rel}: names minitorch.{layer}.{name}, which is not in the starter"
        for rel, text in shipped_text(starter).items()
        for name in re.findall(rf"\bminitorch\.{layer}\.([A-Za-z]\w*)", text)
        if not (package / f"{name}.py").is_file()
        and not (package / name).is_dir()
        and name not in exported
    ]
    assert not problems, "\n".join(problems)


def package_names(init: Path) -> set[str]:
    """The names a package's ``__init__.py`` lists in ``__all__`` or binds itself."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names = {
        a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }
    names |= {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets):
            names |= {e.value for e in ast.walk(n.value) if isinstance(e, ast.Constant)}
    return names


def test_the_readme_and_workflow_run_the_graded_training_of_each_toy_task(tmp_path):
    for layer in ("autodiff", "tensor", "fast"):
        starter = tmp_path / layer
        assign(layer, starter, cal=CAL, wheels=False)
        readme = (starter / "README.md").read_text(encoding="utf-8")
        workflow = (starter / ".github" / "workflows" / "tests.yml").read_text(encoding="utf-8")
        for task in CAL.training_tasks(layer):
            command = f"python -m mt_examples.graded {task}"
            assert f"`{command}`" in readme, (layer, task)
            assert f"run: {command}\n" in workflow, (layer, task)
            assert f"pytest -m {task}" not in readme + workflow, (layer, task)


@pytest.mark.parametrize("task", sorted(graded.TASKS))
def test_the_training_tests_docstring_states_the_graded_settings(task):
    layer = next(n for n in CAL.layers if task in CAL.training_tasks(n))
    (path,) = CAL.layer(layer).training_tests.glob("test_*.py")
    source = path.read_text(encoding="utf-8")
    doc = " ".join((ast.get_docstring(ast.parse(source)) or "").split())
    settings = graded.TASKS[task]
    assert f'graded.TASKS["{task}"]' in source  # the test trains with these settings
    for i in range(0, len(settings.options), 2):
        assert " ".join(settings.options[i : i + 2]) in doc, (task, settings.options[i])
    assert f"--points {graded.POINTS} --seed {graded.SEED}" in doc
    assert f"python {settings.script}.py" in doc
    assert f"{graded.THRESHOLD:.0%}" in doc
    assert ", ".join(graded.DATASETS[:-1]) + f" and {graded.DATASETS[-1]}" in doc
    assert f"`python -m mt_examples.graded {task}`" in doc


@pytest.mark.packaging
@pytest.mark.parametrize(("layer", "task"), [("autodiff", "task1_5"), ("tensor", "task2_5")])
def test_the_graded_training_command_trains_and_scores_in_the_starter(tmp_path, layer, task):
    starter = tmp_path / "starter"
    every = frozenset(CAL.layer(layer).task_ids)
    assign(layer, starter, cal=CAL, keep=every, wheels=False)  # a finished starter
    lower = CAL.closure(layer)
    python = make_venv(
        tmp_path / "venv",
        wheelhouse(CAL, lower, tmp_path / "wheels"),
        [f"mt-{d}=={CAL.layer(d).solution_version}" for d in lower],
    )
    env = {**os.environ, "PYTHONPATH": str(starter / "src")}
    run = subprocess.run(
        [python, "-m", "mt_examples.graded", task, "--dataset", "xor", "--epochs", "2"],
        cwd=starter,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = run.stdout + run.stderr
    assert run.returncode in (0, 1), out
    assert "xor: the trained network labels " in out, out
    assert "at least 90% is needed" in out, out
    assert "(trained 2 epochs, not the graded number)" in out, out
    assert run.returncode == (0 if ": pass" in out else 1), out


@pytest.mark.parametrize("layer", list(CAL.layers))
def test_every_pip_command_a_starter_names_installs_a_layer_below_it(tmp_path, layer):
    # "Use your own earlier layers": `python -m pip install --no-deps -e ../mt-operators`
    # installs a student's starter of a lower layer, `... mt-operators==0.5.0` the course's
    # wheel back. Each must name a layer below this one, at the version of its wheel in
    # wheels/ (the solution's, which the starter's pyproject pins where it names the layer).
    starter = tmp_path / layer
    assign(layer, starter, cal=CAL, wheels=False)
    wheels = {f"mt-{d}": f"mt-{d}=={CAL.layer(d).solution_version}" for d in CAL.closure(layer)}
    project = tomllib.loads((starter / "pyproject.toml").read_text(encoding="utf-8"))
    for text in project["project"]["dependencies"]:
        assert wheels.get(Requirement(text).name, text) == text, text
    files = shipped_text(starter)
    problems = []
    for rel, text in files.items():
        for cmd in named_commands(text):
            words = cmd.split()
            if words[:4] != ["python", "-m", "pip", "install"]:
                continue
            for word in words[4:]:
                if word.startswith("../") and word.removeprefix("../") not in wheels:
                    problems.append(f"{rel}: `{cmd}`: {word} is not the starter of a lower layer")
                if "==" in word and word not in wheels.values():
                    problems.append(f"{rel}: `{cmd}`: {word} is not a lower layer's wheel")
    assert not problems, "\n".join(problems)
    readme = files["README.md"]
    for name, pin in wheels.items():  # each lower layer: the student's, and the course's back
        assert f"python -m pip install --no-deps -e ../{name}\n" in readme, name
        assert f" --find-links wheels {pin}\n" in readme, name
    assert ("../mt-" in readme) == bool(wheels)
