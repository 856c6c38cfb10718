"""``gt.scipy.linalg``: SciPy's matrix functions on tensors, differentiable
(``ops/scipy_linalg.py`` holds the primitives and their rules). Python lists and NumPy
arrays are taken in float64, as SciPy computes them."""

from __future__ import annotations

from ..ops import scipy_linalg as _linalg
from .special import scipy_typed

__all__ = ["cholesky", "expm", "solve_banded", "solve_sylvester", "solve_triangular",
           "sqrtm"]

cholesky = scipy_typed(_linalg.cholesky, arrays=(0,), names=("a",))
expm = scipy_typed(_linalg.expm, arrays=(0,), names=("a",))
sqrtm = scipy_typed(_linalg.sqrtm, arrays=(0,), names=("a",))
solve_triangular = scipy_typed(_linalg.solve_triangular, arrays=(0, 1), names=("a", "b"))
solve_sylvester = scipy_typed(_linalg.solve_sylvester, arrays=(0, 1, 2),
                              names=("a", "b", "q"))
solve_banded = scipy_typed(_linalg.solve_banded, arrays=(1, 2), names=("ab", "b"))
