"""``keras.metrics``: the metric functions ``compile(metrics=[...])`` takes by name.

Each returns one value per sample; ``fit``/``evaluate`` report their mean over the
samples. ``"accuracy"`` picks binary, sparse or categorical accuracy from the loss and
the shapes, as Keras does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops
from ..api.creation import size
from ..core.dtypes import numpy_dtype
from ..core.tensor import Tensor, convert_to_tensor
from . import losses
from .naming import to_snake_case, uniquify
from .variables import Variable

__all__ = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "Mean", "MeanAbsoluteError",
           "MeanMetricWrapper", "MeanSquaredError", "Metric", "SparseCategoricalAccuracy",
           "binary_accuracy", "categorical_accuracy", "get", "mean_absolute_error",
           "mean_squared_error", "sparse_categorical_accuracy"]
__all__ += ["AUC", "Precision", "Recall", "RootMeanSquaredError", "Sum"]


def _float_pair(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    """Labels cast to the predictions' dtype, ranks matched as Keras matches them."""
    y_pred = convert_to_tensor(y_pred)
    y_true = ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return losses.squeeze_or_expand_to_same_rank(y_true, y_pred)


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

def accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """Whether ``y_pred`` equals ``y_true``, entry by entry."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    return ops.cast(ops.equal(y_true, y_pred), y_pred.dtype)


# --- metric objects: running state in variables (so they update inside @gt.function) -------

class Metric:
    """Keras's stateful metric: ``update_state(...)`` accumulates, ``result()`` reads,
    ``reset_state()`` starts over. The state is non-trainable variables."""

    def __init__(self, name: str | None = None, dtype: Any = None):
        # Keras 3's auto_name: its snake case, made unique (`auc`, then `auc_1`).
        self.name = name or uniquify(to_snake_case(type(self).__name__))
        self.dtype = numpy_dtype(dtype or "float32")
        self._variables: list[Variable] = []

    def add_variable(self, shape: Any, initializer: Any = "zeros", dtype: Any = None,
                     name: str | None = None) -> Variable:
        from . import initializers  # keeps the import order simple

        variable = Variable(initializers.get(initializer), shape=shape,
                            dtype=dtype or self.dtype, trainable=False, name=name)
        self._variables.append(variable)
        return variable

    @property
    def variables(self) -> list[Variable]:
        return list(self._variables)

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros(v.shape, v.dtype))

    def reset_states(self) -> None:
        """Keras 2's name of ``reset_state`` (TF's text-generation tutorial calls it;
        Keras 3 dropped it)."""
        self.reset_state()

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement update_state.")

    def result(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement result.")

    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


class Mean(Metric):
    """The (weighted) mean of the values passed to ``update_state``."""

    def __init__(self, name: str = "mean", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values = ops.cast(convert_to_tensor(values), self.dtype)
        if sample_weight is None:
            self.total.assign_add(ops.reduce_sum(values))
            self.count.assign_add(ops.cast(size(values), self.dtype))
            return
        weights = ops.broadcast_to(ops.cast(convert_to_tensor(sample_weight), self.dtype),
                                   values.shape)
        self.total.assign_add(ops.reduce_sum(values * weights))
        self.count.assign_add(ops.reduce_sum(weights))

    def result(self) -> Tensor:
        return ops.where(self.count > 0, self.total / ops.maximum(self.count, 1e-30),
                         ops.zeros_like(self.total))


class Sum(Metric):
    """The (weighted) sum of the values passed to ``update_state``."""

    def __init__(self, name: str = "sum", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values = ops.cast(convert_to_tensor(values), self.dtype)
        if sample_weight is not None:
            values = values * ops.broadcast_to(
                ops.cast(convert_to_tensor(sample_weight), self.dtype), values.shape)
        self.total.assign_add(ops.reduce_sum(values))

    def result(self) -> Tensor:
        return ops.identity(self.total)


class RootMeanSquaredError(Mean):
    """``sqrt(mean((y_pred - y_true)²))`` over every entry seen (weighted)."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _float_pair(y_true, y_pred)
        errors = ops.square(y_pred - y_true)
        if sample_weight is not None:  # one weight per sample, as Keras matches ranks
            weight = ops.cast(convert_to_tensor(sample_weight), errors.dtype)
            errors, weight = losses.squeeze_or_expand_to_same_rank(errors, weight)
            while weight.ndim < errors.ndim:
                weight = ops.expand_dims(weight, -1)
            sample_weight = ops.broadcast_to(weight, errors.shape)
        super().update_state(errors, sample_weight)

    def result(self) -> Tensor:
        return ops.sqrt(super().result())


