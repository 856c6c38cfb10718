"""Keras 3's shape, activation, merging, normalization and noise layers: values against
Keras's written definitions (and its documented examples), gradients against finite
differences in float64, weights' names, shapes and defaults as Keras 3."""

import numpy as np
import pytest

from gradtape import keras
from layer_checks import assert_gradients_match_differences


class _Float64Layers:
    """``keras.layers`` whose layers compute in float64 (unless told a dtype), so values
    compare exactly and finite differences are accurate."""

    def __getattr__(self, name):
        make = getattr(keras.layers, name)

        def float64(*args, **kwargs):
            kwargs.setdefault("dtype", "float64")
            return make(*args, **kwargs)

        return float64


L = _Float64Layers()
RNG = np.random.default_rng(21)


def _x(*shape):
    return RNG.standard_normal(shape)


# --- shape layers ---------------------------------------------------------------------

def test_reshape_permute_repeat_vector_values_and_gradients():
    x = _x(2, 3, 4)
    np.testing.assert_array_equal(L.Reshape((4, 3))(x).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_array_equal(L.Reshape((-1, 2))(x).numpy(), x.reshape(2, 6, 2))
    np.testing.assert_array_equal(L.Permute((2, 1))(x).numpy(), x.transpose(0, 2, 1))
    v = x[:, 0]
    np.testing.assert_array_equal(L.RepeatVector(3)(v).numpy(),
                                  np.repeat(v[:, None, :], 3, axis=1))
    for layer, data in [(L.Reshape((-1,)), x), (L.Permute((2, 1)), x),
                        (L.RepeatVector(2), v)]:
        assert_gradients_match_differences(layer, data)
    assert L.Reshape((-1, 2)).compute_output_shape((None, 3, 4)) == (None, 6, 2)
    with pytest.raises(ValueError, match="total size"):
        L.Reshape((5,))(x)
    with pytest.raises(ValueError, match="consecutive"):
        L.Permute((0, 1))


def test_zero_padding_layers_pad_the_spatial_axes():
    x = _x(2, 3, 4)
    np.testing.assert_array_equal(L.ZeroPadding1D(2)(x).numpy(),
                                  np.pad(x, ((0, 0), (2, 2), (0, 0))))
    np.testing.assert_array_equal(L.ZeroPadding1D((1, 0))(x).numpy(),
                                  np.pad(x, ((0, 0), (1, 0), (0, 0))))
    x4 = _x(2, 3, 4, 2)
    np.testing.assert_array_equal(L.ZeroPadding2D()(x4).numpy(),
                                  np.pad(x4, ((0, 0), (1, 1), (1, 1), (0, 0))))
    np.testing.assert_array_equal(L.ZeroPadding2D(((1, 2), (0, 3)))(x4).numpy(),
                                  np.pad(x4, ((0, 0), (1, 2), (0, 3), (0, 0))))
    np.testing.assert_array_equal(
        L.ZeroPadding2D((1, 2), data_format="channels_first")(x4).numpy(),
        np.pad(x4, ((0, 0), (0, 0), (1, 1), (2, 2))))
    x5 = _x(1, 2, 2, 2, 1)
    assert L.ZeroPadding3D()(x5).shape == (1, 4, 4, 4, 1)
    assert_gradients_match_differences(L.ZeroPadding2D(((1, 0), (2, 1))), x4)
    with pytest.raises(ValueError, match="padding"):
        L.ZeroPadding2D((1, 2, 3))


def test_cropping_layers_crop_the_spatial_axes():
    x = _x(2, 5, 3)
    np.testing.assert_array_equal(L.Cropping1D((1, 2))(x).numpy(), x[:, 1:3])
    np.testing.assert_array_equal(L.Cropping1D()(x).numpy(), x[:, 1:4])
    x4 = _x(2, 5, 6, 3)
    np.testing.assert_array_equal(L.Cropping2D(((1, 2), (2, 1)))(x4).numpy(),
                                  x4[:, 1:3, 2:5])
    np.testing.assert_array_equal(L.Cropping2D((1, 1), data_format="channels_first")(x4)
                                  .numpy(), x4[:, :, 1:5, 1:2])
    np.testing.assert_array_equal(L.Cropping2D()(x4).numpy(), x4)  # Keras's default: none
    x5 = _x(1, 4, 4, 4, 2)
    np.testing.assert_array_equal(L.Cropping3D()(x5).numpy(), x5[:, 1:3, 1:3, 1:3])
    assert_gradients_match_differences(L.Cropping2D(((1, 2), (2, 1))), x4)
    with pytest.raises(ValueError, match="smaller than"):
        L.Cropping1D((3, 2))(x)


def test_upsampling_nearest_repeats_each_spatial_axis():
    x = _x(2, 3, 2)
    np.testing.assert_array_equal(L.UpSampling1D(3)(x).numpy(), np.repeat(x, 3, axis=1))
    x4 = _x(1, 2, 3, 2)
    expected = np.repeat(np.repeat(x4, 2, axis=1), 3, axis=2)
    np.testing.assert_array_equal(L.UpSampling2D((2, 3))(x4).numpy(), expected)
    first = np.repeat(np.repeat(x4, 2, axis=2), 2, axis=3)
    np.testing.assert_array_equal(L.UpSampling2D(data_format="channels_first")(x4).numpy(),
                                  first)
    x5 = _x(1, 1, 2, 1, 1)
    assert L.UpSampling3D()(x5).shape == (1, 2, 4, 2, 1)
    assert_gradients_match_differences(L.UpSampling2D((2, 3)), x4)


def test_upsampling2d_bilinear_is_tf_image_resize_with_half_pixel_centers():
    # tf.image.resize([1, 2, 3] → 6, bilinear): source x = (i + 0.5) / 2 - 0.5, clamped.
    row = np.array([1.0, 2.0, 3.0]).reshape(1, 1, 3, 1)
    out = L.UpSampling2D((1, 2), interpolation="bilinear")(row).numpy().ravel()
    np.testing.assert_allclose(out, [1.0, 1.25, 1.75, 2.25, 2.75, 3.0])
    grid = np.array([[1.0, 3.0], [5.0, 7.0]]).reshape(1, 2, 2, 1)
    out = L.UpSampling2D(interpolation="bilinear")(grid).numpy()[0, :, :, 0]
    np.testing.assert_allclose(out[0], [1.0, 1.5, 2.5, 3.0])
    np.testing.assert_allclose(out[1], [2.0, 2.5, 3.5, 4.0])  # a quarter of the way down
    assert_gradients_match_differences(L.UpSampling2D(interpolation="bilinear"),
                                       _x(2, 3, 2, 2))
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="gaussian")  # not one of Keras 3's


