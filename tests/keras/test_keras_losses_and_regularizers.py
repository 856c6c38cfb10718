"""Layer losses as Keras 3 keeps them: activity regularizers divided by the batch size,
losses cleared at each outermost call, weight penalties of trainable weights only, and
fit/evaluate minimizing and reporting the compiled loss plus all of them."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras

L2 = keras.regularizers.L2


def _floats(losses):
    return [float(loss) for loss in losses]


def test_activity_regularizer_is_divided_by_the_batch_size():
    # The case: outputs of 3 on a (4, 2) batch: 0.1 * 8 * 9 / 4.
    layer = keras.layers.Dense(2, kernel_initializer="ones", activity_regularizer=L2(0.1))
    layer(np.ones((4, 3), np.float32))
    np.testing.assert_allclose(_floats(layer.losses), [1.8], rtol=1e-6)


def _regularized_layer(name):
    """A layer of each kind with an activity regularizer, and inputs for it."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    ints = np.array([[0, 2], [1, 1], [3, 0], [2, 2], [1, 0]])
    reg = {"activity_regularizer": keras.regularizers.L1L2(l1=0.3, l2=0.2)}
    layers = keras.layers
    factories = {
        "dense": lambda: (layers.Dense(2, **reg), x),
        "activation": lambda: (layers.Activation("tanh", **reg), x),
        "lambda": lambda: (layers.Lambda(lambda t: 2.0 * t, **reg), x),
        "flatten": lambda: (layers.Flatten(**reg), x.reshape(5, 3, 1)),
        "dropout": lambda: (layers.Dropout(0.5, **reg), x),
        "embedding": lambda: (layers.Embedding(4, 3, **reg), ints),
        "batch_normalization": lambda: (layers.BatchNormalization(**reg), x),
        "concatenate": lambda: (layers.Concatenate(**reg), [x, x]),
        "add": lambda: (layers.Add(**reg), [x, x]),
        "activity_regularization": lambda: (
            layers.ActivityRegularization(l1=0.3, l2=0.2), x),
    }
    return factories[name]()


@pytest.mark.parametrize("name", ["dense", "activation", "lambda", "flatten", "dropout",
                                  "embedding", "batch_normalization", "concatenate", "add",
                                  "activity_regularization"])
def test_every_layer_divides_its_activity_penalty_by_the_batch(name):
    layer, inputs = _regularized_layer(name)
    out = layer(inputs).numpy().astype(np.float64)
    expected = (0.3 * np.abs(out).sum() + 0.2 * np.square(out).sum()) / 5
    np.testing.assert_allclose(_floats(layer.losses), [expected], rtol=1e-5)


class _TwoOutputs(keras.layers.Layer):
    def call(self, inputs):
        return {"rows": inputs, "scalar": gt.reduce_sum(inputs)}


def test_each_output_of_a_nest_is_penalized_and_a_scalar_is_not_divided():
    layer = _TwoOutputs(activity_regularizer=L2(1.0))
    layer(np.full((4, 2), 2.0, np.float32))
    # rows: 8 entries of 4 over a batch of 4; scalar: 16 ** 2, not divided.
    np.testing.assert_allclose(_floats(layer.losses), [8.0, 256.0])


def test_the_regularizer_can_be_set_as_an_attribute():
    layer = keras.layers.Dense(1, kernel_initializer="ones")
    layer.activity_regularizer = "l2"  # Keras 3's settable property (0.01)
    layer(np.ones((2, 3), np.float32))
    np.testing.assert_allclose(_floats(layer.losses), [0.01 * 2 * 9 / 2], rtol=1e-6)


def test_losses_accumulate_within_one_call_and_reset_at_the_next():
    shared = keras.layers.Dense(1, kernel_initializer="ones", activity_regularizer=L2(1.0))

    class Twice(keras.Model):
        def __init__(self):
            super().__init__()
            self.shared = shared

        def call(self, x):
            return self.shared(self.shared(x))

    model = Twice()
    x = np.full((2, 1), 3.0, np.float32)
    model(x)
    # Each of the two calls: outputs of 3 in 2 rows, 2 * 9 / 2.
    assert _floats(model.losses) == [9.0, 9.0]
    model(x)
    assert _floats(model.losses) == [9.0, 9.0]
    shared(x)
    shared(x)  # a layer's own outermost call starts its losses over
    assert _floats(shared.losses) == [9.0]


