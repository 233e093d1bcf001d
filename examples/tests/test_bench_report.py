"""``hatch run bench:report``'s code paths, on small sizes: every row, the header, the
PyTorch columns with and without torch, and the peak's arithmetic.

Nothing here times anything against a threshold: the report only measures and prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("minitorch.fast", reason="mt-fast is not installed")
pytest.importorskip("minitorch.nn", reason="the LeNet row needs mt-nn")
pytestmark = pytest.mark.task3_2

from mt_bench import report as bench_report  # noqa: E402
from mt_bench.common import Peak, blas_below, import_torch, vector_unit  # noqa: E402

WORKLOADS = [
    "matmul 32x32 float64",
    "matmul 64x64 float64",
    *bench_report.TENSOR_CASES.values(),
    "LeNet step (train_mnist.Network), batch 16",
]


#: The rows a BLAS override adds (``OPENBLAS_CORETYPE`` set, as on some machines).
AGAIN = " (NumPy without the override)"


def rows_of(report: str, again: bool = False) -> dict[str, list[str]]:
    """The report's table: workload -> the other cells (``again``: with the override's rows)."""
    lines = [line for line in report.splitlines() if line.startswith("| ")][2:]
    cells = [[c.strip() for c in line.strip("| ").split(" | ")] for line in lines]
    return {row[0]: row[1:] for row in cells if again or not row[0].endswith(AGAIN)}


def test_quick_report_without_torch_says_na(capsys: pytest.CaptureFixture[str]) -> None:
    report = bench_report.main(["--quick", "--no-torch"])
    assert report in capsys.readouterr().out
    rows = rows_of(report)
    assert list(rows) == WORKLOADS
    for name, (ours, reference, against, ratio) in rows.items():
        if name.startswith("matmul"):
            assert re.fullmatch(r"[\d.]+ GFLOP/s \(\d+% of (nominal )?peak\)", ours), ours
            assert reference.endswith("GFLOP/s")
            assert against == "NumPy"
            assert re.fullmatch(r"\d+%", ratio)
        else:
            assert (reference, against, ratio) == (bench_report.NO_TORCH, "PyTorch CPU", "n/a")
    head = report.splitlines()[:6]
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC; load average", head[0])
    assert re.match(r"CPU: .+; vector ISA: ", head[1])
    assert re.match(r"peak: .+ GFLOP/s = .+ \(clock from ", head[2])
    assert re.match(r"NumPy .+, BLAS: ", head[3])
    assert head[4] == "PyTorch: not installed (its rows read n/a)"
    assert "matmul micro-kernel 6x" in head[5]


def test_quick_report_with_torch_gives_ratios() -> None:
    torch = import_torch()
    if torch is None:
        pytest.skip("PyTorch is not installed here")
    rows = rows_of(bench_report.main(["--quick"]))
    assert list(rows) == WORKLOADS
    for name, (ours, reference, _, ratio) in rows.items():
        if not name.startswith("matmul"):
            unit = "ms" if name.startswith("LeNet") else "µs"
            assert ours.endswith(unit)
            assert reference.endswith(unit)
            assert re.fullmatch(r"[\d.]+x", ratio), ratio


def test_the_peak_is_cores_fma_units_lanes_two_flops_and_the_clock() -> None:
    peak = Peak(cores=2, fma_units=2, lanes=4, mhz=2500.0, clock_source="test")
    assert peak.gflops == pytest.approx(80.0)
    assert peak.share(40.0) == "50% of peak"
    assert "80.0 GFLOP/s = 2 cores x 2 FMA units x 4 lanes x 2 flops x 2.500 GHz" in str(peak)
    unknown = Peak(2, 2, 4, None, "nowhere")
    assert unknown.gflops is None
    assert unknown.share(40.0) == ""


def test_zen_4s_avx512_peak_counts_its_256_bit_units() -> None:
    from mt_bench.common import fma_lanes

    zen4 = {"vendor_id": "AuthenticAMD", "cpu family": "25", "model": "17"}
    lanes, note = fma_lanes(8, zen4)
    assert lanes == 4
    assert "Zen 4" in note
    assert "(512-bit operations run as two 256-bit halves" in str(Peak(2, 2, 4, 2500.0, "t", note))
    assert fma_lanes(4, zen4) == (4, "")  # AVX2 on Zen 3 or 4: 256-bit vectors, full rate
    assert fma_lanes(8, {"vendor_id": "AuthenticAMD", "cpu family": "26"}) == (8, "")  # Zen 5
    assert fma_lanes(8, {"vendor_id": "GenuineIntel", "cpu family": "6"}) == (8, "")


def test_both_sides_of_a_ratio_are_timed_in_turns_round_by_round() -> None:
    from mt_bench import tensor as bench_tensor

    calls: list[str] = []
    stats = bench_tensor.time_in_turns(
        [lambda: calls.append("ours"), lambda: calls.append("theirs")], number=2, repeat=3
    )
    warm_up, rounds = calls[:2], calls[2:]
    assert warm_up == ["ours", "theirs"]
    assert rounds == (["ours"] * 2 + ["theirs"] * 2) * 3
    assert len(stats) == 2
    assert all(0.0 < s["best"] <= s["median"] for s in stats)
    with pytest.raises(ValueError, match="number and repeat"):
        bench_tensor.time_in_turns([lambda: None], number=0, repeat=1)


def test_a_nominal_clock_says_its_share_is_of_the_nominal_peak() -> None:
    """A VM's /proc/cpuinfo clock is the nominal one: cores that boost read "101% of peak"."""
    peak = Peak(2, 2, 8, 2000.0, "/proc/cpuinfo 'cpu MHz' (nominal; boost may exceed it)")
    assert peak.nominal
    assert peak.share(131.8) == "103% of nominal peak"
    assert not Peak(2, 2, 8, 2000.0, "lscpu 'CPU max MHz'").nominal


