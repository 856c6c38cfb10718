"""Keras 3's confusion-matrix metrics: ``Precision``, ``Recall`` and ``AUC``, as
keras/src/metrics/confusion_metrics.py and metrics_utils.py compute them.

A prediction counts as positive above a threshold (strictly); a label is positive when
it is nonzero. The counts are sums of sample weights, kept in non-trainable variables
(one entry per threshold), so they update inside ``@gt.function`` as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..api.array_ops import divide_no_nan, top_k
from ..core.tensor import Tensor, constant, convert_to_tensor
from .metrics import Metric

__all__ = ["AUC", "Precision", "Recall"]

EPSILON = 1e-7  # Keras's backend epsilon: the end thresholds of AUC sit this far out
NEG_INF = -1e10  # Keras's stand-in for -inf (the threshold of a top_k metric)


def _filter_top_k(x: Tensor, k: int) -> Tensor:
    """``x`` with all but its ``k`` largest entries on the last axis set to ``NEG_INF``."""
    _, indices = top_k(x, k)
    mask = ops.reduce_sum(ops.one_hot(indices, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * mask + NEG_INF * (1.0 - mask)


def _confusion_counts(y_true: Any, y_pred: Any, thresholds: np.ndarray,
                      sample_weight: Any, top: int | None, class_id: int | None
                      ) -> dict[str, Tensor]:
    """Keras's ``update_confusion_matrix_variables``: the weighted true/false
    positives/negatives of the batch at each threshold."""
    y_pred = ops.cast(convert_to_tensor(y_pred), "float32")
    y_true = convert_to_tensor(y_true)
    if top is not None:
        y_pred = _filter_top_k(y_pred, top)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    y_true = ops.broadcast_to(y_true, y_pred.shape)
    labels = ops.reshape(ops.not_equal(ops.cast(y_true, "float32"), 0.0), (1, -1))
    predictions = ops.reshape(y_pred, (1, -1))
    weights = ops.ones_like(predictions)
    if sample_weight is not None:
        weight = ops.cast(convert_to_tensor(sample_weight), "float32")
        if weight.ndim == y_pred.ndim + 1 and weight.shape[-1] == 1:
            weight = ops.squeeze(weight, -1)
        while 0 < weight.ndim < y_pred.ndim:  # per-sample weights: one per row
            weight = ops.expand_dims(weight, -1)
        weights = ops.reshape(ops.broadcast_to(weight, y_pred.shape), (1, -1))
    above = predictions > constant(thresholds.astype(np.float32).reshape(-1, 1))
    positive = ops.cast(labels, "float32") * weights
    negative = (1.0 - ops.cast(labels, "float32")) * weights
    predicted = ops.cast(above, "float32")
    return {"tp": ops.reduce_sum(predicted * positive, axis=1),
            "fp": ops.reduce_sum(predicted * negative, axis=1),
            "fn": ops.reduce_sum((1.0 - predicted) * positive, axis=1),
            "tn": ops.reduce_sum((1.0 - predicted) * negative, axis=1)}


def _thresholds(thresholds: Any, default: float) -> tuple[np.ndarray, bool]:
    """The thresholds as an array, and whether one was given as a single number."""
    if thresholds is None:
        return np.array([default]), True
    single = np.ndim(thresholds) == 0
    values = np.atleast_1d(np.asarray(thresholds, np.float64))
    if np.any((values < 0) | (values > 1)):
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {thresholds!r}")
    return values, single


class _ConfusionMetric(Metric):
    """Precision and recall: counts at each threshold; the result per threshold (a
    scalar when one threshold was given)."""

    _COUNTS: tuple[str, str] = ("tp", "fp")

    def __init__(self, thresholds: Any = None, top_k: int | None = None,
                 class_id: int | None = None, name: str | None = None, dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        default = 0.5 if top_k is None else NEG_INF
        self.thresholds, self._single = _thresholds(thresholds, default)
        self.top_k, self.class_id = top_k, class_id
        names = {"tp": "true_positives", "fp": "false_positives", "fn": "false_negatives"}
        self._counts = {key: self.add_variable((len(self.thresholds),), name=names[key])
                        for key in self._COUNTS}

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        counts = _confusion_counts(y_true, y_pred, self.thresholds, sample_weight,
                                   self.top_k, self.class_id)
        for key, variable in self._counts.items():
            variable.assign_add(ops.cast(counts[key], variable.dtype))

    def result(self) -> Tensor:
        tp, other = (self._counts[key] for key in self._COUNTS)
        result = divide_no_nan(tp, tp + other)
        return result[0] if self._single else result


class Precision(_ConfusionMetric):
    """``tp / (tp + fp)``: the fraction of predicted positives that are positive."""

    _COUNTS = ("tp", "fp")


class Recall(_ConfusionMetric):
    """``tp / (tp + fn)``: the fraction of positives predicted positive."""

    _COUNTS = ("tp", "fn")


class AUC(Metric):
    """The area under the ROC (or PR) curve, from the confusion counts at
    ``num_thresholds`` thresholds evenly spaced in [0, 1] (the end ones 1e-7 beyond):
    a Riemann sum of ``summation_method`` ("interpolation": trapezoids; for PR, Davis &
    Goadrich's interpolation of precision), as Keras 3. One label per entry
    (``multi_label=False``)."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC",
                 summation_method: str = "interpolation", name: str | None = None,
                 dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None,
                 from_logits: bool = False):
        super().__init__(name=name, dtype=dtype)
        if multi_label or label_weights is not None:
            raise NotImplementedError("AUC(multi_label=True) and label_weights are not "
                                      "supported in gradtape; compute one AUC per label.")
        self.curve = str(curve).upper()
        self.summation_method = str(summation_method).lower()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             '["ROC", "PR"]')
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             'Expected values are ["interpolation", "majoring", '
                             '"minoring"]')
        if thresholds is not None:
            inner = sorted(float(t) for t in np.atleast_1d(thresholds))
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.num_thresholds = num_thresholds
        self.thresholds = np.array([0.0 - EPSILON, *inner, 1.0 + EPSILON])
        self.from_logits, self.multi_label = from_logits, False
        self._counts = {key: self.add_variable((num_thresholds,), name=name_)
                        for key, name_ in (("tp", "true_positives"),
                                           ("fp", "false_positives"),
                                           ("tn", "true_negatives"),
                                           ("fn", "false_negatives"))}

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self.from_logits:
            y_pred = ops.sigmoid(convert_to_tensor(y_pred))
        counts = _confusion_counts(y_true, y_pred, self.thresholds, sample_weight, None,
                                   None)
        for key, variable in self._counts.items():
            variable.assign_add(ops.cast(counts[key], variable.dtype))

    def _interpolated_pr_auc(self) -> Tensor:
        """Davis & Goadrich (2006): precision interpolated between thresholds."""
        tp, fp, fn = self._counts["tp"], self._counts["fp"], self._counts["fn"]
        n = self.num_thresholds
        dtp = tp[: n - 1] - tp[1:]
        p = tp + fp
        dp = p[: n - 1] - p[1:]
        slope = divide_no_nan(dtp, ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both_positive = ops.logical_and(p[: n - 1] > 0, p[1:] > 0)
        ratio = ops.where(both_positive, divide_no_nan(p[: n - 1], ops.maximum(p[1:], 0.0)),
                          ops.ones_like(p[1:]))
        increments = divide_no_nan(slope * (dtp + intercept * ops.log(ratio)),
                                   ops.maximum(tp[1:] + fn[1:], 0.0))
        return ops.reduce_sum(increments)

    def result(self) -> Tensor:
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr_auc()
        tp, fp, tn, fn = (self._counts[k] for k in ("tp", "fp", "tn", "fn"))
        recall = divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, divide_no_nan(tp, tp + fp)
        n = self.num_thresholds
        if self.summation_method == "interpolation":
            heights = (y[: n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = ops.minimum(y[: n - 1], y[1:])
        else:
            heights = ops.maximum(y[: n - 1], y[1:])
        return ops.reduce_sum((x[: n - 1] - x[1:]) * heights)
