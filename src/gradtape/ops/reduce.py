"""Reductions over axes (with keepdims), cumulative sums and products, and their rules.

Every reduction takes ``axis`` as None (all axes), an int or a tuple, negative axes
counted from the end, and ``keepdims``; wrappers normalize ``axis`` to a sorted tuple of
non-negative ints before binding, so equal calls give equal params (and cache keys).

Derivatives that are easy to get wrong:

- ``prod`` never divides by the input: the product of the *other* elements comes from an
  exclusive cumulative product from each side (TensorFlow's method), so zeros in the
  input give exact gradients, to any order.
- ``cumprod`` does not divide either: its VJP is a first-order linear recurrence
  (``linear_recurrence``, a primitive whose rules are again recurrences), exact with zeros
  to any order. Its NumPy implementation loops over the scanned axis in Python, which
  only the derivative pays for.
- ``max``/``min`` split the cotangent evenly among tied maxima, like ``tf.reduce_max``.
- ``std`` at zero spread and ``logsumexp`` of an all ``-inf`` slice have NaN gradients,
  as in JAX and TensorFlow.

``mean``, ``var`` and ``std`` are composites of ``sum``; integer inputs are averaged in
float64, as NumPy does. ``argmax``/``argmin`` are not differentiable and return int64.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..errors import InvalidArgumentError
from . import elementwise as _ew
from . import shape as _shape
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand, unchanged

__all__ = [
    "sum", "reduce_sum", "mean", "reduce_mean", "prod", "reduce_prod",
    "max", "amax", "reduce_max", "min", "amin", "reduce_min",
    "var", "reduce_variance", "std", "reduce_std", "logsumexp", "reduce_logsumexp",
    "cumsum", "cumprod", "argmax", "argmin",
]


# --- axis helpers ----------------------------------------------------------------------

def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise InvalidArgumentError(f"axis {a} is out of bounds for a tensor of rank {ndim}.")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"Repeated axis in {tuple(axis)}.")
    return tuple(sorted(out))


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
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _single_axis(axis, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int here, got {axis!r}.")
    return normalize_axes(int(axis), ndim)[0]


def _as_float(x):
    """Integer and bool inputs are averaged in float64, like NumPy's ``mean``/``var``."""
    return x if np.issubdtype(x.dtype, np.inexact) else _ew.cast(x, np.float64)


def _cast_for(x, dtype):
    x = operand(x)
    return x if dtype is None else _ew.cast(x, dtype)


def _numpy_extras(name: str, **given) -> None:
    """NumPy reduction arguments gradtape does not support: say so instead of ignoring."""
    bad = sorted(k for k, v in given.items() if v is not None and v is not np._NoValue
                 and not (k == "where" and v is True))
    if bad:
        raise TypeError(f"numpy.{name} on tensors does not support {', '.join(bad)}=; "
                        "tensors are immutable and reductions cover whole axes.")


# --- sum -------------------------------------------------------------------------------

# The ufuncs' reduce is what np.sum, np.max and np.prod call, without their Python
# dispatch layer (microseconds per eager op).
def _sum_impl(x, axis, keepdims):
    return np.add.reduce(x, axis=axis, keepdims=keepdims)


sum_p = Primitive(
    "sum", _sum_impl,
    vjp=lambda g, y, x, axis, keepdims: (expand_reduced(g, x.shape, axis, keepdims),),
    jvp=lambda ts, y, x, axis, keepdims: sum(ts[0], axis, keepdims),
)


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    """Sum over ``axis`` (all axes by default); ``dtype`` casts the input first."""
    x = _cast_for(x, dtype)
    axes = normalize_axes(axis, len(x.shape))
    if not axes and not keepdims:
        return unchanged(x)
    return bind(sum_p, x, axis=axes, keepdims=bool(keepdims))


