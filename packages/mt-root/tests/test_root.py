"""Tests of the namespace root: lazy flat names, the hint for a missing layer, the namespace.

These run with mt-root alone installed (the CI matrix does that), so they use a made-up
layer instead of the real ones; tests/test_flat_names.py checks every real course name.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import minitorch


@pytest.fixture
def fake_layers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Two made-up layers in a folder of their own: one that imports, one whose dependency
    is missing; plus a flat name whose layer is not installed at all."""
    portion = tmp_path / "minitorch"
    (portion / "fakelayer").mkdir(parents=True)
    (portion / "fakelayer" / "__init__.py").write_text("Thing = object()\n__all__ = ['Thing']\n")
    (portion / "brokenlayer").mkdir()
    (portion / "brokenlayer" / "__init__.py").write_text(
        textwrap.dedent(
            """\
            import a_dependency_that_is_not_installed
            Broken = 1
            """
        )
    )
    monkeypatch.setattr(minitorch, "__path__", [*minitorch.__path__, str(portion)])
    layers = {
        **minitorch.LAYERS,
        "fakelayer": "mt-fakelayer",
        "brokenlayer": "mt-brokenlayer",
        "absentlayer": "mt-absentlayer",
    }
    flat = {**minitorch.FLAT_NAMES, "Thing": "fakelayer", "Broken": "brokenlayer"}
    flat["Absent"] = "absentlayer"
    monkeypatch.setattr(minitorch, "LAYERS", layers)
    monkeypatch.setattr(minitorch, "FLAT_NAMES", flat)
    yield portion
    for name in ("Thing", "Broken", "Absent"):
        minitorch.__dict__.pop(name, None)
    for module in (
        "minitorch.fakelayer",
        "minitorch.brokenlayer",
        "minitorch.fake_ops",
        "minitorch.absent_ops",
    ):
        sys.modules.pop(module, None)
        minitorch.__dict__.pop(module.split(".")[1], None)


def test_flat_name_imports_its_layer_on_first_use(fake_layers):
    assert "minitorch.fakelayer" not in sys.modules
    thing = minitorch.Thing
    assert "minitorch.fakelayer" in sys.modules
    assert thing is sys.modules["minitorch.fakelayer"].Thing
    assert minitorch.fakelayer is sys.modules["minitorch.fakelayer"]


def test_missing_layer_names_the_wheel_to_install(fake_layers):
    with pytest.raises(AttributeError, match=r"minitorch\.Absent .* pip install mt-absentlayer"):
        _ = minitorch.Absent
    with pytest.raises(AttributeError, match="pip install mt-absentlayer"):
        _ = minitorch.absentlayer
    assert not hasattr(minitorch, "Absent")


def test_missing_dependency_of_an_installed_layer_is_not_hidden(fake_layers):
    with pytest.raises(ModuleNotFoundError, match="a_dependency_that_is_not_installed"):
        _ = minitorch.Broken


def test_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError, match="module 'minitorch' has no attribute 'Tensr'"):
        _ = minitorch.Tensr
    assert not hasattr(minitorch, "Tensr")


def test_dir_lists_the_flat_names_and_layers():
    names = dir(minitorch)
    assert {"Tensor", "Scalar", "conv2d", "tensor", "operators", "__version__"} <= set(names)


def test_every_flat_name_belongs_to_a_known_layer():
    assert set(minitorch.FLAT_NAMES.values()) <= set(minitorch.LAYERS)
    assert not set(minitorch.FLAT_NAMES) & set(minitorch.LAYERS)
    assert all(wheel == f"mt-{layer}" for layer, wheel in minitorch.LAYERS.items())


def test_importing_the_root_imports_no_layer(tmp_path):
    code = "import minitorch, sys; print(sorted(m for m in sys.modules if 'minitorch' in m))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "['minitorch', 'minitorch.__about__']"


def test_a_layer_earlier_on_sys_path_wins(tmp_path):
    # As in a PEP 420 namespace, the namespace's folders follow sys.path: a copy of a layer
    # on PYTHONPATH is imported instead of the installed one.
    copy = tmp_path / "minitorch" / "operators"
    copy.mkdir(parents=True)
    (copy / "__init__.py").write_text("WHERE = 'the copy'\n")
    code = "import minitorch, minitorch.operators as o; print(o.WHERE, minitorch.__file__)"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert out[:2] == ["the", "copy"]
    assert Path(out[2]).resolve() == Path(minitorch.__file__).resolve()


# ------------------------------------------------------------------ the course's module paths


@pytest.fixture
def course_modules(fake_layers, monkeypatch: pytest.MonkeyPatch) -> None:
    aliases = {**minitorch.COURSE_MODULES, "fake_ops": "fakelayer", "absent_ops": "absentlayer"}
    monkeypatch.setattr(minitorch, "COURSE_MODULES", aliases)


def test_course_module_is_the_layer_by_attribute_and_by_import(course_modules):
    layer = minitorch.fake_ops
    assert layer is sys.modules["minitorch.fakelayer"]
    import minitorch.fake_ops as by_import

    assert by_import is layer
    from minitorch.fake_ops import Thing

    assert Thing is layer.Thing
    assert layer.__name__ == "minitorch.fakelayer"  # the layer keeps its own name


def test_course_module_of_a_missing_layer_names_the_wheel(course_modules):
    with pytest.raises(ModuleNotFoundError, match=r"minitorch\.absent_ops .* mt-absentlayer"):
        importlib.import_module("minitorch.absent_ops")
    with pytest.raises(ModuleNotFoundError, match="pip install mt-absentlayer"):
        _ = minitorch.absent_ops


def test_every_course_module_names_a_known_layer():
    assert set(minitorch.COURSE_MODULES.values()) <= set(minitorch.LAYERS)
    assert not set(minitorch.COURSE_MODULES) & (set(minitorch.LAYERS) | set(minitorch.FLAT_NAMES))
    assert {"fast_ops", "tensor_data", "tensor_functions", "cuda_ops"} <= set(dir(minitorch))


# ------------------------------------------------------------------ numba.cuda, as the course reads

FAKE_NUMBA = {
    "numba/__init__.py": "LOADED = True\n",
    "numba/cuda.py": "def is_available():\n    return 'the fake numba.cuda'\n",
}


@pytest.mark.parametrize(
    "code",
    [
        "import minitorch, numba",  # the course's test files: minitorch first
        "import numba, minitorch",  # its training scripts: numba first
    ],
)
def test_numba_cuda_is_there_after_import_numba(tmp_path, code):
    for rel, text in FAKE_NUMBA.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(text)
    check = (
        f"{code}; import sys\n"
        "assert 'numba.cuda' not in sys.modules  # nothing imported before it is read\n"
        "print(numba.cuda.is_available())\n"
        "try:\n"
        "    numba.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    # -S: no site-packages .pth files, so an installed numba(-cuda) cannot extend the fake.
    root = Path(minitorch.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}
    out = subprocess.run(
        [sys.executable, "-S", "-c", check], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == ["the fake numba.cuda", "module 'numba' has no attribute 'no_such_name'"]


def test_importing_the_root_imports_no_numba(tmp_path):
    code = "import minitorch, sys; print([m for m in ('numba', 'numpy') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "[]"
