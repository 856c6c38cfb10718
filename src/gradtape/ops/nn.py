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

from ..core.errors import InvalidArgumentError
from ..core.tensor import concrete_value
from ..ir.nodes import Aval
from ..ir.primitive import EVERY_INPUT
from . import reduce as _reduce
from . import shape as _shape
from .elementwise import exp
from .elementwise import relu as relu
from .elementwise import sigmoid as sigmoid
from .elementwise import softplus as softplus
from .elementwise import tanh as tanh
from .operands import floating_operand
from .registry import Primitive, bind, operand, per_primitive

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


def _shifted_axis_batch(prim):
    def rule(size, args, batched, axis):
        return bind(prim, args[0], axis=tuple(a + 1 for a in axis))

    return rule


# d softmax: J^T g = y * (g - <g, y>);  d log_softmax: J^T g = g - softmax * sum(g).
softmax_p = Primitive(
    "softmax", _softmax_impl,
    vjp=lambda g, y, x, axis: (y * (g - _sum_keep(g * y, axis)),),
    jvp=lambda ts, y, x, axis: y * (ts[0] - _sum_keep(ts[0] * y, axis)),
    shape_rule=_same_aval, residuals=("out",),
    batch=per_primitive(_shifted_axis_batch),
)
log_softmax_p = Primitive(
    "log_softmax", _log_softmax_impl,
    vjp=lambda g, y, x, axis: (g - exp(y) * _sum_keep(g, axis),),
    jvp=lambda ts, y, x, axis: ts[0] - _sum_keep(exp(y) * ts[0], axis),
    shape_rule=_same_aval, residuals=("out",),
    batch=per_primitive(_shifted_axis_batch),
)


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


one_hot_p = Primitive(  # no vjp: its output is a constant
    "one_hot", _one_hot_impl,
    # Batched indices: the new axis moves one place right (the last axis stays last).
    batch=lambda size, args, batched, depth, on_value, off_value, axis, dtype: bind(
        one_hot_p, args[0], depth=depth, on_value=on_value, off_value=off_value,
        axis=axis if axis == -1 else axis + 1, dtype=dtype),
)


def _scalar(v: Any) -> Any:
    value = concrete_value(v) if hasattr(v, "_value") else v
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


# --- more of tf.nn, as composites (reachable as gt.nn.<name>) ---------------------------

def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1,
                                      name: str | None = None) -> Any:
    """TF's ``tf.nn.softmax_cross_entropy_with_logits``: ``-sum(labels * log_softmax)``
    over ``axis``; differentiable in both labels and logits (as TF 2's)."""
    del name
    logits = operand(logits)
    return -_reduce.sum(labels * log_softmax(logits, axis=axis), axis=axis)


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any,
                                             name: str | None = None) -> Any:
    """TF's ``tf.nn.sparse_softmax_cross_entropy_with_logits``: integer class ``labels``
    of shape ``logits.shape[:-1]``; ``-log_softmax(logits)[..., label]``."""
    del name
    logits = operand(logits)
    labels = operand(labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integers, got {labels.dtype}.")
    if tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"labels shape {tuple(labels.shape)} must equal logits.shape[:-1] = "
                         f"{tuple(logits.shape[:-1])}.")
    # The labels stay a tensor (an input of the ops, not a guard under @gt.function),
    # checked by an op, so a traced train step takes new labels without retracing.
    checked = bind(class_labels_p, labels, depth=int(logits.shape[-1]))
    return bind(sparse_xent_p, logits, checked)


def _sparse_xent_impl(logits, labels):
    """``-log_softmax(logits)[..., label]``: on NumPy arrays the label's entry is picked
    (``log(sum(exp(shifted))) - shifted[label]``, the same roundings as negating the
    log-softmax entry, without the full log-softmax array); on other kinds by a mask
    (Dask has no ``take_along_axis``; the other entries add zeros: the same value)."""
    if logits.__class__ is np.ndarray and labels.__class__ is np.ndarray:
        shifted = logits - np.max(logits, axis=-1, keepdims=True)
        log_total = np.log(np.sum(np.exp(shifted), axis=-1))
        return log_total - np.take_along_axis(shifted, labels[..., None], -1)[..., 0]
    log_probs = _log_softmax_impl(logits, axis=(-1,))
    hot = np.expand_dims(labels, -1) == np.arange(logits.shape[-1])
    return -np.sum(np.where(hot, log_probs, np.zeros_like(log_probs)), axis=-1)


