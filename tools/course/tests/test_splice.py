"""The two copies grading runs: only the student's functions are taken from a submission."""

import ast
import textwrap

import pytest

from mtcourse.grader import splice, wire
from mtcourse.grader.splice import ROUTE_IMPORT, Unit, find_units, grader_copy, worker_copy

SOLUTION = textwrap.dedent(
    '''\
    """A module."""

    from __future__ import annotations

    import math


    def mul(x, y):
        """x * y."""
        # BEGIN SOLUTION task0_1
        return x * y
        # END SOLUTION


    def make(fn):
        def kernel(x):
            # BEGIN SOLUTION task0_1
            return fn(x) + 1
            # END SOLUTION

        return kernel


    class Module:
        def train(self):
            # BEGIN SOLUTION task0_4
            self.training = True
            # END SOLUTION

        @staticmethod
        def shape(x):
            # BEGIN SOLUTION task0_4
            return (x,)
            # END SOLUTION
    '''
)

STARTER = SOLUTION.replace("return x * y", 'raise NotImplementedError("Task 0.1: mul")')


def units():
    blocks = []
    lines = SOLUTION.splitlines()
    begin = None
    for i, line in enumerate(lines, 1):
        if "BEGIN SOLUTION" in line:
            begin = (line.split()[-1], i)
        elif "END SOLUTION" in line:
            blocks.append((begin[0], begin[1], i))
    return find_units(SOLUTION, blocks, "scalar.py")


def test_units_are_the_outermost_functions_and_a_kernel_factory_is_marked():
    found = {u.qualname: u for u in units()}
    assert set(found) == {"mul", "make", "Module.train", "Module.shape"}
    assert found["make"].factory
    assert not found["mul"].factory
    assert found["Module.train"].task == "task0_4"


def test_a_unit_holding_two_tasks_is_refused():
    src = "def f():\n    # BEGIN SOLUTION task0_1\n    a = 1\n    # END SOLUTION\n"
    src += "    # BEGIN SOLUTION task0_3\n    return a\n    # END SOLUTION\n"
    with pytest.raises(ValueError, match="belongs to one task"):
        find_units(src, [("task0_1", 2, 4), ("task0_3", 5, 7)], "f.py")


def test_the_grader_copy_routes_every_unit():
    text = grader_copy(SOLUTION, units())
    assert "mul = __mtc_route__('scalar.py:mul', mul, factory=False)" in text
    assert "make = __mtc_route__('scalar.py:make', make, factory=True)" in text
    assert "    train = __mtc_route__('scalar.py:Module.train', train, factory=False)" in text
    ast.parse(text)


STUDENT = textwrap.dedent(
    """\
    import os
    import itertools

    os.system("echo pwned")  # module-level code: never runs when graded
    SECRET = 42


    def helper(x):
        return x * 2


    def mul(x, y):
        return helper(x) * y / 2


    class Module:
        def train(self):
            self.training = True
            leak()

        def extra(self):
            return 1


    def leak():
        import pytest  # patches of pytest from a function only run in the worker
    """
)


def test_the_worker_copy_takes_the_units_helpers_and_imports_only():
    text, taken = worker_copy(STARTER, STUDENT, units())
    assert 'os.system("echo pwned")' not in text
    assert "SECRET = 42" not in text
    for helper in ("def helper(x)", "def leak()", "def extra(self)"):
        assert helper in text
    assert "return helper(x) * y / 2" in text
    assert "    import itertools\n" in text  # wrapped in try/except ImportError
    assert set(taken.units) == {"mul", "Module.train"}
    assert set(taken.missing) == {"make", "Module.shape"}  # the starter's stubs stay
    ns = {"__mtc_route__": lambda k, f, factory: f, "__mtc_broken__": lambda q, e: None}
    exec(compile(text.replace(ROUTE_IMPORT, ""), "scalar", "exec"), ns)  # it runs
    assert ns["mul"](4.0, 3.0) == 12.0


