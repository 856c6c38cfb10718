"""Reductions over axes (with keepdims) and their rules (``prod`` and the cumulative
sums and products are in ``scan.py``: their derivatives are scans).

Every reduction takes ``axis`` as None (all axes), an int or a tuple, negative axes
counted from the end, and ``keepdims``; wrappers normalize ``axis`` to a sorted tuple of
non-negative ints before binding, so equal calls give equal params (and cache keys).

Derivatives that are easy to get wrong:

- ``max``/``min`` split the cotangent evenly among tied maxima, like ``tf.reduce_max``.
- ``std`` at zero spread and ``logsumexp`` of an all ``-inf`` slice have NaN gradients,
  as in JAX and TensorFlow.

``mean``, ``var`` and ``std`` are composites of ``sum``; integer inputs are averaged in
float64, as NumPy does. ``argmax``/``argmin`` are not differentiable and return int64.

TF's names follow TF where its numbers differ from NumPy's (``np.sum(t)`` and the
NumPy-named ``gt.sum`` keep NumPy's): ``reduce_sum``, ``reduce_prod``, ``cumsum`` and
``cumprod`` keep an integer input's dtype, ``reduce_mean`` of integers is their truncated
integer mean, ``reduce_max``/``reduce_min`` of nothing is the dtype's lowest/highest
value (``-inf``/``inf``), and ``argmax``/``argmin``/``cumsum``/``cumprod`` default to
axis 0. Every axis may be given as a tensor, as TF allows.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor, concrete_value
from ..ir.nodes import Aval
from . import elementwise as _ew
from . import shape as _shape
from .numpy_dispatch import implements
from .registry import ArrayShorthand, Primitive, bind, operand, per_primitive, unchanged

__all__ = [
    "sum", "reduce_sum", "mean", "reduce_mean",
    "max", "amax", "reduce_max", "min", "amin", "reduce_min",
    "var", "reduce_variance", "std", "reduce_std", "logsumexp", "reduce_logsumexp",
    "argmax", "argmin",
]


# --- axis helpers ----------------------------------------------------------------------

def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    elif isinstance(axis, (Tensor, np.ndarray)):
        axis = _axis_values(axis)
        if isinstance(axis, int):
            axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise InvalidArgumentError(f"axis {a} is out of bounds for a tensor of rank {ndim}.")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"Repeated axis in {tuple(axis)}.")
    return tuple(sorted(out))


def _axis_values(axis):
    """A tensor or array ``axis`` (TF accepts tensors) as an int or a list of ints."""
    value = np.asarray(concrete_value(axis) if isinstance(axis, Tensor) else axis)
    if value.dtype.kind not in "iu":
        raise TypeError(f"axis must hold integers, got a tensor of dtype {value.dtype.name}; "
                        "pass Python ints or an int32 tensor.")
    return int(value) if value.ndim == 0 else [int(a) for a in value.reshape(-1)]


def keepdims_shape(shape, axes) -> tuple[int, ...]:
    """``shape`` with the reduced ``axes`` kept as size 1."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def expand_reduced(g, x_shape, axes, keepdims):
    """A reduction's cotangent broadcast back to its input's shape."""
    return _shape.broadcast_to(_kept(g, x_shape, axes, keepdims), x_shape)


def _kept(v, x_shape, axes, keepdims):
    """A reduction's result (or cotangent) with the reduced axes as size 1: it broadcasts
    against the input without materializing the input's shape."""
    return v if keepdims else _shape.reshape(v, keepdims_shape(x_shape, axes))


def _reduced_size(shape, axes) -> int:
    # math.prod, not np.prod: a NumPy reduction costs more than the eager op it serves.
    return math.prod([shape[a] for a in axes])


def _single_axis(axis, ndim: int) -> int:
    if isinstance(axis, (Tensor, np.ndarray)):
        axis = _axis_values(axis)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int here, got {axis!r}.")
    return normalize_axes(int(axis), ndim)[0]


