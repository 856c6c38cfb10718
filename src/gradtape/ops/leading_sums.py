"""The sum that undoes broadcasting, by BLAS where NumPy's own reduction is slow.

NumPy sums a C-contiguous ``(n, k)`` array over axis 0 row by row: one inner-loop call
of ``k`` elements per row, about 30x a GEMV ``ones @ x`` on a (2000, 32) float32 array
(a dense layer's bias gradient). OpenBLAS's GEMV keeps several partial sums per output,
so it is no less accurate than NumPy's one running sum (``tests/ops/test_leading_sums.py``
measures both against float64). Its order depends on the values and shape only: the
operand is made C-contiguous first, and GEMV's result does not depend on alignment. A
broadcast view (a zero stride) is summed by NumPy instead, never copied out in full.

Only ``unbroadcast`` (gradient-internal, ``shape.py``) sums this way, in the interpreter
and in generated code alike (both call its implementation): a user's ``np.sum``
stays NumPy's, bit for bit. A column of zeros all ``-0.0`` sums to ``+0.0`` here (GEMV
starts from ``+0.0``), to ``-0.0`` in NumPy.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

# Fewer rows than this: NumPy's loop costs about what GEMV's call does (the two cross
# between 128 and 256 rows, float32 and float64, 8 to 256 columns).
MIN_ROWS = 256
MIN_SIZE = 2 * MIN_ROWS  # rows of at least two columns: a smaller array never qualifies
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# Ones vectors up to this length are kept (at most 8, 4 MiB): longer ones cost little
# to write against the sum they serve.
_KEPT_ONES = 1 << 16


@functools.lru_cache(maxsize=8)
def _kept_ones(rows: int, dtype: np.dtype) -> np.ndarray:
    ones = np.ones(rows, dtype)
    ones.flags.writeable = False  # shared by every call
    return ones


def _ones(rows: int, dtype: np.dtype) -> np.ndarray:
    return _kept_ones(rows, dtype) if rows <= _KEPT_ONES else np.ones(rows, dtype)


def by_gemv(shape: tuple, dtype: Any, axes: tuple[int, ...]) -> bool:
    """Whether ``unbroadcast`` sums an array of ``shape`` and ``dtype`` over ``axes``
    (normalized) by GEMV: leading axes of a float32/float64 array, at least
    ``MIN_ROWS`` rows summed into more than one column (one column NumPy sums
    contiguously, pairwise: more accurately than a dot). The passes ask it too: an
    unbroadcast it says no to is written as NumPy's sum, the same values. A dimension not
    known (not an int) may be anything: yes, and the value decides when it runs."""
    lead = len(axes)
    if not (0 < lead < len(shape) and dtype in _BLAS_DTYPES and axes == tuple(range(lead))):
        return False
    try:
        return math.prod(shape[:lead]) >= MIN_ROWS and math.prod(shape[lead:]) > 1
    except TypeError:
        return True


def _broadcast(g: np.ndarray) -> bool:
    """Whether ``g`` repeats its elements along an axis (a broadcast view): a
    contiguous copy of it could be far larger than its memory."""
    return any(stride == 0 and size > 1 for stride, size in zip(g.strides, g.shape))


def gemv_sum(g: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``g``, an array ``by_gemv`` says yes to, summed over its leading ``axes`` by
    GEMV (a broadcast view by ``np.add.reduce``)."""
    if not g.flags.c_contiguous and _broadcast(g):
        return np.add.reduce(g, axis=axes)
    lead = len(axes)
    rows = math.prod(g.shape[:lead])
    matrix = np.ascontiguousarray(g.reshape(rows, -1))
    return (_ones(rows, g.dtype) @ matrix).reshape(g.shape[lead:])
