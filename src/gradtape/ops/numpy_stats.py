"""NumPy's order statistics, NaN-aware reductions and ``linspace`` on tensors.

Partitions, medians and quantiles gather by a constant permutation (like ``np.sort``), so
each value's gradient goes to the element it came from; the ``nan*`` reductions zero
the NaNs they ignore. Compositions of existing primitives, as in ``numpy_extra``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.backends import constant_like
from ..core.tensor import Tensor, concrete_value
from ..ir.nodes import Aval
from . import elementwise as _ew
from . import index as _index
from . import reduce as _reduce
from . import scan as _scan
from . import shape as _shape
from . import stacking as _stacking
from .numpy_dispatch import implements
from .numpy_extra import _floating, _is_complex, _no_out, _numpy_array, _slice
from .registry import Primitive, bind, operand
from .sorting import _gather_sorted

__all__: list[str] = []



# --- partition, median and quantiles: gathers by a constant permutation ----------------------

def _argpartition_impl(x, kth, axis):
    return np.argpartition(x, kth, axis=axis)


argpartition_p = Primitive(  # no rules: its output is a constant to tapes, like argsort's
    "argpartition", _argpartition_impl,
    shape_rule=lambda x, kth, axis: Aval(tuple(x.shape), np.dtype(np.intp)),
    batch=lambda size, args, batched, kth, axis: bind(
        argpartition_p, args[0], kth=kth, axis=axis + 1),
)


@implements(np.partition)
def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """NumPy's ``partition``: the ``kth`` elements in their sorted places, smaller ones
    before and larger after. Differentiable like ``sort``: each value's gradient goes
    back to where it came from."""
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    x = operand(a)
    if axis is None:
        x, axis = _shape.ravel(x), 0
    axis = _shape._normalize_axis(int(axis), len(x.shape))
    kth = tuple(int(k) for k in np.ravel(kth))
    order_ = bind(argpartition_p, x, kth=kth, axis=axis)
    return _gather_sorted(x, order_, axis)


def _quantiles(a: Any, q: Any, axis: Any, keepdims: bool, method: str,
               scale: float = 1.0) -> Any:
    """Linear-interpolated quantiles ``q`` (in [0, 1]) of ``a`` along ``axis``: two sorted
    elements mixed by constant weights, so the gradient goes to them as in ``sort``."""
    if method != "linear":
        raise ValueError(f"gradtape supports method='linear' only, got {method!r}.")
    x = _floating(a)
    ndim = len(x.shape)
    q_given = concrete_value(q) if isinstance(q, Tensor) else q
    # The installed NumPy's result dtype (its promotion rules differ between 1.x and 2.x).
    numpy_function = np.quantile if scale == 1.0 else np.percentile
    dtype = numpy_function(np.zeros((1,) * max(ndim, 1), x.dtype), q_given).dtype
    x = _ew.cast(x, dtype)
    q_array = np.asarray(q_given, np.float64) * scale
    if np.any((q_array < 0) | (q_array > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = _reduce.normalize_axes(axis, ndim)
    moved = _shape.moveaxis(x, axes, tuple(range(ndim - len(axes), ndim)))
    rest = tuple(moved.shape[:ndim - len(axes)])
    flat = _shape.reshape(moved, rest + (-1,))
    n = flat.shape[-1]
    ordered = _np_sort_last(flat)
    position = q_array * (n - 1)
    lo = np.floor(position).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    frac = (position - lo).astype(dtype)
    last = len(flat.shape) - 1
    below = _index.take_static(ordered, lo.ravel(), last)
    above = _index.take_static(ordered, hi.ravel(), last)
    mixed = below + (above - below) * constant_like(below, frac.ravel())
    mixed = _shape.reshape(mixed, rest + q_array.shape)
    out = _shape.moveaxis(mixed, tuple(range(len(rest), len(rest) + q_array.ndim)),
                          tuple(range(q_array.ndim))) if q_array.ndim else mixed
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        out = _shape.reshape(out, q_array.shape + kept)
    return out


def _np_sort_last(x: Any) -> Any:
    from .sorting import _np_sort

    return _np_sort(x, axis=-1)


@implements(np.quantile)
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None, scale: float = 1.0) -> Any:
    """NumPy's ``quantile`` (linear method): differentiable like ``sort``. (``scale``:
    ``percentile`` passes its percentages with 0.01.)"""
    del overwrite_input
    _no_out("quantile", out)
    if weights is not None:
        raise TypeError("np.quantile(..., weights=) is not supported on tensors.")
    return _quantiles(a, q, axis, keepdims, interpolation or method, scale)


@implements(np.percentile)
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """NumPy's ``percentile`` (linear method): quantiles of ``q / 100``."""
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation, scale=0.01)


