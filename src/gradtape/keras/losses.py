"""``gt.keras.losses``: Keras's loss functions and loss classes, as training loops with a
tape use them (``loss = tf.keras.losses.MeanSquaredError()(y, model(x))``).

The functions return one loss per sample (the mean over the last axis, as Keras's); the
classes reduce them (``"sum_over_batch_size"``, the default: the mean over every sample,
after ``sample_weight``). Probabilities are clipped to ``[1e-7, 1 - 1e-7]`` before the log,
as Keras does, so a confident wrong prediction gives a large finite loss, not ``inf``.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..api.creation import size
from ..core.tensor import Tensor, convert_to_tensor
from ..ops import nn

__all__ = [
    "BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MeanAbsoluteError",
    "MeanSquaredError", "SparseCategoricalCrossentropy", "MAE", "MSE", "mae", "mse",
    "binary_crossentropy", "categorical_crossentropy", "mean_absolute_error",
    "mean_squared_error", "sparse_categorical_crossentropy",
]

EPSILON = 1e-7  # Keras's backend epsilon
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)


def _pair(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    """``y_pred`` as a float tensor, ``y_true`` cast to its dtype (Keras casts)."""
    y_pred = convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, "float32")
    return ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred


def _tensors(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    return convert_to_tensor(y_true), convert_to_tensor(y_pred)


def _matched_pair(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    """``_pair``, ranks matched as Keras's regression losses match them."""
    return squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))


def mean_squared_error(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(square(y_pred - y_true), axis=-1)``: one loss per sample."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    return ops.reduce_mean(ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(abs(y_pred - y_true), axis=-1)``: one loss per sample."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    return ops.reduce_mean(ops.abs(y_pred - y_true), axis=-1)


def _clipped(p: Tensor) -> Tensor:
    return ops.clip_by_value(p, EPSILON, 1.0 - EPSILON)


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Tensor:
    """The mean binary cross-entropy over ``axis``; ``y_pred`` probabilities (clipped)
    or, with ``from_logits``, logits."""
    y_true, y_pred = _pair(y_true, y_pred)
    _same_shape(y_true, y_pred, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        per_entry = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = _clipped(y_pred)
        per_entry = -(y_true * ops.log(p) + (1.0 - y_true) * ops.log(1.0 - p))
    return ops.reduce_mean(per_entry, axis=axis)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Tensor:
    """Cross-entropy of one-hot (or soft) labels; ``y_pred`` probabilities (scaled to sum
    to 1, then clipped) or, with ``from_logits``, logits."""
    y_true, y_pred = _pair(y_true, y_pred)
    _same_shape(y_true, y_pred, "categorical_crossentropy")
    if label_smoothing:
        classes = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    p = _clipped(y_pred / ops.reduce_sum(y_pred, axis=axis, keepdims=True))
    return -ops.reduce_sum(y_true * ops.log(p), axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    axis: int = -1) -> Tensor:
    """Cross-entropy of integer class labels; ``y_pred`` as in
    ``categorical_crossentropy``."""
    y_pred = convert_to_tensor(y_pred)
    labels = ops.cast(convert_to_tensor(y_true), "int64")
    if labels.ndim == y_pred.ndim:  # labels of shape (batch, 1), as Keras allows
        labels = ops.squeeze(labels, axis=-1)
    if from_logits and axis in (-1, y_pred.ndim - 1):
        return nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=y_pred)
    one_hot = ops.one_hot(labels, y_pred.shape[axis], dtype=y_pred.dtype, axis=axis)
    return categorical_crossentropy(one_hot, y_pred, from_logits=from_logits, axis=axis)


def squeeze_or_expand_to_same_rank(x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    """Keras's rule for two tensors whose ranks differ by one and the longer one ends in
    a 1: that 1 is squeezed, or the other (of rank 1) gets one. Labels ``(batch,)``
    against predictions ``(batch, 1)`` then pair sample by sample, where a plain
    elementwise op would broadcast them to ``(batch, batch)``."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1:
            return x1, ops.expand_dims(x2, -1)
        return ops.squeeze(x1, axis=-1), x2
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1:
            return ops.expand_dims(x1, -1), x2
        return x1, ops.squeeze(x2, axis=-1)
    return x1, x2


def weighted(losses: Tensor, sample_weight: Any) -> Tensor:
    """``losses * sample_weight``, their ranks matched as Keras matches them."""
    weight = ops.cast(convert_to_tensor(sample_weight), losses.dtype)
    losses, weight = squeeze_or_expand_to_same_rank(losses, weight)
    return losses * weight


def _same_shape(y_true: Tensor, y_pred: Tensor, what: str) -> None:
    """Keras's check of the cross-entropies called directly (a ``Loss`` object matches
    the ranks first)."""
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise ValueError(f"Arguments `target` and `output` of {what} must have the same "
                         f"shape. Received: target.shape={tuple(y_true.shape)}, "
                         f"output.shape={tuple(y_pred.shape)}; reshape the labels to the "
                         "predictions' shape, or call the loss class, which matches "
                         "their ranks.")


class Loss:
    """Keras's loss class: ``loss(y_true, y_pred, sample_weight=None)`` reduces the
    per-sample losses of ``fn`` by ``reduction``."""

    def __init__(self, fn: Any, reduction: str | None = "sum_over_batch_size",
                 name: str | None = None, **options: Any):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid reduction {reduction!r}: expected one of "
                             f"{', '.join(map(repr, _REDUCTIONS))}.")
        self.fn = fn
        self.reduction = reduction
        self.name = name or fn.__name__
        self.options = options

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Tensor:
        y_true, y_pred = squeeze_or_expand_to_same_rank(*_tensors(y_true, y_pred))
        losses = convert_to_tensor(self.fn(y_true, y_pred, **self.options))
        if sample_weight is not None:
            losses = weighted(losses, sample_weight)
        if self.reduction in ("none", None):
            return losses
        total = ops.reduce_sum(losses)
        if self.reduction == "sum":
            return total
        return total / ops.cast(size(losses), losses.dtype)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "reduction": self.reduction, **self.options}


class MeanSquaredError(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str = "mean_squared_error"):
        super().__init__(mean_squared_error, reduction, name)


class MeanAbsoluteError(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str = "mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction, name)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: str | None = "sum_over_batch_size",
                 name: str = "binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: str | None = "sum_over_batch_size",
                 name: str = "categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, axis: int = -1,
                 reduction: str | None = "sum_over_batch_size",
                 name: str = "sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction, name,
                         from_logits=from_logits, axis=axis)


# Keras's short names.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
