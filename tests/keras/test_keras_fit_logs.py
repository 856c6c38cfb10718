"""What fit/evaluate log (Keras 3: what the last step returned; the default steps
return running means) and fit on models with nothing to train."""

import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


class _StepCounter(keras.Model):
    """The WGAN-GP pattern: ``train_step`` returns a raw per-step value and a ``Mean``
    tracker the step updates itself."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.tracker = keras.metrics.Mean(name="tracked")
        self.steps = 0

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.steps += 1
        raw = gt.constant(float(self.steps))
        self.tracker.update_state(raw)
        return {"raw": raw, "tracked": self.tracker.result()}

    def test_step(self, data):
        self.steps += 1
        return {"raw": gt.constant(float(self.steps))}


def _data(n=8):
    return np.ones((n, 2), np.float32), np.zeros((n, 1), np.float32)


@pytest.mark.parametrize("loss", [None, "mse"])
def test_fit_logs_what_the_last_custom_train_step_returned(loss):
    model = _StepCounter()
    model.compile(optimizer="sgd", loss=loss)  # WGAN-GP's own compile passes no loss
    history = model.fit(*_data(), batch_size=2, epochs=2, verbose=0)
    # Epoch 1: steps 1..4, the tracker's mean 2.5; epoch 2 resets it (it is one of the
    # model's metrics): steps 5..8, mean 6.5.
    assert history.history == {"raw": [4.0, 8.0], "tracked": [2.5, 6.5]}
    assert all(type(v) is float for v in history.history["raw"])


def test_evaluate_and_validation_log_the_last_test_step():
    model = _StepCounter()
    model.compile(optimizer="sgd")
    assert model.evaluate(*_data(), batch_size=2, verbose=0) == 4.0
    assert model.evaluate(*_data(6), batch_size=2, verbose=0, return_dict=True) == \
        {"raw": 7.0}
    history = model.fit(*_data(), batch_size=4, validation_data=_data(6),
                        validation_batch_size=3, verbose=0)
    # Steps 8, 9 train; 10, 11 validate.
    assert history.history == {"raw": [9.0], "tracked": [8.5], "val_raw": [11.0]}


def test_train_on_batch_returns_what_the_step_returned():
    model = _StepCounter()
    model.compile(optimizer="sgd")
    x, y = _data(2)
    assert model.train_on_batch(x, y, return_dict=True) == {"raw": 1.0, "tracked": 1.0}
    # Keras 3's order: the model's metrics first (the tracker), then the other keys.
    assert model.metrics_names == ["loss", "tracked"]
    assert model.train_on_batch(x, y) == [1.5, 2.0]


def test_the_default_step_logs_sample_weighted_running_means():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((10, 2)).astype(np.float32)
    y = rng.standard_normal((10, 1)).astype(np.float32)
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    model(x)
    residual = model.predict(x) - y
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    # Batches of 4, 4, 2 weighted by their size: the whole data's means, each epoch.
    for key, value in (("loss", np.mean(residual ** 2)), ("mae", np.mean(np.abs(residual)))):
        np.testing.assert_allclose(history.history[key], [value, value], rtol=1e-6)
    # train_on_batch does not reset the metrics (Keras 3): its means run on.
    model.reset_metrics()
    seen = [model.train_on_batch(x[:4], y[:4], return_dict=True)["loss"],
            model.train_on_batch(x[4:], y[4:], return_dict=True)["loss"]]
    np.testing.assert_allclose(seen, [np.mean(residual[:4] ** 2), np.mean(residual ** 2)],
                               rtol=1e-6)
    assert model.metrics_names == ["loss", "mae"]


def test_a_step_returning_the_metric_names_reports_the_metrics():
    # Keras 3: when the returned keys are exactly the metrics' names, fit reports the
    # metrics' results; a step that returns "loss" without updating the tracker gets 0.
    class Untracked(keras.Sequential):
        def train_step(self, data):
            x, y = data
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            return {"loss": loss}

    model = Untracked([keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data(4)
    assert model.fit(x, y + 1.0, verbose=0).history == {"loss": [0.0]}


def _assert_fit_trains_nothing(model, x, y):
    before = [w.copy() for w in model.get_weights()]
    residual = model.predict(x) - y
    with pytest.warns(UserWarning, match="does not have any trainable weights"):
        history = model.fit(x, y, batch_size=2, epochs=2, verbose=0)
    for key, value in (("loss", np.mean(residual ** 2)), ("mae", np.mean(np.abs(residual)))):
        np.testing.assert_allclose(history.history[key], [value, value], rtol=1e-6)
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)
    with pytest.warns(UserWarning, match="does not have any trainable weights"):
        logs = model.train_on_batch(x, y, return_dict=True)
    np.testing.assert_allclose(logs["loss"], np.mean(residual ** 2), rtol=1e-6)
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)


def _regression():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((6, 3)).astype(np.float32),
            rng.standard_normal((6, 1)).astype(np.float32))


def test_fit_on_a_frozen_model_trains_nothing_and_logs_the_loss():
    x, y = _regression()
    model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    model(x)
    model.trainable = False
    _assert_fit_trains_nothing(model, x, y)


def test_fit_with_every_layer_frozen_trains_nothing():
    x, y = _regression()
    inputs = keras.Input(shape=(3,))
    hidden = keras.layers.Dense(4, trainable=False)(inputs)
    outputs = keras.layers.Dense(1, trainable=False, kernel_regularizer="l2")(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    # The frozen kernel's regularizer is not in the loss (Keras 3: trainable weights only).
    _assert_fit_trains_nothing(model, x, y)


@pytest.mark.parametrize("layer", [lambda: keras.layers.Activation("tanh"),
                                   lambda: keras.layers.Lambda(lambda t: 2.0 * t)],
                         ids=["activation", "lambda"])
def test_fit_on_a_model_without_weights_runs(layer):
    x, y = _regression()
    model = keras.Sequential([layer(), keras.layers.Lambda(lambda t: t[:, :1])])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    _assert_fit_trains_nothing(model, x, y)


def test_trainable_toggled_between_fits_takes_effect_at_the_next_fit():
    x, y = _regression()
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y, verbose=0)
    trained = [w.copy() for w in model.get_weights()]
    model.trainable = False  # no compile() again: gradtape never trains a stale set
    with pytest.warns(UserWarning, match="trainable weights"):
        model.fit(x, y, verbose=0)
    for old, new in zip(trained, model.get_weights()):
        np.testing.assert_array_equal(old, new)
    model.trainable = True
    kernel, bias = trained
    residual = x @ kernel + bias - y
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(x, y, batch_size=6, shuffle=False, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0],
                               kernel - 0.1 * 2 * x.T @ residual / 6, rtol=1e-5)