# --- activation layers ------------------------------------------------------------------

def test_leaky_relu_has_keras_3s_slope_and_alpha_still_works():
    x = np.array([-3.0, -1.0, 0.0, 2.0])
    np.testing.assert_allclose(L.LeakyReLU()(x).numpy(), [-0.9, -0.3, 0.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(L.LeakyReLU(negative_slope=0.1)(x).numpy(),
                               [-0.3, -0.1, 0.0, 2.0], rtol=1e-6)
    with pytest.warns(UserWarning, match="negative_slope"):
        layer = L.LeakyReLU(alpha=0.5)
    assert layer.negative_slope == 0.5
    with pytest.raises(ValueError, match="negative_slope"):
        L.LeakyReLU(-1.0)
    assert_gradients_match_differences(L.LeakyReLU(dtype="float64"), _x(3, 4))


def test_relu_layer_follows_keras_docstring_examples():
    x = np.array([-10.0, -5.0, 0.0, 5.0, 10.0])
    np.testing.assert_allclose(L.ReLU()(x).numpy(), [0, 0, 0, 5, 10])
    np.testing.assert_allclose(L.ReLU(max_value=1.0)(x).numpy(), [0, 0, 0, 1, 1])
    np.testing.assert_allclose(L.ReLU(negative_slope=1.0)(x).numpy(), [-10, -5, 0, 5, 10])
    np.testing.assert_allclose(L.ReLU(threshold=1.5)(x).numpy(), [0, 0, 0, 5, 10])
    layer = L.ReLU(max_value=6.0, negative_slope=0.1, threshold=0.5, dtype="float64")
    np.testing.assert_allclose(layer(np.array([-1.0, 0.7, 9.0])).numpy(),
                               [-0.15, 0.7, 6.0])
    assert_gradients_match_differences(layer, np.array([-1.3, 0.2, 0.9, 3.0, 7.0]))
    with pytest.raises(ValueError, match="max_value"):
        L.ReLU(max_value=-1.0)


def test_prelu_learns_alpha_per_entry_with_shared_axes():
    layer = L.PReLU(dtype="float64")
    x = _x(2, 3, 4)
    out = layer(x)
    assert [w.name for w in layer.weights] == ["alpha"] and layer.alpha.shape == (3, 4)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x, 0))  # alpha starts at zeros
    layer.alpha.assign(np.full((3, 4), 0.25))
    np.testing.assert_allclose(layer(x).numpy(), np.where(x > 0, x, 0.25 * x))
    assert_gradients_match_differences(layer, x, [layer.alpha])
    shared = L.PReLU(shared_axes=[1])
    shared(x)
    assert shared.alpha.shape == (1, 4)


