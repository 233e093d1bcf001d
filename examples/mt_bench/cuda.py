"""Benchmark the CUDA backend on a GPU against the GPU's own limits, side by side in one run.

Rows, each beside a reference library (PyTorch CUDA, else CuPy, when installed with a GPU):

- float64 matmul (256 to 4096) in GFLOP/s; the reference's float64 matmul is cuBLAS's
  DGEMM, and "of limit" is MiniTorch's share of its speed;
- the device-to-device copy of ``cudaMemcpy`` (through Numba), the bandwidth reference;
- map (neg, sigmoid) and zip (add, mul) on 1e7 and 1e8 elements, and sums over each
  dimension of a 4096 x 4096 matrix, in GB/s (the bytes an operation must read and write);
  "of limit" is the share of the measured copy bandwidth;
- one training step of the course's MNIST LeNet (``train_mnist.Network``, with mt-nn) at
  batch 16 and 64, against the same network in PyTorch CUDA (float64);
- the per-operation launch overhead: microseconds per call of a one-element map, zip,
  sum and matmul issued back to back (the GPU synchronised once per round), and of an
  empty Numba kernel, the floor.

Each figure is the best of ``--repeat`` timings after a warm-up call (which also compiles
the kernel), the GPU synchronised before every clock reading. ``--json FILE`` writes the
rows for a report (``tools/gpu_check.py``).

It refuses to run on Numba's CUDA simulator, whose timings mean nothing. There,
``--simulator-smoke`` runs every row but the MNIST step (minutes there) at toy sizes once,
to check that the benchmark's code runs; it prints and writes no timings.

    hatch run bench:cuda                    # the full table
    hatch run bench:cuda --quick            # small sizes, a smoke test on a GPU
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import operator
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from minitorch.cuda import CudaBackend, is_available, simulator_enabled
from minitorch.tensor import from_numpy
from mt_bench import common as bench
from mt_bench.common import ELEMENTWISE, Row, best_time, import_torch, markdown_table

#: What the smoke run's header and JSON say, so nobody reads its output as a measurement.
SMOKE_NOTE = (
    "SIMULATOR SMOKE RUN, NOT A MEASUREMENT: the rows ran once at toy sizes on Numba's "
    "CUDA simulator to check that the benchmark's code runs; no timings are kept."
)


def check_gpu(smoke: bool = False) -> None:
    """Exit with a clear message unless a real CUDA GPU is there (the simulator for ``smoke``)."""
    if smoke:
        if not simulator_enabled():
            sys.exit(
                "bench_cuda: --simulator-smoke runs on Numba's CUDA simulator only: set "
                "NUMBA_ENABLE_CUDASIM=1 in the environment, or leave the option out on a GPU."
            )
        return
    if simulator_enabled():
        sys.exit(
            "bench_cuda: NUMBA_ENABLE_CUDASIM=1 is set; the CUDA simulator runs every GPU "
            "thread as a Python thread, so its timings mean nothing. Unset it and run on a "
            "machine with an NVIDIA GPU (--simulator-smoke checks the code runs, untimed)."
        )
    if not is_available():
        sys.exit(
            "bench_cuda: no CUDA GPU was found. This benchmark measures GPU kernels and "
            "needs an NVIDIA GPU with its driver (and `pip install mt-cuda[cu12]` or "
            "`[cu13]` for the CUDA toolkit libraries)."
        )


def synchronize() -> None:
    """Wait for every queued kernel (launches return before the GPU finishes)."""
    from numba import cuda

    cuda.synchronize()


@dataclass
class Reference:
    """The library MiniTorch is compared with: its arrays, its synchronisation, its ops.

    ``ops`` maps ``matmul``, ``sum`` and the torch names of ``ELEMENTWISE`` to functions of
    the library's arrays; an op it lacks is missing (its cell stays empty). ``torch`` is the
    module when the reference is PyTorch (the MNIST row needs it).
    """

    name: str
    array: Callable[[np.ndarray], Any]
    sync: Callable[[], None]
    ops: dict[str, Callable[..., Any]] = field(default_factory=dict)
    torch: Any = None


def torch_reference(torch: Any) -> Reference:
    """PyTorch CUDA: float64 matmul is cuBLAS's DGEMM."""
    ops = {name: getattr(torch, name) for name in ("matmul", "neg", "sigmoid", "add", "mul")}
    ops["sum"] = lambda x, d: x.sum(d, keepdim=True)
    return Reference(
        f"PyTorch {torch.__version__} CUDA",
        lambda x: torch.from_numpy(x).cuda(),
        torch.cuda.synchronize,
        ops,
        torch,
    )


