"""What the benchmarks share: the optional PyTorch import, rows, timing, cases and options.

And what they ran on: the CPU model, its vector ISA, clock and float64 peak, NumPy's BLAS.

Every benchmark is a module (``python -m mt_bench.<name>``) that measures and prints;
none asserts anything about speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_examples.support import HelpFormatter, positive_int

#: The elementwise rows of the backend benchmarks: ``(row name, backend method, NumPy
#: function, torch function name, inputs)``.
ELEMENTWISE: list[tuple[str, str, Callable[..., Any], str, int]] = [
    ("map neg", "neg_map", np.negative, "neg", 1),
    ("map sigmoid", "sigmoid_map", lambda x: 1.0 / (1.0 + np.exp(-x)), "sigmoid", 1),
    ("zip add", "add_zip", np.add, "add", 2),
    ("zip mul", "mul_zip", np.multiply, "mul", 2),
]


def import_torch(*, threads: int | None = None, cuda: bool = False) -> Any:
    """Return the ``torch`` module, or None if it is not installed (or, with ``cuda``, has no GPU).

    ``threads`` sets its CPU thread count.
    """
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    if cuda and not torch.cuda.is_available():
        return None
    if threads is not None:
        torch.set_num_threads(threads)
    return torch


@dataclass
class Row:
    """One line of a benchmark table: seconds per call of each side and the work done.

    ``flops`` or ``nbytes`` turn times into GFLOP/s or GB/s; ``*_median`` are filled by the
    benchmarks that report medians too; ``note`` says what went wrong, if anything.
    """

    name: str
    ours: float | None
    torch: float | None = None
    numpy: float | None = None
    flops: float | None = None
    nbytes: float | None = None
    note: str = ""
    ours_median: float | None = None
    torch_median: float | None = None
    numpy_median: float | None = None
    target: str = ""

    def cell(self, seconds: float | None) -> str:
        """Format a time of this row: GFLOP/s or GB/s when the work is known, else ms."""
        if seconds is None:
            return "-"
        if self.flops:
            return f"{self.flops / seconds / 1e9:.1f} GFLOP/s"
        if self.nbytes:
            return f"{self.nbytes / seconds / 1e9:.1f} GB/s"
        return f"{seconds * 1e3:.3f} ms"

    def ratio(self, theirs: float | None) -> str:
        """Format ``ours / theirs`` (lower is better for us), or ``-``."""
        return f"{self.ours / theirs:.2f}x" if self.ours and theirs else "-"


def parser(doc: str, repeat: int, prog: str) -> argparse.ArgumentParser:
    """The options every backend benchmark takes: ``--repeat``, ``--quick``, ``--no-torch``.

    ``prog`` is the module the benchmark runs as (``mt_bench.fast``).
    """
    p = argparse.ArgumentParser(
        prog=f"python -m {prog}", description=doc.splitlines()[0], formatter_class=HelpFormatter
    )
    p.add_argument("--repeat", type=positive_int, default=repeat, help="timed repeats per row")
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    return p


def load_line() -> str:
    """``load average L on N CPUs``: how busy the machine was, for a benchmark's header."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"load average {load:.1f} on {os.cpu_count()} CPUs"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Render a Markdown table; every column but the first and a ``note`` right-aligned."""
    align = ["---" if h in (header[0], "note") else "---:" for h in header]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def best_time(fn: Callable[[], Any], repeat: int, sync: Callable[[], None] | None = None) -> float:
    """Return the best wall time of ``repeat`` calls of ``fn``, after one warm-up call.

    ``sync`` is called after each call, inside the timing, to wait for work that ``fn`` only
    queues (a GPU's kernels).
    """

    def call() -> None:
        fn()
        if sync is not None:
            sync()

    return min(step_times([call], repeat, warmup=1)[0])


def step_times(fns: Sequence[Callable[[], Any]], repeat: int, warmup: int = 3) -> list[list[float]]:
    """Time ``repeat`` calls of each of ``fns``; return one list of seconds per fn.

    The calls alternate, so that a busy machine slows them alike, after ``warmup`` untimed
    rounds.
    """
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return times


def microseconds_per_call(seconds: Sequence[float], calls: int) -> dict[str, float]:
    """Return ``{"best": us, "median": us}`` per call, for rounds of ``calls`` calls each."""
    per_call = [s / calls * 1e6 for s in seconds]
    return {"best": min(per_call), "median": statistics.median(per_call)}


