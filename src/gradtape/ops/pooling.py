"""Window pooling: the primitives behind ``gt.nn.max_pool*``, ``avg_pool*`` and ``pool``
(their TF signatures are in ``ops/pooling_tf.py``).

Every primitive pools over the spatial ``axes`` of its input with per-axis ``window``,
``strides``, ``dilations`` and ``pads`` (``(before, after)``); the other axes (batch,
channels) are independent, so the batching rule shifts ``axes`` by one and Dask runs
them chunk-wise along the batch (``ops/backends/windows.py``).

- ``max_pool``: the window maximum, padding never chosen (NumPy's ``-inf``, TF's rule).
  Its rules go through ``pool_argmax``, the position of each window's first maximum in
  TF's scan order (row-major over the window, as ``MaxPoolGrad`` routes a tie): the JVP
  gathers the tangent there (``window_gather``), the VJP scatter-adds the cotangent there
  (``window_scatter``), and those two are each other's transpose, so every order closes.
- ``avg_pool``: the window sum over the number of valid (non-padded) elements (TF's
  ``SAME``); linear, its VJP ``avg_pool_transpose`` spreads each cotangent over its
  window, and that one's VJP is ``avg_pool`` again.

The implementations loop over the window's taps, one strided slice each (``kh * kw``
whole-array passes): for the CNN's ``MaxPool(2)`` that beat a reshape's ``max`` over
the window axes by 10x and ``sliding_window_view`` likewise (docs/performance.md).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from ..ir.nodes import Aval
from . import shape as _shape
from .registry import Primitive, bind, per_primitive

__all__: list[str] = []


# --- window arithmetic --------------------------------------------------------------------

def output_size(n: int, k: int, s: int, d: int, lo: int, hi: int) -> int:
    """Windows of ``k`` taps ``d`` apart, every ``s``, over ``n`` padded by ``lo``/``hi``."""
    return (n + lo + hi - (k - 1) * d - 1) // s + 1


def _out_shape(shape, axes, window, strides, dilations, pads):
    out = list(shape)
    for a, k, s, d, (lo, hi) in zip(axes, window, strides, dilations, pads):
        out[a] = output_size(shape[a], k, s, d, lo, hi)
    return tuple(out)


def _offsets(window):
    """The window's taps in TF's scan order: row-major, the last axis fastest."""
    return list(itertools.product(*(range(k) for k in window)))


def _tap_slices(ndim, axes, offset, strides, dilations, out_shape):
    """The slice of the padded input that tap ``offset`` reads for every output."""
    index = [slice(None)] * ndim
    for a, i, s, d in zip(axes, offset, strides, dilations):
        start = i * d
        index[a] = slice(start, start + (out_shape[a] - 1) * s + 1, s)
    return tuple(index)


def _padded(x, axes, pads, fill):
    if not any(lo or hi for lo, hi in pads):
        return x
    width = [(0, 0)] * x.ndim
    for a, p in zip(axes, pads):
        width[a] = tuple(p)
    return np.pad(x, width, constant_values=fill)


def _unpadded(x, axes, pads):
    index = [slice(None)] * x.ndim
    for a, (lo, hi) in zip(axes, pads):
        index[a] = slice(lo, x.shape[a] - hi)
    return x[tuple(index)]


def _lowest(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf
    return np.iinfo(dtype).min if dtype.kind in "iu" else False


def _disjoint(window, strides, dilations):
    """Whether no two windows share an input element (stride >= the window's extent)."""
    return all(s >= (k - 1) * d + 1 for k, s, d in zip(window, strides, dilations))


def _finite(a):
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def _masked(values, mask, finite):
    """``values`` where ``mask``, 0 elsewhere: a product (4x faster than ``np.where``)
    unless an inf or NaN would leak into the zeros (inf * 0 is NaN)."""
    if finite:
        return values * mask
    return np.where(mask, values, values.dtype.type(0))


def _windows(x, axes, window, strides, dilations, pads, fill):
    """(padded input, output shape, the taps' slices) for a loop over the taps."""
    xp = _padded(x, axes, pads, fill)
    out_shape = _out_shape(x.shape, axes, window, strides, dilations, pads)
    slices = [_tap_slices(x.ndim, axes, o, strides, dilations, out_shape)
              for o in _offsets(window)]
    return xp, out_shape, slices


# --- max pooling ----------------------------------------------------------------------------

def _max_pool_impl(x, axes, window, strides, dilations, pads):
    x = np.asarray(x)
    xp, _, slices = _windows(x, axes, window, strides, dilations, pads, _lowest(x.dtype))
    out = xp[slices[0]].copy()
    for sl in slices[1:]:
        np.maximum(out, xp[sl], out=out)
    return out


def _padding_mask(shape, axes, pads):
    """True on the padding of a ``shape`` array padded by ``pads``, over the spatial
    axes only (size 1 on the others), or ``None`` without padding."""
    if not any(lo or hi for lo, hi in pads):
        return None
    mask = np.zeros((1,) * len(shape), bool)
    for a, (lo, hi) in zip(axes, pads):
        along = np.zeros(shape[a] + lo + hi, bool)
        along[:lo] = True
        along[along.size - hi:] = True
        view = [1] * len(shape)
        view[a] = along.size
        mask = mask | along.reshape(view)
    return mask


def _pool_argmax_impl(x, y, axes, window, strides, dilations, pads):
    """The tap (row-major over the window) of each window's first maximum ``y``: the
    count of taps before it that are not the maximum (TF's kernel keeps the first of a
    tie). Counting is one compare and one add a tap; masked writes were 10x slower.
    Padding never counts as the maximum, even where the window's maximum is the
    padding's value (a window of -inf, an integer dtype's minimum)."""
    x = np.asarray(x)
    xp, _, slices = _windows(x, axes, window, strides, dilations, pads, _lowest(x.dtype))
    padding = _padding_mask(x.shape, axes, pads)

    def differs(sl):
        found = xp[sl] != y
        return found if padding is None else found | padding[sl]

    searching = differs(slices[0])
    taps = searching.astype(np.int32)
    for sl in slices[1:-1]:
        searching &= differs(sl)
        taps += searching
    return taps


def _window_gather_impl(t, taps, axes, window, strides, dilations, pads):
    """``t`` at each window's chosen tap: the output-shaped values."""
    t = np.asarray(t)
    tp, _, slices = _windows(t, axes, window, strides, dilations, pads, 0)
    finite = _finite(t)
    out = _masked(tp[slices[0]], taps == 0, finite)
    for k, sl in enumerate(slices[1:], 1):
        out += _masked(tp[sl], taps == k, finite)
    return out


def _padded_zeros(in_shape, axes, pads, dtype):
    padded_shape = list(in_shape)
    for a, (lo, hi) in zip(axes, pads):
        padded_shape[a] += lo + hi
    return np.zeros(padded_shape, dtype)


def _window_scatter_impl(g, taps, axes, window, strides, dilations, pads, in_shape):
    """Each output's ``g`` added at its window's chosen tap of an ``in_shape`` array;
    disjoint windows write their taps' slices directly."""
    g = np.asarray(g)
    out = _padded_zeros(in_shape, axes, pads, g.dtype)
    finite, disjoint = _finite(g), _disjoint(window, strides, dilations)
    for k, offset in enumerate(_offsets(window)):
        sl = _tap_slices(len(in_shape), axes, offset, strides, dilations, g.shape)
        if disjoint and finite:
            np.multiply(g, taps == k, out=out[sl])
        else:
            out[sl] += _masked(g, taps == k, finite)
    return _unpadded(out, axes, pads)


def _window_shape_rule(x, *rest, axes, window, strides, dilations, pads):
    return Aval(_out_shape(tuple(x.shape), axes, window, strides, dilations, pads), x.dtype)


def _batched_params(params, size):
    """The params of the same primitive with a batch axis of ``size`` in front."""
    out = dict(params, axes=tuple(a + 1 for a in params["axes"]))
    if "in_shape" in params:
        out["in_shape"] = (size,) + tuple(params["in_shape"])
    return out


def shifted_axes_batch(prim):
    """The batching rule of a one-input primitive over ``axes`` (an ``in_shape`` gets
    the batch size in front): the same primitive, every axis one further."""
    def rule(size, args, batched, **params):
        return bind(prim, args[0], **_batched_params(params, size))
    return rule


def _with_batch_axis(value, is_batched, size):
    if is_batched:
        return value
    return _shape.broadcast_to(_shape.expand_dims(value, 0), (size,) + tuple(value.shape))


def _two_input_batch(prim):
    """As ``shifted_axes_batch``, an unbatched input broadcast along the batch."""
    def rule(size, args, batched, **params):
        values = [_with_batch_axis(a, f, size) for a, f in zip(args, batched)]
        return bind(prim, *values, **_batched_params(params, size))
    return rule


def _max_pool_vjp(g, y, x, **params):
    taps = bind(pool_argmax_p, x, y, **params)
    return (bind(window_scatter_p, g, taps, **params, in_shape=tuple(x.shape)),)


def _max_pool_jvp(ts, y, x, **params):
    return bind(window_gather_p, ts[0], bind(pool_argmax_p, x, y, **params), **params)


max_pool_p = Primitive(
    "max_pool", _max_pool_impl, vjp=_max_pool_vjp, jvp=_max_pool_jvp,
    shape_rule=_window_shape_rule, batch=per_primitive(shifted_axes_batch),
    residuals=("in0", "out"),  # where each window's maximum is: the input and the maxima
)

pool_argmax_p = Primitive(
    "pool_argmax", _pool_argmax_impl, differentiable=False,
    shape_rule=lambda x, y, **p: Aval(_window_shape_rule(x, **p).shape, np.dtype(np.int32)),
    batch=per_primitive(_two_input_batch),
)


def _without_in_shape(params):
    return {k: v for k, v in params.items() if k != "in_shape"}


window_gather_p = Primitive(
    "window_gather", _window_gather_impl,
    vjp=lambda g, y, t, taps, **p: (
        bind(window_scatter_p, g, taps, **p, in_shape=tuple(t.shape)), None),
    jvp=lambda ts, y, t, taps, **p: bind(window_gather_p, ts[0], taps, **p),
    shape_rule=lambda t, taps, **p: Aval(_window_shape_rule(t, **p).shape, t.dtype),
    batch=per_primitive(_two_input_batch),
    residuals=("in1",),  # the taps; of the values, their shape
)

window_scatter_p = Primitive(
    "window_scatter", _window_scatter_impl,
    vjp=lambda g, y, c, taps, **p: (bind(window_gather_p, g, taps, **_without_in_shape(p)),
                                    None),
    jvp=lambda ts, y, c, taps, **p: bind(window_scatter_p, ts[0], taps, **p),
    shape_rule=lambda c, taps, in_shape, **p: Aval(tuple(in_shape), c.dtype),
    batch=per_primitive(_two_input_batch),
    residuals=("in1",),  # the taps
)


# --- average pooling ------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _valid_counts(n, k, s, d, lo, hi):
    """How many of each window's taps fall inside the unpadded axis (TF's SAME divisor)."""
    starts = np.arange(output_size(n, k, s, d, lo, hi)) * s - lo
    taps = starts[:, None] + np.arange(k)[None, :] * d
    return ((taps >= 0) & (taps < n)).sum(axis=1)


def _divisor(shape, axes, window, strides, dilations, pads, dtype):
    """The valid-tap count of every output window, broadcastable against the output."""
    divisor = np.ones((1,) * len(shape), dtype)
    for a, k, s, d, (lo, hi) in zip(axes, window, strides, dilations, pads):
        counts = _valid_counts(shape[a], k, s, d, lo, hi).astype(dtype)
        view = [1] * len(shape)
        view[a] = counts.size
        divisor = divisor * counts.reshape(view)
    return divisor


def _avg_pool_impl(x, axes, window, strides, dilations, pads):
    x = np.asarray(x)
    xp, _, slices = _windows(x, axes, window, strides, dilations, pads, 0)
    out = xp[slices[0]].copy()
    for sl in slices[1:]:
        out += xp[sl]
    out /= _divisor(x.shape, axes, window, strides, dilations, pads, x.dtype)
    return out


def _avg_pool_transpose_impl(g, axes, window, strides, dilations, pads, in_shape):
    """Each output's cotangent over its divisor, added back over its window's taps."""
    g = np.asarray(g)
    share = g / _divisor(in_shape, axes, window, strides, dilations, pads, g.dtype)
    out = _padded_zeros(in_shape, axes, pads, g.dtype)
    disjoint = _disjoint(window, strides, dilations)
    for offset in _offsets(window):
        sl = _tap_slices(len(in_shape), axes, offset, strides, dilations, g.shape)
        if disjoint:
            out[sl] = share
        else:
            out[sl] += share
    return _unpadded(out, axes, pads)


avg_pool_p = Primitive(
    "avg_pool", _avg_pool_impl,
    vjp=lambda g, y, x, **p: (bind(avg_pool_transpose_p, g, **p, in_shape=tuple(x.shape)),),
    jvp=lambda ts, y, x, **p: bind(avg_pool_p, ts[0], **p),
    shape_rule=_window_shape_rule,
    batch=per_primitive(shifted_axes_batch),
    residuals=(),  # linear: the rules read the input's shape only
)

avg_pool_transpose_p = Primitive(
    "avg_pool_transpose", _avg_pool_transpose_impl,
    vjp=lambda g, y, c, **p: (bind(avg_pool_p, g, **_without_in_shape(p)),),
    jvp=lambda ts, y, c, **p: bind(avg_pool_transpose_p, ts[0], **p),
    shape_rule=lambda c, in_shape, **p: Aval(tuple(in_shape), c.dtype),
    batch=per_primitive(shifted_axes_batch),
    residuals=(),  # linear: the rules read nothing of the values
)


def pool(x, kind: str, axes, window, strides, dilations, pads):
    """``max`` or ``avg`` pooling of ``x`` over ``axes`` (all per-axis tuples)."""
    prim = max_pool_p if kind == "max" else avg_pool_p
    return bind(prim, x, axes=tuple(axes), window=tuple(window), strides=tuple(strides),
                dilations=tuple(dilations), pads=tuple(tuple(p) for p in pads))


def argmax_taps(x, pooled, axes, window, strides, dilations, pads):
    """The tap of each window's first maximum ``pooled`` (int32; no gradient)."""
    return bind(pool_argmax_p, x, pooled, axes=tuple(axes), window=tuple(window),
                strides=tuple(strides), dilations=tuple(dilations),
                pads=tuple(tuple(p) for p in pads))

