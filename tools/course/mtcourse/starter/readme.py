"""The starter's README: the week's tasks, where to write them, their points and commands."""

from __future__ import annotations

import ast
from pathlib import Path

from ..config import Calendar, Layer, Task, own_layer_commands
from ..grader.grading import TEST_EXAMPLES
from ..grader.scoring import PUBLIC_PART
from ..grader.splice import find_units
from ..layers import scan_blocks, script_blocks, written_test_blocks
from ..markers import task_number
from .workflow import INSTALL, graded_tasks, task_command

__all__ = ["REPORT", "own_layers_readme", "student_readme", "task_places"]

# The script every starter carries at its root (a copy of ``which_layers.py`` beside this
# module): which installed layers are the student's, and their public tests.
REPORT = "which_layers.py"


def task_places(layer: Layer, cal: Calendar) -> dict[str, dict[str, list[str]]]:
    """Task -> file of the starter -> the functions to write there (from the markers)."""
    places: dict[str, dict[str, list[str]]] = {}
    found = [
        (f"src/minitorch/{layer.name}/{path.relative_to(layer.src).as_posix()}", path, bl)
        for path, bl in scan_blocks(layer).items()
        if not any((layer.path / so).resolve() == path.resolve() for so in layer.solution_only)
    ]
    found += [
        (f"mt_examples/{path.name}", path, bl) for path, bl in script_blocks(layer, cal).items()
    ]
    found += [
        (path.relative_to(layer.path).as_posix(), path, bl)
        for path, bl in written_test_blocks(layer).items()
    ]
    for rel, path, bl in found:
        # The functions the grader splits the task's points among: each block's outermost
        # function (a kernel factory, not the kernel it returns).
        text = path.read_text(encoding="utf-8")
        for b in bl:
            (unit,) = find_units(text, [(b.task, b.begin, b.end)], rel)
            names = places.setdefault(b.task, {}).setdefault(rel, [])
            if unit.qualname not in names:
                names.append(unit.qualname)
    return places


def _tasks_phrase(tasks: list[str]) -> str:
    """``task 2.1`` or ``tasks 2.1, 2.2 and 2.3``."""
    numbers = [task_number(t) for t in tasks]
    if len(numbers) == 1:
        return f"task {numbers[0]}"
    return f"tasks {', '.join(numbers[:-1])} and {numbers[-1]}"


def task_section(
    layer: Layer, cal: Calendar, task: Task, places: dict[str, list[str]], guide: str
) -> str:
    """The README's section of one task: where, how to test it, its points, what it needs."""
    write = "".join(
        f"- `{rel}`: {', '.join(f'`{n}`' for n in names)}\n" for rel, names in places.items()
    )
    public = round(task.points * PUBLIC_PART, 2)
    training = task.id in cal.training_tasks(layer.name)
    manual = task.id in graded_tasks("MANUAL")
    command = task_command(task.id)
    if manual:
        run = (
            f"set its weights and score them as the grader does with `{command}` (see The "
            "network you set by hand below)"
        )
    elif not training:
        run = f"run its tests with `{command}`"
    elif command.startswith("pytest"):
        run = "its network is graded by training it (see Training below)"
    else:
        run = f"train it as the grader does with `{command}` (see Training below)"
    if task.tests_of:
        points = (
            f"Points: {task.points:g} times the share of the course's mistakes in "
            f"{_tasks_phrase(list(task.tests_of))}'s functions that your tests catch (see "
            "Grading)."
        )
    elif manual:
        points = (
            f"Points: up to {public:g} as the graded checks pass, all {task.points:g} once "
            "every one passes (see Grading)."
        )
    elif training:
        points = (
            f"Points: all {task.points:g} once every graded run reaches its threshold (no "
            "hidden tests; see Grading)."
        )
    else:
        points = (
            f"Points: up to {public:g} from the public tests you have, "
            f"{task.points - public:g} more once every test passes, the hidden ones too (see "
            "Grading)."
        )
    used = [t for t in (layer.uses or {}).get(task.id, ()) if t != task.id]
    if task.tests_of:
        needs = (
            f"Here you write tests, not functions: each test's docstring states a property of "
            f"{_tasks_phrase(list(task.tests_of))}'s functions, and its body checks it on the "
            "inputs Hypothesis draws. They run your own code of "
            f"{_tasks_phrase(list(task.tests_of))} here; the grader runs them on the "
            "course's code instead.\n\n"
        )
    elif manual:
        needs = (
            "Your network runs your operators and your `Module` here; the grader puts the "
            "course's solution of the other tasks around your network.\n\n"
        )
    elif training:
        needs = (
            "Training runs the code of every task of this week: it is graded with the "
            "course's solution of the other tasks and your network.\n\n"
        )
    elif used:
        needs = (
            f"Its tests also run the code of {_tasks_phrase(used)}: "
            "they fail until that is written too. The grader fills in the other tasks with "
            "the course's solution, so this task is graded on its own code.\n\n"
        )
    elif layer.uses is not None:
        needs = "Its tests run only its own code (and the lower layers').\n\n"
    else:
        needs = ""
    link = f"The guide's section: <{guide}modules/{layer.name}/#{task.id}>.\n\n" if guide else ""
    return (
        f"### Task {task_number(task.id)}: {task.title} ({task.points:g} points)\n\n"
        f'Write (each place raises `NotImplementedError("Task {task_number(task.id)}: '
        '...")`):\n\n'
        f"{write}\n"
        f"Then {run}. {points}\n\n"
        f"{needs}{link}"
    )