def _as_float(x):
    """Integer and bool inputs are averaged in float64, like NumPy's ``mean``/``var``."""
    return x if x.dtype.kind in "fc" else _ew.cast(x, np.float64)  # np.inexact


def _cast_for(x, dtype):
    x = operand(x)
    return x if dtype is None else _ew.cast(x, dtype)


def _keep_integer_dtype(out, dtype: np.dtype):
    """TF's rule for its reductions and scans: an integer input's dtype is the result's
    (NumPy widens int32 to int64). The wider result cast back wraps around exactly
    as TF's int32 arithmetic does."""
    if dtype.kind in "iu" and out.dtype != dtype:
        return _ew.cast(out, dtype)
    return out


def _numpy_extras(name: str, **given) -> None:
    """NumPy reduction arguments gradtape does not support: say so instead of ignoring."""
    bad = sorted(k for k, v in given.items() if v is not None and v is not np._NoValue
                 and not (k == "where" and v is True))
    if bad:
        raise TypeError(f"numpy.{name} on tensors does not support {', '.join(bad)}=; "
                        "tensors are immutable and reductions cover whole axes.")


# --- shape rules: computed from the shapes, the dtype from a one-element run -------------
# (the default runs the implementation on arrays of ones of the full shape)

def _aval(shape, dtype) -> Aval:
    return Aval(tuple(shape), np.dtype(dtype))


def _tiny(x):
    return np.ones((1,) * len(x.shape), x.dtype)


def _reduction_shape(impl):
    def rule(x, axis, keepdims, **params):
        axes = tuple(range(len(x.shape))) if axis is None else (
            (axis,) if isinstance(axis, int) else axis)
        dtype = np.asarray(impl(_tiny(x), axis=axis, keepdims=keepdims, **params)).dtype
        if keepdims:
            return _aval(keepdims_shape(x.shape, axes), dtype)
        return _aval(tuple(d for i, d in enumerate(x.shape) if i not in axes), dtype)

    return rule


def _same_shape(impl):
    def rule(x, **params):
        return _aval(x.shape, np.asarray(impl(_tiny(x), **params)).dtype)

    return rule


# --- batching rules: the batch axis is a new leading axis, so axes move up by one ----------

def _axes_up(prim):
    def rule(size, args, batched, axis, **params):
        return bind(prim, args[0], axis=tuple(a + 1 for a in axis), **params)

    return rule


def _axis_up(prim):
    def rule(size, args, batched, axis, **params):
        return bind(prim, args[0], axis=axis + 1, **params)

    return rule


def _arg_extremum_batch(prim):
    def rule(size, args, batched, axis, keepdims):
        x = args[0]
        if axis is not None:
            return bind(prim, x, axis=axis + 1, keepdims=keepdims)
        out = bind(prim, _shape.reshape(x, (size, -1)), axis=1, keepdims=False)
        return _shape.reshape(out, (size,) + (1,) * (len(x.shape) - 1)) if keepdims else out

    return rule


# --- sum -------------------------------------------------------------------------------

# The ufuncs' reduce is what np.sum, np.max and np.prod call, without their Python
# dispatch layer (microseconds per eager op).
def _sum_impl(x, axis, keepdims):
    return np.add.reduce(x, axis=axis, keepdims=keepdims)


sum_p = Primitive(
    "sum", _sum_impl,
    vjp=lambda g, y, x, axis, keepdims: (expand_reduced(g, x.shape, axis, keepdims),),
    jvp=lambda ts, y, x, axis, keepdims: sum(ts[0], axis, keepdims),
    shape_rule=_reduction_shape(_sum_impl),
    batch=per_primitive(_axes_up),
    template="sum({0}, axis={axis}, keepdims={keepdims})",
    array_template="{0}.sum(axis={axis}, keepdims={keepdims})",
    array_shorthands=(ArrayShorthand(lambda p: p["keepdims"] is False,
                                     "{0}.sum(axis={axis})", frozenset({"keepdims"})),),
    residuals=(),  # the rules read the input's shape only
)


