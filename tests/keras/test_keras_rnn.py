"""Keras 3's recurrent layers: each cell's step against its written equations, the layers
against a NumPy loop (``rnn_reference``), their weights and defaults, and every option:
return_sequences/state, go_backwards, stateful, unroll, masking, user and stacked cells."""

import numpy as np
import pytest
from rnn_reference import STEPS, gru_step, lstm_step, random_weights, run, simple_step

import gradtape as gt
from gradtape import keras

LAYERS = {"simple": keras.layers.SimpleRNN, "gru": keras.layers.GRU,
          "lstm": keras.layers.LSTM}
CELLS = {"simple": keras.layers.SimpleRNNCell, "gru": keras.layers.GRUCell,
         "lstm": keras.layers.LSTMCell}
B, T, F, U = 3, 5, 4, 6


def _data(seed=0, shape=(B, T, F)):
    return np.random.default_rng(seed).standard_normal(shape)


def _zeros(kind):
    return [np.zeros((B, U))] * (2 if kind == "lstm" else 1)


def _layer(kind, seed=1, **options):
    layer = LAYERS[kind](U, dtype="float64", **options)
    layer.build((B, T, F))
    weights = random_weights(np.random.default_rng(seed), kind, F, U,
                             options.get("reset_after", True))
    layer.set_weights(weights)
    return layer, weights


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
def test_a_cell_step_follows_keras_equations(kind):
    cell = CELLS[kind](U, dtype="float64")
    cell.build((B, F))
    weights = random_weights(np.random.default_rng(2), kind, F, U)
    cell.set_weights(weights)
    x = _data(3, (B, F))
    states = [np.random.default_rng(4).standard_normal((B, U)) for _ in _zeros(kind)]
    output, new_states = cell(gt.constant(x), [gt.constant(s) for s in states])
    want_output, want_states = STEPS[kind](x, states, *weights)
    np.testing.assert_allclose(output.numpy(), want_output, rtol=1e-12, atol=1e-12)
    for got, want in zip(new_states, want_states):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_gru_reset_before_follows_the_original_variant():
    cell = keras.layers.GRUCell(U, reset_after=False, dtype="float64")
    cell.build((B, F))
    weights = random_weights(np.random.default_rng(5), "gru", F, U, reset_after=False)
    cell.set_weights(weights)
    x, h = _data(6, (B, F)), _data(7, (B, U))
    output, _ = cell(gt.constant(x), [gt.constant(h)])
    want, _ = gru_step(x, [h], *weights, reset_after=False)
    np.testing.assert_allclose(output.numpy(), want, rtol=1e-12)
    # ...which differs from reset_after=True's on the same kernels
    other, _ = gru_step(x, [h], weights[0], weights[1], np.stack([weights[2], 0 * weights[2]]))
    assert np.abs(other - want).max() > 1e-3


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_a_layer_runs_the_keras_loop(kind, go_backwards):
    layer, weights = _layer(kind, go_backwards=go_backwards, return_sequences=True,
                            return_state=True)
    x = _data()
    got = layer(x)
    step = lambda xt, s: STEPS[kind](xt, s, *weights)  # noqa: E731
    last, outputs, states = run(step, x, _zeros(kind), go_backwards=go_backwards)
    np.testing.assert_allclose(got[0].numpy(), outputs, rtol=1e-10, atol=1e-12)
    for g, want in zip(got[1:], states):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[0].numpy()[:, -1], last, rtol=1e-10)


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
def test_without_return_sequences_the_last_output_and_with_unroll_the_same(kind):
    x = _data(8)
    layer, weights = _layer(kind)
    unrolled, _ = _layer(kind, unroll=True)
    step = lambda xt, s: STEPS[kind](xt, s, *weights)  # noqa: E731
    last, _, _ = run(step, x, _zeros(kind))
    np.testing.assert_allclose(layer(x).numpy(), last, rtol=1e-10)
    np.testing.assert_allclose(unrolled(x).numpy(), last, rtol=1e-10)


def test_weights_names_shapes_and_keras_initial_values():
    gru = keras.layers.GRU(4, name="encoder")
    gru(np.zeros((2, 3, 5), np.float32))
    assert [w.path for w in gru.weights] == ["encoder/gru_cell/kernel",
                                            "encoder/gru_cell/recurrent_kernel",
                                            "encoder/gru_cell/bias"]
    assert [tuple(w.shape) for w in gru.weights] == [(5, 12), (4, 12), (2, 12)]
    recurrent = gru.cell.recurrent_kernel.numpy()  # orthogonal, per Keras's default
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(gru.cell.bias.numpy(), 0)
    assert tuple(keras.layers.GRU(4, reset_after=False)(
        np.zeros((2, 3, 5), np.float32)).shape) == (2, 4)
    lstm = keras.layers.LSTM(3)
    lstm(np.zeros((2, 3, 5), np.float32))
    assert [tuple(w.shape) for w in lstm.weights] == [(5, 12), (3, 12), (12,)]
    np.testing.assert_array_equal(lstm.cell.bias.numpy(), [0] * 3 + [1] * 3 + [0] * 6)
    no_forget = keras.layers.LSTM(3, unit_forget_bias=False)
    no_forget(np.zeros((2, 3, 5), np.float32))
    np.testing.assert_array_equal(no_forget.cell.bias.numpy(), 0)
    assert keras.layers.SimpleRNN(2, use_bias=False)(np.zeros((1, 2, 3))).shape == (1, 2)
    assert gru.count_params() == 5 * 12 + 4 * 12 + 24
    assert gru.cell.recurrent_activation is keras.activations.sigmoid
    assert (gru.units, gru.reset_after) == (4, True)


