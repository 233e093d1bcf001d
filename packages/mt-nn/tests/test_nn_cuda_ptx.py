"""The CUDA convolution kernels compile for a real GPU, not only run on the simulator.

Compiled to PTX in a subprocess without the simulator. Needs mt-cuda and NVIDIA's compiler
libraries (``pip install mt-cuda[cu12]``), but no GPU; skipped where they are missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("minitorch.cuda", reason="mt-cuda (the cuda extra) is not installed")

SKIP = 3
SCRIPT = textwrap.dedent(
    f"""
    import sys
    from numba import cuda, types

    target = tuple(int(part) for part in sys.argv[1].split("."))  # compute capability

    def probe(x):
        x[0] = 1.0

    try:
        cuda.compile_ptx(probe, (types.float64[::1],), cc=target)
    except Exception as e:
        print(f"the CUDA compiler toolchain is not installed: {{type(e).__name__}}")
        sys.exit({SKIP})

    import types as pytypes

    import numba.cuda.dispatcher as dispatcher

    if not cuda.is_available():
        # Device functions ask the current device for its compute capability.
        if not hasattr(dispatcher, "get_current_device"):
            print("this numba-cuda cannot compile device functions without a GPU")
            sys.exit({SKIP})
        dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=target)

    from minitorch.nn.kernels import cuda as conv_cuda

    arr, i64, flag = types.float64[::1], types.int64, types.boolean
    jobs = [
        ("forward", conv_cuda._forward_kernel, (arr,) * 4 + (i64,) * 11 + (flag,)),
        ("weight_grad", conv_cuda._weight_grad_kernel, (arr,) * 3 + (i64,) * 7 + (flag,)),
    ]
    for name, kernel, sig in jobs:
        ptx, result = cuda.compile_ptx(kernel.py_func, sig, cc=target)
        assert result == types.void, (name, result)
        assert ".entry" in ptx, name
        assert f".target sm_{{target[0]}}{{target[1]}}" in ptx, (name, ptx[:400])
    print(f"compiled {{len(jobs)}} kernels")
    """
)


@pytest.mark.task4_2
@pytest.mark.parametrize("cc", ["7.5", "9.0"])  # Turing, and Hopper (H100, H200)
def test_cuda_conv_kernels_compile_to_ptx(cc: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, cc], capture_output=True, text=True, env=env, check=False
    )
    if result.returncode == SKIP:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compiled 2 kernels" in result.stdout
