"""The GPU check (tools/gpu_check.py): its report, run here on Numba's CUDA simulator.

One test runs the real check (``--simulator --quick``, under a minute); the others run it
on a small made-up tree whose tests pass, fail, error and skip, and whose benchmark fails,
to see that the report records each outcome as it happened.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECK = REPO / "tools" / "gpu_check.py"
OUTCOMES = {"passed", "failed", "error", "skipped"}


def run_check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    command = [sys.executable, str(CHECK), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def load(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def tally(tests: list[dict[str, Any]]) -> dict[str, int]:
    return {o: sum(t["outcome"] == o for t in tests) for o in sorted(OUTCOMES)}


def test_simulator_check_writes_the_report(tmp_path: Path) -> None:
    run = run_check("--simulator", "--quick", "--out", tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = load(tmp_path)
    assert report["mode"] == "simulator"
    assert report["ok"] is True
    assert report["device"]["simulator"] is True
    assert report["device"]["available"] is True
    assert report["environment"]["packages"]["mt-cuda"]
    names = [s["name"] for s in report["steps"]]
    assert names == ["mt-cuda", "mt-nn-cuda", "course-program", "bench-cuda"]
    for step in report["steps"][:2]:
        assert step["status"] == "passed"
        assert step["tests"], step["name"]
        assert {t["outcome"] for t in step["tests"]} <= OUTCOMES
        assert dict(sorted(step["counts"].items())) == tally(step["tests"])
        assert (tmp_path / f"junit-{step['name']}.xml").exists()
    cuda_ids = [t["id"] for t in report["steps"][0]["tests"]]
    assert all(i.startswith("packages/mt-cuda/tests/") for i in cuda_ids)
    nn_ids = [t["id"] for t in report["steps"][1]["tests"]]
    assert all("cuda" in i.lower() for i in nn_ids)
    # The course's view: the same tests by task marker.
    assert {"task3_3", "task3_4"} <= set(report["course_tasks"])
    total = sum(sum(c.values()) for c in report["course_tasks"].values())
    assert total >= len(cuda_ids) + len(nn_ids)
    # The benchmark ran untimed: no figure anywhere, and it says so.
    assert report["steps"][2]["status"] == "skipped"  # not with --quick
    assert report["steps"][2]["reason"] == "not run with --quick"
    bench = report["steps"][3]
    assert bench["status"] == "passed"
    assert bench["measurement"] is False
    assert "NOT A MEASUREMENT" in bench["reason"]
    rows = bench["figures"]["rows"]
    assert {"matmul 4x4", "launch: empty Numba kernel 1x1"} <= {r["name"] for r in rows}
    assert any(r["name"].startswith("cudaMemcpy D2D") for r in rows)
    for row in rows:
        figures = {k: v for k, v in row.items() if k not in ("name", "ran", "note")}
        assert set(figures.values()) == {None}, row
        assert row["ran"] or row["note"], row
    text = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert text.startswith("MiniTorch GPU check (simulator, quick): OK")
    assert "NOT A MEASUREMENT" in text


FAKE_TESTS = """
    import pytest

    pytestmark = pytest.mark.task3_3

    def test_ok():
        assert 1 + 1 == 2

    def test_wrong():
        assert 1 + 1 == 3, "one and one"

    @pytest.fixture
    def broken():
        raise RuntimeError("fixture broke")

    def test_broken_fixture(broken):
        pass

    @pytest.mark.skip(reason="not today")
    def test_skipped():
        pass
