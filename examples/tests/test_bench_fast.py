"""A tiny run of ``bench_fast.py``: every section's rows, the median matmul cells, the targets.

Nothing here times anything against a threshold: the benchmark only measures and prints.
"""

from __future__ import annotations

import pytest

pytest.importorskip("minitorch.fast", reason="mt-fast is not installed")
pytestmark = pytest.mark.task3_2

from mt_bench import fast as bench_fast  # noqa: E402


def test_quick_run_prints_every_section_with_its_target(capsys: pytest.CaptureFixture[str]) -> None:
    table = bench_fast.main(["--quick", "--repeat", "2", "--no-torch"])
    assert table in capsys.readouterr().out
    lines = table.splitlines()
    assert lines[0].endswith("| target |")
    names = [line.split(" | ")[0].lstrip("| ") for line in lines[2:]]
    for op in ("sum", "max"):
        assert f"{op} dim 0 100x100" in names
        assert f"{op} dim 1 100x100" in names
    assert "map neg 1e+04 contiguous" in names
    assert "matmul 64x64" in names
    assert any(name.startswith("MLP step") for name in names)
    reduce_line = next(line for line in lines if "max dim 1 100x100" in line)
    assert reduce_line.rstrip(" |").endswith(bench_fast.REDUCE_TARGET)
    matmul_line = next(line for line in lines if "matmul 64x64" in line)
    # Best and median GFLOP/s on each side, and ours as a share of NumPy's in the median.
    assert matmul_line.count("GFLOP/s") == 4
    assert "% (median)" in matmul_line


def test_only_picks_sections(capsys: pytest.CaptureFixture[str]) -> None:
    table = bench_fast.main(["--quick", "--repeat", "1", "--no-torch", "--only", "reduce"])
    capsys.readouterr()
    rows = table.splitlines()[2:]
    assert len(rows) == 4
    assert all(" dim " in row for row in rows)