def cupy_reference() -> Reference | None:
    """CuPy (its matmul is cuBLAS's), or None when it is not installed or sees no GPU."""
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        cupy = importlib.import_module("cupy")
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no driver or no GPU: CuPy raises its own CUDA errors
        return None
    ops = {"matmul": cupy.matmul, "neg": cupy.negative, "add": cupy.add, "mul": cupy.multiply}
    ops["sum"] = lambda x, d: x.sum(axis=d, keepdims=True)
    return Reference(
        f"CuPy {cupy.__version__}", cupy.asarray, lambda: cupy.cuda.Device().synchronize(), ops
    )


def find_reference(choice: str) -> Reference | None:
    """The reference asked for (``auto``: PyTorch CUDA, else CuPy), or None if it is missing."""
    if choice in ("auto", "torch"):
        torch = import_torch(cuda=True)
        if torch is not None:
            return torch_reference(torch)
    if choice in ("auto", "cupy"):
        return cupy_reference()
    return None


@dataclass
class Bench:
    """What every row needs: repeats, the reference and whether this is a smoke run."""

    repeat: int
    ref: Reference | None
    smoke: bool = False

    def time(self, fn: Callable[[], Any], sync: Callable[[], None]) -> float:
        """Best time of ``fn`` (a smoke run calls it once and keeps no timing)."""
        if self.smoke:
            fn()
            sync()
            return float("nan")
        return best_time(fn, self.repeat, sync)

    def measure(
        self, name: str, ours: Callable[[], Any], theirs: Callable[[], Any] | None, **work: float
    ) -> Row:
        """Time both sides; an error (out of memory, say) becomes the row's note."""
        row = Row(name, None, flops=work.get("flops"), nbytes=work.get("nbytes"))
        try:
            row.ours = self.time(ours, synchronize)
        except Exception as e:  # e.g. CUDA_ERROR_OUT_OF_MEMORY at 1e8 on a small GPU
            row.note = f"MiniTorch: {type(e).__name__}: {str(e)[:60]}"
        if theirs is not None and self.ref is not None:
            try:
                row.torch = self.time(theirs, self.ref.sync)
            except Exception as e:
                row.note += f" {self.ref.name}: {type(e).__name__}"
        return row

    def ref_op(self, name: str, *arrays: np.ndarray) -> Callable[..., Any] | None:
        """The reference's ``name`` on copies of ``arrays`` on the GPU, or None."""
        if self.ref is None or name not in self.ref.ops:
            return None
        return partial(self.ref.ops[name], *[self.ref.array(a) for a in arrays])


def copy_row(n: int, b: Bench) -> Row:
    """The device-to-device copy of ``n`` float64 (``cudaMemcpy``), counting read and write."""
    from numba import cuda

    try:
        src = cuda.to_device(np.random.default_rng(3).random(n))
        dst = cuda.device_array_like(src)
    except Exception as e:
        return Row(f"cudaMemcpy D2D {n:.0e}", None, note=f"{type(e).__name__}: {str(e)[:60]}")
    return b.measure(f"cudaMemcpy D2D {n:.0e}", partial(dst.copy_to_device, src), None,
                     nbytes=16.0 * n)  # fmt: skip


def elementwise_rows(sizes: Sequence[int], b: Bench) -> list[Row]:
    """Map (neg, sigmoid) and zip (add, mul) on contiguous vectors, in GB/s."""
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        xs = [rng.random(n), rng.random(n)]
        ours = [from_numpy(x, CudaBackend) for x in xs]
        for name, method, _, ref_name, k in ELEMENTWISE:
            ref = partial(getattr(CudaBackend, method), *ours[:k])
            theirs = b.ref_op(ref_name, *xs[:k])
            rows.append(b.measure(f"{name} {n:.0e}", ref, theirs, nbytes=8.0 * (k + 1) * n))
    return rows


def reduce_rows(sides: Sequence[int], b: Bench) -> list[Row]:
    """Sum over each dimension of a square matrix, in GB/s."""
    rng = np.random.default_rng(1)
    rows = []
    for side in sides:
        x = rng.random((side, side))
        a = from_numpy(x, CudaBackend)
        for d in (0, 1):
            ours = partial(CudaBackend.add_reduce, a, d)
            ref_sum = b.ref_op("sum", x)
            theirs = partial(ref_sum, d) if ref_sum is not None else None
            work = 8.0 * (side * side + side)
            rows.append(b.measure(f"sum dim {d} {side}x{side}", ours, theirs, nbytes=work))
    return rows


