"""The recurrent layers give Keras 3's own numbers (``keras3_rnn_numbers``: Keras 3.15's
outputs on the same weights and inputs), with and without masks, forwards and
backwards, and Bidirectional's."""

import numpy as np
import pytest
from keras3_rnn_numbers import KERAS_OUTPUTS

from gradtape import keras

B, T, F, U = 2, 4, 2, 2
LAYERS = {"simple": keras.layers.SimpleRNN, "gru": keras.layers.GRU,
          "gru_before": lambda units, **kw: keras.layers.GRU(units, reset_after=False, **kw),
          "lstm": keras.layers.LSTM}


def _weight(shape, k):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + k) * 0.6).reshape(shape).astype("float32")


def _inputs():
    x = np.cos(np.arange(B * T * F) * 1.3).reshape(B, T, F).astype("float32")
    x[0, 2] = 0
    x[1, 3] = 0
    return x


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize("backwards", [False, True])
def test_the_layers_give_keras_numbers(name, backwards):
    layer = LAYERS[name](U, return_sequences=True, go_backwards=backwards)
    layer.build((B, T, F))
    layer.set_weights([_weight(v.shape, k) for k, v in enumerate(layer.weights)])
    key = name + ("_back" if backwards else "")
    x = _inputs()
    np.testing.assert_allclose(layer(x).numpy(), KERAS_OUTPUTS[key], atol=2e-6)
    masked = keras.Sequential([keras.Input((T, F)), keras.layers.Masking(), layer])
    np.testing.assert_allclose(masked(x).numpy(), KERAS_OUTPUTS[key + "_masked"], atol=2e-6)


def test_bidirectional_gives_keras_numbers():
    layer = keras.layers.Bidirectional(keras.layers.GRU(U, return_sequences=True))
    layer.build((B, T, F))
    layer.set_weights([_weight(v.shape, k) for k, v in enumerate(layer.weights)])
    model = keras.Sequential([keras.Input((T, F)), keras.layers.Masking(), layer])
    np.testing.assert_allclose(model(_inputs()).numpy(), KERAS_OUTPUTS["bi_gru_masked"],
                               atol=2e-6)