@implements(np.sum)
def _np_sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _numpy_extras("sum", out=out, initial=initial, where=where)
    return sum(a, axis, keepdims, dtype)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`sum`."""
    del name
    return sum(input_tensor, axis=axis, keepdims=keepdims)


# --- mean, var, std (composites of sum) ------------------------------------------------

def mean(x, axis=None, keepdims=False, dtype=None):
    """Arithmetic mean over ``axis``; integer inputs give float64 (NumPy's rule)."""
    x = _as_float(_cast_for(x, dtype))
    axes = normalize_axes(axis, len(x.shape))
    return sum(x, axes, keepdims) / _reduced_size(x.shape, axes)


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
    values of a slice are equal (the square root's derivative at zero)."""
    return _ew.sqrt(var(x, axis, ddof, keepdims, dtype))


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
    """TF's name for :func:`mean` (integer inputs give float64 here, as in NumPy)."""
    del name
    return mean(input_tensor, axis=axis, keepdims=keepdims)


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


def max(x, axis=None, keepdims=False):  # noqa: A001
    """Largest element over ``axis``; tied maxima share the gradient equally."""
    return _reduce(max_p, x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
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
    """TF's name for :func:`max`."""
    del name
    return max(input_tensor, axis=axis, keepdims=keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`min`."""
    del name
    return min(input_tensor, axis=axis, keepdims=keepdims)


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


# --- shift and linear recurrences (the exact derivative of cumprod) --------------------

def _axis_slice(ndim: int, axis: int, sl: slice) -> tuple:
    index = [slice(None)] * ndim
    index[axis] = sl
    return tuple(index)


def _shift_impl(x, axis, offset, fill=0):
    """``out[i] = x[i - offset]`` along ``axis``, ``fill`` where that falls outside."""
    x = np.asarray(x)
    out = np.full_like(x, fill)
    n, nd = x.shape[axis], x.ndim
    k = builtins.min(abs(offset), n)
    if offset > 0:
        out[_axis_slice(nd, axis, slice(k, None))] = x[_axis_slice(nd, axis, slice(0, n - k))]
    else:
        out[_axis_slice(nd, axis, slice(0, n - k))] = x[_axis_slice(nd, axis, slice(k, None))]
    return out


shift_p = Primitive(
    "shift", _shift_impl,
    vjp=lambda g, y, x, axis, offset: (_shift(g, axis, -offset),),
    jvp=lambda ts, y, x, axis, offset: _shift(ts[0], axis, offset),
)


def _shift(x, axis: int, offset: int):
    """``x`` moved ``offset`` places along ``axis`` with zeros shifted in (linear)."""
    return bind(shift_p, x, axis=axis, offset=offset)


def _linrec_impl(a, b, axis, reverse):
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, np.result_type(a, b))
    a_k, b_k, out_k = (np.moveaxis(v, axis, 0) for v in (a, b, out))
    n = out_k.shape[0]
    prev = None
    for k in (range(n - 1, -1, -1) if reverse else range(n)):
        prev = b_k[k] if prev is None else a_k[k] * prev + b_k[k]
        out_k[k] = prev
    return out


def _previous(reverse: bool) -> int:
    """The shift that puts each element's predecessor in scan order at its place."""
    return -1 if reverse else 1


def _linrec_vjp(g, s, a, b, axis, reverse):
    # The adjoint runs the same recurrence the other way, its coefficients moved by one.
    back = _previous(reverse)
    lam = _linrec(_shift(_ew.conj(a), axis, -back), g, axis, not reverse)
    return (lam * _ew.conj(_shift(s, axis, back)), lam)


def _linrec_jvp(ts, s, a, b, axis, reverse):
    ta, tb = ts
    drive = tb
    if ta is not None:
        term = ta * _shift(s, axis, _previous(reverse))
        drive = term if drive is None else drive + term
    return _linrec(a, drive, axis, reverse)


linrec_p = Primitive(
    "linear_recurrence", _linrec_impl, vjp=_linrec_vjp, jvp=_linrec_jvp,
    shape_rule=lambda a, b, axis, reverse: _aval(np.broadcast_shapes(a.shape, b.shape),
                                                 np.result_type(a.dtype, b.dtype)),
)


def _aval(shape, dtype):
    from ..ir.nodes import Aval

    return Aval(tuple(shape), np.dtype(dtype))


def _linrec(a, b, axis: int, reverse: bool):
    """``s[k] = a[k] * s[k-1] + b[k]`` along ``axis`` (``s[k+1]`` when ``reverse``)."""
    return bind(linrec_p, a, b, axis=axis, reverse=reverse)


# --- cumsum and cumprod ----------------------------------------------------------------

def _accumulate(accumulate, fill, x, axis, exclusive, reverse):
    x = np.asarray(x)
    if reverse:
        x = np.flip(x, axis)
    out = accumulate(x, axis=axis)
    if exclusive:
        out = _shift_impl(out, axis, 1, fill)
    return np.flip(out, axis) if reverse else out


def _cumsum_impl(x, axis, exclusive, reverse):
    return _accumulate(np.cumsum, 0, x, axis, exclusive, reverse)


def _cumprod_impl(x, axis, exclusive, reverse):
    return _accumulate(np.cumprod, 1, x, axis, exclusive, reverse)


cumsum_p = Primitive(
    "cumsum", _cumsum_impl,
    vjp=lambda g, y, x, axis, exclusive, reverse: (
        _cumsum(g, axis, exclusive, not reverse),
    ),
    jvp=lambda ts, y, x, axis, exclusive, reverse: _cumsum(ts[0], axis, exclusive, reverse),
)


def _cumprod_vjp(g, y, x, axis, exclusive, reverse):
    # d y[k] / d x[i] = (product of the elements before i) * (those from i+1 to k): the
    # second factor, summed against g, is a reverse linear recurrence. No division.
    xc = _ew.conj(x)
    before = _cumprod(xc, axis, True, reverse)
    ahead = -_previous(reverse)
    drive = _shift(g, axis, ahead) if exclusive else g
    return (before * _linrec(_shift(xc, axis, ahead), drive, axis, not reverse),)


def _cumprod_jvp(ts, y, x, axis, exclusive, reverse):
    before = _cumprod(x, axis, True, reverse)
    inclusive = _linrec(x, before * ts[0], axis, reverse)
    return _shift(inclusive, axis, _previous(reverse)) if exclusive else inclusive


cumprod_p = Primitive(
    "cumprod", _cumprod_impl, vjp=_cumprod_vjp, jvp=_cumprod_jvp,
)


def _cumsum(x, axis, exclusive, reverse):
    return bind(cumsum_p, x, axis=axis, exclusive=exclusive, reverse=reverse)


def _cumprod(x, axis, exclusive, reverse):
    return bind(cumprod_p, x, axis=axis, exclusive=exclusive, reverse=reverse)


def _scan_op(prim, x, axis, exclusive, reverse, dtype):
    x = _cast_for(x, dtype)
    if axis is None:  # NumPy's rule: scan the flattened tensor
        x = _shape.reshape(x, (-1,))
        axis = 0
    axis = _single_axis(axis, len(x.shape))
    return bind(prim, x, axis=axis, exclusive=bool(exclusive), reverse=bool(reverse))


def cumsum(x, axis=None, exclusive=False, reverse=False, dtype=None):
    """Cumulative sum along ``axis`` (the flattened tensor when None, like NumPy).
    ``exclusive`` and ``reverse`` are TF's: leave out each element itself, scan from
    the end."""
    return _scan_op(cumsum_p, x, axis, exclusive, reverse, dtype)


def cumprod(x, axis=None, exclusive=False, reverse=False, dtype=None):
    """Cumulative product along ``axis`` (flattened when None), with TF's ``exclusive``
    and ``reverse``. Exact derivatives with zeros in ``x`` (no division by ``x``)."""
    return _scan_op(cumprod_p, x, axis, exclusive, reverse, dtype)


@implements(np.cumsum)
def _np_cumsum(a, axis=None, dtype=None, out=None):
    _numpy_extras("cumsum", out=out)
    return cumsum(a, axis, dtype=dtype)


@implements(np.cumprod)
def _np_cumprod(a, axis=None, dtype=None, out=None):
    _numpy_extras("cumprod", out=out)
    return cumprod(a, axis, dtype=dtype)


# --- prod ------------------------------------------------------------------------------

def _others_product(x, axes):
    """For each element, the product of the other elements of its reduced slice."""
    nd = len(x.shape)
    if len(axes) == 1:
        (a,) = axes
        return _cumprod(x, a, True, False) * _cumprod(x, a, True, True)
    kept = tuple(i for i in range(nd) if i not in axes)
    perm = kept + tuple(axes)
    moved = _shape.transpose(x, perm)
    flat_shape = tuple(x.shape[i] for i in kept) + (_reduced_size(x.shape, axes),)
    flat = _shape.reshape(moved, flat_shape)
    last = len(flat_shape) - 1
    others = _cumprod(flat, last, True, False) * _cumprod(flat, last, True, True)
    others = _shape.reshape(others, tuple(moved.shape))
    return _shape.transpose(others, tuple(np.argsort(perm).tolist()))


def _prod_impl(x, axis, keepdims):
    return np.multiply.reduce(x, axis=axis, keepdims=keepdims)


prod_p = Primitive(
    "prod", _prod_impl,
    vjp=lambda g, y, x, axis, keepdims: (
        _kept(g, x.shape, axis, keepdims) * _ew.conj(_others_product(x, axis)),
    ),
    jvp=lambda ts, y, x, axis, keepdims: sum(ts[0] * _others_product(x, axis), axis, keepdims),
)


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product over ``axis``; exact gradients when the input holds zeros."""
    x = _cast_for(x, dtype)
    axes = normalize_axes(axis, len(x.shape))
    if not axes and not keepdims:
        return unchanged(x)
    return bind(prod_p, x, axis=axes, keepdims=bool(keepdims))


@implements(np.prod)
def _np_prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _numpy_extras("prod", out=out, initial=initial, where=where)
    return prod(a, axis, keepdims, dtype)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`prod`."""
    del name
    return prod(input_tensor, axis=axis, keepdims=keepdims)


# --- argmax and argmin (not differentiable) --------------------------------------------

def _argmax_impl(x, axis, keepdims):
    return np.asarray(np.argmax(x, axis=axis, keepdims=keepdims), np.int64)


def _argmin_impl(x, axis, keepdims):
    return np.asarray(np.argmin(x, axis=axis, keepdims=keepdims), np.int64)


argmax_p = Primitive("argmax", _argmax_impl)  # no rules: never recorded
argmin_p = Primitive("argmin", _argmin_impl)


def _arg_extremum(prim, x, axis, keepdims):
    x = operand(x)
    if axis is not None:
        axis = _single_axis(axis, len(x.shape))
    return bind(prim, x, axis=axis, keepdims=bool(keepdims))


def argmax(x, axis=None, keepdims=False, output_type=None, name=None):
    """Index (int64) of the largest element along ``axis``; of the flattened tensor when
    ``axis`` is None (NumPy's default; TF's is axis 0). Not differentiable."""
    del name
    out = _arg_extremum(argmax_p, x, axis, keepdims)
    return out if output_type is None else _ew.cast(out, output_type)


def argmin(x, axis=None, keepdims=False, output_type=None, name=None):
    """Index (int64) of the smallest element along ``axis`` (flattened when None)."""
    del name
    out = _arg_extremum(argmin_p, x, axis, keepdims)
    return out if output_type is None else _ew.cast(out, output_type)


@implements(np.argmax)
def _np_argmax(a, axis=None, out=None, *, keepdims=False):
    _numpy_extras("argmax", out=out)
    return argmax(a, axis, keepdims)


@implements(np.argmin)
def _np_argmin(a, axis=None, out=None, *, keepdims=False):
    _numpy_extras("argmin", out=out)
    return argmin(a, axis, keepdims)


# --- shape rules: computed from the shapes, the dtype from a one-element run -------------
# (the default runs the implementation on arrays of ones of the full shape)

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


for _prim in (sum_p, max_p, min_p, prod_p, logsumexp_p, argmax_p, argmin_p):
    _prim.shape_rule = _reduction_shape(_prim.impl)
for _prim in (cumsum_p, cumprod_p, shift_p):
    _prim.shape_rule = _same_shape(_prim.impl)

# --- batching rules: the batch axis is a new leading axis, so axes move up by one ----------

def _axes_up(prim):
    def rule(size, args, batched, axis, **params):
        return bind(prim, args[0], axis=tuple(a + 1 for a in axis), **params)

    return rule


def _axis_up(prim):
    def rule(size, args, batched, axis, **params):
        return bind(prim, args[0], axis=axis + 1, **params)

    return rule


def _linrec_batch(size, args, batched, axis, reverse):
    a, b = (x if f else _shape.broadcast_to(x, (size,) + tuple(x.shape))
            for x, f in zip(args, batched))
    return bind(linrec_p, a, b, axis=axis + 1, reverse=reverse)


def _arg_extremum_batch(prim):
    def rule(size, args, batched, axis, keepdims):
        x = args[0]
        if axis is not None:
            return bind(prim, x, axis=axis + 1, keepdims=keepdims)
        out = bind(prim, _shape.reshape(x, (size, -1)), axis=1, keepdims=False)
        return _shape.reshape(out, (size,) + (1,) * (len(x.shape) - 1)) if keepdims else out

    return rule


for _prim in (sum_p, max_p, min_p, prod_p, logsumexp_p):
    _prim.batch = _axes_up(_prim)
for _prim in (cumsum_p, cumprod_p, shift_p):
    _prim.batch = _axis_up(_prim)
linrec_p.batch = _linrec_batch
argmax_p.batch = _arg_extremum_batch(argmax_p)
argmin_p.batch = _arg_extremum_batch(argmin_p)
del _prim
