"""``gt.scipy.special``: SciPy's special functions on tensors, differentiable.

The special functions are gradtape's special-function family
(``gradtape.ops.special``; ``stdtr`` is ``_special_fallback``'s). ``logsumexp``,
``expit``, ``logit``, ``softmax`` and ``log_softmax`` are composites of gradtape ops
and follow SciPy's signatures (``axis=None`` means every axis, as in SciPy).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..ir.nodes import IRValue
from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops import special as _family
from ..ops.registry import operand
from ..ops.shape import stop_gradient
from ..ops.stdtr import stdtr as _stdtr

# The special-function family's functions, under their SciPy names.
_SPECIAL_NAMES = ("gammaln", "digamma", "psi", "polygamma", "erf", "erfc", "ndtr",
                  "log_ndtr", "xlogy", "xlog1py", "betaln", "gammainc", "gammaincc",
                  "betainc")


def as_float(x: Any) -> Any:
    """``x`` as a floating tensor; Python and NumPy values in float64, as SciPy computes
    (not TF's float32 for Python floats)."""
    if not isinstance(x, (Tensor, IRValue)):
        x = np.asarray(x)
        return operand(x if np.issubdtype(x.dtype, np.inexact) else x.astype(np.float64))
    return x if np.issubdtype(x.dtype, np.inexact) else _ew.cast(x, np.float64)


def scipy_typed(function: Callable[..., Any], arrays: tuple[int, ...] | None = None,
                names: tuple[str, ...] = ()) -> Callable[..., Any]:
    """``function`` (an op that converts Python values by TF's rule, float32) taking its
    array arguments as SciPy does: Python numbers, lists and arrays in float64.
    ``arrays``: their positions (None: every positional argument); ``names``: their
    names when passed by keyword."""

    @functools.wraps(function)
    def typed(*args: Any, **kwargs: Any) -> Any:
        args = tuple(as_float(a) if arrays is None or i in arrays else a
                     for i, a in enumerate(args))
        kwargs = {k: as_float(v) if k in names else v for k, v in kwargs.items()}
        return function(*args, **kwargs)

    return typed


gammaln = scipy_typed(_family.gammaln)
digamma = scipy_typed(_family.digamma)
psi = scipy_typed(_family.psi)
polygamma = scipy_typed(_family.polygamma, arrays=(1,), names=("x",))
erf = scipy_typed(_family.erf)
erfc = scipy_typed(_family.erfc)
ndtr = scipy_typed(_family.ndtr)
log_ndtr = scipy_typed(_family.log_ndtr)
xlogy = scipy_typed(_family.xlogy)
xlog1py = scipy_typed(_family.xlog1py)
betaln = scipy_typed(_family.betaln)
gammainc = scipy_typed(_family.gammainc)
gammaincc = scipy_typed(_family.gammaincc)
betainc = scipy_typed(_family.betainc)
stdtr = scipy_typed(_stdtr)  # not in the family: ops/stdtr.py


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    return _reduce.normalize_axes(axis, ndim)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow (SciPy's signature).

    With ``b``, the sum may be negative: ``return_sign=True`` gives ``(log|sum|,
    sign)``, else a negative sum gives NaN (as SciPy)."""
    a = as_float(a)
    axes = _axes(axis, len(a.shape))
    if b is None and not return_sign:
        return _reduce.logsumexp(a, axis=axes, keepdims=keepdims)
    if b is not None:
        b = as_float(b)  # a list or array in float64, as SciPy (not TF's float32)
        a = a + _ew.zeros_like(b) if tuple(b.shape) != tuple(a.shape) else a
        axes = _axes(axis, len(a.shape))
    peak = _reduce.max(a, axis=axes, keepdims=True) if a.shape else a
    peak = stop_gradient(_ew.where(_ew.isfinite(peak), peak, 0.0))  # the result ignores it
    scaled = _ew.exp(a - peak)
    if b is not None:
        scaled = scaled * b
    total = _reduce.sum(scaled, axis=axes, keepdims=True)
    if return_sign:
        sign = _ew.sign(total)
        out = _ew.log(_ew.abs(total)) + peak
    else:
        out = _ew.log(total) + peak
    if not keepdims:
        kept = tuple(d for i, d in enumerate(out.shape) if i not in axes)
        out = _shape.reshape(out, kept)
        if return_sign:
            sign = _shape.reshape(sign, kept)
    return (out, sign) if return_sign else out


def expit(x: Any) -> Any:
    """``1 / (1 + exp(-x))`` (``scipy.special.expit``)."""
    return _ew.sigmoid(as_float(x))


def logit(x: Any) -> Any:
    """``log(x / (1 - x))`` (``scipy.special.logit``)."""
    x = as_float(x)
    return _ew.log(x) - _ew.log1p(-x)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``x - logsumexp(x, axis)`` (``scipy.special.log_softmax``: ``axis=None`` is over
    every element)."""
    x = as_float(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x - logsumexp(x, axis))`` (``scipy.special.softmax``)."""
    return _ew.exp(log_softmax(x, axis))


# Every other function of the family, under its SciPy name (gamma, beta, iv, jv, ...);
# the composites above keep their names (they need no SciPy).
_OTHERS = {name: getattr(_family, name) for name in _family.__all__
           if name not in globals() and not name.startswith("_")}
globals().update(_OTHERS)

__all__ = sorted({*_SPECIAL_NAMES, *_OTHERS, "stdtr", "logsumexp", "expit", "logit",
                  "softmax", "log_softmax"})
