"""erf and erfc in NumPy alone (W. J. Cody's rational approximations, as in his CALERF),
so ``gt.math.erf``, ``gt.math.erfc`` and the exact ``gt.nn.gelu`` need no SciPy.

Accurate to about 1e-16 relative in float64 over the whole range, erfc's tail included:
above |x| = 0.46875 erfc is computed directly (never as ``1 - erf``), and ``exp(-x*x)``
is split in two factors so its rounding does not grow with x.
"""

from __future__ import annotations

import numpy as np

_SMALL = 0.46875  # below: a rational function of x*x for erf
_MIDDLE = 4.0  # below: a rational function of |x| for erfc; above: of 1/x^2
_ERFC_UNDERFLOW = 27.3  # erfc(x) is 0 in float64 above this
_ONE_OVER_SQRT_PI = 5.6418958354775628695e-1

_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)


def _erf_small(x: np.ndarray) -> np.ndarray:
    """erf(x) for |x| <= 0.46875."""
    ysq = x * x
    num, den = _A[4] * ysq, ysq
    for i in range(3):
        num = (num + _A[i]) * ysq
        den = (den + _B[i]) * ysq
    return x * (num + _A[3]) / (den + _B[3])


def _exp_minus_square(y: np.ndarray) -> np.ndarray:
    """exp(-y*y), with y*y split at 1/16 so that its rounding error is not magnified."""
    head = np.trunc(y * 16.0) / 16.0
    return np.exp(-head * head) * np.exp(-(y - head) * (y + head))


def _erfc_large(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y > 0.46875."""
    middle = y <= _MIDDLE
    # The middle range: a rational function of y.
    num, den = _C[8] * y, y
    for i in range(7):
        num = (num + _C[i]) * y
        den = (den + _D[i]) * y
    mid = (num + _C[7]) / (den + _D[7])
    # The tail: an asymptotic rational function of 1/y^2.
    inv = 1.0 / (y * y)
    num, den = _P[5] * inv, inv
    for i in range(4):
        num = (num + _P[i]) * inv
        den = (den + _Q[i]) * inv
    tail = (_ONE_OVER_SQRT_PI - inv * (num + _P[4]) / (den + _Q[4])) / y
    result = np.where(middle, mid, tail) * _exp_minus_square(y)
    return np.where(y >= _ERFC_UNDERFLOW, 0.0, result)


def _as_float64(x) -> tuple[np.ndarray, np.dtype]:
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    return x.astype(np.float64, copy=False), dtype


def erf(x) -> np.ndarray:
    """The error function, elementwise (float32 in, float32 out; integers give float64)."""
    with np.errstate(all="ignore"):  # inf and nan go through the unused branches
        return _erf(x)


def _erf(x) -> np.ndarray:
    x, dtype = _as_float64(x)
    y = np.abs(x)
    small = y <= _SMALL
    large = np.copysign(0.5 - _erfc_large(np.where(small, 1.0, y)) + 0.5, x)
    out = np.where(small, _erf_small(np.where(small, x, 0.0)), large)
    return np.where(np.isnan(x), x, out).astype(dtype, copy=False)[()]


def erfc(x) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, accurate in its tail."""
    with np.errstate(all="ignore"):
        return _erfc(x)


def _erfc(x) -> np.ndarray:
    x, dtype = _as_float64(x)
    y = np.abs(x)
    small = y <= _SMALL
    upper = _erfc_large(np.where(small, 1.0, y))
    large = np.where(x < 0, 2.0 - upper, upper)
    out = np.where(small, 1.0 - _erf_small(np.where(small, x, 0.0)), large)
    return np.where(np.isnan(x), x, out).astype(dtype, copy=False)[()]
