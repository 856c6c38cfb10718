"""Scans and products: ``cumsum``, ``cumprod``, ``prod``, and the primitives their exact
derivatives are built from (``shift`` and ``linear_recurrence``).

Derivatives that are easy to get wrong:

- ``prod`` never divides by the input: the product of the *other* elements comes from an
  exclusive cumulative product from each side (TensorFlow's method), so zeros in the
  input give exact gradients, to any order.
- ``cumprod`` does not divide either: its VJP is a first-order linear recurrence
  (``linear_recurrence``, a primitive whose rules are again recurrences), exact with zeros
  to any order. Its NumPy implementation loops over the scanned axis in Python, which
  only the derivative pays for.

Axes follow ``reduce.py``'s conventions; TF's ``cumsum``, ``cumprod`` and
``reduce_prod`` keep an integer input's dtype, and the scans default to axis 0.
"""

from __future__ import annotations

import builtins

import numpy as np

from . import elementwise as _ew
from . import shape as _shape
from .numpy_dispatch import implements
from .reduce import (
    _aval,
    _axes_up,
    _axis_up,
    _cast_for,
    _keep_integer_dtype,
    _kept,
    _numpy_extras,
    _reduced_size,
    _reduction_shape,
    _same_shape,
    _single_axis,
    normalize_axes,
    sum,
)
from .registry import Primitive, bind, operand, per_primitive, unchanged

__all__ = ["prod", "reduce_prod", "cumsum", "cumprod"]


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
    shape_rule=_same_shape(_shift_impl),
    batch=per_primitive(_axis_up),
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


def _linrec_batch(size, args, batched, axis, reverse):
    a, b = (x if f else _shape.broadcast_to(x, (size,) + tuple(x.shape))
            for x, f in zip(args, batched))
    return bind(linrec_p, a, b, axis=axis + 1, reverse=reverse)


linrec_p = Primitive(
    "linear_recurrence", _linrec_impl, vjp=_linrec_vjp, jvp=_linrec_jvp,
    shape_rule=lambda a, b, axis, reverse: _aval(np.broadcast_shapes(a.shape, b.shape),
                                                 np.result_type(a.dtype, b.dtype)),
    batch=_linrec_batch,
)


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
    shape_rule=_same_shape(_cumsum_impl),
    batch=per_primitive(_axis_up),
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
    shape_rule=_same_shape(_cumprod_impl),
    batch=per_primitive(_axis_up),
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


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None, *, dtype=None):
    """TF's ``tf.cumsum``: cumulative sum along ``axis`` (0 by default; the flattened
    tensor when None, like NumPy), keeping an integer input's dtype. ``exclusive``
    leaves out each element itself, ``reverse`` scans from the end."""
    del name
    return _tf_scan(cumsum_p, x, axis, exclusive, reverse, dtype)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None, *, dtype=None):
    """TF's ``tf.cumprod``: cumulative product along ``axis`` (0 by default, flattened
    when None), with TF's ``exclusive`` and ``reverse``, keeping an integer input's
    dtype. Exact derivatives with zeros in ``x`` (no division by ``x``)."""
    del name
    return _tf_scan(cumprod_p, x, axis, exclusive, reverse, dtype)


def _tf_scan(prim, x, axis, exclusive, reverse, dtype):
    x = _cast_for(x, dtype)
    return _keep_integer_dtype(_scan_op(prim, x, axis, exclusive, reverse, None), x.dtype)


@implements(np.cumsum)
def _np_cumsum(a, axis=None, dtype=None, out=None):
    _numpy_extras("cumsum", out=out)
    return _scan_op(cumsum_p, a, axis, False, False, dtype)


@implements(np.cumprod)
def _np_cumprod(a, axis=None, dtype=None, out=None):
    _numpy_extras("cumprod", out=out)
    return _scan_op(cumprod_p, a, axis, False, False, dtype)


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
    shape_rule=_reduction_shape(_prod_impl),
    batch=per_primitive(_axes_up),
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
    """TF's ``tf.reduce_prod``: :func:`prod`, keeping an integer input's dtype."""
    del name
    x = operand(input_tensor)
    return _keep_integer_dtype(prod(x, axis=axis, keepdims=keepdims), x.dtype)