def sum(x, axis=None, keepdims=False, dtype=None):
    """Sum over ``axis`` (all axes by default); ``dtype`` casts the input first."""
    x = _cast_for(x, dtype)
    return _sum_over(x, normalize_axes(axis, len(x.shape)), keepdims)


def _sum_over(x, axes: tuple, keepdims):
    """``sum`` of a tensor over axes already normalized (mean's: not normalized twice)."""
    if not axes and not keepdims:
        return unchanged(x)
    return bind(sum_p, x, axis=axes, keepdims=bool(keepdims))


@implements(np.sum)
def _np_sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _numpy_extras("sum", out=out, initial=initial, where=where)
    return sum(a, axis, keepdims, dtype)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """TF's ``tf.reduce_sum``: :func:`sum`, keeping an integer input's dtype."""
    del name
    x = operand(input_tensor)
    return _keep_integer_dtype(sum(x, axis=axis, keepdims=keepdims), x.dtype)


# --- mean, var, std (composites of sum) ------------------------------------------------

def mean(x, axis=None, keepdims=False, dtype=None):
    """Arithmetic mean over ``axis``; integer inputs give float64 (NumPy's rule)."""
    x = _as_float(_cast_for(x, dtype))
    axes = normalize_axes(axis, len(x.shape))
    return _sum_over(x, axes, keepdims) / _reduced_size(x.shape, axes)


@implements(np.mean)
def _np_mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _numpy_extras("mean", out=out, where=where)
    return mean(a, axis, keepdims, dtype)


def var(x, axis=None, ddof=0, keepdims=False, dtype=None):
    """Variance over ``axis``: ``sum(|x - mean|^2) / (n - ddof)``, as NumPy computes it."""
    x = _as_float(_cast_for(x, dtype))
    axes = normalize_axes(axis, len(x.shape))
    centered = x - mean(x, axes, keepdims=True)
    if np.issubdtype(x.dtype, np.complexfloating):
        squares = _ew.real(centered * _ew.conj(centered))
    else:
        squares = _ew.square(centered)
    return sum(squares, axes, keepdims) / builtins.max(_reduced_size(x.shape, axes) - ddof, 0)


def std(x, axis=None, ddof=0, keepdims=False, dtype=None):
    """Standard deviation: ``sqrt(var(x))``. Its gradient is infinite where all the
    values of a slice are equal (the square root's derivative at zero), except for
    slices of one element, where the deviation is 0 whatever ``x`` is, and so is its
    derivative."""
    x = operand(x)
    variance = var(x, axis, ddof, keepdims, dtype)
    if ddof == 0 and _reduced_size(x.shape, normalize_axes(axis, len(x.shape))) == 1:
        return variance  # 0 with a zero derivative; sqrt's slope at 0 would give 0 * inf
    return _ew.sqrt(variance)


@implements(np.var)
def _np_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
            mean=None, correction=None):
    _numpy_extras("var", out=out, where=where, mean=mean, correction=correction)
    return var(a, axis, ddof, keepdims, dtype)


@implements(np.std)
def _np_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
            mean=None, correction=None):
    _numpy_extras("std", out=out, where=where, mean=mean, correction=correction)
    return std(a, axis, ddof, keepdims, dtype)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """TF's ``tf.reduce_mean``: :func:`mean`, but integers give their dtype's truncated
    mean (``reduce_mean([1, 2])`` is 1), as in TF."""
    del name
    x = operand(input_tensor)
    if x.dtype.kind not in "iu":
        return mean(x, axis=axis, keepdims=keepdims)
    axes = normalize_axes(axis, len(x.shape))
    total = reduce_sum(x, axes, keepdims)
    count = builtins.max(_reduced_size(x.shape, axes), 1)  # an empty mean is 0, no error
    # C's integer division (TF's) rounds towards zero; floor_divide rounds down.
    return _ew.sign(total) * _ew.floor_divide(_ew.abs(total), x.dtype.type(count))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`var` (population variance, ``ddof=0``)."""
    del name
    return var(input_tensor, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`std` (population standard deviation, ``ddof=0``)."""
    del name
    return std(input_tensor, axis=axis, keepdims=keepdims)


