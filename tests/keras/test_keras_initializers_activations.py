"""keras.initializers (seeding, scales, names) and keras.activations (values, get)."""

import math

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras

initializers, activations = keras.initializers, keras.activations


def test_unseeded_initializers_repeat_under_set_random_seed():
    keras.utils.set_random_seed(7)
    first = keras.layers.Dense(3)
    first(gt.ones((1, 4)))
    keras.utils.set_random_seed(7)
    second = keras.layers.Dense(3)
    second(gt.ones((1, 4)))
    np.testing.assert_array_equal(first.kernel.numpy(), second.kernel.numpy())
    third = keras.layers.Dense(3)
    third(gt.ones((1, 4)))
    assert not np.array_equal(second.kernel.numpy(), third.kernel.numpy())


def test_a_seeded_initializer_gives_the_same_values_on_every_call():
    init = initializers.GlorotNormal(seed=3)
    np.testing.assert_array_equal(init((4, 5)).numpy(), init((4, 5)).numpy())
    other = initializers.GlorotNormal(seed=4)((4, 5)).numpy()
    assert not np.array_equal(init((4, 5)).numpy(), other)


@pytest.mark.parametrize("name, limit", [
    ("glorot_uniform", math.sqrt(6 / (300 + 200))),
    ("he_uniform", math.sqrt(6 / 300)),
    ("lecun_uniform", math.sqrt(3 / 300)),
])
def test_uniform_variance_scaling_limits(name, limit):
    values = initializers.get(name)((300, 200)).numpy()
    assert values.dtype == np.float32
    assert np.abs(values).max() <= limit
    np.testing.assert_allclose(values.std(), limit / math.sqrt(3), rtol=0.02)


@pytest.mark.parametrize("name, stddev", [
    ("glorot_normal", math.sqrt(2 / (300 + 200))),
    ("he_normal", math.sqrt(2 / 300)),
    ("lecun_normal", math.sqrt(1 / 300)),
])
def test_truncated_variance_scaling_keeps_the_stddev(name, stddev):
    values = initializers.get(name)((300, 200), dtype="float64").numpy()
    assert values.dtype == np.float64
    np.testing.assert_allclose(values.std(), stddev, rtol=0.02)
    # Truncated at two standard deviations of the underlying (wider) normal.
    assert np.abs(values).max() <= 2 * stddev / 0.87962566103423978 + 1e-12


def test_fans_of_convolution_kernels():
    from gradtape.keras.initializers import compute_fans

    assert compute_fans((3, 3, 8, 16)) == (72, 144)
    assert compute_fans((5,)) == (5, 5) and compute_fans(()) == (1, 1)


def test_constant_zeros_ones_random_and_identity():
    assert initializers.Zeros()((2,)).numpy().tolist() == [0.0, 0.0]
    assert initializers.get("ones")((2,)).numpy().tolist() == [1.0, 1.0]
    assert initializers.Constant(3.0)((2, 2)).numpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    np.testing.assert_array_equal(initializers.Identity()((2, 3)).numpy(), np.eye(2, 3))
    normal = initializers.RandomNormal(mean=1.0, stddev=0.5)((400, 100)).numpy()
    np.testing.assert_allclose([normal.mean(), normal.std()], [1.0, 0.5], rtol=0.02)
    uniform = initializers.RandomUniform(-1.0, 3.0)((400, 100)).numpy()
    assert uniform.min() >= -1.0 and uniform.max() < 3.0
    truncated = initializers.TruncatedNormal(stddev=1.0)((400, 100)).numpy()
    assert np.abs(truncated).max() <= 2.0


def test_initializer_get_errors_and_callables():
    with pytest.raises(ValueError, match="Could not interpret initializer"):
        initializers.get("glorot")
    assert initializers.get(None) is None
    fn = lambda shape, dtype=None: gt.ones(shape)  # noqa: E731
    assert initializers.get(fn) is fn
    assert isinstance(initializers.get("GlorotUniform"), initializers.GlorotUniform)
    with pytest.raises(ValueError, match="`mode`"):
        initializers.VarianceScaling(mode="fan")


X = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])


@pytest.mark.parametrize("name, expected", [
    ("relu", np.maximum(X, 0)),
    ("sigmoid", 1 / (1 + np.exp(-X))),
    ("tanh", np.tanh(X)),
    ("elu", np.where(X > 0, X, np.expm1(X))),
    ("selu", 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * np.expm1(X))),
    ("swish", X / (1 + np.exp(-X))),
    ("silu", X / (1 + np.exp(-X))),
    ("softplus", np.log1p(np.exp(X))),
    ("softsign", X / (1 + np.abs(X))),
    ("linear", X),
    ("softmax", np.exp(X) / np.exp(X).sum()),
    ("gelu", X * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in X]))),
])
def test_activation_values(name, expected):
    got = activations.get(name)(gt.constant(X)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_activation_options_and_get():
    x = gt.constant(X)
    np.testing.assert_allclose(activations.relu(x, negative_slope=0.1, max_value=2.0).numpy(),
                               np.minimum(np.where(X < 0, 0.1 * X, X), 2.0))
    np.testing.assert_allclose(activations.elu(x, alpha=2.0).numpy(),
                               np.where(X > 0, X, 2.0 * np.expm1(X)))
    assert activations.get(None) is activations.linear
    assert activations.get(gt.nn.relu) is gt.nn.relu
    assert activations.serialize(activations.relu) == "relu"
    with pytest.raises(ValueError, match="Could not interpret activation"):
        activations.get("rleu")


def test_activation_gradients_match_finite_differences():
    for name in ("relu", "elu", "selu", "gelu", "swish", "softplus", "softsign", "softmax"):
        fn = activations.get(name)
        x = gt.Variable(X + 0.01)
        weights = np.arange(1.0, 6.0)
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(fn(x) * weights)
        got = tape.gradient(y, x).numpy()
        eps = 1e-6
        expected = [(np.sum(fn(gt.constant(X + 0.01 + eps * e)).numpy() * weights)
                     - np.sum(fn(gt.constant(X + 0.01 - eps * e)).numpy() * weights)) / (2 * eps)
                    for e in np.eye(5)]
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8, err_msg=name)