def test_regularizers_add_losses():
    layer = keras.layers.SimpleRNN(2, kernel_regularizer=keras.regularizers.L2(0.5),
                                   recurrent_regularizer=keras.regularizers.L1(0.25))
    layer(np.ones((1, 2, 3), np.float32))
    kernel, recurrent = layer.cell.kernel.numpy(), layer.cell.recurrent_kernel.numpy()
    want = [0.5 * np.sum(kernel ** 2), 0.25 * np.sum(np.abs(recurrent))]
    np.testing.assert_allclose([float(v) for v in layer.losses], want, rtol=1e-6)


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
def test_initial_state_and_stateful_calls_continue_the_sequence(kind):
    x = _data(9, (2, 6, F))
    whole, weights = _layer(kind, return_state=True)
    halves = LAYERS[kind](U, dtype="float64", stateful=True)
    halves.build((2, 6, F))
    halves.set_weights(weights)
    halves(x[:, :3])
    second = halves(x[:, 3:])
    full = LAYERS[kind](U, dtype="float64")
    full.build((2, 6, F))
    full.set_weights(weights)
    np.testing.assert_allclose(second.numpy(), full(x).numpy(), rtol=1e-10)
    assert halves.weights == halves.cell.weights  # the states are no weights
    halves.reset_states()
    np.testing.assert_allclose(halves(x[:, :3]).numpy(), full(x[:, :3]).numpy(), rtol=1e-10)
    # an explicit initial_state: the second half from the first half's states
    first = whole(gt.constant(x[:, :3]))
    from_states = whole(gt.constant(x[:, 3:]), initial_state=list(first[1:]))
    np.testing.assert_allclose(from_states[0].numpy(), full(x).numpy(), rtol=1e-10)


def test_stateful_needs_a_static_batch():
    inputs = keras.Input(shape=(3, 2))
    with pytest.raises(ValueError, match="batch size must be static"):
        keras.layers.GRU(2, stateful=True)(inputs)


def test_bad_inputs_and_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="must be 3D"):
        keras.layers.LSTM(2)(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="positive integer"):
        keras.layers.GRU(0)
    with pytest.raises(ValueError, match="state_size"):
        keras.layers.RNN(keras.layers.Dense(2))


def _masked_reference(kind, weights, x, mask, **kwargs):
    step = lambda xt, s: STEPS[kind](xt, s, *weights)  # noqa: E731
    return run(step, x, _zeros(kind), mask=mask, **kwargs)


MASK = np.array([[1, 1, 0, 1, 1], [1, 0, 0, 1, 0], [1, 1, 1, 0, 0]], bool)


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_masking_keeps_the_state_and_output_of_masked_steps(kind, go_backwards):
    x = _data(10) * MASK[..., None]  # zeros mid-sequence and at the end
    layer, weights = _layer(kind, return_sequences=True, return_state=True,
                            go_backwards=go_backwards)
    got = layer(keras.layers.Masking(0.0, dtype="float64")(x))
    last, outputs, states = _masked_reference(kind, weights, x, MASK,
                                              go_backwards=go_backwards)
    np.testing.assert_allclose(got[0].numpy(), outputs, rtol=1e-10, atol=1e-12)
    for g, want in zip(got[1:], states):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-10, atol=1e-12)
    unmasked = _masked_reference(kind, weights, x, None, go_backwards=go_backwards)
    assert np.abs(unmasked[1] - outputs).max() > 1e-3  # the mask did something
    # the last output of a row masked at the end is its last real step's
    final = layer(x, mask=MASK)
    np.testing.assert_allclose(final[0].numpy()[:, -1], last, rtol=1e-10)


def test_embedding_mask_zero_through_the_functional_api():
    tokens = np.array([[3, 1, 0, 0], [2, 0, 4, 0]])
    inputs = keras.Input(shape=(4,), dtype="int32")
    embedded = keras.layers.Embedding(5, F, mask_zero=True, dtype="float64")(inputs)
    dropped = keras.layers.Dropout(0.5, dtype="float64")(embedded)  # the mask passes
    outputs = keras.layers.GRU(U, dtype="float64")(dropped)
    model = keras.Model(inputs, outputs)
    embedding, gru = model.layers[1], model.layers[3]
    table = embedding.embeddings.numpy()
    weights = gru.get_weights()
    x = table[tokens]
    last, _, _ = run(lambda xt, s: gru_step(xt, s, *weights), x, [np.zeros((2, U))],
                     mask=tokens != 0)
    np.testing.assert_allclose(model(tokens).numpy(), last, rtol=1e-6)
    # without the mask: different numbers
    plain, _, _ = run(lambda xt, s: gru_step(xt, s, *weights), x, [np.zeros((2, U))])
    assert np.abs(plain - last).max() > 1e-4


