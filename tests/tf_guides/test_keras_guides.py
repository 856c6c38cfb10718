"""Keras cells of TF's guides, run with ``import gradtape as tf``: "Introduction to
gradients and automatic differentiation" (gradients with respect to a model), "Advanced
automatic differentiation" (Jacobians of Dense layers, batch Jacobian with
BatchNormalization, the Hessian and a Newton step), "Introduction to modules, layers, and
models" (Keras layers and models) and "Basic training loops" (the Keras model). Each cell
is as the guide writes it; the checks are what the guides print where it is deterministic.
Plotting, SavedModel and Keras's own checkpoint files are left out."""

import re

import numpy as np
import pytest

import gradtape as tf


@pytest.fixture(autouse=True)
def fresh_session():
    tf.keras.backend.clear_session()
    tf.random.set_seed(1)


# --- Introduction to gradients: "Gradients with respect to a model" -------------------------

def test_gradients_with_respect_to_a_model(capsys):
    layer = tf.keras.layers.Dense(2, activation='relu')
    x = tf.constant([[1., 2., 3.]])

    with tf.GradientTape() as tape:
      # Forward pass
      y = layer(x)
      loss = tf.reduce_mean(y**2)

    # Calculate gradients with respect to every trainable variable
    grad = tape.gradient(loss, layer.trainable_variables)

    for var, g in zip(layer.trainable_variables, grad):
      print(f'{var.name}, shape: {g.shape}')

    assert capsys.readouterr().out == "kernel, shape: (3, 2)\nbias, shape: (2,)\n"
    # d mean(relu(xW + b)^2) / dW = x^T (relu'(.) * 2 y / 2)
    y_np = np.maximum(x.numpy() @ layer.kernel.numpy(), 0)
    np.testing.assert_allclose(grad[0].numpy(), x.numpy().T @ (y_np * (y_np > 0)), rtol=1e-5)
    np.testing.assert_allclose(grad[1].numpy(), (y_np * (y_np > 0))[0], rtol=1e-5)


# --- Advanced automatic differentiation -----------------------------------------------------

def test_jacobian_of_a_dense_layer(capsys):
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

    with tf.GradientTape(persistent=True) as tape:
      y = layer(x)

    assert y.shape == (7, 10)
    assert layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)

    g = tape.gradient(y, layer.kernel)
    print('g.shape:', g.shape)

    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print('delta:', delta)
    assert capsys.readouterr().out.startswith("g.shape: (5, 10)\ndelta: ")


def test_hessian_and_newton_step(capsys):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)

    with tf.GradientTape() as t2:
      with tf.GradientTape() as t1:
        x = layer1(x)
        x = layer2(x)
        loss = tf.reduce_mean(x**2)

      g = t1.gradient(loss, layer1.kernel)

    h = t2.jacobian(g, layer1.kernel)

    print(f'layer.kernel.shape: {layer1.kernel.shape}')
    print(f'h.shape: {h.shape}')
    assert capsys.readouterr().out == ("layer.kernel.shape: (5, 8)\n"
                                       "h.shape: (5, 8, 5, 8)\n")

    n_params = tf.reduce_prod(layer1.kernel.shape)

    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    # The Hessian of a sum of squares of a piecewise-linear network is symmetric.
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0])*eps

    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)

    # Reshape the update and apply it to the variable.
    before = layer1.kernel.numpy()
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    expected = np.linalg.solve(h_mat.numpy().astype(np.float64) + 1e-3 * np.eye(40),
                               g_vec.numpy().astype(np.float64))
    np.testing.assert_allclose(before - layer1.kernel.numpy(), expected.reshape(5, 8),
                               rtol=1e-2, atol=1e-4)


def test_batch_jacobian_of_dense_layers():
    x = tf.random.normal([7, 5])

    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
      tape.watch(x)
      y = layer1(x)
      y = layer2(y)

    assert y.shape == (7, 6)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)

    j_sum = tf.reduce_sum(j, axis=2)
    assert j_sum.shape == (7, 6, 5)
    j_select = tf.einsum('bxby->bxy', j)
    assert j_select.shape == (7, 6, 5)

    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    np.testing.assert_allclose(jb.numpy(), j_select.numpy(), rtol=1e-6, atol=1e-7)