# --- The machine: what a figure was measured on ------------------------------------------


def cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (empty where there is none)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return {}
    return fields


def cpu_model() -> str:
    """The CPU's model name with its family, model and stepping (``/proc/cpuinfo``).

    A VM may name only the vendor's line (``AMD EPYC``): the numbers tell its generation
    (family 25 is AMD Zen 3 and 4). Elsewhere, ``platform.processor()``.
    """
    fields = cpuinfo()
    if not fields:
        return platform.processor() or platform.machine() or "unknown CPU"
    name = fields.get("model name") or platform.processor() or "unknown CPU"
    numbers = [f"{k} {fields[k]}" for k in ("cpu family", "model", "stepping") if k in fields]
    return f"{name} ({', '.join(numbers)})" if numbers else name


def clock_mhz() -> tuple[float | None, str]:
    """The clock to compute a peak with, in MHz, and where it came from.

    ``lscpu``'s "CPU max MHz" (the highest clock the kernel knows of) when it reports one;
    else ``/proc/cpuinfo``'s "cpu MHz" of the first CPU, which on a VM is usually the
    nominal clock: a core that boosts above it makes more than the "peak".
    """
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.startswith("CPU max MHz:"):
                return float(line.split(":")[1]), "lscpu 'CPU max MHz'"
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("cpu MHz"):
                    return float(
                        line.split(":")[1]
                    ), "/proc/cpuinfo 'cpu MHz' (nominal; boost may exceed it)"
    except (OSError, ValueError):
        pass
    return None, "unknown (no lscpu max clock, no /proc/cpuinfo)"


@dataclass
class VectorUnit:
    """The widest vector instructions LLVM reports for this CPU (llvmlite, as Numba sees it)."""

    isa: str
    lanes: int
    fma: bool

    def __str__(self) -> str:
        fma = " + FMA" if self.fma else " (no FMA)"
        return f"{self.isa}{fma}, {self.lanes} doubles per vector"


def vector_unit() -> VectorUnit:
    """The host's vector ISA: AVX-512F (8 doubles), AVX2 or AVX (4), else SSE2/NEON (2)."""
    try:
        import llvmlite.binding as llvm

        features = {k for k, on in llvm.get_host_cpu_features().items() if on}
    except (ImportError, RuntimeError):
        features = set()
    fma = "fma" in features or "neon" in features
    for isa, lanes in (("AVX-512F", 8), ("AVX2", 4), ("AVX", 4)):
        if isa.lower().replace("-", "") in features:
            return VectorUnit(isa, lanes, fma)
    return VectorUnit("NEON" if "neon" in features else "SSE2", 2, fma)


#: FMA units per core assumed for the peak: two on Intel since Haswell and AMD since Zen 2
#: (Zen 1 and some Xeon Silver/Bronze have one 256/512-bit unit); ``--fma-units`` changes it.
FMA_UNITS = 2


def fma_lanes(lanes: int, fields: dict[str, str]) -> tuple[int, str]:
    """Doubles one FMA unit finishes per cycle for vectors of ``lanes``, and why if fewer.

    AMD's Zen 4 (family 25 with AVX-512) runs a 512-bit operation as two halves on its
    256-bit units: 8-lane vectors, 4 lanes of multiply-adds per unit and cycle (on a
    2-core EPYC VM, NumPy's OpenBLAS made 51 GFLOP/s on one core: 16 flops a cycle at
    3.2 GHz, where full-width units would allow 32). Intel's AVX-512 cores and Zen 5's
    server and desktop ones have full 512-bit units (Zen 5's mobile ones do not, and
    their peak here is twice the real one).
    """
    amd = fields.get("vendor_id") == "AuthenticAMD"
    if amd and fields.get("cpu family") == "25" and lanes == 8:
        return 4, "512-bit operations run as two 256-bit halves on AMD family 25 (Zen 4)"
    return lanes, ""


