"""The GPU plan: what each CUDA kernel of mt-cuda and mt-nn will get on a Hopper GPU, without one.

For every kernel it compiles the PTX Numba makes (``cuda.compile_ptx``, no GPU or driver)
and assembles it with NVIDIA's ``ptxas -v`` for a real target (``sm_90``: H100 and H200;
``sm_80``: A100), which reports registers per thread, spills, stack frame and shared memory.
Then, for the workloads the issue names (map/zip of 1e6 and 1e8 elements, a 4096 x 4096
reduce, matmul 1024 and 4096, the course's LeNet convolution and pooling at batch 64), at
the launch configuration the backend itself computes (``minitorch.cuda.launch``), it
prints the theoretical occupancy (the CUDA occupancy calculation with the GPU's limits as
data, ``GPUS``) and a roofline estimate: the bytes the kernel moves and the FP64
operations it does, and the time each needs at the device's memory bandwidth and FP64
rate. A kernel that spills, runs under 25 % occupancy, leaves lanes of its warps idle or
moves many times the bytes it must is flagged, with why.

It is a prediction: measured times come from ``hatch run gpu:check`` on a GPU.

    hatch run gpu:plan                  # the table, Markdown, for sm_90 (H100, H200)
    hatch run gpu:plan --arch sm_80     # for an A100 too (repeat --arch)
    hatch run gpu:plan --json plan.json # the figures as JSON as well
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import types as pytypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Numba reads this when it is first imported: the plan compiles real PTX, never the simulator.
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"


@dataclasses.dataclass(frozen=True)
class GPU:
    """What the occupancy calculation and the roofline need to know about one GPU.

    The per-multiprocessor limits are those of the CUDA C++ Programming Guide's table of
    compute capabilities (8.0 and 9.0); the bandwidth and FP64 rate are NVIDIA's data
    sheets' (H100 SXM5: 3.35 TB/s HBM3, 34 TFLOP/s FP64 without the tensor cores; H200 SXM:
    4.8 TB/s HBM3e, the same FP64 rate; A100 SXM4 80 GB: 2.039 TB/s, 9.7 TFLOP/s).
    """

    name: str
    arch: str
    sms: int
    max_threads_per_sm: int = 2048
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    register_unit: int = 256  # registers are given to a warp in units of 256
    shared_per_sm: int = 228 * 1024
    shared_reserved_per_block: int = 1024  # the runtime's share of each block's (8.0 and later)
    bandwidth: float = 3.35e12  # bytes per second
    fp64: float = 34e12  # FP64 operations per second (fused multiply-add counted as 2)


GPUS: dict[str, list[GPU]] = {
    "sm_90": [
        GPU("H100 SXM", "sm_90", sms=132),
        GPU("H200 SXM", "sm_90", sms=132, bandwidth=4.8e12),
    ],
    "sm_80": [
        GPU(
            "A100 SXM 80GB",
            "sm_80",
            sms=108,
            shared_per_sm=164 * 1024,
            bandwidth=2.039e12,
            fp64=9.7e12,
        ),
    ],
}


@dataclasses.dataclass(frozen=True)
class Resources:
    """``ptxas -v``'s report for one kernel on one target."""

    registers: int
    shared: int  # bytes of static shared memory per block
    stack: int  # bytes of stack frame per thread
    spill_stores: int
    spill_loads: int

    @property
    def spills(self) -> bool:
        """True if the compiler moved registers to local memory."""
        return self.spill_stores > 0 or self.spill_loads > 0


_USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas(report: str) -> Resources:
    """Read registers, shared memory, stack frame and spills from ``ptxas -v``'s output."""
    used, frame = _USED.search(report), _FRAME.search(report)
    if used is None or frame is None:
        raise ValueError(f"not a ptxas -v report of one kernel:\n{report}")
    return Resources(
        registers=int(used.group(1)),
        shared=int(used.group(2) or 0),
        stack=int(frame.group(1)),
        spill_stores=int(frame.group(2)),
        spill_loads=int(frame.group(3)),
    )


@dataclasses.dataclass(frozen=True)
class Occupancy:
    """The theoretical occupancy of one launch shape on one GPU, and what limits it."""

    blocks_per_sm: int
    warps_per_sm: int
    fraction: float  # resident warps over the multiprocessor's maximum
    limit: str  # "blocks", "warps", "registers" or "shared memory"


