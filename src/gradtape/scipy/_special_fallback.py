"""The special functions ``gt.scipy.stats`` needs, as elementwise primitives with SciPy
impls (imported when first run), for when ``gradtape.ops.special`` (the special-function
family) does not provide them. ``gt.scipy.special`` prefers that family's functions.

Functions differentiable in only some arguments (``gammainc``'s ``a``, ``betainc``'s
``a`` and ``b``, ``stdtr``'s ``df``) give the others a cotangent from
``no_gradient_p``, which raises when it is run: dead code (and never run) unless a
gradient with respect to that argument is asked for, so it is never silently zero.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.nodes import Aval
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from ..ops.registry import Primitive, bind, operand
from ..ops.scipy_linalg import require_scipy

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _special():
    return require_scipy("special", "this special function")


# --- a cotangent that refuses to be computed ---------------------------------------------

def _no_gradient_impl(x, message):
    raise NotImplementedError(message)


no_gradient_p = Primitive(
    "no_gradient", _no_gradient_impl,
    shape_rule=lambda x, message: Aval(tuple(x.shape), x.dtype), pure=False,
    batch=lambda size, args, batched, message: bind(no_gradient_p, args[0], message=message),
)


def _no_gradient(like, what: str):
    """A stand-in cotangent for ``like`` that raises ``NotImplementedError`` when run."""
    return bind(no_gradient_p, like, message=f"{what} is not implemented: gradtape cannot "
                "differentiate it; pass that argument as a constant.")


def _refuse_tangent(t, what: str):
    if t is not None:
        raise NotImplementedError(f"{what} is not implemented: gradtape cannot "
                                  "differentiate it; pass that argument as a constant.")


def _unbroadcast(grad, x):
    """``grad`` summed to the shape of input ``x`` (inputs broadcast)."""
    return _shape.unbroadcast(grad, x.shape)


# --- unary functions ---------------------------------------------------------------------

def _unary(name: str, scipy_name: str, deriv):
    """An elementwise primitive calling ``scipy.special.<scipy_name>``, with derivative
    ``deriv(x, y)``; ``scipy.special.<scipy_name>(tensor)`` dispatches to it too."""
    def impl(x):
        return getattr(_special(), scipy_name)(x)

    impl.__name__ = f"{name}_impl"
    prim = Primitive(
        name, impl, elementwise=True,
        vjp=lambda g, y, x: (g * deriv(x, y),),
        jvp=lambda ts, y, x: ts[0] * deriv(x, y),
    )

    def op(x):
        return bind(prim, _ew.cast(operand(x), np.float64) if _is_integer(x) else operand(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``scipy.special.{scipy_name}``, differentiable."
    op.primitive = prim
    return op


def _is_integer(x) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.issubdtype(dtype, np.integer)


def _polygamma_impl(x, n):
    return _special().polygamma(n, x).astype(np.result_type(x, np.float16), copy=False)


polygamma_p = Primitive(
    "polygamma", _polygamma_impl, elementwise=True,
    vjp=lambda g, y, x, n: (g * bind(polygamma_p, x, n=n + 1),),
    jvp=lambda ts, y, x, n: ts[0] * bind(polygamma_p, x, n=n + 1),
)


def polygamma(n, x):
    """``scipy.special.polygamma(n, x)`` for an integer ``n`` (differentiable in ``x``)."""
    n = int(np.asarray(n))
    return bind(polygamma_p, _ew.cast(operand(x), np.float64) if _is_integer(x)
                else operand(x), n=n)


gammaln = _unary("gammaln", "gammaln", lambda x, y: digamma(x))
digamma = _unary("digamma", "digamma", lambda x, y: polygamma(1, x))
psi = digamma
erf = _unary("erf", "erf", lambda x, y: _ew.exp(-_ew.square(x)) * _TWO_OVER_SQRT_PI)
erfc = _unary("erfc", "erfc", lambda x, y: _ew.exp(-_ew.square(x)) * -_TWO_OVER_SQRT_PI)
ndtr = _unary("ndtr", "ndtr", lambda x, y: _ew.exp(_ew.square(x) * -0.5) / _SQRT_2PI)
log_ndtr = _unary("log_ndtr", "log_ndtr",
                  lambda x, y: _ew.exp(_ew.square(x) * -0.5 - y) / _SQRT_2PI)


# --- xlogy, xlog1py: 0 where x is 0 ------------------------------------------------------

def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (``scipy.special.xlogy``); the gradient there
    is 0 as well (no NaN from ``log(0)``)."""
    x, y = operand(x), operand(y)
    zero = _ew.equal(x, 0)
    return _ew.where(zero, 0.0, x * _ew.log(_ew.where(zero, 1.0, y)))


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``)."""
    x, y = operand(x), operand(y)
    zero = _ew.equal(x, 0)
    return _ew.where(zero, 0.0, x * _ew.log1p(_ew.where(zero, 0.0, y)))


def betaln(a, b):
    """``log(|B(a, b)|)`` as ``gammaln(a) + gammaln(b) - gammaln(a + b)``."""
    a, b = operand(a), operand(b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


# --- regularized incomplete gamma and beta: differentiable in x --------------------------

def _binary_in_x(name: str, scipy_name: str, dx):
    """``scipy.special.<scipy_name>(a, x)``, differentiable in ``x`` only."""
    def impl(a, x):
        return getattr(_special(), scipy_name)(a, x)

    impl.__name__ = f"{name}_impl"
    what = f"The gradient of {name} with respect to its first argument"
    prim = Primitive(
        name, impl, elementwise=True,
        vjp=lambda g, y, a, x: (_no_gradient(a, what), _unbroadcast(g * dx(a, x), x)),
        jvp=lambda ts, y, a, x: (_refuse_tangent(ts[0], what) or
                                 ts[1] * dx(a, x) + _ew.zeros_like(y)),
    )

    def op(a, x):
        return bind(prim, operand(a), operand(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``scipy.special.{scipy_name}``, differentiable in ``x``."
    op.primitive = prim
    return op


def _gamma_density(a, x):
    """``x^(a-1) e^-x / Gamma(a)``: the derivative of ``gammainc(a, x)`` in ``x``."""
    return _ew.exp(xlogy(a - 1.0, x) - x - gammaln(a))


gammainc = _binary_in_x("gammainc", "gammainc", _gamma_density)
gammaincc = _binary_in_x("gammaincc", "gammaincc", lambda a, x: -_gamma_density(a, x))


def _stdtr_density(df, t):
    """Student's t density: the derivative of ``stdtr(df, t)`` in ``t``."""
    half = (df + 1.0) * 0.5
    return _ew.exp(gammaln(half) - gammaln(df * 0.5) - _ew.log(df * math.pi) * 0.5
                   - half * _ew.log1p(_ew.square(t) / df))


stdtr = _binary_in_x("stdtr", "stdtr", _stdtr_density)


def _betainc_impl(a, b, x):
    return _special().betainc(a, b, x)


def _beta_density(a, b, x):
    return _ew.exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b))


_BETAINC_PARAMS = "The gradient of betainc with respect to a and b"
betainc_p = Primitive(
    "betainc", _betainc_impl, elementwise=True,
    vjp=lambda g, y, a, b, x: (_no_gradient(a, _BETAINC_PARAMS),
                               _no_gradient(b, _BETAINC_PARAMS),
                               _unbroadcast(g * _beta_density(a, b, x), x)),
    jvp=lambda ts, y, a, b, x: (_refuse_tangent(ts[0] if ts[0] is not None else ts[1],
                                                _BETAINC_PARAMS)
                                or ts[2] * _beta_density(a, b, x) + _ew.zeros_like(y)),
)


def betainc(a, b, x):
    """``scipy.special.betainc(a, b, x)``, differentiable in ``x``."""
    return bind(betainc_p, operand(a), operand(b), operand(x))