def student_readme(
    layer: Layer, cal: Calendar, week: int | None, guide_url: str | None = None
) -> str:
    """The starter's README of ``layer``: set-up, tasks, grading, training, earlier layers."""
    deps = [f"`mt-{d}=={cal.layer(d).solution_version}`" for d in cal.closure(layer.name)]
    guide = cal.guide_url if guide_url is None else guide_url
    if guide and not guide.endswith("/"):
        guide += "/"
    rows = "\n".join(
        f"| {task_number(t.id)} | {t.title} | `{task_command(t.id)}` | {t.points:g} |"
        for t in layer.tasks
    )
    places = task_places(layer, cal)
    sections = "".join(
        task_section(layer, cal, t, places.get(t.id, {}), guide) for t in layer.tasks
    )
    when = f" (week {week})" if week is not None else ""
    lower = (
        f"It builds on the released solutions of the lower layers ({', '.join(deps)}), "
        "installed as wheels, so earlier bugs do not carry over (or on your own: see "
        "Use your own earlier layers, at the end).\n\n"
        if deps
        else ""
    )
    wheels = (
        "`wheels/` holds the wheels this starter needs that are not on PyPI (the namespace "
        "root `mt-root`"
        + (" and the lower layers' solutions" if deps else "")
        + "); everything else comes from PyPI. Keep the folder in your repository: the "
        "workflow installs from it too.\n\n"
    )
    part = f"{PUBLIC_PART:.0%}"
    rest = f"{1 - PUBLIC_PART:.0%}"
    return (
        f"# {layer.package}: student starter{when}\n\n"
        f"This is `minitorch.{layer.name}` with the code of this week's tasks taken out. "
        'Each place to fill in raises `NotImplementedError("Task X.Y: ...")`; the message '
        "names the task and what to implement. Signatures, docstrings and type hints are "
        "there to guide you.\n\n"
        + (f"The guide to this week: <{guide}modules/{layer.name}/>.\n\n" if guide else "")
        + f"{lower}"
        "## Set up\n\n"
        "```\npython -m venv .venv && . .venv/bin/activate\n"
        f"python -m pip install {INSTALL}\n```\n\n"
        f"{wheels}"
        "## Tasks\n\n"
        "| Task | What | Run its tests | Points |\n|---|---|---|---|\n"
        f"{rows}\n\n"
        f"{_test_env_readme(layer)}"
        "`pytest` runs every test. The tests you see are the public ones; grading adds "
        "hidden tests of the same tasks and always uses its own copy of the tests, so "
        "editing them changes nothing. Each test has a time limit when graded (CPU time, "
        "many times the course's own code's on the same machine): an endless loop costs "
        "the points of the function it is in.\n\n"
        "The workflow in `.github/workflows/tests.yml` runs each task's tests on every push "
        "to main and on every pull request.\n\n"
        f"{sections}"
        "## Grading\n\n"
        "Only the functions listed above are taken from your submission, each with the "
        "helper functions and imports you add beside it: nothing else of your files runs "
        "when graded (module-level code, other files and modules you add, your tests, "
        "`conftest.py` or configuration). Your code runs in a separate, sandboxed process "
        "that answers the grader's tests with plain values (numbers, arrays, the course's "
        "own objects), under limits on time, memory, processes, output and disk.\n\n"
        "Each function is graded on its own: in each of its tests, every other function "
        "(of this task and the others) is the course's solution, so a wrong function costs "
        "only its own points."
        + _whole_readme(layer)
        + " A task's points are split equally among the functions you write for it, and "
        "each function is graded by the tests that use it:\n\n"
        "```\n"
        "share    = task points / number of functions\n"
        f"function = share * ({PUBLIC_PART:g} * public tests of it passed / its public tests\n"
        f"                    + {1 - PUBLIC_PART:g} if all its tests pass, public and hidden, "
        "else 0)\n"
        "task     = the sum over its functions\n"
        "```\n\n"
        f"So {part} of a function's share follows its public tests, and {rest} needs all "
        "of its tests to pass: one wrong function costs more than half of its share, "
        "however many other tests pass. The public part is shown at once with each failing "
        "test's assertion and its values; the hidden tests (their names, not their inputs) "
        "are shown when the grades are published.\n"
        f"{_writing_readme(layer)}"
        f"{_training_readme(layer, cal)}"
        f"{own_layers_readme(layer, cal)}"
    )