def test_batch_jacobian_with_batch_normalization(capsys):
    x = tf.random.normal([7, 5])

    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
      tape.watch(x)
      y = layer1(x)
      y = bn(y, training=True)
      y = layer2(y)

    j = tape.jacobian(y, x)
    print(f'j.shape: {j.shape}')
    jb = tape.batch_jacobian(y, x)
    print(f'jb.shape: {jb.shape}')
    assert capsys.readouterr().out == "j.shape: (7, 6, 7, 5)\njb.shape: (7, 6, 5)\n"
    # Batch statistics couple the examples: the off-diagonal blocks are not zero
    # ("these are not block-diagonal"). batch_jacobian then returns what TF's does, the
    # gradient of each output summed over the batch: j summed over its first axis.
    off_diagonal = j.numpy()[0, :, 1, :]
    assert np.abs(off_diagonal).max() > 1e-3
    np.testing.assert_allclose(jb.numpy(), np.transpose(j.numpy().sum(0), (1, 0, 2)),
                               rtol=1e-5, atol=1e-6)
    assert np.abs(jb.numpy() - tf.einsum('bxby->bxy', j).numpy()).max() > 1e-2
    # training=True moved the moving statistics a step (momentum 0.99) toward the batch's.
    assert np.abs(bn.moving_mean.numpy()).max() > 0


# --- Introduction to modules, layers, and models: Keras layers ------------------------------

class MyDense(tf.keras.layers.Layer):
  # Adding **kwargs to support base Keras layer arguments
  def __init__(self, in_features, out_features, **kwargs):
    super().__init__(**kwargs)

    # This will soon move to the build step; see below
    self.w = tf.Variable(
      tf.random.normal([in_features, out_features]), name='w')
    self.b = tf.Variable(tf.zeros([out_features]), name='b')
  def call(self, x):
    y = tf.matmul(x, self.w) + self.b
    return tf.nn.relu(y)


class FlexibleDense(tf.keras.layers.Layer):
  # Note the added `**kwargs`, as Keras supports many arguments
  def __init__(self, out_features, **kwargs):
    super().__init__(**kwargs)
    self.out_features = out_features

  def build(self, input_shape):  # Create the state of the layer (weights)
    self.w = tf.Variable(
      tf.random.normal([input_shape[-1], self.out_features]), name='w')
    self.b = tf.Variable(tf.zeros([self.out_features]), name='b')

  def call(self, inputs):  # Defines the computation from inputs to outputs
    return tf.matmul(inputs, self.w) + self.b


class MySequentialModel(tf.keras.Model):
  def __init__(self, name=None, **kwargs):
    super().__init__(**kwargs)

    self.dense_1 = FlexibleDense(out_features=3)
    self.dense_2 = FlexibleDense(out_features=2)
  def call(self, x):
    x = self.dense_1(x)
    return self.dense_2(x)


# Keras 3 tracks only keras.Variable attributes (and add_weight's): these guide layers'
# tf.Variables are in no weight list, as under TF 2.21 (the guide's printed outputs are
# Keras 2's). gradtape says so where the variable is assigned.
_UNTRACKED = pytest.mark.filterwarnings("ignore:.*Keras 3 does not track:UserWarning")


def test_keras_layer_with_variables_in_init():
    with pytest.warns(UserWarning, match="Keras 3 does not track") as caught:
        simple_layer = MyDense(name="simple", in_features=3, out_features=3)
    assert [str(w.message).split(" ")[0] for w in caught] == ["MyDense.w", "MyDense.b"]
    out = simple_layer([[2.0, 2.0, 2.0]])
    expected = np.maximum(np.full((1, 3), 2.0) @ simple_layer.w.numpy(), 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert simple_layer.name == "simple"
    assert simple_layer.variables == []  # Keras 3: tf.Variable attributes are not weights


@_UNTRACKED
def test_the_build_step(capsys):
    # Create the instance of the layer
    flexible_dense = FlexibleDense(out_features=3)
    assert flexible_dense.variables == []

    # Call it, with predictably random results
    print("Model results:", flexible_dense(tf.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])))
    assert flexible_dense.variables == [] and flexible_dense.w.shape == (3, 3)
    w = flexible_dense.w.numpy()

    try:
      print("Model results:", flexible_dense(tf.constant([[2.0, 2.0, 2.0, 2.0]])))
    except tf.errors.InvalidArgumentError as e:
      print("Failed:", e)

    out = capsys.readouterr().out
    assert out.startswith("Model results: ") and "\nFailed: " in out
    np.testing.assert_allclose(flexible_dense(tf.constant([[1.0, 0.0, 0.0]])).numpy(),
                               w[:1], rtol=1e-6)