def test_a_line_of_the_copy_maps_back_to_the_students_own_line(monkeypatch):
    """Feedback named the worker's copy's line (``tensor_data.py:200`` for the student's 186)."""
    raising = STUDENT.replace("return helper(x) * y / 2", "raise ValueError(x)  # mine")
    text, taken = worker_copy(STARTER, raising, units())
    ns = {"__mtc_route__": lambda k, f, factory: f, "__mtc_broken__": lambda q, e: None}
    exec(compile(text.replace(ROUTE_IMPORT, "# the routing import\n"), "copy", "exec"), ns)
    with pytest.raises(ValueError, match=r"^4\.0$") as info:
        ns["mul"](4.0, 3.0)
    copy_line = info.traceback[-1].lineno + 1  # pytest's entries count from 0
    theirs = next(i for i, line in enumerate(raising.splitlines(), 1) if "# mine" in line)
    assert copy_line != theirs  # the copy moved it: the map is needed
    # The worker's frames read the map as grading writes it (the copy's path -> spans).
    monkeypatch.setattr(wire, "_LINES", {"minitorch/operators/scalar.py": taken.lines})
    path = "/worker/code/minitorch/operators/scalar.py"
    assert wire._student_line(path, copy_line) == f":{theirs}"
    guard = text.splitlines().index("try:") + 1  # a line of the copy no student wrote
    assert wire._student_line(path, guard) == ""


def test_a_student_function_whose_definition_raises_costs_only_itself():
    student = STUDENT.replace("def mul(x, y):", "@undefined_decorator\ndef mul(x, y):")
    text, _ = worker_copy(STARTER, student, units())
    calls = {}

    def broken(qualname, error):
        calls[qualname] = type(error).__name__
        return "broken"

    ns = {"__name__": "scalar", "__mtc_route__": lambda k, f, factory: f, "__mtc_broken__": broken}
    code = text.replace(ROUTE_IMPORT, "")
    exec(compile(code, "s", "exec"), ns)
    assert calls == {"mul": "NameError"}
    assert ns["mul"] == "broken"
    assert callable(ns["Module"].train)


def test_a_file_that_does_not_parse_is_the_starter():
    text, taken = worker_copy(STARTER, "def mul(:\n", units())
    assert "Task 0.1: mul" in text
    assert taken.error.startswith("it does not parse")


def test_a_missing_file_is_the_starter():
    text, taken = worker_copy(STARTER, None, units())
    assert "Task 0.1: mul" in text
    assert taken.error == "the file is missing"


def test_units_are_found_by_name_wherever_the_student_put_them():
    moved = "def mul(x, y):\n  return x*y\n\n\nclass Module:\n  pass\n"
    text, taken = worker_copy(STARTER, moved, units())
    assert "return x*y" in text
    assert taken.units == ["mul"]


def test_unit_dataclass_key():
    assert Unit("a.py", "C.f", "task0_1", False).key == "a.py:C.f"


def test_a_function_is_untouched_while_its_code_is_the_stubs() -> None:
    base = (
        'def f(x):\n    """Doc."""\n    raise NotImplementedError("Task 0.1: f")\n\n\n'
        "class A:\n    def g(self):\n        raise NotImplementedError\n"
    )
    assert splice.untouched(base, base, ["f", "A.g"])
    # Graded as the stubs: a missing file, one that does not parse, a deleted function.
    assert splice.untouched(base, None, ["f"])
    assert splice.untouched(base, "def (", ["f"])
    assert splice.untouched(base, "class A:\n    pass\n", ["f", "A.g"])
    # Comments, imports and helpers beside the stubs do not change them.
    assert splice.untouched(base, base.replace('"""Doc."""', '"""Doc."""  # mine'), ["f"])
    assert splice.untouched(base, "import os\n" + base + "\ndef h():\n    pass\n", ["f", "A.g"])
    body = base.replace('raise NotImplementedError("Task 0.1: f")', "return x")
    assert not splice.untouched(base, body, ["f"])
    assert splice.untouched(base, body, ["A.g"])
    assert not splice.untouched(base, base.replace('"""Doc."""', '"""Other."""'), ["f"])
    assert not splice.untouched(base, "import functools\n" + base.replace(
        "def f", "@functools.cache\ndef f"), ["f"])  # fmt: skip
