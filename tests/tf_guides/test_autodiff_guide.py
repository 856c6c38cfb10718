"""Cells of TF's "Introduction to gradients and automatic differentiation" guide
(tensorflow.org/guide/autodiff), run with ``import gradtape as tf``; each checks the
values the guide prints. Keras-layer and plotting cells are left out."""

import numpy as np
import pytest

import gradtape as tf


def test_gradient_of_a_variable():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0


def test_gradients_of_a_list_and_a_dict_of_variables():
    w = tf.Variable(tf.random.normal((3, 2)), name='w')
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y**2)
    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    assert w.shape == (3, 2) and dl_dw.shape == (3, 2)
    y_value = np.array(x, np.float32) @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_db.numpy(), y_value[0], rtol=1e-6)  # d mean(y^2)/db
    my_vars = {'w': w, 'b': b}
    grad = tape.gradient(loss, my_vars)
    np.testing.assert_allclose(grad['b'].numpy(), dl_db.numpy())


def test_watched_variables():
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0 and grad[1:] == [None, None, None]
    assert [var.name for var in tape.watched_variables()] == ['x0:0']


def test_watching_a_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0


def test_watch_accessed_variables_false():
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
    assert grad['x0'] is None
    np.testing.assert_allclose(grad['x1'].numpy(), 0.9999546, rtol=1e-6)


def test_intermediate_results_and_persistent_tapes():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [4.0, 108.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 6.0])
    del tape


def test_gradient_of_several_targets_is_their_sum():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient({'y0': y0, 'y1': y1}, x).numpy() == 3.75
    x = tf.Variable(2.)
    with tf.GradientTape() as tape:
        y = x * [3., 4.]
    assert tape.gradient(y, x).numpy() == 7.0


def test_sigmoid_gradient_over_linspace():
    x = tf.linspace(-10.0, 10.0, 200+1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    dy_dx = tape.gradient(y, x)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_control_flow_picks_the_variable_read():
    x = tf.constant(1.0)
    v0 = tf.Variable(2.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1**2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0.numpy() == 1.0 and dv1 is None
    assert tape.gradient(result, x) is None


def test_none_gradients():
    x = tf.Variable(2.)
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    x = tf.Variable(2.0)
    seen = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            y = x+1
        seen.append(tape.gradient(y, x))
        x = x + 1   # This should be `x.assign_add(1)`
    assert seen[0].numpy() == 1.0 and seen[1] is None


def test_numpy_inside_a_tape_drops_the_gradient():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with pytest.warns(tf.GradientDroppedWarning):
        with tf.GradientTape() as tape:
            x2 = x**2
            # This step is calculated with NumPy
            y = np.mean(np.asarray(x2), axis=0)
            # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
            # using `tf.convert_to_tensor`.
            y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None


def test_integer_source_and_stateful_ops():
    x = tf.constant(10)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert g.gradient(y, x) is None
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        # Update x1 = x1 + x0.
        x1.assign_add(x0)
        # The tape starts recording from x1.
        y = x1**2   # y = (x1 + x0)**2
    # This doesn't work.
    assert tape.gradient(y, x0) is None


def test_unconnected_gradients_zero():
    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y**2
    out = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0])