@_UNTRACKED
def test_keras_models(capsys):
    my_sequential_model = MySequentialModel(name="the_model")
    # Call it on a tensor, with random results
    print("Model results:", my_sequential_model(tf.constant([[2.0, 2.0, 2.0]])))
    assert len(my_sequential_model.variables) == 0
    assert [type(m).__name__ for m in my_sequential_model.submodules] == ["FlexibleDense"] * 2
    # The guide's `name=` is not passed on: the class name is the model's name.
    assert my_sequential_model.name == "my_sequential_model"
    d1, d2 = my_sequential_model.dense_1, my_sequential_model.dense_2
    expected = (np.full((1, 3), 2.0) @ d1.w.numpy() + d1.b.numpy()) @ d2.w.numpy()
    assert capsys.readouterr().out.startswith("Model results: ")
    np.testing.assert_allclose(my_sequential_model(tf.constant([[2.0, 2.0, 2.0]])).numpy(),
                               expected, rtol=1e-5)
    my_sequential_model.summary()
    summary = capsys.readouterr().out
    assert 'Model: "my_sequential_model"' in summary and "(FlexibleDense)" in summary
    assert " Total params: 0 (0.00 B)" in summary


@_UNTRACKED
def test_functional_api(capsys):
    inputs = tf.keras.Input(shape=[3,])

    x = FlexibleDense(3)(inputs)
    x = FlexibleDense(2)(x)

    my_functional_model = tf.keras.Model(inputs=inputs, outputs=x)

    my_functional_model.summary()
    summary = capsys.readouterr().out.splitlines()
    assert summary[0] == 'Model: "functional"'
    rows = [line for line in summary if line.startswith("│")]
    assert ["(None, 3)" in rows[0], "(None, 3)" in rows[1], "(None, 2)" in rows[2]] == [True] * 3
    assert "input_layer (InputLayer)" in rows[0] and rows[2].rstrip(" │").endswith(" 0")

    out = my_functional_model(tf.constant([[2.0, 2.0, 2.0]]))
    first, second = my_functional_model.layers[1:]
    expected = (np.full((1, 3), 2.0) @ first.w.numpy()) @ second.w.numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


# --- Basic training loops: the same solution, but with Keras --------------------------------

TRUE_W = 3.0
TRUE_B = 2.0
NUM_EXAMPLES = 201


class MyModelKeras(tf.keras.Model):
  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    # Initialize the weights to `5.0` and the bias to `0.0`
    # In practice, these should be randomly initialized
    self.w = tf.Variable(5.0)
    self.b = tf.Variable(0.0)

  def call(self, x):
    return self.w * x + self.b


def loss(target_y, predicted_y):
    return tf.reduce_mean(tf.square(target_y - predicted_y))


def train(model, x, y, learning_rate):
    with tf.GradientTape() as t:
        current_loss = loss(y, model(x))
    dw, db = t.gradient(current_loss, [model.w, model.b])
    model.w.assign_sub(learning_rate * dw)
    model.b.assign_sub(learning_rate * db)


def training_loop(model, x, y):
    for epoch in range(10):  # noqa: B007 - as the guide writes it
        train(model, x, y, learning_rate=0.1)