class MeanMetricWrapper(Mean):
    """The mean over samples of ``fn(y_true, y_pred)``."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, dtype: Any = None,
                 **kwargs: Any):
        super().__init__(name=name, dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def _wrapper(fn: Callable[..., Any], default_name: str, doc: str) -> type:
    def __init__(self: MeanMetricWrapper, name: str = default_name, dtype: Any = None,
                 **kwargs: Any) -> None:
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **kwargs)

    return type(default_name.title().replace("_", ""), (MeanMetricWrapper,),
                {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Accuracy = _wrapper(accuracy, "accuracy", "How often predictions equal the labels.")
BinaryAccuracy = _wrapper(binary_accuracy, "binary_accuracy",
                          "How often ``y_pred > threshold`` matches binary labels.")
CategoricalAccuracy = _wrapper(categorical_accuracy, "categorical_accuracy",
                               "How often the largest prediction is the one-hot label.")
SparseCategoricalAccuracy = _wrapper(sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy",
                                     "How often the largest prediction is the integer label.")
MeanSquaredError = _wrapper(mean_squared_error, "mean_squared_error",
                            "The mean squared error.")
MeanAbsoluteError = _wrapper(mean_absolute_error, "mean_absolute_error",
                             "The mean absolute error.")


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


def _per_sample(identifier: Any, loss: Any) -> tuple[str, Callable[..., Any]]:
    """The name and per-sample function of a metric given by name or function."""
    if identifier in ("accuracy", "acc"):
        per_sample = _accuracy_for(loss)
    elif isinstance(identifier, str) and identifier in _BY_NAME:
        per_sample = _BY_NAME[identifier]
    elif callable(identifier):
        per_sample = identifier
    else:
        raise ValueError(f"Could not interpret metric identifier: {identifier!r}; use "
                         f"'accuracy', one of {sorted(_BY_NAME)}, or a function.")
    name = identifier if isinstance(identifier, str) else to_snake_case(getattr(
        identifier, "__name__", type(identifier).__name__))  # Keras 3's get_object_name
    return name, per_sample


def compiled_metric(identifier: Any, loss: Any = None) -> Metric:
    """What ``compile(metrics=[identifier])`` tracks: a metric object as given, a
    metric class's name (``"auc"``, ``"Precision"``) as a new one, a name or function as
    the running mean of its per-sample values, summed in float64 (``fit`` resets them at
    each epoch)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier in _CLASSES:
        return _CLASSES[identifier](name=identifier)  # Keras 3: the string is its name
    name, per_sample = _per_sample(identifier, loss)
    return MeanMetricWrapper(per_sample, name=name, dtype="float64")


def get(identifier: Any, loss: Any = None) -> tuple[str, Callable[..., float]]:
    """``(name, fn)``: ``fn(y_true, y_pred)`` is the metric's mean over the batch."""
    if isinstance(identifier, str) and identifier in _CLASSES:
        identifier = _CLASSES[identifier](name=identifier)
    if isinstance(identifier, Metric):
        return identifier.name, _metric_object_batch_mean(identifier)
    name, per_sample = _per_sample(identifier, loss)

    def batch_mean(y_true: Any, y_pred: Any) -> float:
        return float(ops.reduce_mean(convert_to_tensor(per_sample(y_true, y_pred))))

    return name, batch_mean


def _metric_object_batch_mean(metric: Metric) -> Callable[..., float]:
    """A metric object's value on one batch (fit averages them over the samples)."""

    def batch_mean(y_true: Any, y_pred: Any) -> float:
        metric.reset_state()
        metric.update_state(y_true, y_pred)
        return float(metric.result())

    return batch_mean


# The confusion-matrix metrics build on Metric above (so they are imported after it).
from .confusion_metrics import AUC, Precision, Recall  # noqa: E402

# Metric classes compile() takes by name: Keras 3's class and snake-case names.
_CLASSES: dict[str, type] = {
    "auc": AUC, "AUC": AUC, "precision": Precision, "Precision": Precision,
    "recall": Recall, "Recall": Recall, "root_mean_squared_error": RootMeanSquaredError,
    "RootMeanSquaredError": RootMeanSquaredError,
}