def _writing_readme(layer: Layer) -> str:
    """The README's paragraph on the tasks whose tests are graded, if any."""
    writing = [t for t in layer.tasks if t.tests_of]
    if not writing:
        return ""
    return (
        f"\n{_tasks_phrase([t.id for t in writing]).capitalize()} "
        f"{'grades' if len(writing) == 1 else 'grade'} your tests "
        "themselves (the one exception to the rule above: those tests are taken from your "
        "submission). The grader runs them in the same sandbox on the course's code of the "
        "functions they check, where each must pass: a test that fails on correct code "
        "earns nothing. It then runs them once for each of a fixed list of small mistakes "
        "planted in those functions (a comparison, an operator or a constant changed, a "
        "statement dropped; the ones the course's own tests catch): the points are the "
        "share of the mistakes that at least one of your tests catches. Hypothesis draws "
        f"the same {TEST_EXAMPLES} inputs for a test in every run, and each run is a new "
        "process that keeps nothing of the one before. The feedback says how many "
        "mistakes each test caught and, for the ones none caught, in which function and of "
        "what kind.\n"
    )


def _whole_readme(layer: Layer) -> str:
    """The README's sentence on the tasks graded on the student's whole layer, if any."""
    if not layer.whole:
        return ""
    tasks = " and ".join(f"task {task_number(t)}" for t in layer.whole)
    return (
        f" Except {tasks}: a network of Scalars trains with millions of scalar operations, "
        "too many to send one by one between two processes, so it trains on your own copy "
        "of the whole layer, and a mistake in the other tasks can cost it too."
    )


def _test_env_readme(layer: Layer) -> str:
    """The README's sentence on the environment the tests need without a GPU, if any."""
    if not layer.test_env:
        return ""
    env = " ".join(f"{k}={v}" for k, v in layer.test_env.items())
    return (
        "Without an NVIDIA GPU, run the tests with the kernels on Numba's CUDA simulator "
        f"(the workflow does): `{env} pytest -m {layer.task_ids[0]}`.\n\n"
    )