@dataclass
class Peak:
    """The machine's float64 peak: cores x FMA units x lanes x 2 flops x clock.

    ``lanes`` are the doubles an FMA unit finishes per cycle (``fma_lanes``: fewer than a
    vector's where the units are narrower, as ``lanes_note`` says).
    """

    cores: int
    fma_units: int
    lanes: int
    mhz: float | None
    clock_source: str
    lanes_note: str = ""

    @property
    def gflops(self) -> float | None:
        """The peak in GFLOP/s, or None when the clock is unknown."""
        if self.mhz is None:
            return None
        return self.cores * self.fma_units * self.lanes * 2 * self.mhz / 1e3

    @property
    def nominal(self) -> bool:
        """Whether the clock is the nominal one (cores that boost run past this "peak")."""
        return "nominal" in self.clock_source

    def share(self, gflops: float | None) -> str:
        """``gflops`` as a share of the peak (``"61% of peak"``, or ``"of nominal peak"``)."""
        if not gflops or not self.gflops:
            return ""
        return f"{gflops / self.gflops:.0%} of {'nominal ' if self.nominal else ''}peak"

    def __str__(self) -> str:
        clock = f"{self.mhz / 1e3:.3f} GHz" if self.mhz else "? GHz"
        total = f"{self.gflops:.1f} GFLOP/s" if self.gflops else "unknown"
        return (
            f"float64 peak {total} = {self.cores} cores x {self.fma_units} FMA units x "
            f"{self.lanes} lanes{f' ({self.lanes_note})' if self.lanes_note else ''} x "
            f"2 flops x {clock} (clock from {self.clock_source})"
        )


def machine_peak(fma_units: int = FMA_UNITS, cores: int | None = None) -> Peak:
    """This machine's ``Peak`` (every CPU this process may use, unless ``cores`` is given)."""
    mhz, source = clock_mhz()
    if cores is None:
        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    lanes, note = fma_lanes(vector_unit().lanes, cpuinfo())
    return Peak(cores, fma_units, lanes, mhz, source, note)


#: The vector ISA each OpenBLAS kernel family uses for float64 GEMM (threadpoolctl's
#: ``architecture``): a kernel below the machine's ISA makes NumPy a slow reference.
KERNEL_ISA = {
    **dict.fromkeys(("skylakex", "cooperlake", "sapphirerapids"), "AVX-512F"),
    **dict.fromkeys(("haswell", "zen", "excavator", "steamroller"), "AVX2"),
    **dict.fromkeys(("sandybridge", "bulldozer", "piledriver"), "AVX"),
    **dict.fromkeys(("nehalem", "core2", "penryn", "dunnington", "atom", "prescott"), "SSE2"),
    **dict.fromkeys(("barcelona", "opteron", "bobcat", "nano", "katmai"), "SSE2"),
}

#: Vector ISAs, narrowest first.
ISA_ORDER = ("SSE2", "AVX", "AVX2", "AVX-512F")

#: Environment variables that make OpenBLAS run a kernel other than the CPU's own.
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE",)


def blas_kernel() -> str | None:
    """The kernel NumPy's OpenBLAS runs (``Haswell``, ``SkylakeX``...; threadpoolctl), or None."""
    np.ones(2) @ np.ones(2)  # load the BLAS before asking
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    for pool in threadpool_info():
        if pool.get("user_api") == "blas" and pool.get("architecture"):
            return str(pool["architecture"])
    return None


def blas_below(kernel: str | None, isa: str) -> str | None:
    """The ISA of ``kernel`` when it is narrower than the machine's ``isa``, else None."""
    if kernel is None or isa not in ISA_ORDER:
        return None
    used = KERNEL_ISA.get(kernel.lower())
    if used is None or ISA_ORDER.index(used) >= ISA_ORDER.index(isa):
        return None
    return used


def blas_info() -> str:
    """NumPy's BLAS and the kernel it runs: threadpoolctl's view, else NumPy's build info."""
    np.ones(2) @ np.ones(2)  # load the BLAS before asking
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        if pools:
            p = pools[0]
            return (
                f"{p.get('internal_api')} {p.get('version')}, kernel {p.get('architecture')}, "
                f"{p.get('num_threads')} threads ({p.get('threading_layer')})"
            )
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]  # type: ignore[call-arg,index]
        return f"{blas['name']} {blas['version']} (kernel unknown: pip install threadpoolctl)"
    except Exception:  # NumPy's build info has no stable shape across versions
        return "unknown (pip install threadpoolctl)"
