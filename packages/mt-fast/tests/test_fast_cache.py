"""A cached kernel is reused across processes and never outlives a change to its sources."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import minitorch.fast
import minitorch.operators
import minitorch.tensor

SCRIPT = """
import json
import numpy as np
from minitorch.fast import FastBackend
from minitorch.fast.kernels import tuned
from minitorch.tensor import from_numpy
out = FastBackend.neg_map(from_numpy(np.array([1.0, 2.0]), FastBackend)).to_numpy()
stats = tuned.KERNELS["map[neg].same"].stats  # the kernel of an input laid out as its output
print(json.dumps({"out": out.tolist(), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _copy_package(module: object, dest: Path) -> Path:
    src = Path(module.__file__).resolve().parent  # type: ignore[attr-defined]
    target = dest / "minitorch" / src.name
    shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _run(root: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = str(root)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.task3_1
def test_cache_hit_then_invalidated_by_an_operator_change(tmp_path: Path) -> None:
    # A private copy of the three layers the kernels compile in, with its own cache.
    operators = _copy_package(minitorch.operators, tmp_path)
    _copy_package(minitorch.tensor, tmp_path)
    _copy_package(minitorch.fast, tmp_path)

    first = _run(tmp_path)
    assert first["out"] == [-1.0, -2.0]
    assert first["misses"] == 1
    assert first["hits"] == 0

    second = _run(tmp_path)
    assert second["out"] == [-1.0, -2.0]
    assert second["hits"] == 1
    assert second["misses"] == 0

    # Change what ``neg`` computes, in mt-operators, not in the kernel's own file.
    scalar = operators / "scalar.py"
    source = scalar.read_text()
    assert "    return -x\n" in source
    scalar.write_text(source.replace("    return -x\n", "    return -x + 10.0\n", 1))

    third = _run(tmp_path)
    assert third["out"] == [9.0, 8.0], "a stale cached kernel computed the old operator"
    assert third["misses"] == 1
    assert third["hits"] == 0
