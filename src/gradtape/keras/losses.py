"""``gt.keras.losses``: Keras's loss functions and loss classes, as training loops with a
tape use them (``loss = tf.keras.losses.MeanSquaredError()(y, model(x))``).

The functions return one loss per sample (the mean over the last axis, as Keras's); the
classes reduce them (``"sum_over_batch_size"``, the default: the mean over every sample,
after ``sample_weight``). Probabilities are clipped to ``[1e-7, 1 - 1e-7]`` before the log,
as Keras does, so a confident wrong prediction gives a large finite loss, not ``inf``.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..api.creation import size
from ..api.math import reduce_all
from ..core.tensor import Tensor, convert_to_tensor
from ..ops import nn
from .naming import to_snake_case

__all__ = [
    "BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MeanAbsoluteError",
    "MeanSquaredError", "SparseCategoricalCrossentropy", "MAE", "MSE", "mae", "mse",
    "binary_crossentropy", "categorical_crossentropy", "mean_absolute_error",
    "mean_squared_error", "sparse_categorical_crossentropy",
]
__all__ += [
    "CategoricalHinge", "CosineSimilarity", "Hinge", "Huber", "KLDivergence", "LogCosh",
    "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "Poisson",
    "SquaredHinge", "categorical_hinge", "cosine_similarity", "hinge", "huber",
    "kl_divergence", "log_cosh", "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error", "poisson", "squared_hinge",
    "KLD", "MAPE", "MSLE", "kld", "mape", "msle",
]
__all__ += ["Reduction"]

EPSILON = 1e-7  # Keras's backend epsilon
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "auto")


class Reduction:
    """``tf.keras.losses.Reduction`` of Keras 2 (tf.keras before TF 2.16), which TF's
    tutorials still pass (``Huber(reduction=tf.keras.losses.Reduction.SUM)``): the
    names of the reduction strings Keras 3 takes. ``AUTO`` is the mean over the batch,
    as Keras 2's outside a distribution strategy."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key: {key!r}. Expected keys are "
                             f"{cls.all()!r}.")


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

    def __init__(self, fn: Any = None, reduction: str | None = "sum_over_batch_size",
                 name: str | None = None, dtype: Any = None, **options: Any):
        if isinstance(fn, str):  # Keras 3's Loss(name, reduction, dtype), positionally
            fn, name = None, fn
        if fn is None:  # a subclass that defines call(y_true, y_pred), as in Keras
            if type(self).call is Loss.call:
                raise TypeError(
                    "keras.losses.Loss needs a loss: subclass it and define "
                    "call(y_true, y_pred) (Keras's way), or pass a function of "
                    "(y_true, y_pred) as its first argument.")
            fn = self.call
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid reduction {reduction!r}: expected one of "
                             f"{', '.join(map(repr, _REDUCTIONS))}.")
        self.fn = fn
        # Keras 2's "auto" is the mean over the batch (no distribution strategy here).
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        self.name = name or (to_snake_case(type(self).__name__) if fn == self.call
                             else fn.__name__)
        self.dtype = dtype
        self.options = options

    def call(self, y_true: Any, y_pred: Any) -> Any:
        """The per-sample losses; a subclass defines it (Keras's ``Loss.call``)."""
        raise NotImplementedError

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


# --- Keras 3's regression, probabilistic and hinge losses (keras/src/losses/losses.py) ---


def l2_normalize(x: Tensor, axis: int = -1) -> Tensor:
    """Keras 3's ``normalize(x, axis)``: ``x * min(rsqrt(sum(x²)), 1 / epsilon)``,
    written as ``x / sqrt(max(sum(x²), epsilon²))`` (the same; no division by 0)."""
    square_sum = ops.reduce_sum(ops.square(x), axis=axis, keepdims=True)
    return x / ops.sqrt(ops.maximum(square_sum, EPSILON ** 2))


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Tensor:
    """``0.5 e²`` where ``|e| <= delta``, ``delta |e| - 0.5 delta²`` beyond; mean over the
    last axis (``e = y_pred - y_true``)."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = ops.abs(error)
    quadratic = 0.5 * ops.square(error)
    linear = delta * abs_error - 0.5 * delta ** 2
    return ops.reduce_mean(ops.where(abs_error <= delta, quadratic, linear), axis=-1)


def log_cosh(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(log(cosh(y_pred - y_true)))``, as ``x + softplus(-2x) - log 2`` (no
    overflow for large errors)."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    x = y_pred - y_true
    return ops.reduce_mean(x + ops.softplus(-2.0 * x) - math.log(2.0), axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Tensor:
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to
    ``[1e-7, 1]``."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    y_true = ops.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = ops.clip_by_value(y_pred, EPSILON, 1.0)
    return ops.reduce_sum(y_true * ops.log(y_true / y_pred), axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(y_pred - y_true * log(y_pred + 1e-7))`` over the last axis."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    return ops.reduce_mean(y_pred - y_true * ops.log(y_pred + EPSILON), axis=-1)


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Tensor:
    """The negative cosine similarity along ``axis``: -1 for the same direction, so
    minimizing it aligns the predictions with the labels."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    return -ops.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis),
                           axis=axis)


