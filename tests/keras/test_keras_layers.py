"""keras.layers: building, weights and their names, gradients (finite differences in
float64, compiled and interpreted), @gt.function and jacobians through layers."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


@pytest.fixture(autouse=True)
def fresh_names():
    keras.backend.clear_session()
    gt.random.set_seed(0)


def _finite_difference_grads(loss_of, variables, eps=1e-6):
    """Central differences of ``loss_of()`` with respect to each variable's entries."""
    grads = []
    for v in variables:
        base = v.numpy().copy()
        g = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            for sign in (1, -1):
                bumped = base.copy()
                bumped[index] += sign * eps
                v.assign(bumped)
                g[index] += sign * float(loss_of()) / (2 * eps)
        v.assign(base)
        grads.append(g)
    return grads


def _tape_grads(loss_of, variables):
    with gt.GradientTape() as tape:
        loss = loss_of()
    return [g.numpy() for g in tape.gradient(loss, variables)]


# --- naming, building, tracking -------------------------------------------------------------

def test_names_are_made_unique_and_paths_name_the_layer():
    first, second = keras.layers.Dense(2), keras.layers.Dense(2)
    assert (first.name, second.name) == ("dense", "dense_1")
    assert first.weights == [] and not first.built
    first(gt.ones((1, 3)))
    assert first.built
    assert [v.name for v in first.weights] == ["kernel", "bias"]
    assert [v.path for v in first.weights] == ["dense/kernel", "dense/bias"]
    assert first.kernel.shape == (3, 2) and first.bias.shape == (2,)
    assert repr(first.bias) == ("<Variable path=dense/bias, shape=(2,), dtype=float32, "
                                "value=[0. 0.]>")


def test_sequential_paths_and_layer_order():
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3),
                              keras.layers.BatchNormalization(), keras.layers.Dense(1)])
    assert model.built and [layer.name for layer in model.layers] == [
        "dense", "batch_normalization", "dense_1"]
    assert [v.path for v in model.weights] == [
        "sequential/dense/kernel", "sequential/dense/bias",
        "sequential/batch_normalization/gamma", "sequential/batch_normalization/beta",
        "sequential/batch_normalization/moving_mean",
        "sequential/batch_normalization/moving_variance",
        "sequential/dense_1/kernel", "sequential/dense_1/bias"]
    assert [v.name for v in model.non_trainable_variables] == ["moving_mean",
                                                               "moving_variance"]
    assert len(model.trainable_variables) == 6


def test_sequential_builds_on_first_call_or_from_input_shape():
    lazy = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(2)])
    assert not lazy.built and lazy.weights == []
    assert lazy(np.ones((5, 3), np.float32)).shape == (5, 2)
    assert lazy.built and [v.shape for v in lazy.weights] == [(3, 4), (4,), (4, 2), (2,)]
    eager = keras.Sequential([keras.layers.Dense(4, input_shape=(3,))])
    assert eager.built and eager.layers[0].kernel.shape == (3, 4)
    eager.add(keras.layers.Dense(1))
    assert eager.layers[1].kernel.shape == (4, 1)
    assert eager.pop() is not None and len(eager.layers) == 1


def test_subclassed_model_tracks_layers_and_variables_in_assignment_order():
    class Block(keras.Model):
        def __init__(self):
            super().__init__()
            self.scale = keras.Variable(2.0, name="scale")
            self.hidden = [keras.layers.Dense(3), keras.layers.Dense(2)]
            self.out = keras.layers.Dense(1)

        def call(self, x):
            for layer in self.hidden:
                x = layer(x)
            return self.scale * self.out(x)

    block = Block()
    assert block.name == "block"
    block(gt.ones((2, 4)))
    assert [layer.name for layer in block.layers] == ["dense", "dense_1", "dense_2"]
    assert [v.shape for v in block.trainable_variables] == [(), (4, 3), (3,), (3, 2), (2,),
                                                            (2, 1), (1,)]


def test_a_subclass_that_skips_super_init_gets_a_clear_error():
    class Broken(keras.layers.Layer):
        def __init__(self):
            self.units = 2

        def call(self, x):
            return x

    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        Broken()(gt.ones((1, 2)))


def test_trainable_false_freezes_the_weights():
    layer = keras.layers.Dense(2)
    layer(gt.ones((1, 3)))
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(layer(gt.ones((1, 3))))
    assert tape.gradient(y, layer.kernel) is None  # a frozen weight is not watched
    layer.trainable = True
    assert len(layer.trainable_weights) == 2