def test_elu_and_softmax_layers():
    x = np.array([-2.0, -0.5, 0.0, 1.5])
    np.testing.assert_allclose(L.ELU(alpha=0.5, dtype="float64")(x).numpy(),
                               np.where(x > 0, x, 0.5 * np.expm1(x)))
    assert_gradients_match_differences(L.ELU(alpha=0.5, dtype="float64"), x + 0.1)
    logits = _x(2, 5)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(L.Softmax(dtype="float64")(logits).numpy(),
                               e / e.sum(-1, keepdims=True))
    assert_gradients_match_differences(L.Softmax(dtype="float64"), logits)


def test_softmax_mask_zeroes_masked_positions_as_keras_3():
    # Keras's docstring: Softmax()(inp, mask) with [[True, False, True]] and [1, 2, 1].
    out = L.Softmax()(np.array([1.0, 2.0, 1.0]), mask=np.array([True, False, True]))
    np.testing.assert_allclose(out.numpy(), [0.5, 0.0, 0.5], rtol=1e-6)
    cube = _x(2, 3, 4)
    together = L.Softmax(axis=(1, 2), dtype="float64")(cube).numpy()
    e = np.exp(cube)
    np.testing.assert_allclose(together, e / e.sum(axis=(1, 2), keepdims=True))


# --- merging layers ---------------------------------------------------------------------

def test_merging_layers_and_their_functional_forms():
    a, b, c = _x(2, 3), _x(2, 3), _x(2, 3)
    np.testing.assert_allclose(L.Subtract()([a, b]).numpy(), a - b)
    np.testing.assert_allclose(L.Multiply()([a, b, c]).numpy(), a * b * c)
    np.testing.assert_allclose(L.Average()([a, b, c]).numpy(), (a + b + c) / 3)
    np.testing.assert_allclose(L.Maximum()([a, b, c]).numpy(), np.maximum(np.maximum(a, b), c))
    np.testing.assert_allclose(L.Minimum()([a, b]).numpy(), np.minimum(a, b))
    np.testing.assert_allclose(L.add([a, b]).numpy(), a + b)
    np.testing.assert_allclose(L.subtract([a, b]).numpy(), a - b)
    np.testing.assert_allclose(L.multiply([a, b]).numpy(), a * b)
    np.testing.assert_allclose(L.average([a, b]).numpy(), (a + b) / 2)
    np.testing.assert_allclose(L.maximum([a, b]).numpy(), np.maximum(a, b))
    np.testing.assert_allclose(L.minimum([a, b]).numpy(), np.minimum(a, b))
    np.testing.assert_allclose(L.concatenate([a, b], axis=0).numpy(), np.concatenate([a, b]))
    with pytest.raises(ValueError, match="exactly 2"):
        L.Subtract()([a, b, c])
    for layer in [L.Subtract(dtype="float64"), L.Multiply(dtype="float64"),
                  L.Maximum(dtype="float64"), L.Average(dtype="float64")]:
        assert_gradients_match_differences(lambda x, layer=layer: layer([x, 2.0 * x + 0.3]),
                                           a)


def test_dot_is_keras_batch_dot_and_normalize_gives_cosine_similarity():
    # Keras's docstring: x (1, 5, 2) = arange(10), y (1, 2, 5) = arange(10, 20); axes (1, 2).
    x = np.arange(10.0).reshape(1, 5, 2)
    y = np.arange(10.0, 20.0).reshape(1, 2, 5)
    np.testing.assert_allclose(L.Dot(axes=(1, 2))([x, y]).numpy(),
                               [[[260.0, 360.0], [320.0, 445.0]]])
    a, b = _x(4, 3), _x(4, 3)
    np.testing.assert_allclose(L.Dot(axes=1)([a, b]).numpy(),
                               np.sum(a * b, axis=1, keepdims=True), rtol=1e-6)
    cosine = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(L.dot([a, b], axes=-1, normalize=True).numpy().ravel(),
                               cosine, rtol=1e-5)
    layer = L.Dot(axes=1, normalize=True, dtype="float64")
    assert_gradients_match_differences(lambda t: layer([t, t * t + 1.0]), a)


# --- normalization and noise ------------------------------------------------------------

