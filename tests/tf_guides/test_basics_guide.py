"""Cells of TF's "TensorFlow basics" guide (tensorflow.org/guide/basics), run with
``import gradtape as tf``; each checks the values the guide prints. The tf.data,
SavedModel, plotting and Keras cells are left out (the training loop iterates over
slices instead of a Dataset)."""

import numpy as np

import gradtape as tf


def test_tensors():
    x = tf.constant([[1., 2., 3.],
                     [4., 5., 6.]])
    assert x.shape == (2, 3) and x.dtype == tf.float32
    np.testing.assert_array_equal((x + x).numpy(), [[2, 4, 6], [8, 10, 12]])
    np.testing.assert_array_equal((5 * x).numpy(), [[5, 10, 15], [20, 25, 30]])
    np.testing.assert_array_equal((x @ tf.transpose(x)).numpy(), [[14, 32], [32, 77]])
    assert tf.concat([x, x, x], axis=0).shape == (6, 3)
    e = np.exp([1., 2., 3.])
    np.testing.assert_allclose(tf.nn.softmax(x, axis=-1).numpy()[0], e / e.sum(), rtol=1e-6)
    assert tf.reduce_sum(x).numpy() == 21.0
    t = tf.convert_to_tensor([1, 2, 3])
    assert t.dtype == tf.int32
    s = tf.reduce_sum([1, 2, 3])
    assert s.numpy() == 6 and s.dtype == tf.int32


def test_gpu_check_takes_the_cpu_branch():
    if tf.config.list_physical_devices('GPU'):
        using = "TensorFlow **IS** using the GPU"
    else:
        using = "TensorFlow **IS NOT** using the GPU"
    assert using == "TensorFlow **IS NOT** using the GPU"


def test_variables():
    var = tf.Variable([0.0, 0.0, 0.0])
    var.assign([1, 2, 3])
    np.testing.assert_array_equal(var.numpy(), [1, 2, 3])
    var.assign_add([1, 1, 1])
    np.testing.assert_array_equal(var.numpy(), [2, 3, 4])


def test_automatic_differentiation():
    x = tf.Variable(1.0)

    def f(x):
        y = x**2 + 2*x - 5
        return y

    assert f(x).numpy() == -2.0
    with tf.GradientTape() as tape:
        y = f(x)
    g_x = tape.gradient(y, x)  # g(x) = dy/dx
    assert g_x.numpy() == 4.0


def test_graphs_and_tf_function(capsys):
    @tf.function
    def my_func(x):
        print('Tracing.\n')
        return tf.reduce_sum(x)

    assert my_func(tf.constant([1, 2, 3])).numpy() == 6
    assert my_func(tf.constant([10, 9, 8])).numpy() == 27
    assert capsys.readouterr().out.count("Tracing.") == 1
    out = my_func(tf.constant([10.0, 9.1, 8.2], dtype=tf.float32))
    np.testing.assert_allclose(out.numpy(), 27.3, rtol=1e-6)
    assert capsys.readouterr().out.count("Tracing.") == 1  # a new dtype: traced again


def test_modules():
    class MyModule(tf.Module):
        def __init__(self, value):
            self.weight = tf.Variable(value)

        @tf.function
        def multiply(self, x):
            return x * self.weight

    mod = MyModule(3)
    np.testing.assert_array_equal(mod.multiply(tf.constant([1, 2, 3])).numpy(), [3, 6, 9])


def test_training_loop():
    x = tf.linspace(-2, 2, 201)
    x = tf.cast(x, tf.float32)

    def f(x):
        y = x**2 + 2*x - 5
        return y

    tf.random.set_seed(0)
    y = f(x) + tf.random.normal(shape=[201])

    class Model(tf.Module):

        def __init__(self):
            # Randomly generate weight and bias terms
            rand_init = tf.random.uniform(shape=[3], minval=0., maxval=5., seed=22)
            # Initialize model parameters
            self.w_q = tf.Variable(rand_init[0])
            self.w_l = tf.Variable(rand_init[1])
            self.b = tf.Variable(rand_init[2])

        @tf.function
        def __call__(self, x):
            # Quadratic Model : quadratic_weight * x^2 + linear_weight * x + bias
            return self.w_q * (x**2) + self.w_l * x + self.b

    quad_model = Model()

    def mse_loss(y_pred, y):
        return tf.reduce_mean(tf.square(y_pred - y))

    batch_size = 32
    epochs = 100
    learning_rate = 0.01
    losses = []
    order = np.random.default_rng(0).permutation(201)
    for _epoch in range(epochs):
        for start in range(0, 201, batch_size):
            idx = order[start:start + batch_size]
            x_batch, y_batch = tf.gather(x, idx), tf.gather(y, idx)
            with tf.GradientTape() as tape:
                batch_loss = mse_loss(quad_model(x_batch), y_batch)
            # Update parameters with respect to the gradient calculations
            grads = tape.gradient(batch_loss, quad_model.variables)
            for g, v in zip(grads, quad_model.variables):
                v.assign_sub(learning_rate*g)
        loss = mse_loss(quad_model(x), y)
        losses.append(loss)
    # The model finds the quadratic: the loss ends near the noise variance (1.0).
    assert losses[-1].numpy() < 1.3 < losses[0].numpy()
    assert len(quad_model.variables) == 3
    np.testing.assert_allclose(float(quad_model.w_q.numpy()), 1.0, atol=0.25)
    np.testing.assert_allclose(float(quad_model.w_l.numpy()), 2.0, atol=0.25)
