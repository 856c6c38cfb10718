"""``keras.ops``' neural-network functions (Keras 3's ``keras.ops.nn``: activations,
``softmax``, ``one_hot``, the cross-entropies, ``moments``...) on gradtape's ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops as g
from ...api.array_ops import top_k as _top_k
from ...core.tensor import Tensor, convert_to_tensor
from ...ops import nn as tf_nn
from .conv_ops import conv, conv_transpose, depthwise_conv, separable_conv
from .symbolic import keras_op

_EPSILON = 1e-7  # Keras's backend epsilon: probabilities are clipped to [eps, 1 - eps]


def _t(x: Any) -> Tensor:
    return convert_to_tensor(x)


@keras_op
def relu(x: Any) -> Tensor:
    return g.relu(_t(x))


@keras_op
def relu6(x: Any) -> Tensor:
    return tf_nn.relu6(_t(x))


@keras_op
def sigmoid(x: Any) -> Tensor:
    return g.sigmoid(_t(x))


@keras_op
def softplus(x: Any) -> Tensor:
    return g.softplus(_t(x))


@keras_op
def softsign(x: Any) -> Tensor:
    x = _t(x)
    return x / (1 + g.abs(x))


@keras_op
def silu(x: Any) -> Tensor:
    x = _t(x)
    return x * g.sigmoid(x)


swish = silu


@keras_op
def log_sigmoid(x: Any) -> Tensor:
    return -g.softplus(-_t(x))


@keras_op
def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    return tf_nn.leaky_relu(_t(x), alpha=negative_slope)


@keras_op
def hard_sigmoid(x: Any) -> Tensor:
    """Keras 3's: ``relu6(x + 3) / 6``."""
    return tf_nn.relu6(_t(x) + 3.0) / 6.0


@keras_op
def hard_silu(x: Any) -> Tensor:
    x = _t(x)
    return x * (tf_nn.relu6(x + 3.0) / 6.0)


hard_swish = hard_silu


@keras_op
def elu(x: Any, alpha: float = 1.0) -> Tensor:
    x = _t(x)
    return g.where(x > 0, x, alpha * g.expm1(g.minimum(x, 0.0)))


@keras_op
def selu(x: Any) -> Tensor:
    return tf_nn.selu(_t(x))


@keras_op
def gelu(x: Any, approximate: bool = True) -> Tensor:
    """Keras's ``ops.gelu``: the tanh approximation unless ``approximate=False``."""
    return tf_nn.gelu(_t(x), approximate=approximate)


@keras_op
def softmax(x: Any, axis: int = -1) -> Tensor:
    return g.softmax(_t(x), axis=axis)


@keras_op
def log_softmax(x: Any, axis: int = -1) -> Tensor:
    return g.log_softmax(_t(x), axis=axis)


@keras_op
def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None,
            sparse: bool = False) -> Tensor:
    """A ``num_classes`` axis (at ``axis``), 1 at each index; an index outside
    ``[0, num_classes)`` gives zeros."""
    del sparse
    return g.one_hot(g.cast(_t(x), "int64"), num_classes, axis=axis,
                     dtype=dtype or "float32")


@keras_op
def multi_hot(inputs: Any, num_classes: int, axis: int = -1, dtype: Any = None,
              sparse: bool = False) -> Tensor:
    """The one-hot vectors of the last axis' indices, combined (a 1 where any is)."""
    encoded = one_hot(inputs, num_classes, axis=axis, dtype=dtype, sparse=sparse)
    reduce_axis = -2 if axis == -1 else axis + 1 if axis >= 0 else axis - 1
    return g.max(encoded, axis=reduce_axis) if _t(inputs).ndim > 1 else \
        g.max(encoded, axis=0)


def _probabilities(output: Tensor) -> Tensor:
    return g.clip(output, _EPSILON, 1.0 - _EPSILON)


@keras_op
def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Tensor:
    """Elementwise ``-(t log(p) + (1 - t) log(1 - p))`` (no mean: that is the loss's);
    probabilities clipped to ``[1e-7, 1 - 1e-7]`` as Keras's."""
    output = _t(output)
    target = g.cast(_t(target), output.dtype)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")
    if from_logits:  # TF's stable op: its gradient is sigmoid(z) - t, at z = 0 too
        return tf_nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    p = _probabilities(output)
    return -(target * g.log(p) + (1.0 - target) * g.log(1.0 - p))


@keras_op
def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                             axis: int = -1) -> Tensor:
    """``-sum(t log p)`` along ``axis``; probabilities are first scaled to sum to one
    and clipped, as Keras's."""
    output = _t(output)
    target = g.cast(_t(target), output.dtype)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")
    if from_logits:
        return -g.sum(target * g.log_softmax(output, axis=axis), axis=axis)
    p = _probabilities(output / g.sum(output, axis=axis, keepdims=True))
    return -g.sum(target * g.log(p), axis=axis)


@keras_op
def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                                    axis: int = -1) -> Tensor:
    """``categorical_crossentropy`` of the one-hot ``target`` (integer classes; a
    trailing axis of size 1 is dropped)."""
    output = _t(output)
    target = _t(target)
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = g.squeeze(target, axis=-1)
    encoded = g.one_hot(g.cast(target, "int64"), output.shape[axis], axis=axis,
                        dtype=output.dtype)
    return categorical_crossentropy(encoded, output, from_logits=from_logits, axis=axis)


@keras_op
def moments(x: Any, axes: Any, keepdims: bool = False,
            synchronized: bool = False) -> tuple[Tensor, Tensor]:
    """The mean and (biased) variance over ``axes``."""
    del synchronized
    x = _t(x)
    axes = tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)
    mean = g.mean(x, axis=axes, keepdims=True)
    variance = g.mean(g.square(x - mean), axis=axes, keepdims=True)
    if not keepdims:
        mean, variance = g.squeeze(mean, axis=axes), g.squeeze(variance, axis=axes)
    return mean, variance


@keras_op
def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: float | None = None) -> Tensor:
    """``x`` divided by its ``order``-norm along ``axis`` (at least ``epsilon``)."""
    x = _t(x)
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / g.maximum(norm, 1e-12 if epsilon is None else epsilon)


@keras_op
def top_k(x: Any, k: int, sorted: bool = True) -> tuple[Tensor, Tensor]:
    """The ``k`` largest entries of the last axis and their (int32) indices."""
    found = _top_k(_t(x), k=k, sorted=sorted)
    return found.values, g.cast(found.indices, "int32")


@keras_op
def in_top_k(targets: Any, predictions: Any, k: int) -> Tensor:
    """Whether each target class is among the ``k`` largest predictions."""
    predictions = _t(predictions)
    targets = g.cast(_t(targets), "int64")
    picked = g.take_along_axis(predictions, g.expand_dims(targets, -1), axis=-1)
    larger = g.sum(g.cast(predictions > picked, "int32"), axis=-1)
    return larger < k


__all__ = ["binary_crossentropy", "categorical_crossentropy", "elu", "gelu",
           # Keras 3's convolutions (conv_ops.py)
           "conv", "conv_transpose", "depthwise_conv", "separable_conv",
           "hard_sigmoid", "hard_silu", "hard_swish", "in_top_k", "leaky_relu",
           "log_sigmoid", "log_softmax", "moments", "multi_hot", "normalize", "one_hot",
           "relu", "relu6", "selu", "sigmoid", "silu", "softmax", "softplus",
           "softsign", "sparse_categorical_crossentropy", "swish", "top_k"]