@_UNTRACKED
@pytest.mark.filterwarnings("ignore:The model does not have any trainable weights")
def test_keras_model_in_the_training_loop_and_fit(capsys):
    x = tf.linspace(-2, 2, NUM_EXAMPLES)
    x = tf.cast(x, tf.float32)

    def f(x):
      return x * TRUE_W + TRUE_B

    noise = tf.random.normal(shape=[NUM_EXAMPLES])
    y = f(x) + noise

    keras_model = MyModelKeras()

    # Reuse the training loop with a Keras model
    training_loop(keras_model, x, y)
    looped = (keras_model.w.numpy(), keras_model.b.numpy())
    assert keras_model.variables == [] and looped != (5.0, 0.0)

    keras_model = MyModelKeras()

    # compile sets the training parameters
    keras_model.compile(
        # By default, fit() uses tf.function().  You can
        # turn that off for debugging, but it is on now.
        run_eagerly=False,

        # Using a built-in optimizer, configuring as an object
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),

        # Keras comes with built-in MSE error
        # However, you could use the loss function
        # defined above
        loss=tf.keras.losses.mean_squared_error,
    )
    print(x.shape[0])
    history = keras_model.fit(x, y, epochs=10, batch_size=1000)

    # Keras 3's progress bar (verbose="auto"), its escapes left out; off a terminal each
    # update starts a line, as Keras writes there.
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert out.startswith("201\nEpoch 1/10\n\n1/1 ━━━━━━━━━━━━━━━━━━━━ ")
    assert " - loss: " in out and "Epoch 10/10" in out
    # Keras 3: the model has no weights (its tf.Variables are untracked), so fit trains
    # nothing; the loss stays that of w = 5, b = 0.
    assert (keras_model.w.numpy(), keras_model.b.numpy()) == (5.0, 0.0)
    losses = history.history["loss"]
    assert len(losses) == 10 and np.allclose(losses, losses[0], rtol=1e-6)


# --- Writing a training loop from scratch (Keras guide, TF backend) -------------------------
# MNIST and tf.data are replaced by NumPy batches of a synthetic 10-class problem.

def _synthetic_digits(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 784)).astype("float32")
    y = np.argmax(x @ np.random.default_rng(99).standard_normal((784, 10)), axis=1)
    return x, y


def _batches(x, y, batch_size=64):
    return [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, len(x), batch_size)]


def test_training_loop_from_scratch_with_metrics_and_tf_function():
    keras = tf.keras

    def get_model():
        inputs = keras.Input(shape=(784,), name="digits")
        x1 = keras.layers.Dense(64, activation="relu")(inputs)
        x2 = keras.layers.Dense(64, activation="relu")(x1)
        outputs = keras.layers.Dense(10, name="predictions")(x2)
        model = keras.Model(inputs=inputs, outputs=outputs)
        return model

    model = get_model()
    assert [layer.name for layer in model.layers] == ["digits", "dense", "dense_1",
                                                     "predictions"]
    # Instantiate an optimizer.
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    # Instantiate a loss function.
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # Prepare the metrics.
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    x_train, y_train = _synthetic_digits(512, 0)
    x_val, y_val = _synthetic_digits(256, 1)
    accuracies, losses = [], []
    for epoch in range(3):  # noqa: B007 - as the guide writes it
        for x_batch_train, y_batch_train in _batches(x_train, y_train):
            loss_value = train_step(x_batch_train, y_batch_train)
        losses.append(float(loss_value))
        accuracies.append(float(train_acc_metric.result()))
        train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in _batches(x_val, y_val):
        test_step(x_batch_val, y_batch_val)
    val_acc = float(val_acc_metric.result())

    assert accuracies[-1] > accuracies[0] and accuracies[-1] > 0.5
    assert losses[-1] < losses[0]
    predicted = np.argmax(model(x_val).numpy(), axis=1)
    np.testing.assert_allclose(val_acc, np.mean(predicted == y_val), rtol=1e-6)


def test_losses_tracked_by_the_model():
    keras = tf.keras

    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu")(inputs)
    # Insert activity regularization as a layer
    x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)

    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x_batch, y_batch = _synthetic_digits(8, 2)
    with tf.GradientTape() as tape:
        logits = model(x_batch, training=True)
        loss_value = loss_fn(y_batch, logits)
        # Add any extra losses created during the forward pass.
        loss_value += sum(model.losses)
    grads = tape.gradient(loss_value, model.trainable_weights)

    dense = model.layers[1]
    hidden = np.maximum(x_batch @ dense.kernel.numpy() + dense.bias.numpy(), 0)
    assert len(model.losses) == 1
    np.testing.assert_allclose(float(model.losses[0]), 1e-2 * hidden.sum(), rtol=1e-5)
    assert len(grads) == 6 and all(g is not None for g in grads)