def test_get_and_set_weights():
    layer = keras.layers.Dense(2)
    layer(gt.ones((1, 3)))
    kernel = np.arange(6, dtype=np.float32).reshape(3, 2)
    layer.set_weights([kernel, np.array([1.0, -1.0], np.float32)])
    np.testing.assert_array_equal(layer.get_weights()[0], kernel)
    np.testing.assert_array_equal(layer(gt.ones((1, 3))).numpy(), [[7.0, 8.0]])
    with pytest.raises(ValueError, match="expecting 2 weights"):
        layer.set_weights([kernel])
    with pytest.raises(ValueError, match="not compatible"):
        layer.set_weights([kernel.T, np.zeros(2)])


def test_float_inputs_are_cast_to_the_layer_dtype():
    layer = keras.layers.Dense(2, dtype="float64")
    out = layer(np.ones((1, 3), np.float32))
    assert out.dtype == np.float64 and layer.kernel.dtype == np.float64
    assert keras.layers.Dense(2)(np.ones((1, 3))).dtype == np.float32
    # Integer inputs compute in the layer's dtype (NumPy would promote to float64).
    assert keras.layers.Dense(2)(np.ones((1, 3), np.int64)).dtype == np.float32
    assert keras.layers.Dense(2)([[1, 2, 3]]).dtype == np.float32


def test_unknown_keyword_arguments_raise():
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        keras.layers.Dense(2, unit=3)
    with pytest.raises(ValueError, match="units"):
        keras.layers.Dense(0)


# --- layers' values -------------------------------------------------------------------------

def test_dense_value_and_activation_by_name():
    layer = keras.layers.Dense(2, activation="relu", kernel_initializer="ones",
                               bias_initializer=keras.initializers.Constant(-4.0))
    np.testing.assert_array_equal(layer(gt.constant([[1.0, 2.0, 3.0]])).numpy(), [[2.0, 2.0]])
    x3 = gt.ones((2, 5, 3))  # any rank: the kernel applies to the last axis
    assert layer(x3).shape == (2, 5, 2)


def test_dropout_only_in_training():
    layer = keras.layers.Dropout(0.5)
    x = gt.ones((200, 10))
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())
    dropped = layer(x, training=True).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}
    assert 0.35 < np.mean(dropped == 0) < 0.65


def test_training_flag_reaches_nested_layers():
    model = keras.Sequential([keras.layers.Dropout(0.5)])
    x = gt.ones((100, 10))
    np.testing.assert_array_equal(model(x).numpy(), x.numpy())
    assert np.any(model(x, training=True).numpy() == 0)


def test_batch_normalization_training_and_inference():
    x = np.array([[1.0, 10.0], [3.0, 30.0], [5.0, 20.0]])
    bn = keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-3, dtype="float64")
    out = bn(x, training=True).numpy()
    mean, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var, rtol=1e-12)
    inference = bn(x).numpy()  # training=None: the moving statistics, unchanged
    np.testing.assert_allclose(inference, (x - 0.1 * mean) / np.sqrt(0.9 + 0.1 * var + 1e-3))
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean, rtol=1e-12)
    assert [v.name for v in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]


def test_batch_normalization_on_channels_first():
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    bn = keras.layers.BatchNormalization(axis=1, dtype="float64")
    out = bn(x, training=True).numpy()
    assert bn.gamma.shape == (3,)
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-12)


def test_flatten_activation_lambda_embedding_concatenate_add():
    x = gt.reshape(gt.range(24.0), (2, 3, 4))
    assert keras.layers.Flatten()(x).shape == (2, 12)
    np.testing.assert_allclose(keras.layers.Activation("tanh")(x).numpy(), np.tanh(x.numpy()))
    np.testing.assert_allclose(keras.layers.Lambda(lambda t: t * 2)(x).numpy(),
                               2 * x.numpy())
    emb = keras.layers.Embedding(10, 3)
    looked_up = emb(np.array([[1, 2], [9, 1]]))
    assert looked_up.shape == (2, 2, 3)
    np.testing.assert_array_equal(looked_up.numpy()[1, 1], emb.embeddings.numpy()[1])
    assert np.all(np.abs(emb.embeddings.numpy()) <= 0.05)
    a, b = gt.ones((2, 3)), gt.zeros((2, 2))
    assert keras.layers.Concatenate()([a, b]).shape == (2, 5)
    np.testing.assert_array_equal(keras.layers.Add()([a, a, a]).numpy(), 3 * np.ones((2, 3)))
    with pytest.raises(ValueError, match="list of inputs"):
        keras.layers.Add()(a)


