"""tools/gpu_plan.py: the occupancy calculation by hand, ptxas's report, and the plan itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_plan", ROOT / "tools/gpu_plan.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_plan"] = module  # its dataclasses look their module up
    saved = os.environ.get("NUMBA_ENABLE_CUDASIM")
    try:
        spec.loader.exec_module(module)
    finally:  # the module sets it for its own process; keep this one's as it was
        if saved is None:
            os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
        else:
            os.environ["NUMBA_ENABLE_CUDASIM"] = saved
    return module


plan = _tool()
H100 = plan.GPUS["sm_90"][0]


def _res(registers: int, shared: int = 0) -> object:
    return plan.Resources(registers, shared, 0, 0, 0)


@pytest.mark.parametrize(
    ("threads", "registers", "shared", "blocks", "fraction", "limit"),
    [
        # 8 warps a block, 32 registers: 1024 registers a warp, 64 warps fit: 8 blocks
        (256, 32, 0, 8, 1.0, "warps"),
        # 64 registers: 2048 a warp, 32 warps = 4 blocks of 8: half the multiprocessor
        (256, 64, 0, 4, 0.5, "registers"),
        # 48 registers round up to 1536 a warp: 42 warps, 5 blocks of 8
        (256, 48, 0, 5, 40 / 64, "registers"),
        # one warp a block: at most 32 blocks, so 32 of 64 warps
        (4, 32, 0, 32, 0.5, "blocks"),
        # 100 KB of shared memory (+1 KB reserved) a block: 2 blocks in 228 KB
        (256, 32, 100 * 1024, 2, 16 / 64, "shared memory"),
    ],
)
def test_occupancy_by_hand(
    threads: int, registers: int, shared: int, blocks: int, fraction: float, limit: str
) -> None:
    occ = plan.occupancy(threads, _res(registers, shared), H100)
    assert (occ.blocks_per_sm, occ.limit) == (blocks, limit)
    assert occ.fraction == pytest.approx(fraction)


def test_ptxas_report_is_read() -> None:
    report = (
        "ptxas info    : Compiling entry function '_Z6kernel' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z6kernel\n"
        "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 48 registers, 4096 bytes smem, 432 bytes cmem[0]\n"
    )
    res = plan.parse_ptxas(report)
    assert (res.registers, res.shared, res.stack) == (48, 4096, 16)
    assert (res.spill_stores, res.spill_loads) == (8, 12)
    assert res.spills
    with pytest.raises(ValueError, match="not a ptxas"):
        plan.parse_ptxas("nothing here")


def test_flags_say_why() -> None:
    w = plan.Workload("pool", "reduce[add]", 10, 4, 100.0, 10.0, 1.0)
    res = plan.Resources(32, 0, 0, 4, 4)
    occ = plan.occupancy(4, res, H100)
    why = " ".join(plan.flags(w, res, occ, H100))
    for words in ("spills", "lanes idle", "10 blocks for 132", "10x the bytes"):
        assert words in why


def test_the_workloads_use_the_backends_launch_sizes() -> None:
    from minitorch.cuda import launch

    rows = {w.what: w for w in plan.workloads()}
    assert (rows["map exp, 1e+08"].blocks, rows["map exp, 1e+08"].threads) == (
        launch.elementwise_launch(10**8)
    )
    assert rows["matmul 4096"].blocks == (4096 // launch.TILE) ** 2
    assert rows["matmul 4096"].flops == 2 * 4096**3


def test_the_plan_compiles_every_kernel_for_hopper_without_spills() -> None:
    try:
        plan.find_ptxas()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools/gpu_plan.py"), "--json", os.devnull],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    if "the CUDA compiler toolchain" in done.stderr or "DynamicLibNotFound" in done.stderr:
        pytest.skip("NVIDIA's compiler libraries (NVVM) are not installed")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for kernel in ("matmul", "reduce[add]", "conv_forward", "conv_weight_grad", "zip[pow]"):
        assert f"| {kernel} |" in out
    assert "H100 SXM (sm_90)" in out
    assert "H200 SXM (sm_90)" in out
    assert "spills (" not in out  # no kernel spills at these shapes
