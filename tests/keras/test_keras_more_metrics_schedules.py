"""Keras 3's RootMeanSquaredError, Sum, Precision, Recall, AUC (values of Keras's
docstring examples and of the written algorithm) and the PolynomialDecay and
CosineDecayRestarts schedules (Keras's formulas)."""

import math

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras

M = keras.metrics
S = keras.optimizers.schedules


def _result(metric, *args, **kwargs):
    metric.update_state(*args, **kwargs)
    return metric.result().numpy()


def test_precision_and_recall_as_keras_docstrings():
    y_true, y_pred = [0, 1, 1, 1], [1, 0, 1, 1]
    np.testing.assert_allclose(_result(M.Precision(), y_true, y_pred), 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(_result(M.Precision(), y_true, y_pred,
                                       sample_weight=[0, 0, 1, 0]), 1.0)
    np.testing.assert_allclose(_result(M.Recall(), y_true, y_pred), 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(_result(M.Recall(), y_true, y_pred,
                                       sample_weight=[0, 0, 1, 0]), 1.0)
    # top_k=2: the first two entries (ties by index) are the predicted positives.
    assert _result(M.Precision(top_k=2), [0, 0, 1, 1], [1, 1, 1, 1]) == 0.0
    assert _result(M.Precision(top_k=4), [0, 0, 1, 1], [1, 1, 1, 1]) == 0.5


def test_precision_thresholds_and_class_id():
    y_true = np.array([[0, 1], [1, 0], [1, 1]])
    y_pred = np.array([[0.2, 0.9], [0.6, 0.4], [0.3, 0.7]])
    per_threshold = _result(M.Precision(thresholds=[0.25, 0.5, 0.8]), y_true, y_pred)
    # Above 0.25: 0.9 0.6 0.4 0.3 0.7 (tp 0.9 0.6 0.3 0.7, fp 0.4); above 0.5: 0.9 0.6
    # 0.7 (all tp); above 0.8: 0.9.
    np.testing.assert_allclose(per_threshold, [0.8, 1.0, 1.0])
    recall = _result(M.Recall(thresholds=0.5, class_id=0), y_true, y_pred)
    np.testing.assert_allclose(recall, 0.5)  # class 0: positives 0.6 (hit), 0.3 (miss)
    metric = M.Recall()
    metric.update_state([1, 1], [0.9, 0.1])
    metric.reset_state()
    assert metric.result().numpy() == 0.0


def _auc_by_the_written_algorithm(y_true, y_pred, n, curve="ROC"):
    thresholds = [-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7]
    y_true, y_pred = np.asarray(y_true, bool), np.asarray(y_pred, np.float32)
    tp = np.array([np.sum(y_true & (y_pred > t)) for t in thresholds], float)
    fp = np.array([np.sum(~y_true & (y_pred > t)) for t in thresholds], float)
    fn = np.array([np.sum(y_true & ~(y_pred > t)) for t in thresholds], float)
    tn = np.array([np.sum(~y_true & ~(y_pred > t)) for t in thresholds], float)
    recall = tp / np.maximum(tp + fn, 1e-300)
    if curve == "ROC":
        x, y = fp / np.maximum(fp + tn, 1e-300), recall
        return np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)
    p = tp + fp
    dtp, dp = tp[:-1] - tp[1:], p[:-1] - p[1:]
    slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp > 0)
    intercept = tp[1:] - slope * p[1:]
    ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1), 1)
    total = tp[1:] + fn[1:]
    inc = slope * (dtp + intercept * np.log(ratio))
    return np.sum(np.divide(inc, total, out=np.zeros_like(inc), where=total > 0))


