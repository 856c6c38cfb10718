"""``gt.scipy.linalg``: SciPy's matrix functions on tensors, differentiable
(``ops/scipy_linalg.py`` holds the primitives and their rules)."""

from __future__ import annotations

from ..ops.scipy_linalg import (
    cholesky,
    expm,
    solve_banded,
    solve_sylvester,
    solve_triangular,
    sqrtm,
)

__all__ = ["cholesky", "expm", "solve_banded", "solve_sylvester", "solve_triangular",
           "sqrtm"]