"""


@pytest.fixture
def fake_tree(tmp_path: Path) -> Path:
    """A tree laid out like the repository: tests that pass, fail, error, skip; a failing bench."""
    root = tmp_path / "repo"
    (root / "packages/mt-cuda/tests").mkdir(parents=True)
    (root / "packages/mt-nn/tests").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "tests").mkdir()
    (root / "tests/test_course_programs.py").write_text("def test_program():\n    pass\n")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmarkers = ["task3_3: CUDA"]\naddopts = ["--strict-markers"]\n'
    )
    (root / "packages/mt-cuda/tests/test_fake.py").write_text(textwrap.dedent(FAKE_TESTS))
    (root / "packages/mt-nn/tests/test_fake_nn.py").write_text("def test_cuda_thing():\n    pass\n")
    (root / "examples/mt_bench").mkdir()
    (root / "examples/mt_bench/__init__.py").write_text("")
    (root / "examples/mt_bench/cuda.py").write_text("import sys\nsys.exit('bench_cuda: boom')\n")
    return root


def test_failures_are_recorded_as_failures(fake_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_check("--simulator", "--root", fake_tree, "--out", out)
    assert run.returncode == 1
    report = load(out)
    assert report["ok"] is False
    cuda, nn, program, bench = report["steps"]
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in cuda["tests"]}
    assert outcomes == {
        "test_ok": "passed",
        "test_wrong": "failed",
        "test_broken_fixture": "error",
        "test_skipped": "skipped",
    }
    assert cuda["status"] == "failed"
    assert cuda["counts"] == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}
    wrong = next(t for t in cuda["tests"] if t["id"].endswith("test_wrong"))
    assert "one and one" in wrong["message"]
    assert report["course_tasks"] == {"task3_3": cuda["counts"]}
    assert nn["status"] == "passed"
    assert [t["outcome"] for t in nn["tests"]] == ["passed"]
    assert program["status"] == "passed"
    assert bench["status"] == "failed"
    assert bench["returncode"] == 1
    text = (out / "report.txt").read_text(encoding="utf-8")
    assert "NOT OK" in text
    assert "FAILED packages/mt-cuda/tests/test_fake.py::test_wrong" in text
    assert "[FAILED] bench-cuda" in text
    log = (out / "steps.log").read_text(encoding="utf-8")
    assert "bench_cuda: boom" in log
    assert log.count("$ ") == 4


def test_no_tests_collected_is_an_error_not_a_pass(fake_tree: Path, tmp_path: Path) -> None:
    (fake_tree / "packages/mt-nn/tests/test_fake_nn.py").write_text("def test_other():\n    pass\n")
    out = tmp_path / "out"
    assert run_check("--simulator", "--no-bench", "--root", fake_tree, "--out", out).returncode == 1
    nn = load(out)["steps"][1]
    assert nn["status"] == "error"
    assert "no tests collected" in nn["reason"]
    assert load(out)["steps"][3]["status"] == "skipped"


def test_gpu_mode_refuses_when_the_simulator_is_switched_on(tmp_path: Path) -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    command = [sys.executable, str(CHECK), "--out", str(tmp_path)]
    run = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 1
    assert "NUMBA_ENABLE_CUDASIM is set" in run.stderr
    assert "--simulator" in run.stderr
    assert "Traceback" not in run.stderr


def test_gpu_mode_without_a_gpu_reports_no_device(fake_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_check("--root", fake_tree, "--out", out)
    report = load(out)
    if report["device"].get("available"):
        pytest.skip("this machine has a CUDA GPU")
    assert run.returncode == 1
    assert report["mode"] == "gpu"
    assert report["ok"] is False
    assert [s["name"] for s in report["steps"]] == ["device"]
    assert "no CUDA GPU" in report["steps"][0]["reason"]


def test_help_names_every_option_without_empty_defaults() -> None:
    run = subprocess.run([sys.executable, str(CHECK), "--help"], capture_output=True, text=True)
    assert run.returncode == 0
    for option in ("--simulator", "--quick", "--out", "--wheels", "--root", "--no-bench"):
        assert option in run.stdout
    assert "(default: None)" not in run.stdout
    assert "(default: False)" not in run.stdout


def test_text_report_shows_measured_figures_beside_their_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = importlib.util.spec_from_file_location("gpu_check", CHECK)
    assert spec is not None
    assert spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_check", check)  # for its dataclass
    spec.loader.exec_module(check)
    matmul = {"name": "matmul 4096x4096", "ran": True, "note": "", "seconds": 1.0}
    matmul.update(gflops=137.4, reference_gflops=687.0, of_limit=0.2)
    failed = {"name": "map neg 1e+08", "ran": False, "note": "MiniTorch: OOM", "seconds": None}
    launch = {"name": "launch: map neg 1x1", "ran": True, "note": "", "seconds": 2.5e-5}
    launch.update(reference_seconds=5e-6, of_limit=None)
    figures = {"rows": [matmul, failed, launch], "reference": "PyTorch CUDA", "copy_gbps": 3000.0}
    bench = {"name": "bench-cuda", "title": "bench:cuda", "kind": "benchmark", "status": "passed"}
    bench.update(measurement=True, figures=figures)
    report = {"mode": "gpu", "quick": False, "ok": True, "started": "now", "seconds": 1.0}
    report.update(environment={"packages": {}}, device={"name": "a GPU"}, steps=[bench])
    report.update(course_tasks={})
    text = check.text_report(report)
    assert "device: a GPU" in text
    assert "reference: PyTorch CUDA; copy bandwidth (the limit of GB/s rows): 3000.0 GB/s" in text
    assert "matmul 4096x4096: 137.4 GFLOP/s (reference 687.0 GFLOP/s), 20% of limit" in text
    assert "map neg 1e+08: - (reference -); MiniTorch: OOM" in text
    assert "launch: map neg 1x1: 25.0 us (reference 5.0 us)" in text