# --- max and min -----------------------------------------------------------------------

def _share_among_ties(x, y, axis, keepdims):
    """1/count where ``x`` equals its slice's extremum ``y``, else 0 (TF's tie rule)."""
    hits = _ew.cast(_ew.equal(x, _kept(y, x.shape, axis, keepdims)), x.dtype)
    return hits / sum(hits, axis, keepdims=True)


def _extremum_primitive(name, impl):
    return Primitive(
        name, impl,
        vjp=lambda g, y, x, axis, keepdims: (
            _kept(g, x.shape, axis, keepdims) * _share_among_ties(x, y, axis, keepdims),
        ),
        jvp=lambda ts, y, x, axis, keepdims: sum(
            ts[0] * _share_among_ties(x, y, axis, keepdims), axis, keepdims
        ),
        shape_rule=_reduction_shape(impl),
        batch=per_primitive(_axes_up),
    )


def _max_impl(x, axis, keepdims):
    return np.maximum.reduce(x, axis=axis, keepdims=keepdims)


def _min_impl(x, axis, keepdims):
    return np.minimum.reduce(x, axis=axis, keepdims=keepdims)


max_p = _extremum_primitive("max", _max_impl)
min_p = _extremum_primitive("min", _min_impl)


def _reduce(prim, x, axis, keepdims):
    x = operand(x)
    axes = normalize_axes(axis, len(x.shape))
    if not axes and not keepdims:
        return unchanged(x)
    return bind(prim, x, axis=axes, keepdims=bool(keepdims))


