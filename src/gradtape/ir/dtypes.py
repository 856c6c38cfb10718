"""Dtype questions the compiler asks for every equation, answered once per dtype.

``np.issubdtype`` walks the scalar type hierarchy in Python on each call; autodiff and
the passes ask it thousands of times per program about a handful of dtypes.
"""

from __future__ import annotations

import math

import numpy as np

_inexact: dict[np.dtype, bool] = {}
_floating: dict[np.dtype, bool] = {}
_MAX_DTYPES = 256  # a handful in practice; structured dtypes can be made without end


def is_inexact(dtype: np.dtype) -> bool:
    """``np.issubdtype(dtype, np.inexact)``: floating point or complex."""
    known = _inexact.get(dtype)
    if known is None:
        known = bool(np.issubdtype(dtype, np.inexact))
        if len(_inexact) < _MAX_DTYPES:
            _inexact[dtype] = known
    return known


def is_floating(dtype: np.dtype) -> bool:
    """``np.issubdtype(dtype, np.floating)``: real floating point."""
    known = _floating.get(dtype)
    if known is None:
        known = bool(np.issubdtype(dtype, np.floating))
        if len(_floating) < _MAX_DTYPES:
            _floating[dtype] = known
    return known


def size(shape: tuple[int, ...]) -> int:
    """The number of elements of an array of ``shape``."""
    return int(math.prod(shape))


def size_or_inf(shape: tuple) -> float:
    """``size(shape)``, or ``inf`` where a dimension is not a known int: a value whose
    size is not known is taken for large (freed, not kept as small)."""
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return math.inf
        n *= d
    return n