def _training_readme(layer: Layer, cal: Calendar) -> str:
    """The README's section on the layer's training scripts (empty if it has none).

    It says how each training task is graded: the docstring of the layer's training tests.
    """
    scripts = cal.scripts_of(layer.name)
    if not scripts:
        return ""
    rows = "\n".join(
        f"- Task {task_number(t)}: `mt_examples/{Path(s).name}`, run with "
        f"`python {Path(s).name} --help`"
        for s, t in scripts.items()
    )
    graded = "".join(
        f"\n{ast.get_docstring(ast.parse(path.read_text(encoding='utf-8'))) or ''}\n"
        for path in sorted(layer.training_tests.glob("test_*.py"))
    )
    if set(scripts.values()) <= graded_tasks("MANUAL"):  # task 0.5: nothing is trained
        return (
            "\n## The network you set by hand\n\n"
            "The script of this task is in `mt_examples/`, with the network for you to write "
            "(its `NotImplementedError` names the task); the page with the sliders, the export "
            "and the scoring are there. Run it from this folder:\n\n"
            f"{rows}\n{graded}"
        )
    return (
        "\n## Training\n\n"
        "The training script of this week is in `mt_examples/`, with the network for you to "
        "write (its `NotImplementedError` names the task); everything else it needs (data, "
        "the training loop, the command line) is there. Run it from this folder:\n\n"
        f"{rows}\n{graded}"
    )


def own_layers_readme(layer: Layer, cal: Calendar) -> str:
    """The README's section on using the student's own finished starters of earlier weeks.

    Each lower layer's starter is expected beside this one, in the folder the course hands
    it out as (``mt-<layer>``, as ``course.yml`` writes them): installed editable without
    its dependencies, it replaces the course's wheel; reinstalling the wheel from
    ``wheels/`` puts the course's back. ``python which_layers.py`` says which is which.
    """
    env = "".join(f"{k}={v} " for k, v in layer.test_env.items())
    report = (
        f"`{env}python {REPORT}` prints a table of the minitorch layers installed here: each "
        "is `yours` (the code of a starter, or any install that is not the course's wheel) "
        "or `course` (the same files as its wheel in `wheels/`), with the public tests of "
        "each of yours, run in the starter it comes from, and the name of each failing test "
        f"(`python {REPORT} --no-tests`: the table alone; the exit status is 1 when a test "
        "fails).\n"
    )
    lower = cal.closure(layer.name)
    if not lower:
        return (
            "\n## Use your own earlier layers\n\n"
            f"This is the first layer: there is no earlier one, and all of `{layer.package}` "
            "is yours. Keep this folder, named "
            f"`{layer.package}`, once it is finished: the starters of the later weeks "
            "install the course's solution of this layer, and their README says how to use "
            "yours instead, from a folder beside theirs.\n\n" + report
        )
    pins = [(f"mt-{d}", cal.layer(d).solution_version) for d in lower]
    named = ", ".join(f"`{name}=={version}`" for name, version in pins)
    folders = ", ".join(f"`../{name}`" for name, _ in pins)
    install, restore = own_layer_commands(layer, cal)
    return (
        "\n## Use your own earlier layers\n\n"
        f"The set-up installs the course's solution of the earlier layers ({named}, from "
        "`wheels/`), so a bug of an earlier week does not carry over. To build this week "
        "on your own code instead, put your finished starters of those weeks beside this "
        f"folder, in the folders the course handed them out as ({folders}), and install each "
        "one you want into this starter's environment, editable and without its "
        "dependencies (they are here already):\n\n"
        f"```\n{install}```\n\n"
        "Python then imports that layer from your folder, and an edit there counts here at "
        "once. Running the set-up command again keeps it, as long as its version is the one "
        "this starter pins (above; pip warns when it is not, and the set-up command would "
        "then put the course's wheel back). To go back to the course's solution of a "
        "layer, reinstall its wheel:\n\n"
        f"```\n{restore}```\n\n"
        + report
        + "\nGrading does not change: it runs the functions you write this week with the "
        "course's solution of everything else.\n"
    )
