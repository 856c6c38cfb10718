"""Neural-network ops (TF's ``tf.nn``): softmax, log_softmax, one_hot, and activations.

softmax and log_softmax are primitives with their own rules: the implementation
subtracts the max (stable for logits of any size) and the rules are written in terms of
the output, so every derivative order is stable too. The activations relu, sigmoid,
softplus and tanh live in ``ops.elementwise``; they are re-exported here so that
``gt.nn.relu`` works as ``tf.nn.relu`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import Aval
from . import reduce as _reduce
from .elementwise import exp
from .elementwise import relu as relu
from .elementwise import sigmoid as sigmoid
from .elementwise import softplus as softplus
from .elementwise import tanh as tanh
from .registry import Primitive, bind, operand

__all__ = ["softmax", "log_softmax", "one_hot"]


def _same_aval(x, axis):
    return Aval(tuple(x.shape), x.dtype)


def _softmax_impl(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax_impl(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _sum_keep(v, axis):
    return _reduce.sum(v, axis=axis, keepdims=True)


# d softmax: J^T g = y * (g - <g, y>);  d log_softmax: J^T g = g - softmax * sum(g).
softmax_p = Primitive(
    "softmax", _softmax_impl,
    vjp=lambda g, y, x, axis: (y * (g - _sum_keep(g * y, axis)),),
    jvp=lambda ts, y, x, axis: y * (ts[0] - _sum_keep(ts[0] * y, axis)),
    shape_rule=_same_aval,
)
log_softmax_p = Primitive(
    "log_softmax", _log_softmax_impl,
    vjp=lambda g, y, x, axis: (g - exp(y) * _sum_keep(g, axis),),
    jvp=lambda ts, y, x, axis: ts[0] - _sum_keep(exp(y) * ts[0], axis),
    shape_rule=_same_aval,
)



def _shifted_axis_batch(prim):
    def rule(size, args, batched, axis):
        return bind(prim, args[0], axis=tuple(a + 1 for a in axis))

    return rule


softmax_p.batch = _shifted_axis_batch(softmax_p)
log_softmax_p.batch = _shifted_axis_batch(log_softmax_p)


def _softmax_like(prim: Primitive, logits: Any, axis: Any) -> Any:
    logits = operand(logits)
    if not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(
            f"{prim.name} expects floating-point logits, got {logits.dtype}; cast them first "
            "(gt.cast(logits, 'float32'))."
        )
    axes = _reduce.normalize_axes(axis, len(logits.shape))
    return bind(prim, logits, axis=axes)


def softmax(logits: Any, axis: Any = -1, name: str | None = None) -> Any:
    """``exp(logits) / sum(exp(logits), axis)``, computed stably (TF's ``tf.nn.softmax``)."""
    del name
    return _softmax_like(softmax_p, logits, axis)


def log_softmax(logits: Any, axis: Any = -1, name: str | None = None) -> Any:
    """``logits - logsumexp(logits, axis)``, computed stably (TF's ``tf.nn.log_softmax``)."""
    del name
    return _softmax_like(log_softmax_p, logits, axis)


# --- one_hot -----------------------------------------------------------------------------

def _one_hot_impl(indices, depth, on_value, off_value, axis, dtype):
    indices = np.asarray(indices)
    hot = np.expand_dims(indices, -1) == np.arange(depth)  # out-of-range: all off
    out = np.where(hot, np.asarray(on_value, dtype), np.asarray(off_value, dtype))
    return np.moveaxis(out, -1, axis) if axis != -1 else out


one_hot_p = Primitive("one_hot", _one_hot_impl)  # no vjp: its output is a constant


def _scalar(v: Any) -> Any:
    value = v._value if hasattr(v, "_value") else v
    if np.ndim(value) != 0:
        raise ValueError(f"on_value and off_value must be scalars, got shape {np.shape(value)}.")
    return value


def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None,
            axis: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.one_hot``: ``on_value`` where ``indices == i`` along a new axis of size
    ``depth`` (last by default), ``off_value`` elsewhere; out-of-range indices (negative
    ones too) give all ``off_value``. Float32 unless ``dtype`` or the values say otherwise.
    Not differentiable."""
    del name
    indices = operand(indices)
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"one_hot indices must be integers, got {indices.dtype}.")
    if dtype is None:
        given = [v for v in (on_value, off_value) if v is not None]
        # TF infers the dtype from the values; Python numbers follow TF's rules.
        dtype = operand(given[0]).dtype if given else np.float32
    dtype = np.dtype(dtype)
    on = 1 if on_value is None else _scalar(on_value)
    off = 0 if off_value is None else _scalar(off_value)
    ndim = len(indices.shape) + 1
    axis = -1 if axis is None or axis == -1 else int(axis)
    if axis != -1 and not 0 <= axis < ndim:
        raise ValueError(f"axis {axis} must be -1 or in [0, {ndim}).")
    return bind(one_hot_p, indices, depth=int(depth), on_value=dtype.type(on).item(),
                off_value=dtype.type(off).item(), axis=axis, dtype=dtype.name)
