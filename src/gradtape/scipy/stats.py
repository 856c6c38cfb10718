"""``gt.scipy.stats``: SciPy's distributions on tensors, differentiable in ``x`` and in
the parameters (``loc``, ``scale``, shape parameters) where a derivative exists.

Each distribution is an object with SciPy's functions and signatures
(``norm.logpdf(x, loc=0, scale=1)``, ``t.cdf(x, df, loc=0, scale=1)``); parameters
broadcast as in SciPy. Outside the support, ``pdf`` is 0, ``logpdf`` is ``-inf`` and
the cdf is 0 or 1, with zero gradient. Gradients of incomplete gamma/beta functions
(``gamma.cdf``, ``beta.cdf``, ``chi2.cdf``, ``t.cdf``) with respect to the shape
parameters are not implemented: asking for one raises ``NotImplementedError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.scipy_linalg import require_scipy
from . import _mvn
from . import special as _sp
from .special import as_float as _float

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson",
           "t"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_NEG_INF = -np.inf


def _masked(inside, value, outside):
    """``value`` where ``inside``, else the constant ``outside`` (no gradient there)."""
    return _ew.where(inside, value, outside)


class _Sampling:
    """``rvs``: SciPy's random draws, as NumPy arrays (sampling is not differentiated)."""

    name: str

    def rvs(self, *args: Any, **kwargs: Any) -> Any:
        stats = require_scipy("stats", f"{self.name}.rvs")
        return getattr(stats, self.name).rvs(*args, **kwargs)


