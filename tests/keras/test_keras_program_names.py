"""Names and arguments that public TF programs (tests/programs) reach for: the DCGAN
tutorial's ``Sequential.output_shape``, the actor-critic tutorial's
``tf.keras.losses.Reduction.SUM``, the text-generation tutorial's ``tf.losses``, and the
PINN's ``ProgbarLogger(count_mode="steps", stateful_metrics=[...])``."""

import numpy as np
import pytest

import gradtape as tf
from gradtape.keras import layers


def test_sequential_output_shape_after_each_add_as_the_dcgan_tutorial_asserts():
    model = tf.keras.Sequential()
    model.add(layers.Dense(7 * 7 * 8, use_bias=False, input_shape=(10,)))
    model.add(layers.Reshape((7, 7, 8)))
    assert model.output_shape == (None, 7, 7, 8)
    model.add(layers.Conv2DTranspose(4, (5, 5), strides=(2, 2), padding="same"))
    assert model.output_shape == (None, 14, 14, 4)
    assert model.input_shape == (None, 10)


def test_sequential_output_shape_from_keras_input_and_after_a_call():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), layers.Dense(2)])
    assert model.output_shape == (None, 2) and model.input_shape == (None, 3)
    unbuilt = tf.keras.Sequential([layers.Dense(5)])
    with pytest.raises(AttributeError, match="output_shape"):
        unbuilt.output_shape  # noqa: B018  (the attribute read is the test)
    unbuilt(np.zeros((4, 3), np.float32))
    assert unbuilt.output_shape == (None, 5)


@pytest.mark.parametrize("name, expected", [
    ("SUM", 0.5 * (0.25 + 1.0) + (3.0 - 0.5)),
    ("SUM_OVER_BATCH_SIZE", (0.5 * (0.25 + 1.0) + 2.5) / 3),
    ("AUTO", (0.5 * (0.25 + 1.0) + 2.5) / 3),
])
def test_reduction_names_reduce_as_keras(name, expected):
    # Huber with delta 1: 0.5 e^2 for |e| <= 1, |e| - 0.5 beyond; errors 0.5, 1, 3
    huber = tf.keras.losses.Huber(reduction=getattr(tf.keras.losses.Reduction, name))
    value = huber(np.array([[0.0], [0.0], [0.0]]), np.array([[0.5], [1.0], [3.0]]))
    np.testing.assert_allclose(float(value), expected, rtol=1e-6)


def test_reduction_none_and_validate():
    assert tf.keras.losses.Reduction.NONE == "none"
    assert set(tf.keras.losses.Reduction.all()) == {"auto", "none", "sum",
                                                    "sum_over_batch_size"}
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.keras.losses.Reduction.validate("mean")


def test_tf_losses_is_keras_losses():
    assert tf.losses.SparseCategoricalCrossentropy is \
        tf.keras.losses.SparseCategoricalCrossentropy
    loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = np.array([[2.0, 0.0, -1.0]], np.float32)
    expected = -np.log(np.exp(2.0) / np.exp(logits).sum())
    np.testing.assert_allclose(float(loss(np.array([0]), logits)), expected, rtol=1e-6)


def test_progbar_logger_takes_keras_2_arguments(capsys):
    progbar = tf.keras.callbacks.ProgbarLogger(count_mode="steps",
                                               stateful_metrics=["loss"])
    progbar.set_params({"verbose": 1, "epochs": 1, "steps": 2, "metrics": ["loss"]})
    progbar.on_train_begin()
    progbar.on_epoch_begin(1)
    for step in range(2):
        progbar.on_batch_begin(step)
        progbar.on_batch_end(step, logs={"loss": 0.25})
    progbar.on_epoch_end(1)
    assert "2/2" in capsys.readouterr().out
    with pytest.raises(ValueError, match="counts steps"):
        tf.keras.callbacks.ProgbarLogger(count_mode="samples")


class _Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(1)

    def call(self, x, training=False):
        return self.dense(x)


class _CustomStep(_Regressor):
    """TF's text-generation tutorial's CustomTraining: a `train_step` returning
    ``{"loss": loss}`` without updating the compiled loss tracker."""

    def train_step(self, inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            loss = self.loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_warns_when_a_custom_steps_loss_never_reached_the_tracker(run_eagerly):
    # Keras 3 logs the untouched tracker's 0.0 (kept), and now says so at the fit line
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
    y = x.sum(axis=1, keepdims=True)
    model = _CustomStep()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                  loss=tf.keras.losses.MeanSquaredError(), run_eagerly=run_eagerly)
    with pytest.warns(UserWarning, match="never updated the compiled loss tracker") as seen:
        history = model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    assert history.history == {"loss": [0.0]}
    assert any(w.filename == __file__ for w in seen)  # the user's line, not gradtape's