def max(x, axis=None, keepdims=False):
    """Largest element over ``axis``; tied maxima share the gradient equally."""
    return _reduce(max_p, x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """Smallest element over ``axis``; tied minima share the gradient equally."""
    return _reduce(min_p, x, axis, keepdims)


amax, amin = max, min


@implements(np.max, np.amax)
def _np_max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _numpy_extras("max", out=out, initial=initial, where=where)
    return max(a, axis, keepdims)


@implements(np.min, np.amin)
def _np_min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _numpy_extras("min", out=out, initial=initial, where=where)
    return min(a, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """TF's ``tf.reduce_max``: :func:`max`; the max of nothing is ``-inf`` (an integer
    dtype's smallest value), where NumPy raises."""
    del name
    return _tf_extremum(max_p, input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """TF's ``tf.reduce_min``: :func:`min`; the min of nothing is ``inf`` (an integer
    dtype's largest value), where NumPy raises."""
    del name
    return _tf_extremum(min_p, input_tensor, axis, keepdims)


def _tf_extremum(prim, x, axis, keepdims):
    x = operand(x)
    axes = normalize_axes(axis, len(x.shape))
    if axes and _reduced_size(x.shape, axes) == 0:
        identity = _identity_of(prim, x.dtype)
        if identity is not None:
            return _empty_reduction(x, axes, keepdims, identity)
    return _reduce(prim, x, axes, keepdims)


def _identity_of(prim, dtype: np.dtype):
    """TF's result for an empty max (min): the lowest (highest) value of ``dtype``."""
    if dtype.kind == "f":
        return dtype.type(-np.inf if prim is max_p else np.inf)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if prim is max_p else info.max)
    return None


def _empty_reduction(x, axes, keepdims, identity):
    """``identity`` in the shape of a reduction of ``x`` over empty ``axes``. Built on the
    (zero) sum of ``x``, so the result stays connected to ``x`` on tapes."""
    zeros = _ew.cast(sum(x, axes, keepdims), x.dtype)
    return zeros + identity


# --- logsumexp -------------------------------------------------------------------------

def _logsumexp_impl(x, axis, keepdims):
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0)  # all -inf (or an inf) stays exact
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax_weights(x, y, axis, keepdims):
    return _ew.exp(x - _kept(y, x.shape, axis, keepdims))


logsumexp_p = Primitive(
    "logsumexp", _logsumexp_impl,
    vjp=lambda g, y, x, axis, keepdims: (
        _kept(g, x.shape, axis, keepdims) * _ew.conj(_softmax_weights(x, y, axis, keepdims)),
    ),
    jvp=lambda ts, y, x, axis, keepdims: sum(
        ts[0] * _softmax_weights(x, y, axis, keepdims), axis, keepdims
    ),
    shape_rule=_reduction_shape(_logsumexp_impl),
    batch=per_primitive(_axes_up),
)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow; its gradient is
    the softmax of ``x`` over the reduced axes."""
    x = _as_float(operand(x))
    axes = normalize_axes(axis, len(x.shape))
    if not axes and not keepdims:
        return unchanged(x)
    return bind(logsumexp_p, x, axis=axes, keepdims=bool(keepdims))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`logsumexp`."""
    del name
    return logsumexp(input_tensor, axis=axis, keepdims=keepdims)


# --- argmax and argmin (not differentiable) --------------------------------------------

def _argmax_impl(x, axis, keepdims):
    return np.asarray(np.argmax(x, axis=axis, keepdims=keepdims), np.int64)


def _argmin_impl(x, axis, keepdims):
    return np.asarray(np.argmin(x, axis=axis, keepdims=keepdims), np.int64)


# No derivative rules: never recorded.
argmax_p = Primitive("argmax", _argmax_impl, shape_rule=_reduction_shape(_argmax_impl),
                     batch=per_primitive(_arg_extremum_batch))
argmin_p = Primitive("argmin", _argmin_impl, shape_rule=_reduction_shape(_argmin_impl),
                     batch=per_primitive(_arg_extremum_batch))


def _arg_extremum(prim, x, axis, keepdims):
    """NumPy's argmax/argmin: the flattened tensor when ``axis`` is None."""
    x = operand(x)
    if axis is not None:
        axis = _single_axis(axis, len(x.shape))
    return bind(prim, x, axis=axis, keepdims=bool(keepdims))


def _tf_arg_extremum(prim, x, axis, output_type, keepdims):
    """TF's argmax/argmin: axis 0 when ``axis`` is None, ``output_type`` an int dtype."""
    x = operand(x)
    output_type = np.dtype(output_type)
    if output_type.kind not in "iu":
        raise TypeError(f"{prim.name}'s output_type must be an integer dtype (int32 or "
                        f"int64), got {output_type.name}.")
    if not x.shape:
        raise ValueError(f"{prim.name} needs a tensor of rank >= 1 (it reduces an axis), "
                         "got a scalar.")
    out = _arg_extremum(prim, x, 0 if axis is None else axis, keepdims)
    return out if out.dtype == output_type else _ew.cast(out, output_type)


def argmax(input, axis=None, output_type=np.int64, name=None, *,
           keepdims=False):
    """TF's ``tf.argmax``: index of the largest element along ``axis`` (axis 0 when
    None, as in TF; ``np.argmax(t)`` flattens, as in NumPy). Not differentiable."""
    del name
    return _tf_arg_extremum(argmax_p, input, axis, output_type, keepdims)


def argmin(input, axis=None, output_type=np.int64, name=None, *,
           keepdims=False):
    """TF's ``tf.argmin``: index of the smallest element along ``axis`` (axis 0 when
    None; ``np.argmin(t)`` flattens). Not differentiable."""
    del name
    return _tf_arg_extremum(argmin_p, input, axis, output_type, keepdims)


@implements(np.argmax)
def _np_argmax(a, axis=None, out=None, *, keepdims=False):
    _numpy_extras("argmax", out=out)
    return _arg_extremum(argmax_p, a, axis, keepdims)


@implements(np.argmin)
def _np_argmin(a, axis=None, out=None, *, keepdims=False):
    _numpy_extras("argmin", out=out)
    return _arg_extremum(argmin_p, a, axis, keepdims)