def matmul_rows(sizes: Sequence[int], b: Bench) -> list[Row]:
    """Square float64 matmul, in GFLOP/s (the reference's is cuBLAS's DGEMM)."""
    rng = np.random.default_rng(2)
    rows = []
    for n in sizes:
        x, y = rng.random((n, n)), rng.random((n, n))
        a, c = from_numpy(x, CudaBackend), from_numpy(y, CudaBackend)
        sub = Bench(max(1, b.repeat if n <= 1024 else b.repeat // 3), b.ref, b.smoke)
        ours = partial(operator.matmul, a, c)
        rows.append(sub.measure(f"matmul {n}x{n}", ours, b.ref_op("matmul", x, y),
                                flops=2.0 * n**3))  # fmt: skip
    return rows


def launch_rows(calls: int, b: Bench) -> list[Row]:
    """Microseconds per one-element operation issued back to back, and an empty kernel's.

    Each timing is ``calls`` calls then one synchronisation; the row's time is per call.
    """
    from numba import cuda

    @cuda.jit  # type: ignore[untyped-decorator,unused-ignore]
    def empty() -> None:
        pass

    one = np.ones((1, 1))
    a, c = from_numpy(one, CudaBackend), from_numpy(one.copy(), CudaBackend)
    ref_sum = b.ref_op("sum", one)
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any] | None]] = [
        ("empty Numba kernel", lambda: empty[1, 1](), None),
        ("map neg", a.__neg__, b.ref_op("neg", one)),
        ("zip add", partial(operator.add, a, c), b.ref_op("add", one, one)),
        ("sum", a.sum, partial(ref_sum, 0) if ref_sum is not None else None),
        ("matmul", partial(operator.matmul, a, c), b.ref_op("matmul", one, one)),
    ]

    def batch(fn: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(calls):
                fn()

        return run

    rows = []
    for name, ours, theirs in cases:
        row = b.measure(f"launch: {name} 1x1", batch(ours), batch(theirs) if theirs else None)
        row.ours = None if row.ours is None else row.ours / calls
        row.torch = None if row.torch is None else row.torch / calls
        rows.append(row)
    return rows


def mnist_step_row(b: Bench, batch: int) -> Row:
    """One training step of ``train_mnist.Network`` and of its PyTorch twin (``bench_nn``)."""
    name = f"MNIST LeNet train step b={batch}"
    if importlib.util.find_spec("minitorch.nn") is None:
        return Row(name, None, note="needs mt-nn (not installed)")
    if b.smoke:  # its kernels are mt-nn's CUDA tests' (test_nn_cuda.py)
        return Row(name, None, note="not run in the smoke run: one step takes minutes there")
    try:
        from mt_bench.nn import mnist_steps

        torch = b.ref.torch if b.ref is not None else None
        dtype = torch.float64 if torch is not None else None
        ours, theirs = mnist_steps(CudaBackend, batch, torch, dtype, device="cuda")
        return b.measure(name, ours, theirs)
    except Exception as e:  # e.g. out of GPU memory; say what failed
        return Row(name, None, note=f"mt-nn: {type(e).__name__}: {str(e)[:70]}")


def of_limit(row: Row, copy_seconds_per_byte: float | None) -> float | None:
    """The row's share of its limit: the reference's speed (matmul), the copy bandwidth.

    Bandwidth rows (``nbytes``) compare with the measured device-to-device copy, matmul
    (``flops``) with the reference's time; None where either side is missing.
    """
    if not row.ours or row.ours != row.ours:  # None, 0 or NaN (a smoke run)
        return None
    if row.nbytes and copy_seconds_per_byte and not row.name.startswith("cudaMemcpy"):
        return row.nbytes * copy_seconds_per_byte / row.ours
    if row.flops and row.torch:
        return row.torch / row.ours
    return None


def copy_speed(rows: Sequence[Row]) -> float | None:
    """Seconds per byte of the largest copy row that ran, or None."""
    copies = [r for r in rows if r.name.startswith("cudaMemcpy") and r.ours and r.nbytes]
    if not copies or copies[-1].ours != copies[-1].ours:
        return None
    last = copies[-1]
    return (last.ours or 0.0) / (last.nbytes or 1.0)


def cell(row: Row, seconds: float | None, smoke: bool) -> str:
    """A figure of the table: GFLOP/s, GB/s, microseconds per launch or ms; "ran" in smoke."""
    if smoke:
        return "ran" if seconds is not None else "-"
    if seconds is not None and row.name.startswith("launch:"):
        return f"{seconds * 1e6:.1f} us"
    return row.cell(seconds)


def format_table(rows: Sequence[Row], ref: Reference | None, smoke: bool = False) -> str:
    """Render the rows as a Markdown table."""
    per_byte = copy_speed(rows)
    theirs = ref.name if ref is not None else "reference"
    header = ["operation", "MiniTorch CUDA", theirs, "MiniTorch / ref (time)", "of limit", "note"]
    lines = []
    for r in rows:
        share = of_limit(r, per_byte)
        ratio = "-" if smoke else r.ratio(r.torch)
        limit = "-" if share is None or smoke else f"{share:.0%}"
        lines.append(
            [r.name, cell(r, r.ours, smoke), cell(r, r.torch, smoke), ratio, limit, r.note]
        )
    return markdown_table(header, lines)


def _figure(seconds: float | None, smoke: bool) -> float | None:
    return None if smoke or seconds is None or seconds != seconds else seconds


def row_record(row: Row, per_byte: float | None, smoke: bool) -> dict[str, Any]:
    """One row as JSON: seconds per call of each side, rates, the share of the limit.

    A smoke run keeps no figure (every number is null); ``ran`` says whether MiniTorch's
    side ran without an error.
    """
    ours, theirs = _figure(row.ours, smoke), _figure(row.torch, smoke)
    record: dict[str, Any] = {
        "name": row.name,
        "ran": row.ours is not None,
        "seconds": ours,
        "reference_seconds": theirs,
        "note": row.note.strip(),
    }
    for key, work, scale in (("gflops", row.flops, 1e9), ("gbps", row.nbytes, 1e9)):
        if work:
            record[key] = work / ours / scale if ours else None
            record[f"reference_{key}"] = work / theirs / scale if theirs else None
    record["of_limit"] = None if smoke else of_limit(row, per_byte)
    return record


def device_info() -> dict[str, Any]:
    """The GPU's name, compute capability and the driver's CUDA version, as Numba reports.

    On the simulator: its name alone.
    """
    from numba import cuda

    if simulator_enabled():
        return {"name": "Numba's CUDA simulator", "simulator": True}
    gpu = cuda.get_current_device()
    name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
    info: dict[str, Any] = {"name": name, "simulator": False}
    info["compute_capability"] = ".".join(map(str, gpu.compute_capability))
    try:
        from numba.cuda.cudadrv import driver

        info["driver_cuda_version"] = ".".join(map(str, driver.get_version()))
    except Exception as e:  # the figures do not depend on it
        info["driver_cuda_version"] = f"unknown ({type(e).__name__})"
    return info


def write_json(path: str, rows: Sequence[Row], ref: Reference | None, smoke: bool) -> None:
    """Write the run as JSON: whether it is a measurement, the device, the reference, rows."""
    per_byte = copy_speed(rows)
    data = {
        "schema": 1,
        "measurement": not smoke,
        "note": SMOKE_NOTE if smoke else "",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device_info(),
        "mt_cuda": importlib.metadata.version("mt-cuda"),
        "reference": ref.name if ref is not None else None,
        "copy_gbps": None if smoke or not per_byte else 1.0 / per_byte / 1e9,
        "rows": [row_record(r, per_byte, smoke) for r in rows],
    }
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> str:
    """Run the benchmark on the GPU and print the table; return it."""
    p = bench.parser(__doc__ or "", repeat=5, prog="mt_bench.cuda")
    add = p.add_argument
    add("--reference", choices=["auto", "torch", "cupy"], default="auto",
        help="the library to compare with (auto: PyTorch CUDA, else CuPy)")  # fmt: skip
    add("--json", metavar="FILE", help="also write the rows as JSON to FILE")
    add("--simulator-smoke", action="store_true",
        help="on the simulator only: run the rows once at toy sizes, untimed")  # fmt: skip
    args = p.parse_args(argv)
    smoke = args.simulator_smoke
    check_gpu(smoke)
    ref = None if args.no_torch else find_reference(args.reference)
    b = Bench(1 if smoke else args.repeat, ref, smoke)
    # Vector sizes, matrix sides of the sums, matmul sizes, MNIST batches, launches per
    # round, the copy's size.
    if smoke:
        sizes, sides, mats, batches, calls, copy_n = [64], [8], [4], [1], 2, 64
    elif args.quick:
        sizes, sides, mats, batches, calls, copy_n = [10**6], [1024], [256, 512], [16], 100, 10**7
    else:
        sizes, sides, mats = [10**7, 10**8], [4096], [256, 512, 1024, 2048, 4096]
        batches, calls, copy_n = [16, 64], 1000, 10**8
    info = device_info()
    print(SMOKE_NOTE + "\n" if smoke else "", end="")
    print(f"GPU: {info['name']}, float64; reference: {ref.name if ref else 'none installed'}\n")
    rows = [*matmul_rows(mats, b), copy_row(copy_n, b), *elementwise_rows(sizes, b)]
    rows += [*reduce_rows(sides, b), *(mnist_step_row(b, n) for n in batches)]
    rows += launch_rows(calls, b)
    table = format_table(rows, ref, smoke)
    print(table)
    if ref is None:
        print("\n(Neither PyTorch with CUDA nor CuPy is installed: the reference is empty.)")
    if args.json:
        write_json(args.json, rows, ref, smoke)
    return table


if __name__ == "__main__":
    main()