def test_fit_with_the_default_step_logs_the_tracker_mean_without_a_warning(recwarn):
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
    y = x.sum(axis=1, keepdims=True)
    model = _Regressor()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss="mse")
    model(x)
    w, b = (v.numpy() for v in model.trainable_variables)
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    expected = np.mean((x @ w + b - y) ** 2)  # lr 0: both batches on the same weights
    np.testing.assert_allclose(history.history["loss"][0], expected, rtol=1e-5)
    assert not [w for w in recwarn if "loss tracker" in str(w.message)]


def test_a_model_first_called_inside_a_compiled_step_builds_an_orthogonal_kernel():
    # the text-generation tutorial's CustomTraining model is built by its first
    # @tf.function train_step; a GRU's recurrent kernel is Orthogonal (NumPy's QR)
    gru = layers.GRU(3)

    @tf.function
    def step(x):
        return tf.reduce_sum(gru(x))

    step(np.ones((2, 4, 2), np.float32))
    kernel = gru.cell.recurrent_kernel.numpy()  # (3, 9): orthonormal rows, as Keras's
    np.testing.assert_allclose(kernel @ kernel.T, np.eye(3), atol=1e-5)


def test_metric_reset_states_is_keras_2s_reset_state():
    mean = tf.metrics.Mean()
    mean.update_state([1.0, 3.0])
    assert float(mean.result()) == 2.0
    mean.reset_states()
    mean.update_state([5.0])
    assert float(mean.result()) == 5.0


class _XOnly(tf.keras.Model):
    """keras-io's VAE: ``fit(x)`` with no targets, a step that takes the batch as is."""

    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(1, kernel_initializer="ones", use_bias=False)
        self.seen = []

    def train_step(self, data):
        self.seen.append(type(data).__name__)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.dense(data) ** 2)
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return {"loss": loss}


def test_fit_of_x_alone_hands_the_step_x_itself_as_keras():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    model = _XOnly()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), run_eagerly=True)
    model.fit(x, batch_size=4, epochs=1, verbose=0, shuffle=False)
    assert model.seen == ["Tensor"]
    # kernel ones: loss = mean((x0 + x1)^2), d/dk_j = mean(2 (x0 + x1) x_j); one SGD step
    grad = np.mean(2 * x.sum(axis=1, keepdims=True) * x, axis=0)
    np.testing.assert_allclose(model.dense.kernel.numpy()[:, 0], 1.0 - 0.01 * grad,
                               rtol=1e-6)


def test_fit_of_x_and_y_still_hands_a_pair():
    x = np.ones((4, 2), np.float32)
    seen = []

    class Pair(_XOnly):
        def train_step(self, data):
            seen.append(len(data))
            return {"loss": tf.reduce_mean(self.dense(data[0]))}

    model = Pair()
    model.compile(optimizer="sgd", run_eagerly=True)
    model.fit(x, x[:, :1], batch_size=4, epochs=1, verbose=0)
    assert seen == [2]


def test_keras_backend_legacy_random_draws():
    # tf.keras.backend.random_normal (the VAE's Sampling layer) and its siblings
    backend = tf.keras.backend
    assert backend.floatx() == "float32" and backend.epsilon() == 1e-7
    tf.random.set_seed(3)
    normal = backend.random_normal(shape=(4000, 2), mean=1.0, stddev=2.0)
    assert normal.dtype == np.float32 and normal.shape == (4000, 2)
    assert abs(float(tf.reduce_mean(normal)) - 1.0) < 0.1
    assert abs(float(tf.math.reduce_std(normal)) - 2.0) < 0.1
    uniform = backend.random_uniform((4000,), minval=-1.0, maxval=3.0).numpy()
    assert uniform.min() >= -1.0 and uniform.max() < 3.0 and abs(uniform.mean() - 1) < 0.1
    truncated = backend.truncated_normal((4000,), stddev=1.0).numpy()
    assert np.abs(truncated).max() <= 2.0
    ones = backend.random_bernoulli((4000,), p=0.25).numpy()
    assert set(np.unique(ones)) <= {0.0, 1.0} and abs(ones.mean() - 0.25) < 0.03
    same = [backend.random_normal((3,), seed=7).numpy() for _ in range(2)]
    tf.random.set_seed(3)
    again = backend.random_normal((3,), seed=7).numpy()
    np.testing.assert_array_equal(same[0], again)  # an op seed under one global seed


def test_keras_backend_random_normal_takes_a_traced_shape():
    @tf.function
    def sample(z_mean):
        batch = tf.shape(z_mean)[0]
        dim = tf.shape(z_mean)[1]
        return z_mean + tf.keras.backend.random_normal(shape=(batch, dim))

    assert sample(np.zeros((5, 2), np.float32)).shape == (5, 2)
