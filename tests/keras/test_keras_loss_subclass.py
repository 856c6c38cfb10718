"""A Keras 3-style ``keras.losses.Loss`` subclass defines ``call(y_true, y_pred)`` and
calls ``super().__init__(name=..., reduction=...)``: Keras reduces what ``call`` returns."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


class ScaledSquares(keras.losses.Loss):
    def __init__(self, scale=2.0, name="scaled_squares", reduction="sum_over_batch_size"):
        super().__init__(name=name, reduction=reduction)
        self.scale = scale

    def call(self, y_true, y_pred):
        return self.scale * gt.reduce_mean(gt.square(y_pred - y_true), axis=-1)


class Unnamed(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return gt.reduce_sum(gt.abs(y_pred - y_true), axis=-1)


Y_TRUE = np.array([[0.0, 1.0], [2.0, 3.0], [1.0, 1.0]])
Y_PRED = np.array([[0.5, 1.0], [1.0, 5.0], [1.0, 0.0]])
PER_SAMPLE = 2.0 * ((Y_PRED - Y_TRUE) ** 2).mean(axis=-1)  # [0.25, 5.0, 1.0]


def test_call_is_reduced_by_the_reduction():
    assert float(ScaledSquares()(Y_TRUE, Y_PRED)) == pytest.approx(PER_SAMPLE.mean())
    total = ScaledSquares(reduction="sum")(Y_TRUE, Y_PRED)
    assert float(total) == pytest.approx(PER_SAMPLE.sum())
    weighted = ScaledSquares()(Y_TRUE, Y_PRED, sample_weight=np.array([1.0, 0.0, 2.0]))
    assert float(weighted) == pytest.approx((0.25 + 2.0) / 3)
    none = ScaledSquares(reduction="none")(Y_TRUE, Y_PRED)
    np.testing.assert_allclose(none.numpy(), PER_SAMPLE)


def test_names_follow_keras_3():
    assert ScaledSquares().name == "scaled_squares"
    assert Unnamed().name == "unnamed"  # Keras 3: the class name in snake case
    assert Unnamed("given").name == "given"  # Keras 3's first positional is the name


def test_the_gradient_flows_through_call():
    w = gt.Variable(np.array([[1.0, -1.0], [0.5, 2.0]]))
    x = gt.constant(np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]]))
    with gt.GradientTape() as tape:
        loss = ScaledSquares()(Y_TRUE, x @ w)
    grad = tape.gradient(loss, w).numpy()
    residual = x.numpy() @ w.numpy() - Y_TRUE
    np.testing.assert_allclose(grad, x.numpy().T @ (2.0 * 2.0 * residual / 2) / 3)


def test_fit_trains_with_a_subclassed_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32"))
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=ScaledSquares())
    history = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] / 4


def test_a_loss_without_call_or_function_says_what_to_do():
    with pytest.raises(TypeError, match="define call"):
        keras.losses.Loss()
