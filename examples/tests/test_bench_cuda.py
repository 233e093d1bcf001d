"""bench_cuda's arithmetic and refusals, without a GPU: the share of each row's limit, the
JSON rows (no figure in a smoke run), and where it refuses to run.

The benchmark itself runs on a GPU only; its untimed smoke run on the simulator is run by
the GPU check's test (tests/test_gpu_check.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("minitorch.cuda")
from mt_bench import cuda as bench_cuda
from mt_bench.common import Row

seconds = st.floats(1e-6, 10.0)
sizes = st.floats(1e3, 1e10)


@given(nbytes=sizes, ours=seconds, copy_bytes=sizes, copy_time=seconds)
def test_bandwidth_rows_are_a_share_of_the_copy_bandwidth(
    nbytes: float, ours: float, copy_bytes: float, copy_time: float
) -> None:
    copy = Row("cudaMemcpy D2D 1e+08", copy_time, nbytes=copy_bytes)
    row = Row("map neg 1e+08", ours, nbytes=nbytes)
    per_byte = bench_cuda.copy_speed([copy, row])
    assert per_byte == pytest.approx(copy_time / copy_bytes)
    share = bench_cuda.of_limit(row, per_byte)
    assert share == pytest.approx((nbytes / ours) / (copy_bytes / copy_time))
    assert bench_cuda.of_limit(copy, per_byte) is None


@given(flops=sizes, ours=seconds, cublas=seconds)
def test_matmul_is_a_share_of_the_reference_speed(flops: float, ours: float, cublas: float) -> None:
    row = Row("matmul 4096x4096", ours, torch=cublas, flops=flops)
    assert bench_cuda.of_limit(row, None) == pytest.approx((flops / ours) / (flops / cublas))
    assert bench_cuda.of_limit(Row("matmul 8x8", ours, flops=flops), None) is None


def test_rows_without_a_limit_or_a_time_have_no_share() -> None:
    assert bench_cuda.of_limit(Row("launch: map neg 1x1", 2e-5, torch=1e-5), 1e-12) is None
    assert bench_cuda.of_limit(Row("map neg 64", None, nbytes=1024.0), 1e-12) is None
    assert bench_cuda.of_limit(Row("map neg 64", float("nan"), nbytes=1024.0), 1e-12) is None
    assert bench_cuda.copy_speed([Row("map neg 64", 1.0, nbytes=8.0)]) is None


def test_records_carry_rates_and_a_smoke_run_none() -> None:
    row = Row("zip add 1e+08", 0.004, torch=0.002, nbytes=2.4e9)
    record = bench_cuda.row_record(row, 1 / 3e12, smoke=False)
    assert record["gbps"] == pytest.approx(600.0)
    assert record["reference_gbps"] == pytest.approx(1200.0)
    assert record["of_limit"] == pytest.approx(0.2)
    assert record["ran"] is True
    smoke = bench_cuda.row_record(row, 1 / 3e12, smoke=True)
    assert {k: v for k, v in smoke.items() if k not in ("name", "ran", "note")} == {
        "seconds": None,
        "reference_seconds": None,
        "gbps": None,
        "reference_gbps": None,
        "of_limit": None,
    }
    failed = bench_cuda.row_record(Row("map neg 1e+08", None, note="OOM"), None, smoke=False)
    assert failed["ran"] is False
    assert failed["note"] == "OOM"


def test_table_shows_shares_and_launch_times() -> None:
    rows = [
        Row("cudaMemcpy D2D 1e+08", 1e-3, nbytes=3e9),
        Row("map neg 1e+08", 4e-3, nbytes=6e9),
        Row("launch: map neg 1x1", 2.5e-5),
    ]
    table = bench_cuda.format_table(rows, None)
    assert "| map neg 1e+08 | 1500.0 GB/s | - | - | 50% |" in table  # of a 3000 GB/s copy
    assert "25.0 us" in table
    smoke = bench_cuda.format_table(rows, None, smoke=True)
    assert "%" not in smoke
    assert "GB/s" not in smoke.split("\n", 2)[2]


def test_refuses_on_the_simulator_and_smoke_refuses_on_a_gpu(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bench_cuda, "simulator_enabled", lambda: True)
    with pytest.raises(SystemExit, match="timings mean nothing"):
        bench_cuda.main([])
    monkeypatch.setattr(bench_cuda, "simulator_enabled", lambda: False)
    with pytest.raises(SystemExit, match="simulator only"):
        bench_cuda.main(["--simulator-smoke"])
    assert not list(tmp_path.iterdir())


def test_write_json_says_whether_it_is_a_measurement(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bench_cuda, "device_info", lambda: {"name": "a GPU", "simulator": False})
    rows = [Row("cudaMemcpy D2D 1e+08", 1e-3, nbytes=3e9), Row("matmul 8x8", 1e-3, flops=1e3)]
    bench_cuda.write_json(str(tmp_path / "b.json"), rows, None, smoke=False)
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["measurement"] is True
    assert data["copy_gbps"] == pytest.approx(3000.0)
    assert [r["name"] for r in data["rows"]] == [r.name for r in rows]
    bench_cuda.write_json(str(tmp_path / "s.json"), rows, None, smoke=True)
    smoke = json.loads((tmp_path / "s.json").read_text())
    assert smoke["measurement"] is False
    assert "NOT A MEASUREMENT" in smoke["note"]
    assert smoke["copy_gbps"] is None


def numpy_reference() -> bench_cuda.Reference:
    """A stand-in reference on the host, with CuPy's signatures (``sum(x, dim)``)."""
    ops = {"matmul": np.matmul, "neg": np.negative, "add": np.add, "mul": np.multiply}
    ops["sum"] = lambda x, d: x.sum(axis=d, keepdims=True)
    return bench_cuda.Reference("NumPy", np.asarray, lambda: None, ops)


def test_rows_call_each_side_with_its_operands() -> None:
    from minitorch.cuda import is_available

    if not is_available():
        pytest.skip("needs a GPU or NUMBA_ENABLE_CUDASIM=1")
    b = bench_cuda.Bench(1, numpy_reference())
    rows = bench_cuda.matmul_rows([4], b) + bench_cuda.elementwise_rows([8], b)
    rows += bench_cuda.reduce_rows([4], b) + bench_cuda.launch_rows(2, b)
    rows.append(bench_cuda.copy_row(8, b))
    assert all(r.note == "" for r in rows), [r.note for r in rows]
    assert all(r.ours is not None and r.ours > 0 for r in rows)
    # Every row the stand-in has an operation for ran it (it has no sigmoid).
    without = {r.name for r in rows if r.torch is None}
    assert without == {
        "map sigmoid 8e+00",
        "launch: empty Numba kernel 1x1",
        "cudaMemcpy D2D 8e+00",
    }
