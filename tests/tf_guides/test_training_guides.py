"""Cells of TF's "Basic training loops" guide (tensorflow.org/guide/basic_training_loops)
and the core APIs "Optimizers" guide (tensorflow.org/guide/core/optimizers_core), run with
``import gradtape as tf``; each checks the values the guides print. Keras models and
plotting are left out."""

import numpy as np
import pytest

import gradtape as tf

TRUE_W = 3.0
TRUE_B = 2.0
NUM_EXAMPLES = 201


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Initialize the weights to `5.0` and the bias to `0.0`
        # In practice, these should be randomly initialized
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


def loss(target_y, predicted_y):
    return tf.reduce_mean(tf.square(target_y - predicted_y))


def train(model, x, y, learning_rate):
    with tf.GradientTape() as t:
        # Trainable variables are automatically tracked by GradientTape
        current_loss = loss(y, model(x))
    # Use GradientTape to calculate the gradients with respect to W and b
    dw, db = t.gradient(current_loss, [model.w, model.b])
    # Subtract the gradient scaled by the learning rate
    model.w.assign_sub(learning_rate * dw)
    model.b.assign_sub(learning_rate * db)


def report(model, loss):
    return f"W = {model.w.numpy():1.2f}, b = {model.b.numpy():1.2f}, loss={loss:2.5f}"


def test_basic_training_loop():
    x = tf.linspace(-2, 2, NUM_EXAMPLES)
    x = tf.cast(x, tf.float32)

    def f(x):
        return x * TRUE_W + TRUE_B

    tf.random.set_seed(1)
    noise = tf.random.normal(shape=[NUM_EXAMPLES])
    y = f(x) + noise
    model = MyModel()
    assert [v.numpy() for v in model.variables] == [0.0, 5.0]  # b, w: by attribute name
    assert model(3.0).numpy() == 15.0
    start = loss(y, model(x))
    expected = np.mean((y.numpy().astype(np.float64) - 5.0 * x.numpy()) ** 2)
    np.testing.assert_allclose(start.numpy(), expected, rtol=1e-5)
    weights, biases = [], []
    assert report(model, start).startswith("W = 5.00, b = 0.00, loss=")
    for _ in range(10):
        train(model, x, y, learning_rate=0.1)
        weights.append(model.w.numpy())
        biases.append(model.b.numpy())
    # Gradient descent on the mean squared error, step by step in float64.
    xs, ys = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    w, b = 5.0, 0.0
    for epoch in range(10):
        residual = w * xs + b - ys
        w, b = w - 0.1 * 2 * np.mean(residual * xs), b - 0.1 * 2 * np.mean(residual)
        np.testing.assert_allclose([weights[epoch], biases[epoch]], [w, b], rtol=1e-5)
    assert abs(weights[-1] - TRUE_W) < 0.6 and abs(biases[-1] - TRUE_B) < 0.6