class _Continuous(_Sampling):
    """A location-scale family: ``logpdf(x) = logpdf_std((x - loc) / scale) - log(scale)``,
    ``cdf(x) = cdf_std((x - loc) / scale)``. The standard functions take the standardized
    ``z`` and the shape parameters."""

    def __init__(self, name: str, shapes: tuple[str, ...], logpdf: Callable,
                 cdf: Callable, sf: Callable, logcdf: Callable | None = None,
                 logsf: Callable | None = None):
        self.name = name
        self._shapes = shapes
        self._logpdf, self._cdf, self._sf = logpdf, cdf, sf
        self._logcdf, self._logsf = logcdf, logsf

    def __repr__(self) -> str:
        return f"gt.scipy.stats.{self.name}"

    def _arguments(self, args: tuple, kwargs: dict):
        """The shape parameters, loc and scale, positional or by keyword (SciPy's)."""
        names = self._shapes + ("loc", "scale")
        if len(args) > len(names):
            raise TypeError(f"{self.name}: too many arguments ({len(args)} after x; it "
                            f"takes {', '.join(names)}).")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.name} got an unexpected keyword argument {key!r}.")
            if key in values:
                raise TypeError(f"{self.name} got multiple values for argument {key!r}.")
            values[key] = value
        missing = [s for s in self._shapes if s not in values]
        if missing:
            raise TypeError(f"{self.name} is missing its shape parameter(s) {missing}.")
        shapes = [_float(values[s]) for s in self._shapes]
        return shapes, values.get("loc", 0.0), values.get("scale", 1.0)

    def _standardized(self, x, args, kwargs):
        shapes, loc, scale = self._arguments(args, kwargs)
        return (_float(x) - loc) / scale, shapes, scale

    def logpdf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        z, shapes, scale = self._standardized(x, args, kwargs)
        return self._logpdf(z, *shapes) - _ew.log(_float(scale))

    def pdf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return _ew.exp(self.logpdf(x, *args, **kwargs))

    def cdf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        z, shapes, _ = self._standardized(x, args, kwargs)
        return self._cdf(z, *shapes)

    def sf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        z, shapes, _ = self._standardized(x, args, kwargs)
        return self._sf(z, *shapes)

    def logcdf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        if self._logcdf is None:
            return _ew.log(self.cdf(x, *args, **kwargs))
        z, shapes, _ = self._standardized(x, args, kwargs)
        return self._logcdf(z, *shapes)

    def logsf(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        if self._logsf is None:
            return _ew.log(self.sf(x, *args, **kwargs))
        z, shapes, _ = self._standardized(x, args, kwargs)
        return self._logsf(z, *shapes)


# --- norm ----------------------------------------------------------------------------------

norm = _Continuous(
    "norm", (),
    logpdf=lambda z: _ew.square(z) * -0.5 - _HALF_LOG_2PI,
    cdf=lambda z: _sp.ndtr(z), sf=lambda z: _sp.ndtr(-z),
    logcdf=lambda z: _sp.log_ndtr(z), logsf=lambda z: _sp.log_ndtr(-z),
)


# --- t ---------------------------------------------------------------------------------------

def _t_logpdf(z, df):
    half = (df + 1.0) * 0.5
    return (_sp.gammaln(half) - _sp.gammaln(df * 0.5) - _ew.log(df * math.pi) * 0.5
            - half * _ew.log1p(_ew.square(z) / df))


t = _Continuous("t", ("df",), logpdf=_t_logpdf,
                cdf=lambda z, df: _sp.stdtr(df, z), sf=lambda z, df: _sp.stdtr(df, -z))


# --- gamma and chi2 -------------------------------------------------------------------------

def _positive_part(z):
    return _ew.where(_ew.greater(z, 0), z, 0.0)


def _gamma_logpdf(z, a):
    inside = _ew.greater_equal(z, 0)
    safe = _ew.where(inside, z, 1.0)  # finite outside the support: no NaN in the gradient
    return _masked(inside, _sp.xlogy(a - 1.0, safe) - safe - _sp.gammaln(a), _NEG_INF)


gamma = _Continuous(
    "gamma", ("a",), logpdf=_gamma_logpdf,
    cdf=lambda z, a: _sp.gammainc(a, _positive_part(z)),
    sf=lambda z, a: _sp.gammaincc(a, _positive_part(z)),
)

chi2 = _Continuous(
    "chi2", ("df",),
    logpdf=lambda z, df: _gamma_logpdf(z * 0.5, df * 0.5) - math.log(2.0),
    cdf=lambda z, df: _sp.gammainc(df * 0.5, _positive_part(z) * 0.5),
    sf=lambda z, df: _sp.gammaincc(df * 0.5, _positive_part(z) * 0.5),
)


# --- beta -------------------------------------------------------------------------------------

def _unit_interval(z):
    return _ew.clip(z, 0.0, 1.0)


def _beta_logpdf(z, a, b):
    inside = _ew.logical_and(_ew.greater_equal(z, 0), _ew.less_equal(z, 1))
    safe = _ew.where(inside, z, 0.5)
    value = _sp.xlogy(a - 1.0, safe) + _sp.xlog1py(b - 1.0, -safe) - _sp.betaln(a, b)
    return _masked(inside, value, _NEG_INF)


beta = _Continuous(
    "beta", ("a", "b"), logpdf=_beta_logpdf,
    cdf=lambda z, a, b: _sp.betainc(a, b, _unit_interval(z)),
    sf=lambda z, a, b: _sp.betainc(b, a, 1.0 - _unit_interval(z)),
)


# --- poisson ----------------------------------------------------------------------------------

class _Poisson(_Sampling):
    """``poisson.pmf(k, mu, loc=0)``; differentiable in ``mu`` (``k`` is a count: a
    non-integer or negative ``k`` has probability 0)."""

    name = "poisson"

    def __repr__(self) -> str:
        return "gt.scipy.stats.poisson"

    @staticmethod
    def _count(k, loc):
        k = _float(k) - loc
        valid = _ew.logical_and(_ew.equal(k, _ew.floor(k)), _ew.greater_equal(k, 0))
        return _ew.where(valid, k, 0.0), valid

    def logpmf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        count, valid = self._count(k, loc)
        mu = _float(mu)
        value = _sp.xlogy(count, mu) - _sp.gammaln(count + 1.0) - mu
        return _masked(valid, value, _NEG_INF)

    def pmf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        return _ew.exp(self.logpmf(k, mu, loc))

    def cdf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        k = _ew.floor(_float(k) - loc)
        inside = _ew.greater_equal(k, 0)
        value = _sp.gammaincc(_ew.where(inside, k, 0.0) + 1.0, _float(mu))
        return _masked(inside, value, 0.0)

    def sf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        return 1.0 - self.cdf(k, mu, loc)

    def logcdf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        return _ew.log(self.cdf(k, mu, loc))

    def logsf(self, k: Any, mu: Any, loc: Any = 0) -> Any:
        return _ew.log(self.sf(k, mu, loc))


poisson = _Poisson()


# --- dirichlet --------------------------------------------------------------------------------

class _Dirichlet(_Sampling):
    """``dirichlet.logpdf(x, alpha)``: ``x``'s FIRST axis holds the components (SciPy's
    layout: shape ``(K,)`` or ``(K, N)`` for ``N`` points)."""

    name = "dirichlet"

    def __repr__(self) -> str:
        return "gt.scipy.stats.dirichlet"

    def logpdf(self, x: Any, alpha: Any) -> Any:
        x, alpha = _float(x), _float(alpha)
        if len(alpha.shape) != 1:
            raise ValueError("Parameter vector 'a' must be one dimensional, but "
                             f"a.shape = {tuple(alpha.shape)}.")
        if x.shape[0] != alpha.shape[0]:
            raise ValueError(f"dirichlet: x's first axis ({x.shape[0]}) must hold the "
                             f"{alpha.shape[0]} components of alpha.")
        weights = alpha if len(x.shape) == 1 else _column(alpha, len(x.shape))
        log_norm = _reduce.sum(_sp.gammaln(alpha)) - _sp.gammaln(_reduce.sum(alpha))
        return _reduce.sum(_sp.xlogy(weights - 1.0, x), axis=0) - log_norm

    def pdf(self, x: Any, alpha: Any) -> Any:
        return _ew.exp(self.logpdf(x, alpha))


def _column(v, ndim: int):
    """``v`` with trailing size-1 axes: one value per component, for every point."""
    return _shape.reshape(v, tuple(v.shape) + (1,) * (ndim - 1))


dirichlet = _Dirichlet()
multivariate_normal = _mvn.multivariate_normal
