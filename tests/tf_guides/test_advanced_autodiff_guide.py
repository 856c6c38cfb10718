"""Cells of TF's "Advanced automatic differentiation" guide
(tensorflow.org/guide/advanced_autodiff), run with ``import gradtape as tf``; each
checks the values the guide prints. Keras-layer and SavedModel cells are left out (the
custom-gradient module keeps its ``tf.function``, called directly)."""

import logging

import numpy as np

import gradtape as tf


def test_stop_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_reset():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            # Throw out all the tape recorded so far.
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_stop_gradient():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_clips_the_gradient():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert t.gradient(output, v).numpy() == 2.0  # calls "backward", which clips 4 to 2


def test_custom_gradient_inside_a_module_function(caplog):
    class MyModule(tf.Module):

        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    model = MyModule()
    v = tf.Variable(2.0)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for _ in range(2):
            with tf.GradientTape() as t:
                output = model.call_custom_grad(v * v)
            assert output.numpy() == 4.0
            assert t.gradient(output, v).numpy() == 2.0
    assert sum("custom_gradient" in r.message for r in caplog.records) == 1


def test_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0   # cos(x) => 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25


def test_higher_order_gradients():
    x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        # Compute the gradient inside the outer `t2` context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0


def test_jacobian_of_a_scalar_source():
    x = tf.linspace(-10.0, 10.0, 200+1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x+delta)
    dy_dx = tape.jacobian(y, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_jacobian_and_batch_jacobian_of_a_dense_layer():
    # The guide's Dense layers, written as a matmul (Keras layers are out of scope).
    x = tf.random.normal([7, 5])
    w = tf.Variable(tf.random.normal([5, 10]))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w)
    j = tape.jacobian(y, w)
    assert j.shape == (7, 10, 5, 10)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 10, 5)
    full = tape.jacobian(y, x, experimental_use_pfor=False)
    assert full.shape == (7, 10, 7, 5)
    j_select = tf.einsum('bxby->bxy', full)
    np.testing.assert_allclose(j_select.numpy(), jb.numpy(), rtol=1e-6)
    j_sum = tf.reduce_sum(full, axis=2)
    np.testing.assert_allclose(j_sum.numpy(), jb.numpy(), rtol=1e-5, atol=1e-6)


def test_forward_accumulator_under_tf_autodiff():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    v = tf.constant([1.0, 0.5], dtype=tf.float64)
    assert tf.autodiff.ForwardAccumulator is tf.ForwardAccumulator
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = tf.reduce_sum(tf.sin(x) * x)
    # d/dx sum(x sin x) = sin x + x cos x, along v.
    xs = np.array([1.0, 2.0])
    np.testing.assert_allclose(acc.jvp(y).numpy(),
                               np.sum((np.sin(xs) + xs * np.cos(xs)) * [1.0, 0.5]))