def categorical_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """``max(neg - pos + 1, 0)``: ``pos = sum(y_true * y_pred)``, ``neg =
    max((1 - y_true) * y_pred)`` over the last axis (one-hot labels)."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    positive = ops.reduce_sum(y_true * y_pred, axis=-1)
    negative = ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(negative - positive + 1.0, ops.zeros_like(positive))


def _hinge_labels(y_true: Tensor) -> Tensor:
    """Keras's rule: labels that are all 0 or 1 become -1 and 1; others are kept."""
    binary = reduce_all(ops.logical_or(ops.equal(y_true, 0.0), ops.equal(y_true, 1.0)))
    return ops.where(binary, 2.0 * y_true - 1.0, y_true)


def _margin(y_true: Any, y_pred: Any) -> Tensor:
    y_true, y_pred = _matched_pair(y_true, y_pred)
    product = _hinge_labels(y_true) * y_pred
    return ops.maximum(1.0 - product, ops.zeros_like(product))


def hinge(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(max(1 - y_true * y_pred, 0))``; labels -1/1 (0/1 are converted)."""
    return ops.reduce_mean(_margin(y_true, y_pred), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """``mean(max(1 - y_true * y_pred, 0)²)``; labels -1/1 (0/1 are converted)."""
    return ops.reduce_mean(ops.square(_margin(y_true, y_pred)), axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Tensor:
    """``mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))²)``."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    first = ops.log(ops.maximum(y_pred, EPSILON) + 1.0)
    second = ops.log(ops.maximum(y_true, EPSILON) + 1.0)
    return ops.reduce_mean(ops.square(first - second), axis=-1)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Tensor:
    """``100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))``."""
    y_true, y_pred = _matched_pair(y_true, y_pred)
    ratio = ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPSILON))
    return 100.0 * ops.reduce_mean(ratio, axis=-1)


class Huber(Loss):
    def __init__(self, delta: float = 1.0, reduction: str | None = "sum_over_batch_size",
                 name: str = "huber_loss"):
        super().__init__(huber, reduction, name, delta=delta)


class LogCosh(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "log_cosh"):
        super().__init__(log_cosh, reduction, name)


class KLDivergence(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "kl_divergence"):
        super().__init__(kl_divergence, reduction, name)


class Poisson(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "poisson"):
        super().__init__(poisson, reduction, name)


class CosineSimilarity(Loss):
    def __init__(self, axis: int = -1, reduction: str | None = "sum_over_batch_size",
                 name: str = "cosine_similarity"):
        super().__init__(cosine_similarity, reduction, name, axis=axis)


class CategoricalHinge(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str = "categorical_hinge"):
        super().__init__(categorical_hinge, reduction, name)


class Hinge(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "hinge"):
        super().__init__(hinge, reduction, name)


class SquaredHinge(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "squared_hinge"):
        super().__init__(squared_hinge, reduction, name)


class MeanSquaredLogarithmicError(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str = "mean_squared_logarithmic_error"):
        super().__init__(mean_squared_logarithmic_error, reduction, name)


class MeanAbsolutePercentageError(Loss):
    def __init__(self, reduction: str | None = "sum_over_batch_size",
                 name: str = "mean_absolute_percentage_error"):
        super().__init__(mean_absolute_percentage_error, reduction, name)


# The string names compile() takes beside the cross-entropies' (Keras 3's names and
# short names).
# (the attribute aliases, as Keras 2's tf.keras.losses had them, follow)
MORE_BY_NAME = {
    "huber": huber, "huber_loss": huber, "log_cosh": log_cosh, "logcosh": log_cosh,
    "kl_divergence": kl_divergence, "kld": kl_divergence, "KLD": kl_divergence,
    "poisson": poisson, "cosine_similarity": cosine_similarity,
    "categorical_hinge": categorical_hinge, "hinge": hinge, "squared_hinge": squared_hinge,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error,
    "mape": mean_absolute_percentage_error, "MAPE": mean_absolute_percentage_error,
}
kld = KLD = kl_divergence
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