def occupancy(threads: int, res: Resources, gpu: GPU) -> Occupancy:
    """The CUDA occupancy calculation for blocks of ``threads`` threads using ``res``."""
    warps = math.ceil(threads / 32)
    per_warp = math.ceil(max(res.registers, 1) * 32 / gpu.register_unit) * gpu.register_unit
    limits = {
        "blocks": gpu.max_blocks_per_sm,
        "warps": gpu.max_warps_per_sm // warps,
        "registers": (gpu.registers_per_sm // per_warp) // warps,
        "shared memory": (
            gpu.shared_per_sm // (res.shared + gpu.shared_reserved_per_block)
            if res.shared
            else gpu.max_blocks_per_sm
        ),
    }
    limit = min(limits, key=lambda k: limits[k])
    blocks = limits[limit]
    return Occupancy(blocks, blocks * warps, blocks * warps / gpu.max_warps_per_sm, limit)


@dataclasses.dataclass(frozen=True)
class Workload:
    """One launch of one kernel at a shape the issue names."""

    what: str
    kernel: str
    blocks: int
    threads: int
    bytes: float  # bytes the kernel reads and writes in device memory, as it is written
    needed: float  # the bytes any kernel must move (inputs once, output once)
    flops: float


def workloads() -> list[Workload]:
    """The launches of the representative shapes, sized by mt-cuda's own launch functions."""
    from minitorch.cuda import launch

    out: list[Workload] = []
    for n in (10**6, 10**8):
        blocks, threads = launch.elementwise_launch(n)
        out.append(Workload(f"map exp, {n:.0e}", "map[exp]", blocks, threads, 16 * n, 16 * n, n))
        out.append(Workload(f"zip add, {n:.0e}", "zip[add]", blocks, threads, 24 * n, 24 * n, n))
    n = 4096
    threads = launch.reduction_threads(n)
    out.append(
        Workload(
            "sum(1) of 4096 x 4096",
            "reduce[add]",
            n,
            threads,
            8 * n * n + 8 * n,
            8 * n * n + 8 * n,
            n * n,
        )
    )
    for n in (1024, 4096):
        grid, block = launch.tiles(1, n, n)
        t = block[0]
        # Each block loads a row band of a and a column band of b, tile by tile: every
        # element of a and b is read n / t times; the output is written once.
        moved = 2 * 8 * n**3 / t + 8 * n * n
        out.append(
            Workload(
                f"matmul {n}",
                "matmul",
                grid[0] * grid[1] * grid[2],
                t * t,
                moved,
                24 * n * n,
                2 * n**3,
            )
        )
    # The course's LeNet on MNIST (examples/mt_examples/train_mnist.py), batch 64: conv 1 -> 4
    # and 4 -> 8 channels, 3 x 3, on 28 x 28 (same size out), then a 4 x 4 average pool.
    b, hw = 64, 28 * 28
    for name, cin, cout in (("conv1", 1, 4), ("conv2", 4, 8)):
        size = b * cout * hw
        blocks, threads = launch.elementwise_launch(size)
        macs = size * cin * 9
        needed = 8 * (b * cin * hw + cout * cin * 9 + cout + size)
        # Each output reads cin * 9 inputs and weights from memory (the L1 cache aside).
        out.append(
            Workload(
                f"LeNet {name} forward, batch 64",
                "conv_forward",
                blocks,
                threads,
                16 * macs + 8 * size,
                needed,
                2 * macs,
            )
        )
        gw_blocks = cout * cin * 9
        gw_threads = launch.reduction_threads(b * hw)
        out.append(
            Workload(
                f"LeNet {name} weight grad, batch 64",
                "conv_weight_grad",
                gw_blocks,
                gw_threads,
                16 * macs,
                needed,
                2 * macs,
            )
        )
    # avgpool2d (4, 4) of (64, 8, 28, 28): the view (64, 8, 7, 4, 7, 4) summed over dim 5,
    # then dim 3: each output element one block of reduction_threads(4) threads.
    first = 64 * 8 * 7 * 4 * 7
    second = 64 * 8 * 7 * 7
    for what, blocks, count in (
        ("avgpool 4x4, sum over kw", first, first * 4),
        ("avgpool 4x4, sum over kh", second, second * 4),
    ):
        out.append(
            Workload(
                f"LeNet {what}",
                "reduce[add]",
                blocks,
                launch.reduction_threads(4),
                8 * count + 8 * blocks,
                8 * count + 8 * blocks,
                count,
            )
        )
    return out


def find_ptxas() -> str:
    """``ptxas`` on PATH, else the one the ``nvidia-cuda-nvcc-cu12`` wheel installs."""
    found = shutil.which("ptxas")
    if found:
        return found
    for entry in sys.path:
        candidate = Path(entry) / "nvidia" / "cuda_nvcc" / "bin" / "ptxas"
        if candidate.exists():
            return str(candidate)
    raise FileNotFoundError(
        "ptxas not found: install NVIDIA's compiler from PyPI (pip install 'mt-cuda[cu12]', "
        "which brings nvidia-cuda-nvcc-cu12), or put a CUDA toolkit's bin on PATH"
    )


def kernels_and_signatures() -> list[tuple[str, Any, tuple[Any, ...]]]:
    """Every kernel of mt-cuda and mt-nn's CUDA convolution, with the types it is launched with."""
    from numba import types

    from minitorch.cuda import CudaBackend, device, kernels  # noqa: F401 - builds every kernel
    from minitorch.nn.kernels import cuda as conv_cuda

    arr, i64, f64, flag = types.float64[::1], types.int64, types.float64, types.boolean

    def dims(n: int) -> Any:
        return types.UniTuple(i64, n)

    signature = {
        "map": (arr, dims(3), dims(3), i64, arr, dims(3), dims(3), flag),
        "zip": (arr, dims(3), dims(3), i64, arr, dims(3), dims(3), arr, dims(3), dims(3), flag),
        "reduce": (arr, dims(2), dims(2), arr, dims(2), dims(2), i64, f64),
        "matmul": (arr, dims(3), dims(3), arr, dims(3), dims(3), arr, dims(3), dims(3)),
    }
    jobs = [
        (name, kernel, signature[name.split("[")[0]])
        for name, kernel in sorted(kernels.KERNELS.items())
    ]
    jobs += [
        ("fill", device._fill, (arr, f64)),
        ("conv_forward", conv_cuda._forward_kernel, (arr,) * 4 + (i64,) * 11 + (flag,)),
        ("conv_weight_grad", conv_cuda._weight_grad_kernel, (arr,) * 3 + (i64,) * 7 + (flag,)),
    ]
    return jobs


def compile_resources(archs: Sequence[str]) -> dict[str, dict[str, Resources]]:
    """``{arch: {kernel: Resources}}`` from Numba's PTX and ``ptxas -v``."""
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda

    ptxas = find_ptxas()
    result: dict[str, dict[str, Resources]] = {}
    for arch in archs:
        cc = (int(arch[3]), int(arch[4:]))
        if not cuda.is_available():  # device functions ask the current device for its capability
            dispatcher.get_current_device = lambda cc=cc: pytypes.SimpleNamespace(
                compute_capability=cc
            )
        result[arch] = {}
        with tempfile.TemporaryDirectory() as folder:
            for name, kernel, sig in kernels_and_signatures():
                ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
                path = Path(folder) / "kernel.ptx"
                path.write_text(ptx)
                done = subprocess.run(
                    [ptxas, "-v", f"-arch={arch}", str(path), "-o", os.devnull],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    raise RuntimeError(f"ptxas rejected {name} for {arch}:\n{done.stderr}")
                result[arch][name] = parse_ptxas(done.stderr + done.stdout)
    return result


def flags(w: Workload, res: Resources, occ: Occupancy, gpu: GPU) -> list[str]:
    """Why a launch will not run at its roofline, in words (empty if nothing stands out)."""
    why = []
    if res.spills:
        why.append(f"spills ({res.spill_stores} B stored, {res.spill_loads} B loaded per thread)")
    if occ.fraction < 0.25:
        why.append(f"occupancy {occ.fraction:.0%} (limited by {occ.limit})")
    if w.threads < 32:
        resident = occ.blocks_per_sm * w.threads / gpu.max_threads_per_sm
        why.append(
            f"{w.threads} threads a block: {32 - w.threads} of a warp's 32 lanes idle, "
            f"{resident:.0%} of the thread slots used"
        )
    if w.blocks < gpu.sms:
        why.append(f"{w.blocks} blocks for {gpu.sms} multiprocessors")
    if w.bytes > 4 * w.needed:
        why.append(
            f"moves {w.bytes / w.needed:.0f}x the bytes it must (re-reads the caches must absorb)"
        )
    return why


def plan(archs: Sequence[str]) -> dict[str, Any]:
    """Every figure of the plan, as a JSON-ready dict."""
    resources = compile_resources(archs)
    rows = []
    for arch in archs:
        for gpu in GPUS[arch]:
            for w in workloads():
                res = resources[arch][w.kernel]
                occ = occupancy(w.threads, res, gpu)
                t_mem, t_fp = w.bytes / gpu.bandwidth, w.flops / gpu.fp64
                rows.append({
                    "gpu": gpu.name, "arch": arch, **dataclasses.asdict(w),
                    **dataclasses.asdict(res), "occupancy": occ.fraction, "limit": occ.limit,
                    "blocks_per_sm": occ.blocks_per_sm, "t_memory_s": t_mem, "t_fp64_s": t_fp,
                    "bound": "memory" if t_mem >= t_fp else "FP64",
                    "estimate_s": max(t_mem, t_fp), "flags": flags(w, res, occ, gpu),
                })  # fmt: skip
    return {
        "date": datetime.date.today().isoformat(),
        "ptxas": _ptxas_version(),
        "python": platform.python_version(),
        "kernels": {
            a: {k: dataclasses.asdict(r) for k, r in v.items()} for a, v in resources.items()
        },
        "rows": rows,
    }


def _ptxas_version() -> str:
    out = subprocess.run(
        [find_ptxas(), "--version"], capture_output=True, text=True, check=False
    ).stdout
    match = re.search(r"release [\d.]+, V[\d.]+", out)
    return match.group(0) if match else out.strip().splitlines()[-1]


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _table(header: Sequence[str], right: Sequence[bool]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---:" if r else "---" for r in right) + " |",
    ]


def markdown(result: dict[str, Any]) -> str:
    """The plan as Markdown: the kernels' resources, then one table per GPU."""
    lines = [
        f"GPU plan of {result['date']}, ptxas {result['ptxas']} (a prediction, no GPU used)",
        "",
    ]
    for arch, kernels in result["kernels"].items():
        lines += [f"Kernels for {arch} (`ptxas -v`):", ""]
        lines += _table(
            ["kernel", "registers", "shared memory", "stack frame", "spills"],
            [False, True, True, True, False],
        )
        for name, r in kernels.items():
            spill = (
                f"{r['spill_stores']} B / {r['spill_loads']} B"
                if r["spill_stores"] or r["spill_loads"]
                else "none"
            )
            lines.append(
                f"| {name} | {r['registers']} | {r['shared']} B | {r['stack']} B | {spill} |"
            )
        lines.append("")
    gpus = list(dict.fromkeys(r["gpu"] for r in result["rows"]))
    for gpu in gpus:
        rows = [r for r in result["rows"] if r["gpu"] == gpu]
        lines += [f"{gpu} ({rows[0]['arch']}):", ""]
        lines += _table(
            ["workload", "kernel", "blocks x threads", "registers", "occupancy", "bytes",
             "FP64 ops", "time at bandwidth", "time at FP64 peak", "flags"],
            [False, False, False, True, True, True, True, True, True, False],
        )  # fmt: skip
        for r in rows:
            cells = [
                r["what"],
                r["kernel"],
                f"{r['blocks']} x {r['threads']}",
                str(r["registers"]),
                f"{r['occupancy']:.0%} ({r['limit']})",
                f"{r['bytes']:.3g}",
                f"{r['flops']:.3g}",
                _time(r["t_memory_s"]),
                _time(r["t_fp64_s"]),
                "; ".join(r["flags"]) or "-",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the plan (and write it as JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arch", action="append", choices=sorted(GPUS), help="target (default sm_90)"
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    result = plan(args.arch or ["sm_90"])
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
