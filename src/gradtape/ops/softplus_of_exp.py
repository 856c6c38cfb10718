"""softplus read from exp's output: the canonical form of ``log1p(exp(u))`` a tape can
differentiate (``passes/canonical.py``).

softplus's derivative sigmoid(u) reads u, but a tape keeps exp's output e, not its
argument. ``softplus_of_exp(u, e)`` is the value the user computed, log1p(e); its
derivative is ``sigmoid_of_exp(e)`` = e / (e + 1). All of it goes to u: e is exp(u), so a
cotangent for e too would count the derivative twice.
"""

from __future__ import annotations

import numpy as np

from .elementwise import reciprocal, square
from .registry import Primitive, bind


def _sigmoid_of_exp_impl(e):
    # e held at the largest float: exp's overflow gives 1, not inf / inf.
    held = np.minimum(e, np.finfo(e.dtype).max)
    return np.divide(held, np.add(held, 1, dtype=held.dtype), dtype=held.dtype)


# Its derivative is 1 / (e + 1)**2, from e (from y, (1 - y)**2 cancels). A second
# derivative through e where exp overflowed is 0 * inf, NaN: the user's forward is inf
# there already.
def _sigmoid_of_exp_derivative(e):
    return square(reciprocal(e + 1.0))


sigmoid_of_exp_p = Primitive(
    "sigmoid_of_exp", _sigmoid_of_exp_impl,
    vjp=lambda g, y, e: (g * _sigmoid_of_exp_derivative(e),),
    jvp=lambda ts, y, e: ts[0] * _sigmoid_of_exp_derivative(e),
    elementwise=True, residuals=("in0",),
)


def sigmoid_of_exp(e):
    return bind(sigmoid_of_exp_p, e)


softplus_of_exp_p = Primitive(
    "softplus_of_exp", lambda u, e: np.log1p(e),
    vjp=lambda g, y, u, e: (g * sigmoid_of_exp(e), None),
    jvp=lambda ts, y, u, e: None if ts[0] is None else ts[0] * sigmoid_of_exp(e),
    elementwise=True, template="log1p({1})", residuals=("in1",),
)