def test_layer_normalization_normalizes_each_sample_with_keras_defaults():
    x = _x(3, 4, 5)
    layer = L.LayerNormalization(dtype="float64")
    out = layer(x).numpy()
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-10)
    assert [(w.name, w.shape) for w in layer.weights] == [("gamma", (5,)), ("beta", (5,))]
    layer.gamma.assign(_x(5))
    layer.beta.assign(_x(5))
    assert_gradients_match_differences(layer, x, [layer.gamma, layer.beta])
    both = L.LayerNormalization(axis=[1, 2], epsilon=1e-5, center=False, dtype="float64")
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(both(x).numpy(), (x - mean) / np.sqrt(var + 1e-5))
    assert [w.name for w in both.weights] == ["gamma"] and both.gamma.shape == (4, 5)


def test_group_normalization_normalizes_groups_of_channels():
    x = _x(2, 3, 3, 6)
    layer = L.GroupNormalization(groups=3, dtype="float64")
    grouped = x.reshape(2, 3, 3, 3, 2)
    mean = grouped.mean(axis=(1, 2, 4), keepdims=True)
    var = grouped.var(axis=(1, 2, 4), keepdims=True)
    expected = ((grouped - mean) / np.sqrt(var + 1e-3)).reshape(x.shape)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-10)
    assert [(w.name, w.shape) for w in layer.weights] == [("gamma", (6,)), ("beta", (6,))]
    layer.gamma.assign(_x(6))
    assert_gradients_match_differences(layer, x, [layer.gamma, layer.beta])
    with pytest.raises(ValueError, match="multiple"):
        L.GroupNormalization(groups=4)(x)


def test_gaussian_noise_and_dropout_act_only_while_training():
    x = np.ones((2000, 50), np.float32)
    for layer in [L.GaussianNoise(0.5, seed=1), L.GaussianDropout(0.5, seed=1)]:
        np.testing.assert_array_equal(layer(x).numpy(), x)
        np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    noisy = L.GaussianNoise(0.5, seed=1)(x, training=True).numpy()
    assert abs(noisy.mean() - 1.0) < 0.01 and abs(noisy.std() - 0.5) < 0.01
    dropped = L.GaussianDropout(0.2, seed=1)(x, training=True).numpy()
    # Multiplicative noise N(1, sqrt(rate / (1 - rate))) = N(1, 0.5).
    assert abs(dropped.mean() - 1.0) < 0.01 and abs(dropped.std() - 0.5) < 0.01
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.GaussianDropout(1.5)


def test_the_new_layers_work_in_a_sequential_model_and_fit():
    model = keras.Sequential([
        L.Reshape((4, 4, 1), input_shape=(16,)), L.ZeroPadding2D(1), L.Cropping2D(1),
        L.UpSampling2D(), L.Permute((2, 1, 3)), L.Reshape((-1,)), L.LayerNormalization(),
        L.LeakyReLU(), L.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(_x(8, 16).astype(np.float32), np.zeros((8, 1), np.float32),
                        epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert [w.shape for w in model.trainable_weights] == [(64,), (64,), (64, 1), (1,)]


def test_embedding_mask_zero_and_regularizer():
    layer = L.Embedding(5, 2, mask_zero=True, embeddings_regularizer=keras.regularizers.L2(0.1))
    ids = np.array([[0, 3, 1]])
    out = layer(ids)
    np.testing.assert_array_equal(out.numpy(), layer.embeddings.numpy()[ids])
    np.testing.assert_array_equal(layer.compute_mask(ids).numpy(), [[False, True, True]])
    penalty = 0.1 * np.sum(layer.embeddings.numpy() ** 2)
    np.testing.assert_allclose(float(layer.losses[0]), penalty, rtol=1e-6)
    with pytest.warns(UserWarning, match="input_length"):
        legacy = keras.layers.Embedding(5, 2, input_length=3)
    assert legacy(np.array([[1, 2, 3]])).shape == (1, 3, 2)


def test_the_new_layers_build_a_functional_model():
    inputs = keras.Input(shape=(4, 6))
    attended = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(inputs, inputs)
    x = keras.layers.add([inputs, attended])
    x = keras.layers.LayerNormalization()(x)
    x = keras.layers.Reshape((-1,))(x)
    outputs = keras.layers.Dense(1)(keras.layers.LeakyReLU()(x))
    model = keras.Model(inputs, outputs)
    assert outputs.shape == (None, 1)
    data = RNG.standard_normal((3, 4, 6)).astype(np.float32)
    assert model(data).shape == (3, 1)
    assert len(model.trainable_weights) == 8 + 2 + 2
