"""The matrix multiply's micro-kernel: a block of C held in vector registers across k.

A matrix product spends its time in one loop: ``C[i, j] += A[i, k] * B[k, j]``. Written
as sixteen scalar dot products (the previous tuned kernel), LLVM vectorises it along k, but
the sums and their operands need more vector registers than AVX2 has (16), so it spills.
The way BLAS libraries do it instead is an *outer product* per step of k: a block of
``rows x cols`` outputs stays in registers, ``rows`` values of A are broadcast and ``cols``
values of B are loaded as vectors, and each step is ``rows * cols / lanes`` fused
multiply-adds with no store. The operands are packed first (``tuned``) so that both are
read contiguously: A in panels of ``rows`` rows (``[k][rows]``), B in panels of ``cols``
columns (``[k][cols]``).

Numba turns LLVM's SLP vectoriser off (``NUMBA_SLP_VECTORIZE=0``), so a block of scalar
accumulators written out by hand stays scalar (measured: 48 ``vfmadd231sd``, about a tenth
of the speed); its loop vectoriser only vectorises innermost loops. So ``micro_kernel``
writes the loop in LLVM IR with explicit vector types (``<lanes x double>``), as
``vecmath`` does for ``exp``. The block is chosen once, from the CPU features Numba compiles
for (``shape``): ``rows = 6`` rows by two vectors of the machine's width, twelve vector
accumulators plus two for B and one for the broadcast (15 of AVX2's 16 registers):

=============== ===== ======== ======================================
ISA             lanes block    accumulators
=============== ===== ======== ======================================
AVX-512F        8     6 x 16   12 zmm (of 32)
AVX, AVX2       4     6 x 8    12 ymm (of 16)
anything else   2     6 x 4    12 xmm (SSE2, NEON; the fallback)
=============== ===== ======== ======================================

Each output is one chain of multiply-adds over k, in order (``llvm.fmuladd``: fused where
the CPU has FMA), so results do not depend on the blocking or the thread count.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import llvmlite.binding as llvm
import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = [
    "ROWS",
    "Shape",
    "isa",
    "micro_kernel",
    "shape",
    "shifted_micro_kernel",
    "target_features",
    "vector_lanes",
]

ROWS = 6
"""Rows of A per block: 6 rows x 2 vectors are 12 accumulators, plus 3 working registers."""

VECTORS = 2
"""Vectors of B per row of the block."""


class Shape(NamedTuple):
    """The block of C that ``micro_kernel`` keeps in registers: ``rows x lanes * vectors``."""

    rows: int
    lanes: int
    vectors: int

    @property
    def cols(self) -> int:
        """Columns of the block (doubles): ``lanes * vectors``."""
        return self.lanes * self.vectors

    def __str__(self) -> str:
        return f"{self.rows}x{self.cols} doubles ({isa(self.lanes)}, {self.lanes} lanes)"


def target_features() -> str:
    """The CPU features Numba compiles for, as LLVM spells them (``+avx2,+fma,...``).

    ``NUMBA_CPU_FEATURES`` when set, else the host's (without AVX when Numba's
    ``NUMBA_ENABLE_AVX`` is off), as Numba's own code generator chooses them.
    """
    if numba.config.CPU_FEATURES is not None:
        return str(numba.config.CPU_FEATURES)
    try:
        features = llvm.get_host_cpu_features()
    except RuntimeError:  # LLVM cannot read them on every platform
        return ""
    if not numba.config.ENABLE_AVX:
        for name in features:
            if name.startswith("avx"):
                features[name] = False
    return str(features.flatten())


def vector_lanes(features: str) -> int:
    """Doubles per vector register for ``features``: 8 (AVX-512F), 4 (AVX), else 2."""
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    if "avx512f" in enabled:
        return 8
    if "avx" in enabled:
        return 4
    return 2


def isa(lanes: int) -> str:
    """The name of the vector instruction set a width stands for: ``AVX2``, ..."""
    return {8: "AVX-512", 4: "AVX/AVX2"}.get(lanes, "SSE2/NEON (128-bit)")


@functools.cache
def shape() -> Shape:
    """The block for the CPU Numba compiles for (read once, on the first matrix product)."""
    return Shape(ROWS, vector_lanes(target_features()), VECTORS)


def _literal(value: Any) -> int | None:
    return value.literal_value if isinstance(value, types.IntegerLiteral) else None


def _checked(
    depth: Any, arrays: tuple[Any, ...], indices: tuple[Any, ...], accumulate: Any, block: Any
) -> tuple[int, int, int] | None:
    """The literal block ``(rows, lanes, vectors)`` if the arguments type-check, else None."""
    r, w, v = (_literal(x) for x in block)
    if r is None or w is None or v is None:
        return None
    f64 = types.Array(types.float64, 1, "C")
    if not all(x == f64 for x in arrays) or not isinstance(accumulate, types.Boolean):
        return None
    if not all(isinstance(x, types.Integer) for x in (depth, *indices)):
        return None
    return r, w, v


def _codegen(r: int, w: int, v: int, shifted: bool) -> Any:
    """The LLVM code of a ``rows x lanes * vectors`` block over ``depth`` steps of k.

    The arguments are ``micro_kernel``'s; with ``shifted``, ``shifted_micro_kernel``'s (an
    array of B's offsets after ``b_start``). Step k reads B's vectors at ``b_start + k *
    cols`` (packed panels) or at ``b_start + offsets[k]`` (shifted runs).
    """
    cols = w * v
    at = {"a": 1, "a0": 2, "b": 3, "b0": 4, "c": 5, "c0": 6, "row": 7, "acc": 8}
    if shifted:  # the offsets come after b_start
        at = {name: i + (i > 4) for name, i in at.items()} | {"offsets": 5}

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64 = ir.IntType(64)
        vector = ir.VectorType(ir.DoubleType(), w)
        fmuladd = builder.module.declare_intrinsic(
            f"llvm.fmuladd.v{w}f64", fnty=ir.FunctionType(vector, [vector] * 3)
        )
        n, a_at, b_at, c_at, c_step = (
            context.cast(builder, args[i], signature.args[i], types.int64)
            for i in (0, at["a0"], at["b0"], at["c0"], at["row"])
        )
        a_data, b_data, c_data = (
            context.make_array(signature.args[i])(context, builder, args[i]).data
            for i in (at["a"], at["b"], at["c"])
        )
        offsets = None
        if shifted:
            i = at["offsets"]
            offsets = context.make_array(signature.args[i])(context, builder, args[i]).data
        add_to_c = context.cast(builder, args[at["acc"]], signature.args[at["acc"]], types.boolean)

        def vector_at(data: Any, offset: Any) -> Any:
            return builder.bitcast(builder.gep(data, [offset]), vector.as_pointer())

        def const(x: int) -> Any:
            return ir.Constant(i64, x)

        # The block of C (or zeros), into registers; then one loop over k with the
        # accumulators as phis.
        c_ptrs = [
            [
                vector_at(
                    c_data,
                    builder.add(c_at, builder.add(builder.mul(const(i), c_step), const(u * w))),
                )
                for u in range(v)
            ]
            for i in range(r)
        ]
        # C is read after the loop (``C + A @ B``), so its lines are fetched while k runs.
        prefetch = builder.module.declare_intrinsic(
            "llvm.prefetch.p0",
            fnty=ir.FunctionType(
                ir.VoidType(), [ir.IntType(8).as_pointer()] + [ir.IntType(32)] * 3
            ),
        )
        i32 = ir.IntType(32)
        for row in c_ptrs:
            for pointer in row:
                address = builder.bitcast(pointer, ir.IntType(8).as_pointer())
                builder.call(
                    prefetch,
                    [address, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)],
                )
        start = [[ir.Constant(vector, None) for _ in range(v)] for _ in range(r)]
        entry = builder.block
        loop = builder.append_basic_block("micro.loop")
        done = builder.append_basic_block("micro.done")
        builder.cbranch(builder.icmp_signed(">", n, const(0)), loop, done)

        builder.position_at_end(loop)
        k = builder.phi(i64)
        acc = [[builder.phi(vector) for _ in range(v)] for _ in range(r)]
        if offsets is None:
            b_k = builder.add(b_at, builder.mul(k, const(cols)))
        else:
            b_k = builder.add(b_at, builder.load(builder.gep(offsets, [k])))
        b_vectors = [
            builder.load(vector_at(b_data, builder.add(b_k, const(u * w))), align=8)
            for u in range(v)
        ]
        a_k = builder.add(a_at, builder.mul(k, const(r)))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), w), None)
        new = []
        for i in range(r):
            x = builder.load(builder.gep(a_data, [builder.add(a_k, const(i))]))
            lane0 = builder.insert_element(
                ir.Constant(vector, ir.Undefined), x, ir.Constant(ir.IntType(32), 0)
            )
            broadcast = builder.shuffle_vector(lane0, ir.Constant(vector, ir.Undefined), zeros)
            new.append(
                [builder.call(fmuladd, [broadcast, b_vectors[u], acc[i][u]]) for u in range(v)]
            )
        k_next = builder.add(k, const(1))
        k.add_incoming(const(0), entry)
        k.add_incoming(k_next, loop)
        for i in range(r):
            for u in range(v):
                acc[i][u].add_incoming(start[i][u], entry)
                acc[i][u].add_incoming(new[i][u], loop)
        builder.cbranch(builder.icmp_signed("<", k_next, n), loop, done)

        builder.position_at_end(done)
        final = []
        for i in range(r):
            for u in range(v):
                value = builder.phi(vector)
                value.add_incoming(start[i][u], entry)
                value.add_incoming(new[i][u], loop)
                final.append((c_ptrs[i][u], value))
        with builder.if_else(add_to_c) as (then, otherwise):
            with then:
                for pointer, value in final:
                    total = builder.fadd(builder.load(pointer, align=8), value)
                    builder.store(total, pointer, align=8)
            with otherwise:
                for pointer, value in final:
                    builder.store(value, pointer, align=8)
        return context.get_dummy_value()

    return codegen


@intrinsic(prefer_literal=True)  # type: ignore[untyped-decorator]
def micro_kernel(
    typingctx: Any,
    depth: Any,
    a: Any,
    a_start: Any,
    b: Any,
    b_start: Any,
    c: Any,
    c_start: Any,
    c_row: Any,
    accumulate: Any,
    rows: Any,
    lanes: Any,
    vectors: Any,
) -> Any:
    """``C = A_panel @ B_panel`` (``+ C`` if ``accumulate``) over ``depth`` steps of k.

    ``a[a_start + k * rows + i]`` is ``A[i, k]``, ``b[b_start + k * cols + j]`` is
    ``B[k, j]`` and ``c[c_start + i * c_row + j]`` is ``C[i, j]`` (``cols = lanes *
    vectors``; C's rows have unit stride); ``rows``, ``lanes`` and ``vectors`` are
    compile-time constants (see ``Shape``). The block of C is held in vector registers
    while k runs, then stored; it is read first only if ``accumulate`` is true.
    """
    block = _checked(depth, (a, b, c), (a_start, b_start, c_start, c_row), accumulate,
                     (rows, lanes, vectors))  # fmt: skip
    if block is None:
        return None
    signature = types.void(
        depth, a, a_start, b, b_start, c, c_start, c_row, accumulate, rows, lanes, vectors
    )
    return signature, _codegen(*block, shifted=False)


@intrinsic(prefer_literal=True)  # type: ignore[untyped-decorator]
def shifted_micro_kernel(
    typingctx: Any,
    depth: Any,
    a: Any,
    a_start: Any,
    b: Any,
    b_start: Any,
    offsets: Any,
    c: Any,
    c_start: Any,
    c_row: Any,
    accumulate: Any,
    rows: Any,
    lanes: Any,
    vectors: Any,
) -> Any:
    """``micro_kernel`` whose row k of B is the run ``b[b_start + offsets[k] + j]``.

    A direct convolution is this product: with a zero-padded input stored as one long row
    per channel, output position ``p`` meets tap ``t`` of its window at ``p + offsets[t]``
    for every ``p``, so the columns of B (``cols`` neighbouring positions) are a contiguous
    run of the input for each tap, read in place (no im2col copy). ``offsets`` is an int64
    array of at least ``depth`` values; the rest is ``micro_kernel``'s.
    """
    block = _checked(depth, (a, b, c), (a_start, b_start, c_start, c_row), accumulate,
                     (rows, lanes, vectors))  # fmt: skip
    if block is None or offsets != types.Array(types.int64, 1, "C"):
        return None
    signature = types.void(
        depth, a, a_start, b, b_start, offsets, c, c_start, c_row, accumulate, rows, lanes,
        vectors,
    )  # fmt: skip
    return signature, _codegen(*block, shifted=True)
