"""``gt.scipy.stats.multivariate_normal``: ``logpdf``, ``pdf`` and ``entropy`` with
SciPy's argument handling, differentiable in ``x``, ``mean`` and ``cov``.

A nonsingular ``cov`` goes through its Cholesky factor (symmetrized, so its gradient
is symmetric). ``allow_singular=True`` uses the pseudo-inverse and pseudo-determinant
with SciPy's eigenvalue cutoff (``psd_pseudo``); points off the support of a singular
``cov`` get ``logpdf = -inf`` (no gradient), as in SciPy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.linalg.products import diagonal_p, matmul
from ..ops.linalg.solve import cholesky, solve
from ..ops.registry import bind
from ..ops.scipy_linalg import psd_pseudo, require_scipy
from .special import as_float as _float

_LOG_2PI = math.log(2.0 * math.pi)


def _parameters(mean, cov):
    """``(dim, mean vector, covariance matrix)`` as SciPy reads them: ``cov`` a scalar
    (times the identity), a vector (the diagonal) or a matrix."""
    cov = _float(cov)
    if mean is None:
        dim = 1 if len(cov.shape) == 0 else cov.shape[0]
        mean = _ew.zeros_like(_float(np.zeros(dim)))
    mean = _float(mean)
    if len(mean.shape) > 1:
        raise ValueError(f"Array 'mean' must be a vector, got shape {tuple(mean.shape)}.")
    mean = _shape.reshape(mean, (-1,))
    dim = mean.shape[0]
    if len(cov.shape) == 0:
        cov = cov * np.eye(dim)
    elif len(cov.shape) == 1:
        cov = cov * np.eye(dim)  # the diagonal: row i scaled by cov[i] on the diagonal
    if tuple(cov.shape) != (dim, dim):
        raise ValueError(f"Array 'cov' must be of shape ({dim}, {dim}), got "
                         f"{tuple(cov.shape)}.")
    return dim, mean, cov


def _points(x, dim: int):
    """``x`` as rows of points (SciPy's ``_process_quantiles``)."""
    x = _float(x)
    if len(x.shape) == 0:
        x = _shape.reshape(x, (1,))
    elif len(x.shape) == 1:
        x = _shape.reshape(x, (-1, 1) if dim == 1 else (1, -1))
    return x


def _squeezed(out):
    """SciPy squeezes every size-1 axis of the result."""
    return _shape.reshape(out, tuple(d for d in out.shape if d != 1))


def _log_diagonal_sum(chol):
    diag = bind(diagonal_p, chol, offset=0, axis1=0, axis2=1)
    return _reduce.sum(_ew.log(diag))


def _logpdf_nonsingular(dev, cov, dim):
    chol = cholesky(cov)
    flat = _shape.reshape(dev, (-1, dim))
    whitened = solve(chol, _shape.transpose(flat, (1, 0)))
    maha = _reduce.sum(_ew.square(whitened), 0)
    maha = _shape.reshape(maha, tuple(dev.shape[:-1]))
    return -0.5 * (dim * _LOG_2PI + 2.0 * _log_diagonal_sum(chol) + maha)


def _logpdf_singular(dev, cov):
    pinv, logpdet, rank, cutoff = psd_pseudo(cov)
    maha = _reduce.sum(matmul(dev, pinv) * dev, -1)
    value = -0.5 * (rank * _LOG_2PI + logpdet + maha)
    off = dev - matmul(dev, matmul(cov, pinv))  # the part outside cov's range
    residual = _ew.sqrt(_reduce.sum(_ew.square(off), -1))
    return _ew.where(_ew.less(residual, cutoff), value, -np.inf)


class _MultivariateNormal:
    """SciPy's ``multivariate_normal`` functions (not the frozen distribution)."""

    name = "multivariate_normal"

    def rvs(self, *args: Any, **kwargs: Any) -> Any:
        """SciPy's random draws, as NumPy arrays (sampling is not differentiated)."""
        stats = require_scipy("stats", "multivariate_normal.rvs")
        return stats.multivariate_normal.rvs(*args, **kwargs)

    def __repr__(self) -> str:
        return "gt.scipy.stats.multivariate_normal"

    def logpdf(self, x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False
               ) -> Any:
        dim, mean, cov = _parameters(mean, cov)
        dev = _points(x, dim) - mean
        if allow_singular:
            out = _logpdf_singular(dev, cov)
        else:
            out = _logpdf_nonsingular(dev, cov, dim)
        return _squeezed(out)

    def pdf(self, x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False
            ) -> Any:
        return _ew.exp(self.logpdf(x, mean, cov, allow_singular))

    def entropy(self, mean: Any = None, cov: Any = 1) -> Any:
        """The differential entropy; like SciPy, a singular ``cov`` is allowed (its
        rank and pseudo-determinant are used)."""
        _, _, cov = _parameters(mean, cov)
        _, logpdet, rank, _ = psd_pseudo(cov)
        return 0.5 * (rank * (_LOG_2PI + 1.0) + logpdet)


multivariate_normal = _MultivariateNormal()
