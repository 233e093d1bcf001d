"""The kernels compile for a real GPU, not only run on the simulator.

The simulator runs kernels as plain Python, so it cannot catch code that Numba's CUDA
compiler rejects (an unsupported call, a type that does not unify). This test compiles
every kernel to PTX, in a subprocess without the simulator. It needs NVIDIA's compiler
libraries, NVVM and NVRTC (``pip install mt-cuda[cu12]`` or ``[cu13]``), but not a GPU:
it compiles for compute capability 7.5 (Turing, the oldest that current CUDA releases
support) and 9.0 (Hopper: H100, H200). It is skipped where they are missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SKIP = 3

SCRIPT = textwrap.dedent(
    f"""
    import sys
    import types as pytypes

    from numba import cuda, types

    target = tuple(int(part) for part in sys.argv[1].split("."))  # compute capability

    def probe(x):
        x[0] = 1.0

    try:  # is the compiler toolchain (NVVM, NVRTC) installed?
        cuda.compile_ptx(probe, (types.float64[::1],), cc=target)
    except Exception as e:
        print(f"the CUDA compiler toolchain is not installed: {{type(e).__name__}}")
        sys.exit({SKIP})

    import numba.cuda.dispatcher as dispatcher

    cc = target
    if not cuda.is_available():
        # Device functions ask the current device for its compute capability.
        if not hasattr(dispatcher, "get_current_device"):
            print("this numba-cuda cannot compile device functions without a GPU")
            sys.exit({SKIP})
        dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=cc)

    from minitorch.cuda import CudaBackend, device, kernels, practice

    arr, i64, f64 = types.float64[::1], types.int64, types.float64
    def dims(n):
        return types.UniTuple(i64, n)

    signatures = {{
        "map": [
            (arr, dims(1), dims(1), i64, arr, dims(1), dims(1), types.boolean),
            (arr, dims(3), dims(3), i64, arr, dims(2), dims(2), types.boolean),
        ],
        "zip": [(arr, dims(3), dims(3), i64, arr, dims(1), dims(1), arr, dims(3), dims(3),
                 types.boolean)],
        "reduce": [(arr, dims(2), dims(2), arr, dims(2), dims(2), i64, f64)],
        "matmul": [(arr, dims(3), dims(3), arr, dims(3), dims(3), arr, dims(3), dims(3))],
    }}
    jobs = [
        (name, kernel, sig)
        for name, kernel in sorted(kernels.KERNELS.items())
        for sig in signatures[name.split("[")[0]]
    ]
    jobs += [
        ("fill", device._fill, (arr, f64)),
        ("sum_practice", practice._sum_practice, (arr, arr, i64)),
        ("mm_practice", practice._mm_practice, (arr, arr, arr, i64, i64, i64)),
    ]
    for name, kernel, sig in jobs:
        ptx, result = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
        assert result == types.void, (name, result)
        assert ".entry" in ptx, name
        assert f".target sm_{{cc[0]}}{{cc[1]}}" in ptx, (name, ptx[:400])
    print(f"compiled {{len(jobs)}} kernels for sm_{{cc[0]}}{{cc[1]}}")
    """
)


@pytest.mark.task3_3
@pytest.mark.task3_4
@pytest.mark.parametrize("cc", ["7.5", "9.0"])
def test_every_kernel_compiles_to_ptx(cc: str) -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, cc],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode == SKIP:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("compiled")
