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

    def probe(x):
        x[0] = 1.0

    try:
        cuda.compile_ptx(probe, (types.float64[::1],), cc=(7, 5))
    except Exception as e:
        print(f"the CUDA compiler toolchain is not installed: {{type(e).__name__}}")
        sys.exit({SKIP})

    from minitorch.nn.kernels import cuda as conv_cuda

    arr, i64, flag = types.float64[::1], types.int64, types.boolean
    jobs = [
        ("forward", conv_cuda._forward_kernel, (arr,) * 4 + (i64,) * 11 + (flag,)),
        ("weight_grad", conv_cuda._weight_grad_kernel, (arr,) * 3 + (i64,) * 7 + (flag,)),
    ]
    for name, kernel, sig in jobs:
        ptx, result = cuda.compile_ptx(kernel.py_func, sig, cc=(7, 5))
        assert result == types.void, (name, result)
        assert ".entry" in ptx, name
    print(f"compiled {{len(jobs)}} kernels")
    """
)


@pytest.mark.task4_2
def test_cuda_conv_kernels_compile_to_ptx() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=False
    )
    if result.returncode == SKIP:
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compiled 2 kernels" in result.stdout
