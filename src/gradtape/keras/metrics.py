"""``keras.metrics``: the metric functions ``compile(metrics=[...])`` takes by name.

Each returns one value per sample; ``fit``/``evaluate`` report their mean over the
samples. ``"accuracy"`` picks binary, sparse or categorical accuracy from the loss and
the shapes, as Keras does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..core.tensor import Tensor, convert_to_tensor
from . import losses

__all__ = ["binary_accuracy", "categorical_accuracy", "get", "mean_absolute_error",
           "mean_squared_error", "sparse_categorical_accuracy"]


def _float_pair(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    y_pred = convert_to_tensor(y_pred)
    return ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Tensor:
    """Whether ``y_pred > threshold`` matches ``y_true``, averaged over the last axis."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    hits = ops.cast(ops.equal(y_true, ops.cast(y_pred > threshold, y_pred.dtype)),
                    y_pred.dtype)
    return ops.reduce_mean(hits, axis=-1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """Whether the largest prediction is at the one-hot label's index."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    hits = ops.equal(ops.argmax(y_true, axis=-1), ops.argmax(y_pred, axis=-1))
    return ops.cast(hits, y_pred.dtype)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """Whether the largest prediction is at the integer label."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if len(y_true.shape) == len(y_pred.shape):  # labels of shape (batch, 1)
        y_true = ops.squeeze(y_true, axis=-1)
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int64")
    hits = ops.equal(ops.cast(y_true, "int64"), predicted)
    return ops.cast(hits, y_pred.dtype)


mean_squared_error = losses.mean_squared_error
mean_absolute_error = losses.mean_absolute_error

_BY_NAME: dict[str, Callable[..., Any]] = {
    "mse": mean_squared_error, "mean_squared_error": mean_squared_error,
    "mae": mean_absolute_error, "mean_absolute_error": mean_absolute_error,
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
}


def _accuracy_for(loss: Any) -> Callable[..., Any]:
    """Keras's choice for ``"accuracy"``: from the loss, else from the shapes."""
    name = getattr(loss, "__name__", type(loss).__name__).lower()

    def accuracy(y_true: Any, y_pred: Any) -> Tensor:
        y_pred = convert_to_tensor(y_pred)
        y_true = convert_to_tensor(y_true)
        if "binary" in name or y_pred.shape[-1:] == (1,):
            return binary_accuracy(y_true, y_pred)
        if "sparse" in name or len(y_true.shape) < len(y_pred.shape) or \
                (y_true.shape[-1:] == (1,) and y_pred.shape[-1] > 1):
            return sparse_categorical_accuracy(y_true, y_pred)
        return categorical_accuracy(y_true, y_pred)

    return accuracy


def get(identifier: Any, loss: Any = None) -> tuple[str, Callable[..., float]]:
    """``(name, fn)``: ``fn(y_true, y_pred)`` is the metric's mean over the batch."""
    if identifier in ("accuracy", "acc"):
        per_sample = _accuracy_for(loss)
    elif isinstance(identifier, str) and identifier in _BY_NAME:
        per_sample = _BY_NAME[identifier]
    elif callable(identifier):
        per_sample = identifier
    else:
        raise ValueError(f"Could not interpret metric identifier: {identifier!r}; use "
                         f"'accuracy', one of {sorted(_BY_NAME)}, or a function.")
    name = identifier if isinstance(identifier, str) else getattr(
        identifier, "__name__", type(identifier).__name__)

    def batch_mean(y_true: Any, y_pred: Any) -> float:
        return float(ops.reduce_mean(convert_to_tensor(per_sample(y_true, y_pred))))

    return name, batch_mean