def _minus_one_hot(logits, labels):
    """``softmax(logits) - one_hot(labels)``: the loss's derivative in the logits."""
    hot = one_hot(labels, int(logits.shape[-1]), dtype=logits.dtype)
    return softmax(logits) - hot


def _sparse_xent_batch(size, args, batched, **params):
    """The rows' labels beside the rows' logits; the rule reads the last axis only."""
    from .shape import broadcast_to

    logits, labels = (a if b else broadcast_to(a, (size,) + tuple(a.shape))
                      for a, b in zip(args, batched))
    return bind(sparse_xent_p, logits, labels)


# One primitive, so that its backward reads as the textbook
# ``g * (softmax(logits) - one_hot(labels))`` rather than as a scatter into the
# log-softmax's cotangent. No cotangent for the (integer) labels.
sparse_xent_p = Primitive(
    "sparse_softmax_cross_entropy_with_logits", _sparse_xent_impl,
    vjp=lambda g, y, logits, labels: (
        _shape.expand_dims(g, -1) * _minus_one_hot(logits, labels), None),
    jvp=lambda ts, y, logits, labels: _reduce.sum(
        ts[0] * _minus_one_hot(logits, labels), axis=(-1,)),
    shape_rule=lambda logits, labels: Aval(tuple(labels.shape), logits.dtype),
    batch=_sparse_xent_batch, residuals=("in0", "in1"),  # not the losses
    index_operands=True,  # class indices: NumPy beside another library's logits
)


def _class_labels_impl(labels, depth):
    """``labels`` as they are, if each is a class in ``[0, depth)``; else TF's error."""
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= depth):
        bad = labels[(labels < 0) | (labels >= depth)].flat[0]
        raise InvalidArgumentError(
            f"Received a label value of {bad} which is outside the valid range of "
            f"[0, {depth}); labels range from {labels.min()} to {labels.max()}. Each "
            f"label must be a class index below logits.shape[-1] = {depth}.")
    return labels


# ``class_labels(labels, depth=)``: the range check of sparse cross-entropy's labels, an
# op so that it runs on every call of a traced function. No vjp: labels are integers.
class_labels_p = Primitive(
    "class_labels", _class_labels_impl,
    shape_rule=lambda labels, depth: Aval(tuple(labels.shape), labels.dtype),
    batch=lambda size, args, batched, depth: bind(class_labels_p, args[0], depth=depth),
)


def _sigmoid_xent_impl(logits, labels):
    """TF's stable form ``max(x, 0) - x * z + log(1 + exp(-|x|))``, its branches chosen
    by ``x >= 0`` as TF chooses them."""
    nonneg = logits >= 0
    relu_logits = np.where(nonneg, logits, np.zeros_like(logits))
    neg_abs = np.where(nonneg, -logits, logits)
    return relu_logits - logits * labels + np.log1p(np.exp(neg_abs))


def _sigmoid_xent_vjp(g, y, logits, labels):
    # d/dx = sigmoid(x) - z (also at x = 0, where TF's branch choice gives 1 - z - 1/2),
    # d/dz = -x: the textbook forms, stable for any |x|, and differentiable again.
    return (_shape.unbroadcast(g * (sigmoid(logits) - labels), logits.shape),
            _shape.unbroadcast(-g * logits, labels.shape))


def _sigmoid_xent_jvp(ts, y, logits, labels):
    by_logits = None if ts[0] is None else ts[0] * (sigmoid(logits) - labels)
    by_labels = None if ts[1] is None else -ts[1] * logits
    if by_labels is None or by_logits is None:
        return by_logits if by_labels is None else by_labels
    return by_logits + by_labels