def test_masks_ride_with_outputs_and_sequence_layers_pass_them_on():
    x = _data(11) * MASK[..., None]
    masked = keras.layers.Masking(dtype="float64")(gt.constant(x))
    mask = keras.layers.Masking().compute_mask(gt.constant(x))
    np.testing.assert_array_equal(mask.numpy(), MASK)
    sequences = keras.layers.SimpleRNN(2, return_sequences=True, dtype="float64")(masked)
    from gradtape.keras.layers.masks import get_keras_mask
    np.testing.assert_array_equal(get_keras_mask(sequences).numpy(), MASK)
    last = keras.layers.SimpleRNN(2, dtype="float64")(masked)
    assert get_keras_mask(last) is None
    with pytest.warns(UserWarning, match="does not support masking"):
        keras.layers.Flatten()(masked)


class MinimalRNNCell(keras.layers.Layer):
    """Keras's documented example of a user cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                name="recurrent_kernel")

    def call(self, inputs, states):
        prev_output = states[0]
        h = keras.ops.matmul(inputs, self.kernel)
        output = h + keras.ops.matmul(prev_output, self.recurrent_kernel)
        return output, [output]


def test_a_user_cell_and_stacked_cells():
    x = _data(12)
    layer = keras.layers.RNN(MinimalRNNCell(U, dtype="float64"), return_sequences=True,
                             dtype="float64")
    got = layer(x).numpy()
    kernel, recurrent = (w.numpy() for w in layer.weights)

    def step(xt, s):
        output = xt @ kernel + s[0] @ recurrent
        return output, [output]

    _, want, _ = run(step, x, [np.zeros((B, U))])
    np.testing.assert_allclose(got, want, rtol=1e-10)

    cells = [keras.layers.LSTMCell(U, dtype="float64"),
             keras.layers.GRUCell(2, dtype="float64")]
    stacked = keras.layers.RNN(cells, return_state=True, dtype="float64")
    out, lstm_states, gru_states = stacked(x)
    lstm_weights, gru_weights = cells[0].get_weights(), cells[1].get_weights()

    def stacked_step(xt, s):
        h, lstm_new = lstm_step(xt, s[0], *lstm_weights)
        h, gru_new = gru_step(h, s[1], *gru_weights)
        return h, [lstm_new, gru_new]

    states = [[np.zeros((B, U)), np.zeros((B, U))], [np.zeros((B, 2))]]
    output = None
    for t in range(T):
        output, states = stacked_step(x[:, t], states)
    np.testing.assert_allclose(out.numpy(), output, rtol=1e-10)
    np.testing.assert_allclose(lstm_states[1].numpy(), states[0][1], rtol=1e-10)
    np.testing.assert_allclose(gru_states[0].numpy(), states[1][0], rtol=1e-10)
    assert keras.layers.StackedRNNCells(cells).state_size == [[U, U], 2]


def test_simple_rnn_activation_and_no_bias():
    layer = keras.layers.SimpleRNN(U, activation="relu", use_bias=False, dtype="float64")
    x = _data(13)
    got = layer(x).numpy()
    kernel, recurrent = layer.get_weights()
    h = np.zeros((B, U))
    for t in range(T):
        h = np.maximum(x[:, t] @ kernel + h @ recurrent, 0)
    np.testing.assert_allclose(got, h, rtol=1e-10)
    np.testing.assert_allclose(simple_step(x[:, 0], [np.zeros((B, U))], kernel, recurrent,
                                           0.0)[0], np.tanh(x[:, 0] @ kernel), rtol=1e-12)


class TextModel(keras.Model):
    """TF's text-generation tutorial's model (``get_initial_state(x)`` with the inputs,
    Keras 2's form, as the tutorial calls it)."""

    def __init__(self, vocab_size, embedding_dim, rnn_units):
        super().__init__()
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim)
        self.gru = keras.layers.GRU(rnn_units, return_sequences=True, return_state=True)
        self.dense = keras.layers.Dense(vocab_size)

    def call(self, inputs, states=None, return_state=False, training=False):
        x = self.embedding(inputs, training=training)
        if states is None:
            states = self.gru.get_initial_state(x)
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)
        return (x, states) if return_state else x


def test_the_text_generation_tutorial_model_trains_and_generates_step_by_step():
    rng = np.random.default_rng(14)
    tokens = rng.integers(0, 12, (8, 6))
    model = TextModel(12, 4, 8)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(tokens[:, :-1], tokens[:, 1:], epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    whole = model(tokens).numpy()
    states, steps = None, []
    for t in range(tokens.shape[1]):  # the tutorial's OneStep: states fed back
        logits, states = model(tokens[:, t:t + 1], states=states, return_state=True)
        steps.append(logits.numpy()[:, 0])
    np.testing.assert_allclose(np.stack(steps, axis=1), whole, rtol=1e-5, atol=1e-6)
    assert [tuple(s.shape) for s in model.gru.get_initial_state(3)] == [(3, 8)]