def test_auc_as_keras_docstring_and_the_written_algorithm():
    assert _result(M.AUC(num_thresholds=3), [0, 0, 1, 1], [0, 0.5, 0.3, 0.9]) == 0.75
    np.testing.assert_allclose(_result(M.AUC(num_thresholds=3), [0, 0, 1, 1],
                                       [0, 0.5, 0.3, 0.9], sample_weight=[1, 0, 0, 1]), 1.0)
    rng = np.random.default_rng(5)
    y_true = rng.uniform(size=300) > 0.6
    y_pred = np.clip(0.3 * y_true + rng.uniform(size=300) * 0.7, 0, 1)
    for curve in ("ROC", "PR"):
        metric = M.AUC(curve=curve)
        metric.update_state(y_true[:150], y_pred[:150])
        metric.update_state(y_true[150:], y_pred[150:])
        np.testing.assert_allclose(metric.result().numpy(),
                                   _auc_by_the_written_algorithm(y_true, y_pred, 200, curve),
                                   rtol=1e-5)
    logits = np.log(y_pred + 1e-3) - np.log1p(-y_pred + 1e-3)
    np.testing.assert_allclose(_result(M.AUC(from_logits=True), y_true, logits),
                               _result(M.AUC(), y_true, 1 / (1 + np.exp(-logits))), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="multi_label"):
        M.AUC(multi_label=True)
    with pytest.raises(ValueError, match="curve"):
        M.AUC(curve="XY")


def test_root_mean_squared_error_and_sum():
    np.testing.assert_allclose(_result(M.RootMeanSquaredError(), [[0, 1], [0, 0]],
                                       [[1, 1], [0, 0]]), 0.5)
    np.testing.assert_allclose(_result(M.RootMeanSquaredError(), [[0, 1], [0, 0]],
                                       [[1, 1], [0, 0]], sample_weight=[1, 0]),
                               math.sqrt(0.5), rtol=1e-6)
    assert _result(M.Sum(), [1, 3, 5, 7]) == 16.0
    assert _result(M.Sum(), [1, 3, 5, 7], sample_weight=[1, 0, 0, 1]) == 8.0


def test_compile_takes_metric_class_names():
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="sgd", loss="binary_crossentropy",
                  metrics=["auc", "precision", keras.metrics.Recall(name="rec")])
    x = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "auc", "precision", "rec"}
    predicted = model.predict(x, verbose=0)
    expected = keras.metrics.Precision()
    expected.update_state(y, predicted)
    np.testing.assert_allclose(logs["precision"], float(expected.result()), rtol=1e-6)


def test_polynomial_decay_follows_keras_formula():
    schedule = S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=0.5)
    for step in [0, 3, 10, 25]:
        p = min(step, 10) / 10
        np.testing.assert_allclose(float(schedule(step)), 0.09 * (1 - p) ** 0.5 + 0.01,
                                   rtol=1e-6)
    cycled = S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, cycle=True)
    for step, decay_steps in [(0, 10), (5, 10), (10, 10), (15, 20), (21, 30)]:
        np.testing.assert_allclose(float(cycled(step)),
                                   0.09 * (1 - step / decay_steps) + 0.01, rtol=1e-6)
    assert S.PolynomialDecay(1.0, 5).end_learning_rate == 0.0001
    assert float(S.PolynomialDecay(0.1, 10)(gt.Variable(4, dtype="int64"))) == \
        pytest.approx(0.1 - 0.0999 * 0.4, rel=1e-6)


def test_cosine_decay_restarts_follows_sgdr():
    schedule = S.CosineDecayRestarts(1.0, 10, t_mul=2.0, m_mul=0.5, alpha=0.1)
    # Periods: [0, 10) peak 1, [10, 30) peak 0.5, [30, 70) peak 0.25.
    for step, start, length, peak in [(0, 0, 10, 1.0), (5, 0, 10, 1.0), (10, 10, 20, 0.5),
                                      (25, 10, 20, 0.5), (40, 30, 40, 0.25)]:
        fraction = (step - start) / length
        expected = 0.9 * 0.5 * peak * (1 + math.cos(math.pi * fraction)) + 0.1
        np.testing.assert_allclose(float(schedule(step)), expected, rtol=1e-5)
    equal_periods = S.CosineDecayRestarts(0.5, 4, t_mul=1.0)
    np.testing.assert_allclose([float(equal_periods(s)) for s in (0, 2, 4, 6)],
                               [0.5, 0.25, 0.5, 0.25], rtol=1e-6)
    assert S.CosineDecayRestarts(1.0, 3).name == "SGDRDecay"
    optimizer = keras.optimizers.SGD(learning_rate=schedule)
    assert float(optimizer.learning_rate) == pytest.approx(1.0)
