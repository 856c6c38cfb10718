"""Keras 3's default metric names: its own snake case (``keras.src.utils.naming``) made
unique per process (``auc``, ``auc_1``), a compile string kept as given, a function
named by the snake case of its ``__name__``; fit's History keys are these names."""
from __future__ import annotations

import numpy as np
import pytest

import gradtape as tf

metrics = tf.keras.metrics


@pytest.fixture(autouse=True)
def fresh_names():
    tf.keras.backend.clear_session()
    yield
    tf.keras.backend.clear_session()


def test_explicit_default_names_of_the_metric_classes():
    # Keras 3's classes pass these names as their `name=` defaults
    assert metrics.SparseCategoricalAccuracy().name == "sparse_categorical_accuracy"
    assert metrics.MeanSquaredError().name == "mean_squared_error"
    assert metrics.RootMeanSquaredError().name == "root_mean_squared_error"
    assert metrics.Mean().name == metrics.Mean().name == "mean"  # not made unique


def test_auto_named_metrics_are_snake_cased_and_made_unique():
    # AUC, Precision and Recall default to name=None: Keras 3's auto_name
    assert [metrics.AUC().name, metrics.AUC().name] == ["auc", "auc_1"]
    assert [metrics.Precision().name, metrics.Precision().name] == ["precision",
                                                                    "precision_1"]
    assert metrics.Recall().name == "recall"


def test_a_subclass_named_by_keras_snake_case_not_tf_module_rule():
    class Accuracy3D(metrics.Mean):
        def __init__(self, name=None):
            super().__init__(name=name)

    class PeakSNR(metrics.Metric):
        def update_state(self, *args, **kwargs):
            pass

        def result(self):
            return 0.0

    # TF's module rule would give "accuracy3_d"; Keras 3's gives "accuracy3d"
    assert Accuracy3D().name == "accuracy3d"
    assert Accuracy3D().name == "accuracy3d_1"
    assert PeakSNR().name == "peak_snr"
    assert metrics.MeanMetricWrapper(lambda t, p: t - p).name == "mean_metric_wrapper"


def meanError3D(y_true, y_pred):  # a camel-case user function
    return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)


def test_fit_history_keys_follow_the_metric_names():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input((3,)),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    metrics.AUC()  # an earlier AUC takes "auc", as in Keras 3
    model.compile(optimizer="sgd", loss="binary_crossentropy",
                  metrics=[metrics.AUC(), "AUC", meanError3D, "mse"])
    history = model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    assert sorted(history.history) == sorted(["loss", "auc_1", "AUC", "mean_error3d",
                                              "mse"])
    predictions = model.predict(x, verbose=0)
    # the function's metric is its mean over the last epoch's samples
    evaluated = model.evaluate(x, y, verbose=0, return_dict=True)
    np.testing.assert_allclose(evaluated["mean_error3d"],
                               np.mean(np.abs(y - predictions)), rtol=1e-5)
