"""The sum that undoes broadcasting, by BLAS where NumPy's own reduction is slow.

NumPy sums a C-contiguous ``(n, k)`` array over axis 0 row by row: one inner-loop call
of ``k`` elements per row, about 30x a GEMV ``ones @ x`` on a (2000, 32) float32 array
(a dense layer's bias gradient). OpenBLAS's GEMV keeps several partial sums per output,
so it is no less accurate than NumPy's one running sum (``tests/ops/test_leading_sums.py``
measures both against float64). Its order depends on the values and shape only: the
operand is made C-contiguous first, and GEMV's result does not depend on alignment.

Only ``unbroadcast`` (gradient-internal) sums this way, in the interpreter and in
generated code alike (both call ``unbroadcast``'s implementation): a user's ``np.sum``
stays NumPy's, bit for bit. A column of zeros all ``-0.0`` sums to ``+0.0`` here (GEMV
starts from ``+0.0``), to ``-0.0`` in NumPy.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

# Fewer rows than this: NumPy's loop costs about what GEMV's call does.
MIN_ROWS = 16
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@functools.lru_cache(maxsize=32)
def _ones(rows: int, dtype: np.dtype) -> np.ndarray:
    ones = np.ones(rows, dtype)
    ones.flags.writeable = False  # shared by every call
    return ones


def sum_over(g: Any, axes: tuple[int, ...]) -> Any:
    """``g`` summed over ``axes`` (normalized): by GEMV when they are
    leading axes of a float32/float64 array with at least ``MIN_ROWS`` rows summed into
    more than one column, else by ``np.add.reduce``."""
    lead = len(axes)
    if (g.__class__ is np.ndarray and 0 < lead < g.ndim and g.dtype in _BLAS_DTYPES
            and axes == tuple(range(lead))):
        rows = math.prod(g.shape[:lead])
        kept = g.shape[lead:]
        # One column: NumPy sums it contiguously, pairwise (more accurate than a dot).
        if rows >= MIN_ROWS and math.prod(kept) > 1:
            matrix = np.ascontiguousarray(g.reshape(rows, -1))
            return (_ones(rows, g.dtype) @ matrix).reshape(kept)
    return np.add.reduce(g, axis=axes)
