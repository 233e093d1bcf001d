"""Vectorised ``exp`` for the map kernels, from glibc's vector math library (libmvec).

Numba compiles ``math.exp`` to one scalar libm call per element, so a map like ``sigmoid``
spends most of its time there while NumPy uses SIMD. glibc ships vector variants of its
math functions (``_ZGVdN4v_exp``: four doubles in an AVX2 register, ``_ZGVeN8v_exp``: eight
in an AVX-512 one; accurate to a few ULP, IEEE special values included). This module loads
the library and exposes block functions that the map kernel's contiguous path calls on
runs of up to ``CHUNK`` elements; everything else still goes through the scalar operator.

The vector path is used only where it is safe: Linux with glibc's libmvec, a CPU with AVX2
(or AVX-512F), Numba compiling for the host CPU (``NUMBA_CPU_NAME`` unset, since the calls
assume the host's vector registers), and ``MINITORCH_NO_LIBMVEC`` unset. ``VECTOR_MAPS``
is empty otherwise and every map runs the scalar operator.
"""

from __future__ import annotations

import ctypes.util
import math
import os
from collections.abc import Callable
from typing import Any

import llvmlite.binding as llvm
import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

from minitorch.operators import exp, sigmoid

__all__ = ["CHUNK", "LIBRARY", "VECTOR_MAPS", "WIDTH", "exp_block", "no_block", "sigmoid_block"]

CHUNK = 1024
"""Elements per parallel task on the vector path (a block's scratch buffer size)."""

# glibc's names for exp over <4 x double> (AVX2) and <8 x double> (AVX-512F).
_VARIANTS = {4: "_ZGVdN4v_exp", 8: "_ZGVeN8v_exp"}


def _find() -> tuple[str | None, int]:
    """The libmvec to load and the vector width to use, or ``(None, 1)``."""
    if os.environ.get("MINITORCH_NO_LIBMVEC"):
        return None, 1
    if numba.config.CPU_NAME is not None or numba.config.CPU_FEATURES is not None:
        return None, 1  # compiling for another CPU: the host's registers may not exist
    library = ctypes.util.find_library("mvec")
    if library is None:
        return None, 1
    try:
        features = llvm.get_host_cpu_features()
    except RuntimeError:  # LLVM cannot read them on every platform
        return None, 1
    width = 8 if features.get("avx512f") else 4 if features.get("avx2") else 1
    if width == 1:
        return None, 1
    try:
        llvm.load_library_permanently(library)
    except RuntimeError:
        return None, 1
    return library, width


LIBRARY, WIDTH = _find()
"""The loaded libmvec (None when the vector path is off) and the lanes per call."""


@intrinsic
def _exp_lanes(typingctx: Any, dst: Any, src: Any, start: Any) -> Any:
    """``dst[start:start + WIDTH] = exp(src[start:start + WIDTH])`` in one libmvec call."""
    f64_1d = types.Array(types.float64, 1, "C")
    if not (dst == f64_1d and src == f64_1d and isinstance(start, types.Integer)):
        return None
    vector = ir.VectorType(ir.DoubleType(), WIDTH)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        out = context.make_array(signature.args[0])(context, builder, args[0])
        inp = context.make_array(signature.args[1])(context, builder, args[1])
        where = context.cast(builder, args[2], signature.args[2], types.intp)
        src_ptr = builder.bitcast(builder.gep(inp.data, [where]), vector.as_pointer())
        dst_ptr = builder.bitcast(builder.gep(out.data, [where]), vector.as_pointer())
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vector, [vector]), _VARIANTS[WIDTH]
        )
        builder.store(builder.call(fn, [builder.load(src_ptr, align=8)]), dst_ptr, align=8)
        return context.get_dummy_value()

    return types.void(dst, src, start), codegen


@register_jitable
def _exp_into(dst: Any, src: Any) -> None:
    """``dst[k] = exp(src[k])`` over equal-length contiguous arrays (``dst`` may be ``src``)."""
    n = len(src)
    full = n - n % WIDTH
    for k in range(0, full, WIDTH):
        _exp_lanes(dst, src, k)
    for k in range(full, n):
        dst[k] = math.exp(src[k])


@register_jitable
def exp_block(out: Any, x: Any, scratch: Any) -> None:
    """``out = exp(x)`` on a run of ``x`` (``operators.exp``; overflow gives ``inf``).

    ``x`` goes through ``scratch`` first: the vector calls need unit-stride memory, and a
    tensor's storage may be any 1-D array.
    """
    n = len(x)
    z = scratch[:n]
    for k in range(n):
        z[k] = x[k]
    _exp_into(out, z)


@register_jitable
def sigmoid_block(out: Any, x: Any, scratch: Any) -> None:
    """``out = sigmoid(x)`` on a contiguous run, as ``operators.sigmoid`` computes it.

    ``z = exp(-|x|)`` never overflows; ``sigmoid(x)`` is ``1 / (1 + z)`` for ``x >= 0`` and
    ``z / (1 + z)`` otherwise. ``scratch`` (at least ``len(x)`` long) holds ``z``, so ``out``
    may be ``x``.
    """
    n = len(x)
    z = scratch[:n]
    for k in range(n):
        z[k] = -abs(x[k])
    _exp_into(z, z)
    for k in range(n):
        e = z[k]
        out[k] = 1.0 / (1.0 + e) if x[k] >= 0.0 else e / (1.0 + e)


@register_jitable
def no_block(out: Any, x: Any, scratch: Any) -> None:
    """Placeholder block for operators without a vector form (never called)."""


VECTOR_MAPS: dict[Callable[[float], float], Callable[..., None]] = (
    {exp: exp_block, sigmoid: sigmoid_block} if LIBRARY is not None else {}
)
"""Operator -> block function ``(out, x, scratch)`` for the map kernel's contiguous path."""