@implements(np.median)
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """NumPy's ``median``: the 0.5 quantile (the mean of the two middle values for an
    even count); its gradient is split between them."""
    result = quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)
    # NumPy 1.x keeps float32 in median but promotes it in quantile(..., 0.5).
    dtype = np.median(np.zeros(1, _floating(a).dtype)).dtype
    return result if result.dtype == dtype else _ew.cast(result, dtype)


@implements(np.interp)
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """NumPy's ``interp`` (linear interpolation in increasing ``xp``): differentiable in
    ``x``, ``xp`` and ``fp``; the interval each ``x`` falls in is a constant."""
    if period is not None:
        raise TypeError("np.interp(..., period=) is not supported on tensors.")
    # NumPy computes in float64 (complex128 for complex fp), whatever the inputs' dtypes.
    fp = _numpy_array(fp)
    x, xp = _numpy_array(x, np.float64), _numpy_array(xp, np.float64)
    fp = _ew.cast(fp, np.complex128 if _is_complex(fp) else np.float64)
    n = xp.shape[0]
    x_values = concrete_value(x) if isinstance(x, Tensor) else x
    xp_values = concrete_value(xp) if isinstance(xp, Tensor) else xp
    if n == 1:
        start = _index.index_axis(fp, 0, 0) + _ew.zeros_like(x)
    else:
        j = np.clip(np.searchsorted(xp_values, x_values, side="right") - 1, 0, n - 2)
        x0, x1 = _index.getitem(xp, j), _index.getitem(xp, j + 1)
        y0, y1 = _index.getitem(fp, j), _index.getitem(fp, j + 1)
        start = y0 + (y1 - y0) * ((x - x0) / (x1 - x0))
    first = _index.index_axis(fp, 0, 0) if left is None else left
    final = _index.index_axis(fp, 0, n - 1) if right is None else right
    below = _ew.less(x, _index.index_axis(xp, 0, 0))
    above = _ew.greater(x, _index.index_axis(xp, 0, n - 1))
    return _ew.where(below, first, _ew.where(above, final, start))


# --- statistics -----------------------------------------------------------------------------