@pytest.mark.parametrize(
    ("kernel", "isa", "below"),
    [
        ("Haswell", "AVX-512F", "AVX2"),
        ("Zen", "AVX-512F", "AVX2"),
        ("Sandybridge", "AVX2", "AVX"),
        ("SkylakeX", "AVX-512F", None),
        ("Haswell", "AVX2", None),
        ("SkylakeX", "AVX2", None),
        ("NoSuchKernel", "AVX-512F", None),
        (None, "AVX-512F", None),
    ],
)
def test_a_blas_kernel_below_the_machines_isa_is_named(kernel, isa, below) -> None:
    assert blas_below(kernel, isa) == below


def test_a_forced_slower_blas_kernel_is_warned_and_numpy_measured_again_without_it() -> None:
    """``OPENBLAS_CORETYPE=Haswell`` on an AVX-512 machine made every matmul ratio read
    133-190% with nothing said: the report warns, and measures NumPy again without it."""
    pytest.importorskip("threadpoolctl", reason="the BLAS kernel is read with threadpoolctl")
    narrower = {"AVX-512F": "Haswell", "AVX2": "Sandybridge", "AVX": "Nehalem"}
    isa = vector_unit().isa
    if isa not in narrower:
        pytest.skip(f"no OpenBLAS kernel is narrower than {isa}")
    env = {**os.environ, "OPENBLAS_CORETYPE": narrower[isa]}
    out = subprocess.run(
        [sys.executable, "-m", "mt_bench.report", "--quick", "--no-torch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    warning = [line for line in out.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1, out
    assert f"{narrower[isa]} kernel" in warning[0], warning
    assert f"OPENBLAS_CORETYPE={narrower[isa]}" in warning[0], warning
    rows = rows_of(out, again=True)
    for n in (32, 64):
        again = rows[f"matmul {n}x{n} float64{AGAIN}"]
        assert again[0] == rows[f"matmul {n}x{n} float64"][0]  # the same MiniTorch figure
        assert again[1].endswith("GFLOP/s"), again
        assert re.fullmatch(r"\d+%", again[3]), again
    plain = subprocess.run(
        [sys.executable, "-c", "from mt_bench.report import blas_warning; "
         "from mt_bench.common import blas_kernel, vector_unit; import os; "
         "print(blas_warning(blas_kernel(), vector_unit().isa, dict(os.environ)))"],
        env={k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"},
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert plain.strip() == "[]", plain  # its own kernel: no warning