def test_kernel_regularizer_adds_to_losses():
    layer = keras.layers.Dense(2, kernel_initializer="ones",
                               kernel_regularizer=keras.regularizers.L2(0.1))
    layer(gt.ones((1, 3)))
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0]), 0.1 * 6)


# --- gradients ------------------------------------------------------------------------------

def _dense_bn_model():
    return keras.Sequential([keras.layers.Dense(4, activation="tanh", dtype="float64"),
                             keras.layers.BatchNormalization(dtype="float64"),
                             keras.layers.Dense(2, activation="elu", dtype="float64")])


@pytest.mark.parametrize("training", [True, False])
def test_dense_and_batch_norm_gradients_match_finite_differences(compile_mode, training):
    model = _dense_bn_model()
    x = gt.constant(np.random.default_rng(1).standard_normal((5, 3)))
    model(x)
    # Move gamma/beta off their initial values so every term of the rule is exercised.
    for v in model.trainable_variables:
        v.assign(v.numpy() + 0.3 * np.random.default_rng(2).standard_normal(v.shape))

    def loss_of():
        return gt.reduce_sum(gt.sin(model(x, training=training)))

    variables = model.trainable_variables
    assert len(variables) == 6
    for got, expected in zip(_tape_grads(loss_of, variables),
                             _finite_difference_grads(loss_of, variables)):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_gradients_compiled_equal_interpreted():
    model = _dense_bn_model()
    x = gt.constant(np.random.default_rng(3).standard_normal((6, 3)))

    def grads():
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(model(x, training=True) ** 2)
        return [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]

    with gt.config(compile=True, compile_after=1):
        compiled = [grads(), grads()]  # the second call runs generated code
    with gt.config(compile=False):
        interpreted = grads()
    for got in compiled:
        for a, b in zip(got, interpreted):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_input_gradient_through_batch_norm_matches_finite_differences():
    bn = keras.layers.BatchNormalization(dtype="float64")
    x = gt.Variable(np.random.default_rng(4).standard_normal((4, 3)))
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.sin(bn(x, training=True)) * np.arange(12.0).reshape(4, 3))
    got = tape.gradient(loss, x).numpy()

    def loss_of():
        return gt.reduce_sum(gt.sin(bn(x, training=True)) * np.arange(12.0).reshape(4, 3))

    np.testing.assert_allclose(got, _finite_difference_grads(loss_of, [x])[0], rtol=1e-6,
                               atol=1e-8)


def test_gt_function_runs_a_model_built_lazily_inside_it():
    model = keras.Sequential([keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(1)])
    x = gt.random.normal([5, 3])

    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(model(x, training=True) ** 2)
        return loss, tape.gradient(loss, model.trainable_variables)

    loss, grads = step(x)
    assert model.built and len(grads) == 4
    with gt.GradientTape() as tape:
        expected = gt.reduce_mean(model(x, training=True) ** 2)
    expected_grads = tape.gradient(expected, model.trainable_variables)
    np.testing.assert_allclose(loss.numpy(), expected.numpy(), rtol=1e-6)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)
    loss_again, _ = step(x)  # the compiled function, with the variables built
    np.testing.assert_allclose(loss_again.numpy(), expected.numpy(), rtol=1e-6)


def test_gt_jacobian_of_a_layer_function():
    layer = keras.layers.Dense(3, activation="sigmoid", dtype="float64")
    x = np.random.default_rng(5).standard_normal((2, 4))
    jac = gt.jacobian(lambda t: layer(t))(gt.constant(x)).numpy()
    assert jac.shape == (2, 3, 2, 4)
    s = 1 / (1 + np.exp(-(x @ layer.kernel.numpy() + layer.bias.numpy())))
    expected = np.zeros((2, 3, 2, 4))
    for b in range(2):
        expected[b, :, b, :] = (s[b] * (1 - s[b]))[:, None] * layer.kernel.numpy().T
    np.testing.assert_allclose(jac, expected, rtol=1e-12)