@implements(np.ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range (max - min) along ``axis``."""
    _no_out("ptp", out)
    a = operand(a)
    return _reduce.max(a, axis, keepdims) - _reduce.min(a, axis, keepdims)


@implements(np.average)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted mean along ``axis`` (1-d weights run along a single axis). Differentiable
    in the values and the weights."""
    a = _floating(a)
    if weights is None:
        avg = _reduce.mean(a, axis, keepdims)
        if not returned:
            return avg
        count = np.prod([a.shape[i] for i in _reduce.normalize_axes(axis, len(a.shape))])
        return avg, _ew.zeros_like(avg) + float(count)
    w = _numpy_array(weights)
    if tuple(w.shape) != tuple(a.shape):
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if len(w.shape) != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = _shape._normalize_axis(int(axis), len(a.shape))
        w = _shape.reshape(w, tuple(-1 if i == ax else 1 for i in range(len(a.shape))))
        w = _shape.broadcast_to(w, tuple(a.shape))
    total = _reduce.sum(w, axis, keepdims)
    avg = _reduce.sum(a * w, axis, keepdims) / total
    return (avg, total) if returned else avg


def _without_nans(a: Any, fill: float) -> Any:
    a = _floating(a)
    return _ew.where(_ew.isnan(a), fill, a)


def _nan_count(a: Any, axis: Any, keepdims: bool) -> Any:
    return _reduce.sum(_ew.cast(_ew.logical_not(_ew.isnan(operand(a))), a.dtype), axis,
                       keepdims)


@implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Sum treating NaN as 0 (no gradient reaches the NaN entries)."""
    _no_out("nansum", out)
    if initial is not None or where is not None:
        raise TypeError("np.nansum(..., initial=, where=) is not supported on tensors.")
    return _reduce.sum(_without_nans(a, 0.0), axis, keepdims, dtype)


@implements(np.nanmean)
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = None) -> Any:
    """Mean of the entries that are not NaN."""
    _no_out("nanmean", out)
    a = _floating(a)
    return nansum(a, axis, dtype, keepdims=keepdims) / _nan_count(a, axis, keepdims)


@implements(np.nanvar)
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Any:
    """Variance of the entries that are not NaN (``ddof`` as in NumPy)."""
    _no_out("nanvar", out)
    if correction is not None:
        ddof = correction
    a = _floating(a)
    missing = _ew.isnan(a)
    # Centered with the NaNs zeroed first: a NaN must not reach a product whose
    # gradient is masked later (0 * nan is nan).
    centered = _without_nans(a, 0.0) - nanmean(a, axis, keepdims=True)
    squares = _ew.real(centered * _ew.conj(centered)) if _is_complex(a) else centered * centered
    squares = _ew.where(missing, 0.0, squares)
    return _reduce.sum(squares, axis, keepdims) / (_nan_count(a, axis, keepdims) - ddof)


@implements(np.nanstd)
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Any:
    """Standard deviation of the entries that are not NaN."""
    return _ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, correction=correction))


@implements(np.nanmax)
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Maximum ignoring NaN (NaN where a slice is all NaN)."""
    _no_out("nanmax", out)
    a = _floating(a)
    out_ = _reduce.max(_without_nans(a, -np.inf), axis, keepdims)
    return _all_nan_to_nan(out_, a, axis, keepdims)


@implements(np.nanmin)
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Minimum ignoring NaN (NaN where a slice is all NaN)."""
    _no_out("nanmin", out)
    a = _floating(a)
    out_ = _reduce.min(_without_nans(a, np.inf), axis, keepdims)
    return _all_nan_to_nan(out_, a, axis, keepdims)


def _all_nan_to_nan(result: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    return _ew.where(_ew.equal(_nan_count(a, axis, keepdims), 0), np.nan, result)


@implements(np.nancumsum)
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaN as 0."""
    _no_out("nancumsum", out)
    return _nan_scan(_scan.cumsum, a, 0.0, axis, dtype)


@implements(np.nanprod)
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Product treating NaN as 1."""
    _no_out("nanprod", out)
    return _scan.prod(_without_nans(a, 1.0), axis, keepdims, dtype)


@implements(np.nancumprod)
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaN as 1."""
    _no_out("nancumprod", out)
    return _nan_scan(_scan.cumprod, a, 1.0, axis, dtype)


def _nan_scan(scan: Any, a: Any, fill: float, axis: int | None, dtype: Any) -> Any:
    """``scan`` of ``a`` with its NaNs replaced by ``fill`` (flattened when no axis)."""
    x = _without_nans(a, fill)
    if axis is None:
        x, axis = _shape.ravel(x), 0
    return scan(x, axis, dtype=dtype)


# --- linspace -------------------------------------------------------------------------------

@implements(np.linspace)
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """NumPy's ``linspace``, differentiable in ``start`` and ``stop``: ``start + t (stop -
    start)`` with constant fractions ``t``; the last point is ``stop`` itself when
    ``endpoint`` holds."""
    del device
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _floating(start), _floating(stop)
    delta = stop - start
    divisions = num - 1 if endpoint else num
    fractions = np.arange(num, dtype=np.float64) / divisions if divisions > 0 \
        else np.zeros(num)
    fractions = fractions.reshape((num,) + (1,) * len(delta.shape)).astype(delta.dtype)
    points = start + fractions * delta
    if endpoint and num > 1:  # exactly ``stop`` at the end, as NumPy makes it
        points = _stacking.concatenate(
            [_slice(points, 0, None, -1), _shape.expand_dims(stop + _ew.zeros_like(delta), 0)])
    points = _shape.moveaxis(points, 0, _shape._normalize_axis(int(axis), len(points.shape)))
    if dtype is None:  # the installed NumPy's promotion (1.x and 2.x differ for float32)
        dtype = np.linspace(np.zeros(start.shape[:0] + (1,) * len(start.shape), start.dtype),
                            np.zeros((1,) * len(stop.shape), stop.dtype), 2).dtype
    if points.dtype != dtype:
        points = _ew.cast(points, dtype)
    if retstep:
        step = delta * (1.0 / divisions) if divisions > 0 else delta * np.nan
        return points, step
    return points
