"""Keras 3's Huber, LogCosh, KLDivergence, Poisson, CosineSimilarity, the hinges, MSLE
and MAPE: the values of Keras's documented examples, the written per-sample formulas,
gradients against finite differences in float64, and their names in compile()."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences
from gradtape import keras

K = keras.losses
Y_TRUE = np.array([[0.0, 1.0], [0.0, 0.0]])
Y_PRED = np.array([[0.6, 0.4], [0.4, 0.6]])
ONES = np.array([[1.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("loss, y_true, y_pred, expected", [
    # The examples in each class's Keras docstring.
    (K.Huber(), Y_TRUE, Y_PRED, 0.155),
    (K.LogCosh(), Y_TRUE, ONES, 0.108),
    (K.KLDivergence(), Y_TRUE, Y_PRED, 0.458),
    (K.Poisson(), Y_TRUE, ONES, 0.5),
    (K.CosineSimilarity(axis=1), np.array([[0.0, 1.0], [1.0, 1.0]]),
     np.array([[1.0, 0.0], [1.0, 1.0]]), -0.5),
    (K.Hinge(), Y_TRUE, Y_PRED, 1.3),
    (K.SquaredHinge(), Y_TRUE, Y_PRED, 1.86),
    (K.CategoricalHinge(), Y_TRUE, Y_PRED, 1.4),
    (K.MeanSquaredLogarithmicError(), Y_TRUE, np.array([[1.0, 1.0], [1.0, 0.0]]), 0.240),
    (K.MeanAbsolutePercentageError(), Y_TRUE, np.array([[1.0, 1.0], [1.0, 0.0]]), 5e8),
])
def test_keras_documented_values(loss, y_true, y_pred, expected):
    # The docstrings print three decimals.
    np.testing.assert_allclose(float(loss(y_true, y_pred)), expected, rtol=1e-3, atol=5e-4)


def test_huber_delta_and_the_reductions():
    y_true, y_pred = np.array([[0.0, 0.0, 0.0]]), np.array([[0.5, 2.0, -4.0]])
    np.testing.assert_allclose(float(K.Huber(delta=3.0)(y_true, y_pred)),
                               np.mean([0.125, 2.0, 7.5]))
    np.testing.assert_allclose(K.huber(y_true, y_pred, delta=1.0).numpy(),
                               [np.mean([0.125, 1.5, 3.5])])
    none = K.Huber(reduction="none")(Y_TRUE, Y_PRED).numpy()
    np.testing.assert_allclose(none, [0.5 * (0.36 + 0.36) / 2, 0.5 * (0.16 + 0.36) / 2])
    total = K.Huber(reduction="sum")(Y_TRUE, Y_PRED, sample_weight=[1.0, 0.0])
    np.testing.assert_allclose(float(total), none[0])
    assert K.Huber().name == "huber_loss" and K.LogCosh().name == "log_cosh"


def test_the_written_formulas_per_sample():
    rng = np.random.default_rng(0)
    y_true = rng.uniform(0.1, 1.0, (4, 3))
    y_pred = rng.uniform(0.1, 1.0, (4, 3))
    e = y_pred - y_true
    cases = {
        K.log_cosh: np.mean(np.log(np.cosh(e)), -1),
        K.kl_divergence: np.sum(y_true * np.log(y_true / y_pred), -1),
        K.poisson: np.mean(y_pred - y_true * np.log(y_pred + 1e-7), -1),
        K.mean_squared_logarithmic_error:
            np.mean((np.log1p(y_pred) - np.log1p(y_true)) ** 2, -1),
        K.mean_absolute_percentage_error: 100 * np.mean(np.abs(e) / y_true, -1),
        K.cosine_similarity: -np.sum(y_true * y_pred, -1) / np.linalg.norm(y_true, axis=-1)
        / np.linalg.norm(y_pred, axis=-1),
    }
    for fn, expected in cases.items():
        np.testing.assert_allclose(fn(y_true, y_pred).numpy(), expected, rtol=1e-10,
                                   err_msg=fn.__name__)
    labels = np.where(rng.uniform(size=(4, 3)) > 0.5, 1.0, -1.0)
    np.testing.assert_allclose(K.hinge(labels, e).numpy(),
                               np.mean(np.maximum(1 - labels * e, 0), -1))
    np.testing.assert_allclose(K.squared_hinge(labels, e).numpy(),
                               np.mean(np.maximum(1 - labels * e, 0) ** 2, -1))
    assert K.mape is K.MAPE is K.mean_absolute_percentage_error
    assert K.msle is K.mean_squared_logarithmic_error and K.kld is K.kl_divergence


def test_log_cosh_does_not_overflow_for_large_errors():
    value = K.log_cosh(np.zeros((1, 1), np.float32), np.full((1, 1), 1000.0, np.float32))
    np.testing.assert_allclose(value.numpy(), [1000.0 - np.log(2.0)], rtol=1e-6)


@pytest.mark.parametrize("fn", [
    K.huber, K.log_cosh, K.kl_divergence, K.poisson, K.cosine_similarity,
    K.categorical_hinge, K.hinge, K.squared_hinge, K.mean_squared_logarithmic_error,
    K.mean_absolute_percentage_error,
])
def test_gradients_match_finite_differences(fn):
    rng = np.random.default_rng(1)
    y_true = rng.uniform(0.2, 0.9, (3, 4))
    y_pred = rng.uniform(0.2, 0.9, (3, 4))
    if fn in (K.hinge, K.squared_hinge):
        y_true = np.where(y_true > 0.5, 1.0, -1.0)
    if fn is K.categorical_hinge:
        y_true = np.eye(4)[[0, 2, 1]]
    u = rng.standard_normal(3)
    pred = gt.constant(y_pred)
    with gt.GradientTape() as tape:
        tape.watch(pred)
        loss = fn(y_true, pred)
    (grad,) = tape.gradient(loss, [pred], output_gradients=gt.constant(u))
    assert_vjp_matches_differences(lambda p: fn(y_true, p), [y_pred], u, [grad], rng)


@pytest.mark.parametrize("name", ["huber", "log_cosh", "kl_divergence", "poisson",
                                  "cosine_similarity", "hinge", "squared_hinge",
                                  "categorical_hinge", "msle", "mape"])
def test_compile_takes_the_string_names(name):
    model = keras.Sequential([keras.layers.Dense(2, activation="sigmoid",
                                                 kernel_initializer="ones")])
    model.compile(optimizer="sgd", loss=name)
    x = np.full((4, 3), 0.1, np.float32)
    y = np.full((4, 2), 0.5, np.float32)
    history = model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    expected = {"huber": K.Huber(), "log_cosh": K.LogCosh(), "kl_divergence":
                K.KLDivergence(), "poisson": K.Poisson(), "cosine_similarity":
                K.CosineSimilarity(), "hinge": K.Hinge(), "squared_hinge": K.SquaredHinge(),
                "categorical_hinge": K.CategoricalHinge(), "msle":
                K.MeanSquaredLogarithmicError(), "mape": K.MeanAbsolutePercentageError()}
    first = np.full((4, 2), 1.0 / (1.0 + np.exp(-0.3)), np.float32)  # before the step
    np.testing.assert_allclose(history.history["loss"][0], float(expected[name](y, first)),
                               rtol=1e-5)