def test_add_loss_in_a_subclassed_model_is_in_its_losses_and_the_fit_loss():
    class WithPenalty(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)

        def call(self, x):
            y = self.dense(x)
            self.add_loss(0.5 * y)  # a vector: counts by its sum in the loss
            return y

    model = WithPenalty()
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    y = np.zeros((2, 1), np.float32)
    model(x)
    np.testing.assert_allclose(np.concatenate([t.numpy().ravel() for t in model.losses]),
                               [1.5, 3.5])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    # mse: (9 + 49) / 2 = 29; add_loss: 1.5 + 3.5 = 5.
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), 34.0, rtol=1e-6)
    history = model.fit(x, y, batch_size=2, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [34.0], rtol=1e-6)


def test_compile_without_a_loss_trains_on_add_loss_alone():
    class OnlyPenalty(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)

        def call(self, x):
            y = self.dense(x)
            self.add_loss(gt.reduce_mean(gt.square(y)))
            return y

    model = OnlyPenalty()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x = np.array([[1.0, 0.0]], np.float32)
    history = model.fit(x, np.zeros((1, 1), np.float32), verbose=0)
    np.testing.assert_allclose(history.history["loss"], [1.0])
    # d (w0 * 1)^2 / d w0 = 2: 1 - 0.1 * 2.
    np.testing.assert_allclose(model.dense.kernel.numpy().ravel(), [0.8, 1.0], rtol=1e-6)
    bare = keras.Sequential([keras.layers.Dense(1)])
    bare.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        bare.fit(x, np.zeros((1, 1)), verbose=0)


@pytest.mark.parametrize("batch", [1, 4])
def test_weight_regularizers_are_not_divided_by_the_batch(batch):
    layer = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="ones",
                               kernel_regularizer=L2(0.1),
                               bias_regularizer=keras.regularizers.L1(0.5))
    layer(np.ones((batch, 3), np.float32))
    np.testing.assert_allclose(_floats(layer.losses), [0.1 * 6, 0.5 * 2], rtol=1e-6)


def test_a_frozen_weight_adds_no_penalty():
    layer = keras.layers.Dense(2, kernel_initializer="ones", kernel_regularizer=L2(0.1))
    layer(np.ones((1, 3), np.float32))
    layer.trainable = False
    assert layer.losses == []
    layer.trainable = True
    np.testing.assert_allclose(_floats(layer.losses), [0.6], rtol=1e-6)


def test_building_a_functional_model_adds_no_activity_loss():
    inputs = keras.Input(shape=(3,))
    outputs = keras.layers.Dense(2, bias_initializer="ones",
                                 activity_regularizer=L2(1.0))(inputs)
    model = keras.Model(inputs, outputs)
    assert model.losses == []
    model(np.zeros((2, 3), np.float32))
    np.testing.assert_allclose(_floats(model.losses), [2 * 2 / 2])


def _one_sgd_step_data():
    x = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]])
    y = np.array([[1.0], [0.0], [2.0], [-1.0]])
    return x, y


def test_fit_one_sgd_step_matches_the_hand_computed_weights():
    x, y = _one_sgd_step_data()
    a, b, lr, n = 0.2, 0.3, 0.05, len(x)
    model = keras.Sequential([keras.layers.Dense(
        1, use_bias=False, dtype="float64", kernel_initializer="ones",
        kernel_regularizer=L2(b), activity_regularizer=L2(a))])
    model.compile(optimizer=keras.optimizers.SGD(lr), loss="mse")
    w = np.ones((2, 1))
    out = x @ w
    loss = np.mean((out - y) ** 2) + a * np.sum(out ** 2) / n + b * np.sum(w ** 2)
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), loss, rtol=1e-12)
    history = model.fit(x, y, batch_size=n, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [loss], rtol=1e-12)
    grad = 2 * x.T @ (out - y) / n + 2 * a * x.T @ out / n + 2 * b * w
    # (rtol: the optimizer keeps its learning rate in float32)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), w - lr * grad, rtol=1e-7)


def test_the_one_step_gradient_agrees_with_finite_differences():
    x, y = _one_sgd_step_data()
    layer = keras.layers.Dense(1, use_bias=False, dtype="float64",
                               kernel_regularizer=L2(0.3), activity_regularizer=L2(0.2))
    model = keras.Sequential([layer])
    model.compile(optimizer="sgd", loss="mse")
    model(x)

    def loss_at(kernel):
        layer.kernel.assign(kernel)
        with gt.GradientTape() as tape:
            value = model.compute_loss(y=gt.constant(y), y_pred=model(x, training=True))
        return float(value), tape.gradient(value, layer.kernel).numpy()

    kernel = np.array([[0.7], [-0.4]])
    _, grad = loss_at(kernel)
    eps = 1e-6
    for i in range(2):
        step = np.zeros_like(kernel)
        step[i] = eps
        numeric = (loss_at(kernel + step)[0] - loss_at(kernel - step)[0]) / (2 * eps)
        np.testing.assert_allclose(grad[i, 0], numeric, rtol=1e-6)
