"""The simple backend: plain Python loops, written to be read (task 2.3).

It is the reference the parallel backends are tested against, and the default backend
for new tensors. Its kernels are the course's: ``map``, ``zip`` and ``reduce`` over
``(storage, shape, strides)`` triples with the index helpers of ``tensor_data.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..tensor_data import (
    MAX_DIMS,
    Shape,
    Storage,
    Strides,
    broadcast_index,
    index_to_position,
    to_index,
)
from .protocol import MapKernel, ReduceKernel, TensorBackend, TensorOps, ZipKernel

__all__ = ["SimpleBackend", "SimpleOps"]


class SimpleOps(TensorOps):
    """Reference backend: each kernel is a Python loop over output positions."""

    name = "simple"

    @staticmethod
    def map_kernel(fn: Callable[[float], float]) -> MapKernel:
        """See ``TensorOps.map_kernel``."""

        def kernel(
            out: Storage,
            out_shape: Shape,
            out_strides: Strides,
            in_storage: Storage,
            in_shape: Shape,
            in_strides: Strides,
        ) -> None:
            # BEGIN SOLUTION task2_3
            out_index = np.zeros(MAX_DIMS, dtype=np.int64)[: len(out_shape)]
            in_index = np.zeros(MAX_DIMS, dtype=np.int64)[: len(in_shape)]
            for i in range(int(np.prod(out_shape))):
                to_index(i, out_shape, out_index)
                broadcast_index(out_index, out_shape, in_shape, in_index)
                o = index_to_position(out_index, out_strides)
                j = index_to_position(in_index, in_strides)
                out[o] = fn(float(in_storage[j]))
            # END SOLUTION

        return kernel

    @staticmethod
    def zip_kernel(fn: Callable[[float, float], float]) -> ZipKernel:
        """See ``TensorOps.zip_kernel``."""

        def kernel(
            out: Storage,
            out_shape: Shape,
            out_strides: Strides,
            a: Storage,
            a_shape: Shape,
            a_strides: Strides,
            b: Storage,
            b_shape: Shape,
            b_strides: Strides,
        ) -> None:
            # BEGIN SOLUTION task2_3
            out_index = np.zeros(len(out_shape), dtype=np.int64)
            a_index = np.zeros(len(a_shape), dtype=np.int64)
            b_index = np.zeros(len(b_shape), dtype=np.int64)
            for i in range(int(np.prod(out_shape))):
                to_index(i, out_shape, out_index)
                broadcast_index(out_index, out_shape, a_shape, a_index)
                broadcast_index(out_index, out_shape, b_shape, b_index)
                o = index_to_position(out_index, out_strides)
                ja = index_to_position(a_index, a_strides)
                jb = index_to_position(b_index, b_strides)
                out[o] = fn(float(a[ja]), float(b[jb]))
            # END SOLUTION

        return kernel

    @staticmethod
    def reduce_kernel(fn: Callable[[float, float], float]) -> ReduceKernel:
        """See ``TensorOps.reduce_kernel``."""

        def kernel(
            out: Storage,
            out_shape: Shape,
            out_strides: Strides,
            a: Storage,
            a_shape: Shape,
            a_strides: Strides,
            dim: int,
            start: float,
        ) -> None:
            # BEGIN SOLUTION task2_3
            index = np.zeros(len(out_shape), dtype=np.int64)
            for i in range(int(np.prod(out_shape))):
                to_index(i, out_shape, index)
                o = index_to_position(index, out_strides)
                acc = start
                for k in range(a_shape[dim]):
                    index[dim] = k
                    acc = fn(acc, float(a[index_to_position(index, a_strides)]))
                index[dim] = 0
                out[o] = acc
            # END SOLUTION

        return kernel

    @staticmethod
    def matmul_kernel(
        out: Storage,
        out_shape: Shape,
        out_strides: Strides,
        a: Storage,
        a_shape: Shape,
        a_strides: Strides,
        b: Storage,
        b_shape: Shape,
        b_strides: Strides,
    ) -> None:
        """See ``TensorOps.matmul_kernel``."""
        a_batch = a_strides[0] if a_shape[0] > 1 else 0
        b_batch = b_strides[0] if b_shape[0] > 1 else 0
        for n in range(out_shape[0]):
            for i in range(out_shape[1]):
                for j in range(out_shape[2]):
                    acc = 0.0
                    for k in range(a_shape[2]):
                        acc += (
                            a[n * a_batch + i * a_strides[1] + k * a_strides[2]]
                            * b[n * b_batch + k * b_strides[1] + j * b_strides[2]]
                        )
                    out[n * out_strides[0] + i * out_strides[1] + j * out_strides[2]] = acc


SimpleBackend = TensorBackend(SimpleOps, "simple")
"""The reference backend (default for new tensors)."""