def test_keras_named_sgd_with_a_tape():
    model = MyModel()
    x = tf.cast(tf.linspace(-2, 2, NUM_EXAMPLES), tf.float32)
    y = x * TRUE_W + TRUE_B
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    for _ in range(200):
        with tf.GradientTape() as tape:
            batch_loss = tf.keras.losses.mean_squared_error(y, model(x))
        grads = tape.gradient(batch_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    np.testing.assert_allclose([model.w.numpy(), model.b.numpy()], [TRUE_W, TRUE_B], rtol=1e-4)


# --- the core optimizers guide ------------------------------------------------------------

class GradientDescent(tf.Module):

    def __init__(self, learning_rate=1e-3):
        # Initialize parameters
        self.learning_rate = learning_rate
        self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

    def apply_gradients(self, grads, vars):
        # Update variables
        for grad, var in zip(grads, vars):
            var.assign_sub(self.learning_rate*grad)


class Momentum(tf.Module):

    def __init__(self, learning_rate=1e-3, momentum=0.7):
        # Initialize parameters
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.change = 0.
        self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

    def apply_gradients(self, grads, vars):
        # Update variables
        for grad, var in zip(grads, vars):
            curr_change = self.learning_rate*grad + self.momentum*self.change
            var.assign_sub(curr_change)
            self.change = curr_change


class Adam(tf.Module):

    def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
        # Initialize the Adam parameters
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.learning_rate = learning_rate
        self.ep = ep
        self.t = 1.
        self.v_dvar, self.s_dvar = [], []
        self.title = f"Adam: learning rate={self.learning_rate}"
        self.built = False

    def apply_gradients(self, grads, vars):
        # Set up moment and RMSprop slots for each variable on the first call
        if not self.built:
            for var in vars:
                v = tf.Variable(tf.zeros(shape=var.shape))
                s = tf.Variable(tf.zeros(shape=var.shape))
                self.v_dvar.append(v)
                self.s_dvar.append(s)
            self.built = True
        # Perform Adam updates
        for i, (d_var, var) in enumerate(zip(grads, vars)):
            # Moment calculation
            self.v_dvar[i] = self.beta_1*self.v_dvar[i] + (1-self.beta_1)*d_var
            # RMSprop calculation
            self.s_dvar[i] = self.beta_2*self.s_dvar[i] + (1-self.beta_2)*tf.square(d_var)
            # Bias correction
            v_dvar_bc = self.v_dvar[i]/(1-(self.beta_1**self.t))
            s_dvar_bc = self.s_dvar[i]/(1-(self.beta_2**self.t))
            # Update model variables
            var.assign_sub(self.learning_rate*(v_dvar_bc/(tf.sqrt(s_dvar_bc) + self.ep)))
        # Increment the iteration counter
        self.t += 1.


def loss_fn(x):
    return 2*(x**4) + 3*(x**3) + 2


def grad(f, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        result = f(x)
    return tape.gradient(result, x)


def convergence_test(optimizer, loss_fn, grad_fn=grad, init_val=2., max_iters=2000):
    # Function for optimizer convergence test; returns (outcome, iterations, path).
    x_star = tf.Variable(init_val)
    param_path = []
    for iter in range(1, max_iters + 1):
        x_grad = grad_fn(loss_fn, x_star)
        # Case for exploding gradient
        if tf.math.is_nan(x_grad):
            return "exploded", iter, []
        # Updating the variable and storing its old-version
        x_old = x_star.numpy()
        optimizer.apply_gradients([x_grad], [x_star])
        param_path.append(x_star.numpy())
        # Checking for convergence
        if x_star == x_old:
            return "converged", iter, param_path
    return "exceeded", max_iters, param_path


def test_loss_and_gradient_curves():
    x_vals = tf.linspace(-2, 2, 201)
    x_vals = tf.cast(x_vals, tf.float32)
    xs = x_vals.numpy().astype(np.float64)
    np.testing.assert_allclose(loss_fn(x_vals).numpy(), 2 * xs**4 + 3 * xs**3 + 2, rtol=1e-5)
    np.testing.assert_allclose(grad(loss_fn, x_vals).numpy(), 8 * xs**3 + 9 * xs**2,
                               rtol=1e-5, atol=1e-5)
    assert loss_fn(0) == 2  # Python numbers in, a Python number out (as in TF)
    np.testing.assert_allclose(loss_fn(tf.constant(-9/8)).numpy(), 2 * (9/8)**4 - 3 * (9/8)**3 + 2,
                               rtol=1e-6)


def _numpy_convergence(learning_rate, momentum=0.0, max_iters=2000):
    """The same test in NumPy float32, TF's arithmetic for these float32 values."""
    x, change = np.float32(2.0), np.float32(0.0)
    lr, m = np.float32(learning_rate), np.float32(momentum)
    path = []
    for iter in range(1, max_iters + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.float32(8) * x**3 + np.float32(9) * x**2
            if np.isnan(g):
                return "exploded", iter, []
            change = lr * g + m * change
            new = np.float32(x - change)
        path.append(new)
        if new == x:
            return "converged", iter, path
        x = new
    return "exceeded", max_iters, path


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the exploding runs overflow
@pytest.mark.parametrize("learning_rate", [1e-3, 1e-2, 1e-1])
@pytest.mark.parametrize("optimizer, momentum", [(GradientDescent, 0.0), (Momentum, 0.7)])
def test_convergence_tests_match_float32_arithmetic(optimizer, momentum, learning_rate):
    got = convergence_test(optimizer(learning_rate=learning_rate), loss_fn=loss_fn)
    expected = _numpy_convergence(learning_rate, momentum)
    assert got[:2] == expected[:2]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-5, atol=1e-6)
    if learning_rate == 1e-1:
        assert got[:2] == ("exploded", 6)  # the guide: "Gradient exploded at iteration 6"


def test_adam_converges_to_the_global_minimum():
    result, n, path = convergence_test(Adam(learning_rate=1e-1), loss_fn=loss_fn)
    assert result == "converged"
    np.testing.assert_allclose(path[-1], -9 / 8, atol=2e-3)
    assert GradientDescent().title == "Gradient descent optimizer: learning rate=0.001"
