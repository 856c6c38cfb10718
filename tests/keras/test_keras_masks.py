"""Keras 3's masks beyond the recurrent layers: ``x_mask`` arguments filled from the
tensors (attention over an embedding skips its padding), masks passing through the
layers that support them, an explicit mask winning."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras
from gradtape.keras.layers.masks import get_keras_mask

TOKENS = np.array([[3, 1, 0, 0], [2, 5, 4, 0]])


def test_attention_over_a_masked_embedding_gets_its_query_and_value_masks():
    embedding = keras.layers.Embedding(6, 8, mask_zero=True, dtype="float64")
    attention = keras.layers.MultiHeadAttention(2, 4, dtype="float64")
    x = embedding(TOKENS)
    kept = TOKENS != 0
    automatic = attention(x, x).numpy()
    explicit = attention(x, x, query_mask=kept, value_mask=kept).numpy()
    np.testing.assert_allclose(automatic, explicit, rtol=1e-12)
    unmasked = attention(gt.constant(x.numpy()), gt.constant(x.numpy())).numpy()
    assert np.abs(unmasked - automatic).max() > 1e-4
    # what a padded key holds does not change the real positions' outputs
    changed = x.numpy().copy()
    changed[0, 2:] = 9.0
    again = keras.layers.Masking(9.0, dtype="float64")  # masks exactly the changed rows
    y = attention(gt.constant(x.numpy()), again(gt.constant(changed)),
                  query_mask=kept).numpy()
    np.testing.assert_allclose(y[0, :2], explicit[0, :2], rtol=1e-12)
    # an explicit mask wins over the tensor's
    none_kept = attention(x, x, value_mask=np.ones_like(kept)).numpy()
    np.testing.assert_allclose(none_kept, attention(x, x, query_mask=kept,
                                                   value_mask=np.ones_like(kept)).numpy())


@pytest.mark.parametrize("layer", [lambda: keras.layers.Dense(3, dtype="float64"),
                                   lambda: keras.layers.Dropout(0.5, dtype="float64"),
                                   lambda: keras.layers.Activation("relu", dtype="float64"),
                                   lambda: keras.layers.LayerNormalization(dtype="float64")])
def test_layers_that_support_masking_pass_the_mask_on(layer):
    x = keras.layers.Embedding(6, 4, mask_zero=True, dtype="float64")(TOKENS)
    y = layer()(x, training=True)
    np.testing.assert_array_equal(get_keras_mask(y).numpy(), TOKENS != 0)


def test_no_mask_no_work_and_a_dead_tensor_drops_its_mask():
    from gradtape.keras.layers import masks

    x = keras.layers.Embedding(6, 4, mask_zero=True)(TOKENS)
    assert id(x) in masks.masks
    key = id(x)
    del x
    assert key not in masks.masks  # the registry does not keep tensors alive
    assert get_keras_mask(keras.layers.Dense(2)(np.ones((2, 3), np.float32))) is None
