"""TF's top-level initializers, keras's Orthogonal, and the small TF names programs
reach for: ``tf.metrics``, ``tf.newaxis``, ``Tensor.set_shape`` and the decorator form of
``tf.numpy_function`` / ``tf.py_function``."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


def test_tf_initializers_are_called_with_shape_and_dtype():
    assert gt.zeros_initializer()((2, 3)).numpy().tolist() == [[0.0] * 3] * 2
    assert gt.ones_initializer()([2], dtype=gt.float64).dtype == np.float64
    np.testing.assert_array_equal(gt.constant_initializer(7.0)((2, 2)).numpy(),
                                  np.full((2, 2), 7.0, np.float32))
    np.testing.assert_array_equal(gt.constant_initializer([1, 2, 3, 4])((2, 2)).numpy(),
                                  [[1, 2], [3, 4]])
    assert gt.constant_initializer([1, 2, 3, 4])((2, 2)).dtype == np.int32  # tf.constant's
    with pytest.raises(TypeError, match="elements"):
        gt.constant_initializer([1, 2, 3])((2, 2))
    uniform = gt.random_uniform_initializer(-1.0, 2.0)((4000,)).numpy()
    assert uniform.dtype == np.float32 and uniform.min() >= -1.0 and uniform.max() < 2.0
    assert abs(uniform.mean() - 0.5) < 0.05
    normal = gt.random_normal_initializer(mean=1.0, stddev=0.5)((4000,)).numpy()
    assert abs(normal.mean() - 1.0) < 0.03 and abs(normal.std() - 0.5) < 0.03
    assert gt.random_normal_initializer().stddev == 0.05
    assert gt.random_uniform_initializer().maxval == 0.05


def test_seeded_tf_initializers_repeat_and_glorot_limits():
    init = gt.random_normal_initializer(seed=4)
    np.testing.assert_array_equal(init((3, 3)).numpy(), init((3, 3)).numpy())
    glorot = gt.glorot_uniform_initializer(seed=2)((30, 20)).numpy()
    limit = np.sqrt(6.0 / 50.0)
    assert np.abs(glorot).max() <= limit and np.abs(glorot).max() > 0.9 * limit


def test_a_tf_initializer_is_a_keras_kernel_initializer():
    layer = keras.layers.Dense(3, kernel_initializer=gt.constant_initializer(0.5),
                               bias_initializer=gt.random_uniform_initializer(1.0, 1.5))
    layer(np.ones((1, 2), np.float32))
    np.testing.assert_array_equal(layer.kernel.numpy(), np.full((2, 3), 0.5, np.float32))
    assert layer.kernel.dtype == np.float32 and float(gt.reduce_min(layer.bias)) >= 1.0


def test_orthogonal_initializer_is_orthogonal_times_gain():
    q = keras.initializers.Orthogonal(gain=2.0, seed=1)((3, 5)).numpy()
    np.testing.assert_allclose(q @ q.T, 4.0 * np.eye(3), atol=1e-5)
    tall = keras.initializers.get("orthogonal")((2, 3, 4)).numpy().reshape(6, 4)
    np.testing.assert_allclose(tall.T @ tall, np.eye(4), atol=1e-5)
    seeded = keras.initializers.Orthogonal(seed=3)
    np.testing.assert_array_equal(seeded((4, 4)).numpy(), seeded((4, 4)).numpy())
    with pytest.raises(ValueError, match="two-dimensional"):
        keras.initializers.Orthogonal()((3,))


def test_tf_metrics_and_newaxis():
    assert gt.metrics.Mean is gt.keras.metrics.Mean and gt.metrics.AUC is gt.keras.metrics.AUC
    assert {n for n in dir(gt.metrics) if not n.startswith("_")} == \
        set(gt.keras.metrics.__all__)
    assert gt.newaxis is None and gt.constant([1.0, 2.0])[:, gt.newaxis].shape == (2, 1)


def test_set_shape_checks_compatibility_as_tf_eager():
    t = gt.constant([[1.0, 2.0, 3.0]])
    t.set_shape([1, 3])
    t.set_shape([None, 3])
    t.set_shape(gt.TensorShape([1, None]))
    t.set_shape(None)
    with pytest.raises(ValueError, match=r"shape \(1, 3\) is not compatible with supplied "
                                         r"shape \(3, 1\)"):
        t.set_shape([3, 1])
    with pytest.raises(ValueError, match="not compatible"):
        t.set_shape([1, 3, 1])

    @gt.function
    def inside(x):
        x.set_shape([None, 3])
        return x * 2.0

    np.testing.assert_array_equal(inside(t).numpy(), [[2.0, 4.0, 6.0]])


def test_numpy_function_and_py_function_as_decorators():
    @gt.numpy_function(Tout=gt.float32)
    def doubled(x, y):
        assert isinstance(x, np.ndarray)
        return (2 * x + y).astype(np.float32)

    x = gt.constant([1.0, 2.0])
    np.testing.assert_array_equal(doubled(x, gt.constant(1.0)).numpy(), [3.0, 5.0])
    assert doubled.__name__ == "doubled"

    @gt.py_function(Tout=gt.float32)
    def squared(t):
        return t * t

    v = gt.Variable([3.0])
    with gt.GradientTape() as tape:
        y = squared(v)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [6.0])

    @gt.function
    def traced(t):
        return doubled(t, t)

    np.testing.assert_array_equal(traced(x).numpy(), [3.0, 6.0])


def test_numpy_function_argument_errors_are_tfs():
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        gt.numpy_function(lambda x: x)
    with pytest.raises(TypeError, match="Don't set the `inp` argument"):
        gt.py_function(inp=[1.0], Tout=gt.float32)
    with pytest.raises(TypeError, match="Missing argument `inp`"):
        gt.numpy_function(lambda x: x, Tout=gt.float32)
    np.testing.assert_array_equal(
        gt.numpy_function(lambda a: a + 1, [np.float32(1.0)], gt.float32).numpy(), 2.0)
