"""Keras behaviours gradtape used to refuse (issue 21, item 5): each as Keras 3 does it."""

import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


def test_compile_without_a_loss_then_fit_with_a_custom_train_step_trains():
    """keras-io's "customizing fit": compile(optimizer) only, the step computes its loss."""

    class Custom(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            with gt.GradientTape() as tape:
                loss = gt.reduce_mean((self(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"mse": loss}

    model = Custom()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x = np.array([[1.0, 2.0]], np.float32)
    y = np.array([[1.0]], np.float32)
    history = model.fit(x, y, batch_size=1, epochs=1, verbose=0)
    # One SGD step on (w·x - y)² from w = (1, 1): the gradient is 2 (3 - 1) x = (4, 8).
    np.testing.assert_allclose(model.dense.kernel.numpy().ravel(), [1 - 0.4, 1 - 0.8],
                               rtol=1e-6)
    assert history.history["mse"] == [pytest.approx(4.0)]


def test_an_initializer_is_called_with_dtype_by_keyword_as_keras_does():
    """The TF basics guide: Dense(kernel_initializer=tf.random.normal), whose second
    positional parameter is `mean`."""
    gt.random.set_seed(3)
    layer = keras.layers.Dense(4, kernel_initializer=gt.random.normal)
    layer(np.ones((2, 300), np.float32))
    kernel = layer.kernel.numpy()
    assert kernel.dtype == np.float32 and kernel.shape == (300, 4)
    # N(0, 1): the mean is 0 (not the dtype), the spread about 1.
    assert abs(kernel.mean()) < 0.1 and 0.9 < kernel.std() < 1.1
    seen = {}

    def init(shape, dtype=None):
        seen["dtype"] = dtype
        return gt.zeros(shape, dtype)

    keras.layers.Dense(2, kernel_initializer=init, dtype="float64")(np.ones((1, 3)))
    assert seen["dtype"] == np.float64


class _Scaled(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.plain = gt.Variable(2.0, name="plain")  # a tf.Variable: Keras 3 ignores it
        self.tracked = keras.Variable(3.0, name="tracked")
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.plain * self.tracked * self.dense(x)


def test_a_plain_variable_assigned_to_a_layer_is_not_a_weight_as_in_keras_3():
    with pytest.warns(UserWarning, match=r"_Scaled.plain is a gt.Variable") as caught:
        layer = _Scaled()
    assert caught[0].filename == __file__  # the user's assignment
    layer(np.ones((1, 2), np.float32))
    assert [v.name for v in layer.trainable_weights] == ["tracked", "kernel", "bias"]
    assert [v.name for v in layer.weights] == ["tracked", "kernel", "bias"]
    assert len(layer.trainable_variables) == 3
    model = keras.Sequential([layer])
    assert len(model.trainable_weights) == 3


def test_a_plain_variable_in_a_gt_module_is_still_tracked():
    class Plain(gt.Module):
        def __init__(self):
            super().__init__()
            self.w = gt.Variable(1.0)
            self.layer = keras.layers.Dense(1)

    module = Plain()
    module.layer(np.ones((1, 2), np.float32))
    assert len(module.trainable_variables) == 3


@pytest.mark.filterwarnings("ignore:.*Keras 3 does not track:UserWarning")
def test_a_plain_variable_on_a_layer_is_still_checkpointed(tmp_path):
    layer = _Scaled()
    layer(np.ones((1, 2), np.float32))
    path = gt.train.Checkpoint(layer=layer).save(str(tmp_path / "ckpt"))
    layer.plain.assign(5.0)
    gt.train.Checkpoint(layer=layer).restore(path)
    assert float(layer.plain) == 2.0


def test_a_numpy_function_without_a_rule_runs_on_the_array():
    probabilities = gt.nn.softmax(gt.constant(np.linspace(-1, 1, 50, dtype=np.float32)))
    kept = np.piecewise(probabilities, [probabilities > 0.02], [1.0, 0.0])
    assert isinstance(kept, np.ndarray)
    np.testing.assert_array_equal(kept, (probabilities.numpy() > 0.02).astype(np.float32))
    counts, edges = np.histogram(gt.constant([1.0, 2.0, 3.0]), bins=2)
    np.testing.assert_array_equal(counts, [1, 2])
    np.testing.assert_allclose(edges, [1.0, 2.0, 3.0])


def test_a_watched_tensor_through_such_a_function_warns_naming_it_and_the_line():
    x = gt.Variable([0.5, 2.0])
    with gt.GradientTape() as tape:
        y = x * 2.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.piecewise(y, [y > 2.0], [1.0, 0.0])
    messages = [str(w.message) for w in caught if w.category is gt.GradientDroppedWarning]
    assert len(messages) == 1
    assert "np.piecewise" in messages[0] and __file__ in messages[0]
    del tape