# One primitive, so that its backward reads as the textbook ``(sigmoid(x) - z) * g``
# rather than as the derivative of each branch of the stable form.
sigmoid_xent_p = Primitive(
    "sigmoid_cross_entropy_with_logits", _sigmoid_xent_impl,
    vjp=_sigmoid_xent_vjp, jvp=_sigmoid_xent_jvp, elementwise=True,
    same_dtype=EVERY_INPUT,
)


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                      name: str | None = None) -> Any:
    """TF's ``tf.nn.sigmoid_cross_entropy_with_logits``, in TF's stable form
    ``max(x, 0) - x * z + log(1 + exp(-|x|))``; its derivative in ``x`` is
    ``sigmoid(x) - z`` everywhere, ``x = 0`` included (TF's branch choice)."""
    del name
    from . import elementwise as _ew

    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided: "
                         "sigmoid_cross_entropy_with_logits(labels=z, logits=x).")
    logits, labels = operand(logits), operand(labels)
    if not _compatible_shapes(labels.shape, logits.shape):
        raise ValueError(
            "`logits` and `labels` must have the same shape, received "
            f"({_shape_text(logits.shape)} vs {_shape_text(labels.shape)}); reshape or "
            "broadcast the labels to the logits' shape first.")
    if _ew._prepare:  # NumPy 1's weak Python scalars, as for binary ops
        logits, labels = _ew._prepare(_ew.multiply.primitive, logits, labels)
    return bind(sigmoid_xent_p, logits, labels)


def _compatible_shapes(a: Any, b: Any) -> bool:
    """TF's ``assert_is_compatible_with``: same rank, and equal sizes where both known."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _shape_text(shape: Any) -> str:
    return str(tuple(shape)).replace("None", "?")


def l2_loss(t: Any, name: str | None = None) -> Any:
    """TF's ``tf.nn.l2_loss``: ``sum(t ** 2) / 2``."""
    del name
    t = operand(t)
    return _reduce.sum(t * t) * 0.5


def bias_add(value: Any, bias: Any, data_format: str | None = None,
             name: str | None = None) -> Any:
    """TF's ``tf.nn.bias_add`` (channels last; ``NC...`` puts channels on axis 1)."""
    del name
    value, bias = operand(value), operand(bias)
    if data_format is not None and data_format.startswith("NC"):
        from . import shape as _shape

        bias = _shape.reshape(bias, (-1,) + (1,) * (len(value.shape) - 2))
    return value + bias


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Any:
    """TF's ``tf.nn.leaky_relu``: ``x`` where positive, ``alpha * x`` elsewhere."""
    del name
    from .elementwise import greater, where

    x = operand(features)
    return where(greater(x, 0.0), x, x * alpha)


def relu6(features: Any, name: str | None = None) -> Any:
    """TF's ``tf.nn.relu6``: ``min(max(x, 0), 6)``, with TF's gradient 0 at 0 and at 6."""
    del name
    from .elementwise import maximum, minimum

    # A tie sends maximum's and minimum's gradient to their first operand: the
    # constants come first, so x gets none at the kinks (TF's Relu6Grad). Python ints
    # keep x's dtype, int32 included.
    return minimum(6, maximum(0, operand(features)))


