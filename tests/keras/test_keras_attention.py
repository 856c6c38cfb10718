"""Keras 3's MultiHeadAttention: weights as Keras names and shapes them, values against
the written computation (projections, scaled dot product, masked softmax, output
projection) in NumPy, masks, and gradients against finite differences in float64."""

import numpy as np
import pytest

from gradtape import keras
from layer_checks import assert_gradients_match_differences

RNG = np.random.default_rng(7)


def _reference(layer, query, value, mask=None):
    """Keras's MultiHeadAttention on rank-3 inputs, in NumPy."""
    w = {v.path.split("/", 1)[1]: v.numpy() for v in layer.weights}
    q = np.einsum("btd,dhk->bthk", query, w["query/kernel"]) + w["query/bias"]
    k = np.einsum("bsd,dhk->bshk", value, w["key/kernel"]) + w["key/bias"]
    v = np.einsum("bsd,dhk->bshk", value, w["value/kernel"]) + w["value/bias"]
    scores = np.einsum("bshk,bthk->bhts", k, q / np.sqrt(layer.key_dim))
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    if mask is not None:
        scores = scores * mask[:, None]
    combined = np.einsum("bhts,bshk->bthk", scores, v)
    out = np.einsum("bthk,hko->bto", combined, w["attention_output/kernel"])
    return out + w["attention_output/bias"], scores


def test_weights_are_named_and_shaped_as_keras_3():
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
    layer(np.zeros((1, 5, 8), np.float32), np.zeros((1, 6, 7), np.float32))
    assert [(v.path, tuple(v.shape)) for v in layer.weights] == [
        ("multi_head_attention/query/kernel", (8, 2, 3)),
        ("multi_head_attention/query/bias", (2, 3)),
        ("multi_head_attention/key/kernel", (7, 2, 3)),
        ("multi_head_attention/key/bias", (2, 3)),
        ("multi_head_attention/value/kernel", (7, 2, 4)),
        ("multi_head_attention/value/bias", (2, 4)),
        ("multi_head_attention/attention_output/kernel", (2, 4, 8)),
        ("multi_head_attention/attention_output/bias", (8,))]
    no_bias = keras.layers.MultiHeadAttention(2, 3, use_bias=False, output_shape=4)
    out = no_bias(np.zeros((1, 5, 8), np.float32), np.zeros((1, 6, 8), np.float32))
    assert out.shape == (1, 5, 4) and len(no_bias.weights) == 4


def test_values_match_the_written_computation():
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float64",
                                            bias_initializer="random_normal")
    query, value = RNG.standard_normal((2, 4, 5)), RNG.standard_normal((2, 6, 5))
    out, scores = layer(query, value, return_attention_scores=True)
    expected_out, expected_scores = _reference(layer, query, value)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-10)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-10)
    self_attention = layer(query, query)
    np.testing.assert_allclose(self_attention.numpy(), _reference(layer, query, query)[0],
                               rtol=1e-10)


def test_attention_mask_and_causal_mask():
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2, dtype="float64")
    x = RNG.standard_normal((2, 4, 3))
    mask = RNG.uniform(size=(2, 4, 4)) > 0.3
    mask[:, :, 0] = True  # every query attends to something
    out, scores = layer(x, x, attention_mask=mask, return_attention_scores=True)
    expected_out, expected_scores = _reference(layer, x, x, mask)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-9)
    causal = np.tril(np.ones((4, 4), bool))[None].repeat(2, 0)
    _, causal_scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(causal_scores.numpy(), _reference(layer, x, x, causal)[1],
                               rtol=1e-9, atol=1e-12)
    assert np.all(causal_scores.numpy()[:, :, 0, 1:] == 0)  # the first step sees itself


def test_gradients_match_finite_differences():
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2, dtype="float64",
                                            bias_initializer="random_normal")
    value = RNG.standard_normal((2, 3, 4))
    query = RNG.standard_normal((2, 2, 4))
    layer(query, value)
    assert_gradients_match_differences(lambda q: layer(q, value), query,
                                       list(layer.trainable_weights))
    assert_gradients_match_differences(lambda v: layer(query, v, use_causal_mask=True),
                                       RNG.standard_normal((2, 2, 4)))


def test_attention_over_two_axes_and_dropout_while_training():
    layer = keras.layers.MultiHeadAttention(2, 3, attention_axes=(1, 2), dropout=0.5)
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out, scores = layer(x, x, return_attention_scores=True)
    assert out.shape == (2, 3, 4, 5) and scores.shape == (2, 2, 3, 4, 3, 4)
    np.testing.assert_allclose(scores.numpy().sum(axis=(-2, -1)), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(layer(x, x).numpy(), out.numpy())  # no dropout
    assert not np.allclose(layer(x, x, training=True).numpy(), out.numpy())
    with pytest.raises(ValueError, match="flash_attention"):
        keras.layers.MultiHeadAttention(2, 3, flash_attention=True)

