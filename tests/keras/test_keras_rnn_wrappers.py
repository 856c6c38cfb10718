"""``Bidirectional`` (every merge mode, a given backward layer, states, masks) and
``TimeDistributed`` against NumPy."""

import numpy as np
import pytest
from rnn_reference import gru_step, lstm_step, run

import gradtape as gt
from gradtape import keras

B, T, F, U = 3, 5, 4, 3


def _data(seed=0, shape=(B, T, F)):
    return np.random.default_rng(seed).standard_normal(shape)


def _directions(layer, x, kind="gru", mask=None, zero_output_for_mask=False):
    """The forward outputs and the backward ones flipped back in time, in NumPy."""
    step = gru_step if kind == "gru" else lstm_step
    forward = layer.forward_layer.get_weights()
    backward = layer.backward_layer.get_weights()
    zeros = [np.zeros((B, U))] * (1 if kind == "gru" else 2)
    f = run(lambda xt, s: step(xt, s, *forward), x, zeros, mask=mask,
            zero_output_for_mask=zero_output_for_mask)
    b = run(lambda xt, s: step(xt, s, *backward), x, zeros, mask=mask, go_backwards=True,
            zero_output_for_mask=zero_output_for_mask)
    return f, b


MERGES = {"concat": lambda a, b: np.concatenate([a, b], -1), "sum": np.add,
          "mul": np.multiply, "ave": lambda a, b: (a + b) / 2}


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merges_the_forward_and_flipped_backward_outputs(mode):
    x = _data()
    layer = keras.layers.Bidirectional(
        keras.layers.GRU(U, return_sequences=True, dtype="float64"), merge_mode=mode,
        dtype="float64")
    got = layer(x)
    (_, forward, _), (_, backward, _) = _directions(layer, x)
    backward = backward[:, ::-1]
    if mode is None:
        np.testing.assert_allclose(got[0].numpy(), forward, rtol=1e-10)
        np.testing.assert_allclose(got[1].numpy(), backward, rtol=1e-10)
    else:
        np.testing.assert_allclose(got.numpy(), MERGES[mode](forward, backward), rtol=1e-10)
    assert layer.forward_layer.name.startswith("forward_gru")
    assert layer.backward_layer.go_backwards and not layer.forward_layer.go_backwards
    # the two directions have their own weights
    assert len(layer.weights) == 6
    assert np.abs(layer.forward_layer.get_weights()[0] -
                  layer.backward_layer.get_weights()[0]).max() > 0


def test_bidirectional_states_and_last_outputs():
    x = _data(1)
    layer = keras.layers.Bidirectional(keras.layers.LSTM(U, return_state=True,
                                                         dtype="float64"), dtype="float64")
    out, fh, fc, bh, bc = layer(x)
    (f_last, _, f_states), (b_last, _, b_states) = _directions(layer, x, "lstm")
    np.testing.assert_allclose(out.numpy(), np.concatenate([f_last, b_last], -1), rtol=1e-10)
    for got, want in zip([fh, fc, bh, bc], f_states + b_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_bidirectional_with_a_backward_layer_and_its_errors():
    x = _data(2)
    backward = keras.layers.LSTM(U, go_backwards=True, return_sequences=True,
                                 dtype="float64")
    layer = keras.layers.Bidirectional(
        keras.layers.LSTM(U, return_sequences=True, dtype="float64"),
        backward_layer=backward, merge_mode="sum", dtype="float64")
    got = layer(x).numpy()
    assert layer.backward_layer is backward
    (_, f, _), (_, b, _) = _directions(layer, x, "lstm")
    np.testing.assert_allclose(got, f + b[:, ::-1], rtol=1e-10)
    with pytest.raises(ValueError, match="different `go_backwards`"):
        keras.layers.Bidirectional(keras.layers.LSTM(2),
                                   backward_layer=keras.layers.LSTM(2))
    with pytest.raises(ValueError, match="return_sequences"):
        keras.layers.Bidirectional(keras.layers.LSTM(2),
                                   backward_layer=keras.layers.LSTM(
                                       2, go_backwards=True, return_sequences=True))
    with pytest.raises(ValueError, match="Invalid merge mode"):
        keras.layers.Bidirectional(keras.layers.LSTM(2), merge_mode="max")


def test_bidirectional_masks_give_zero_outputs_at_masked_steps():
    mask = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 0], [1, 1, 1, 1, 1]], bool)
    x = _data(3) * mask[..., None]
    layer = keras.layers.Bidirectional(keras.layers.GRU(U, return_sequences=True,
                                                        dtype="float64"), dtype="float64")
    got = layer(keras.layers.Masking(dtype="float64")(x)).numpy()
    (_, f, _), (_, b, _) = _directions(layer, x, mask=mask, zero_output_for_mask=True)
    np.testing.assert_allclose(got, np.concatenate([f, b[:, ::-1]], -1), rtol=1e-10)
    np.testing.assert_array_equal(got[0, 3:], 0)  # Keras: zeros, not the previous output


def test_bidirectional_of_a_user_rnn_layer_clones_its_cell():
    layer = keras.layers.Bidirectional(keras.layers.RNN(keras.layers.SimpleRNNCell(2)))
    out = layer(_data(4).astype(np.float32))
    assert tuple(out.shape) == (B, 4)
    assert layer.forward_layer.cell is not layer.backward_layer.cell


def test_time_distributed_dense_is_dense_on_every_step():
    x = _data(5)
    dense = keras.layers.Dense(2, activation="tanh", dtype="float64")
    layer = keras.layers.TimeDistributed(dense, dtype="float64")
    got = layer(x).numpy()
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(got, np.tanh(x @ kernel + bias), rtol=1e-12)
    assert tuple(dense.kernel.shape) == (F, 2)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        keras.layers.TimeDistributed(keras.layers.Dense(2))(np.zeros((2, 3)))


def test_time_distributed_sequential_and_batch_normalization_per_step():
    x = _data(6)
    inner = keras.Sequential([keras.layers.Dense(4, activation="relu", dtype="float64"),
                              keras.layers.Dense(1, dtype="float64")])
    layer = keras.layers.TimeDistributed(inner, dtype="float64")
    got = layer(x).numpy()
    (k1, b1), (k2, b2) = [d.get_weights() for d in inner.layers]
    np.testing.assert_allclose(got, np.maximum(x @ k1 + b1, 0) @ k2 + b2, rtol=1e-12)
    # Keras 3 runs the layer on each step: batch statistics are each step's own
    norm = keras.layers.TimeDistributed(keras.layers.BatchNormalization(
        epsilon=1e-3, dtype="float64"), dtype="float64")
    y = norm(x, training=True).numpy()
    mean, var = x.mean(axis=0, keepdims=True), x.var(axis=0, keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-9, atol=1e-12)


def test_time_distributed_passes_the_mask_on_to_an_rnn():
    mask = np.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)
    x = _data(7) * mask[..., None]
    masked = keras.layers.Masking(dtype="float64")(gt.constant(x))
    dense = keras.layers.Dense(F, dtype="float64")
    stepped = keras.layers.TimeDistributed(dense, dtype="float64")(masked)
    gru = keras.layers.GRU(U, dtype="float64")
    got = gru(stepped).numpy()
    weights = gru.get_weights()
    want, _, _ = run(lambda xt, s: gru_step(xt, s, *weights), stepped.numpy(),
                     [np.zeros((B, U))], mask=mask)
    np.testing.assert_allclose(got, want, rtol=1e-10)