def elu(features: Any, name: str | None = None) -> Any:
    """TF's ``tf.nn.elu``: ``x`` where positive, ``exp(x) - 1`` elsewhere."""
    del name
    from .elementwise import expm1, greater, minimum, where

    x = operand(features)
    # expm1 of min(x, 0): the unused branch never overflows, so its gradient is never nan.
    return where(greater(x, 0.0), x, expm1(minimum(x, 0.0)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features: Any, name: str | None = None) -> Any:
    """TF's ``tf.nn.selu``: ``scale * elu(x, alpha)`` with the self-normalizing constants."""
    del name
    from .elementwise import expm1, greater_equal, minimum, where

    x = operand(features)
    negative = expm1(minimum(x, 0.0)) * _SELU_ALPHA
    # x = 0 takes the linear branch: TF's SeluGrad gives the slope scale there.
    return where(greater_equal(x, 0.0), x, negative) * _SELU_SCALE


def silu(features: Any, beta: float = 1.0, name: str | None = None) -> Any:
    """TF's ``tf.nn.silu`` (``swish``): ``x * sigmoid(beta * x)``."""
    del name
    x = operand(features)
    return x * sigmoid(x * beta if beta != 1.0 else x)


swish = silu


def log_sigmoid(x: Any, name: str | None = None) -> Any:
    """TF's ``tf.math.log_sigmoid``: ``-softplus(-x)``, stable for large ``|x|``."""
    del name
    return -softplus(-operand(x))


# --- moments, gelu, l2_normalize ---------------------------------------------------------

def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
            name: str | None = None) -> tuple[Any, Any]:
    """TF's ``tf.nn.moments``: ``(mean, variance)`` of ``x`` over ``axes`` (the population
    variance). float16 is computed in float32 and cast back, as TF does; ``shift`` is
    unused, as in TF 2."""
    del shift, name
    from .elementwise import cast
    from .shape import reshape

    x = operand(x)
    y = cast(x, np.float32) if x.dtype == np.float16 else x
    axes = _reduce.normalize_axes(axes, len(y.shape))
    mean = _reduce.reduce_mean(y, axes, keepdims=True)
    # TF stops the gradient through this mean: same first derivative, wrong second one.
    deviation = y - mean
    variance = _reduce.reduce_mean(deviation * deviation, axes, keepdims=keepdims)
    if not keepdims:
        mean = reshape(mean, tuple(variance.shape))
    if x.dtype == np.float16:
        mean, variance = cast(mean, np.float16), cast(variance, np.float16)
    return mean, variance


_SQRT_2_OVER_PI = 0.7978845608028654
_ONE_OVER_SQRT_2 = 0.7071067811865476


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Any:
    """TF's ``tf.nn.gelu``: exact by default, ``0.5 x (1 + erf(x / sqrt(2)))`` (erf
    needs no SciPy); ``approximate=True``: the tanh form
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    del name
    x = floating_operand(features, "gelu's features")
    if not approximate:
        from .special import erf

        return 0.5 * x * (1.0 + erf(x * _ONE_OVER_SQRT_2))
    inner = (x + 0.044715 * (x * x * x)) * _SQRT_2_OVER_PI
    return 0.5 * x * (1.0 + tanh(inner))


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12,
                 name: str | None = None) -> Any:
    """TF's ``tf.math.l2_normalize``: ``x / sqrt(max(sum(x ** 2, axis), epsilon))``
    (every axis when ``axis`` is None)."""
    del name
    from .elementwise import maximum, sqrt

    x = operand(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("l2_normalize of complex tensors is not supported; normalize "
                        "gt.real(x) and gt.imag(x) yourself.")
    x = floating_operand(x, "l2_normalize's x")
    square_sum = _reduce.reduce_sum(x * x, axis, keepdims=True)
    # A tie sends maximum's gradient to square_sum, as TF's Maximum grad does.
    return x / sqrt(maximum(square_sum, epsilon))


# --- gt.nn's members (the namespace itself is built in gradtape.api.nn, with dropout) -------

MEMBERS = {
    "bias_add": bias_add, "elu": elu, "gelu": gelu, "l2_loss": l2_loss,
    "l2_normalize": l2_normalize, "leaky_relu": leaky_relu, "log_sigmoid": log_sigmoid,
    "log_softmax": log_softmax, "moments": moments, "one_hot": one_hot, "relu": relu,
    "relu6": relu6, "selu": selu, "sigmoid": sigmoid,
    "sigmoid_cross_entropy_with_logits": sigmoid_cross_entropy_with_logits, "silu": silu,
    "softmax": softmax, "softmax_cross_entropy_with_logits": softmax_cross_entropy_with_logits,
    "softplus": softplus,
    "sparse_softmax_cross_entropy_with_logits": sparse_softmax_cross_entropy_with_logits,
    "swish": swish, "tanh": tanh,
}
