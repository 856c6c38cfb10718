"""``stdtr`` (Student's t cdf), which ``gt.scipy.stats.t`` needs and the special-function
family (``gradtape.ops.special``) does not have: an elementwise primitive with SciPy's
impl (imported when first run), differentiable in ``t``.

Its ``df`` gets a cotangent from ``ops.special.no_gradient``, which raises when it is run: dead
code (never run) unless a gradient with respect to ``df`` is asked for, so that gradient
is never silently zero, also inside ``@gt.function`` or nested tapes.
"""

from __future__ import annotations

import math

from . import elementwise as _ew
from . import shape as _shape
from .registry import Primitive, bind, operand
from .scipy_linalg import require_scipy
from .special import gammaln, no_gradient, refuse_tangent


def _special():
    return require_scipy("special", "stdtr")


def _unbroadcast(grad, x):
    """``grad`` summed to the shape of input ``x`` (inputs broadcast)."""
    return _shape.unbroadcast(grad, x.shape)


# --- stdtr ------------------------------------------------------------------------------

def _stdtr_impl(df, t):
    return _special().stdtr(df, t)


def _stdtr_density(df, t):
    """Student's t density: the derivative of ``stdtr(df, t)`` in ``t``."""
    half = (df + 1.0) * 0.5
    return _ew.exp(gammaln(half) - gammaln(df * 0.5) - _ew.log(df * math.pi) * 0.5
                   - half * _ew.log1p(_ew.square(t) / df))


_DF = "The gradient of stdtr with respect to df"


def _stdtr_jvp(ts, y, df, t):
    refuse_tangent(ts[0], _DF)
    return ts[1] * _stdtr_density(df, t) + _ew.zeros_like(y)


stdtr_p = Primitive(
    "stdtr", _stdtr_impl, elementwise=True,
    vjp=lambda g, y, df, t: (no_gradient(df, _DF), _unbroadcast(g * _stdtr_density(df, t), t)),
    jvp=_stdtr_jvp,
)


def stdtr(df, t):
    """``scipy.special.stdtr(df, t)``: Student's t cdf, differentiable in ``t``."""
    return bind(stdtr_p, operand(df), operand(t))
