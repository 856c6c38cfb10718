"""Gradients of the recurrent layers: against finite differences in float64 (inputs and
every weight, with masks, backwards, stateful and bidirectional), second order on a tiny
SimpleRNN, the same under ``@gt.function`` as eagerly, and ``fit`` compiled = eager."""

import numpy as np
import pytest
from rnn_reference import random_weights

import gradtape as gt
from gradtape import keras
from layer_checks import assert_gradients_match_differences

B, T, F, U = 2, 4, 3, 3
LAYERS = {"simple": keras.layers.SimpleRNN, "gru": keras.layers.GRU,
          "lstm": keras.layers.LSTM}


def _data(seed=0, shape=(B, T, F)):
    return np.random.default_rng(seed).standard_normal(shape)


def _built(kind, seed=1, **options):
    layer = LAYERS[kind](U, dtype="float64", **options)
    layer.build((B, T, F))
    layer.set_weights(random_weights(np.random.default_rng(seed), kind, F, U,
                                     options.get("reset_after", True)))
    return layer


OPTIONS = [{}, {"return_sequences": True, "go_backwards": True}, {"unroll": True}]
CASES = [(kind, o) for kind in LAYERS for o in OPTIONS] + [("gru", {"reset_after": False})]


@pytest.mark.parametrize(("kind", "options"), CASES)
def test_layer_gradients_match_finite_differences(kind, options):
    layer = _built(kind, **options)
    assert_gradients_match_differences(layer, _data(), layer.trainable_weights)


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
def test_masked_gradients_match_finite_differences(kind):
    mask = np.array([[1, 0, 1, 0], [1, 1, 0, 0]], bool)
    layer = _built(kind, return_sequences=True)
    x = _data(2) * mask[..., None]
    # the mask given, not found by Masking: a shifted zero would unmask its step
    call = lambda inputs: layer(inputs, mask=mask)  # noqa: E731
    assert_gradients_match_differences(call, x, layer.trainable_weights)
    # a masked step's input gets no gradient
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        loss = gt.reduce_sum(layer(xt, mask=mask) ** 2)
    grad = tape.gradient(loss, xt).numpy()
    np.testing.assert_array_equal(grad[~mask], 0)
    assert np.abs(grad[mask]).min() > 0


def test_bidirectional_and_stacked_gradients_match_finite_differences():
    layer = keras.layers.Bidirectional(
        keras.layers.GRU(U, return_sequences=True, dtype="float64"), dtype="float64")
    layer.build((B, T, F))
    assert_gradients_match_differences(layer, _data(3), layer.trainable_weights)
    stacked = keras.layers.RNN([keras.layers.LSTMCell(2, dtype="float64"),
                                keras.layers.SimpleRNNCell(U, dtype="float64")],
                               dtype="float64")
    stacked.build((B, T, F))
    assert_gradients_match_differences(stacked, _data(4), stacked.trainable_weights)


def test_initial_state_gradient_matches_finite_differences():
    layer = _built("lstm")
    h0, c0 = _data(5, (B, U)), _data(6, (B, U))
    x = gt.constant(_data(7))

    def loss_of(h, c):
        return float(gt.reduce_sum(layer(x, initial_state=[gt.constant(h), gt.constant(c)])))

    h, c = gt.constant(h0), gt.constant(c0)
    with gt.GradientTape() as tape:
        tape.watch([h, c])
        loss = gt.reduce_sum(layer(x, initial_state=[h, c]))
    gh, gc = (g.numpy() for g in tape.gradient(loss, [h, c]))
    eps, dh, dc = 1e-6, _data(8, (B, U)), _data(9, (B, U))
    numeric = (loss_of(h0 + eps * dh, c0 + eps * dc) -
               loss_of(h0 - eps * dh, c0 - eps * dc)) / (2 * eps)
    np.testing.assert_allclose(np.sum(gh * dh) + np.sum(gc * dc), numeric, rtol=1e-6)


def test_second_order_of_a_tiny_simple_rnn():
    layer = keras.layers.SimpleRNN(2, dtype="float64")
    layer.build((1, 3, 2))
    layer.set_weights(random_weights(np.random.default_rng(10), "simple", 2, 2))
    x = _data(11, (1, 3, 2))
    kernel = layer.cell.kernel
    direction = _data(12, (2, 2))

    def gradient_at(value):
        kernel.assign(value)
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(layer(x) ** 2)
        return tape.gradient(loss, kernel).numpy()

    start = kernel.numpy()
    with gt.GradientTape() as outer:
        with gt.GradientTape() as inner:
            loss = gt.reduce_sum(layer(x) ** 2)
        grad = inner.gradient(loss, kernel)
        along = gt.reduce_sum(grad * direction)
    hessian_vector = outer.gradient(along, kernel).numpy()
    eps = 1e-5
    numeric = (gradient_at(start + eps * direction) -
               gradient_at(start - eps * direction)) / (2 * eps)
    kernel.assign(start)
    np.testing.assert_allclose(hessian_vector, numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kind", ["simple", "gru", "lstm"])
def test_compiled_gradients_equal_eager(kind):
    layer = _built(kind, return_sequences=True)
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 0]], bool)

    def step(x, mask):
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(layer(x, mask=mask) ** 2)
        return loss, tape.gradient(loss, layer.trainable_weights)

    compiled = gt.function(step)
    for seed in (13, 14):  # the second call runs the warm compiled code
        x = gt.constant(_data(seed))
        eager_loss, eager_grads = step(x, mask)
        loss, grads = compiled(x, mask)
        np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-12)
        for got, want in zip(grads, eager_grads):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    assert compiled.experimental_get_tracing_count() == 1


def test_stateful_layer_under_gt_function_carries_its_states():
    layer = _built("gru", stateful=True)
    reference = _built("gru")
    x = _data(15, (B, 2 * T, F))
    compiled = gt.function(lambda inputs: layer(inputs))
    compiled(gt.constant(x[:, :T]))
    second = compiled(gt.constant(x[:, T:]))
    np.testing.assert_allclose(second.numpy(), reference(x).numpy(), rtol=1e-10)


def _sequence_model(run_eagerly, dropout=0.0):
    gt.random.set_seed(3)
    model = keras.Sequential([
        keras.Input(shape=(T, F)),
        keras.layers.Masking(),
        keras.layers.GRU(4, return_sequences=True, dropout=dropout,
                         recurrent_dropout=dropout),
        keras.layers.LSTM(4),
        keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", run_eagerly=run_eagerly)
    return model


def test_fit_compiled_equals_eager_with_masks():
    rng = np.random.default_rng(16)
    x = rng.standard_normal((16, T, F)).astype(np.float32)
    x[:4, -1] = 0.0  # masked last steps
    y = rng.standard_normal((16, 1)).astype(np.float32)
    eager, compiled = _sequence_model(True), _sequence_model(False)
    eager_history = eager.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    compiled_history = compiled.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    assert compiled.train_function.compiled is not None  # the step ran compiled
    np.testing.assert_allclose(compiled_history.history["loss"],
                               eager_history.history["loss"], rtol=1e-5)
    for a, b in zip(eager.weights, compiled.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)
    assert eager_history.history["loss"][-1] < eager_history.history["loss"][0]


def test_dropout_uses_one_mask_for_every_step():
    cell = keras.layers.SimpleRNNCell(64, dropout=0.5, recurrent_dropout=0.5,
                                      dtype="float64")
    layer = keras.layers.RNN(cell, return_sequences=True, dtype="float64")
    layer.build((1, 3, 64))
    layer.set_weights([np.eye(64), np.zeros((64, 64)), np.zeros(64)])
    cell.activation = keras.activations.linear
    x = np.ones((1, 3, 64))
    trained = layer(x, training=True).numpy()[0]
    kept = trained[0] != 0
    assert 10 < kept.sum() < 54
    np.testing.assert_array_equal(trained[1] != 0, kept)  # the same units every step
    np.testing.assert_allclose(trained[kept[None].repeat(3, 0)], 2.0)  # 1 / (1 - 0.5)
    np.testing.assert_allclose(layer(x).numpy(), 1.0)  # inference: no dropout
    assert cell._masks() == {}  # the masks are dropped after the sequence
    # fit with dropout trains, compiled
    rng = np.random.default_rng(17)
    model = _sequence_model(False, dropout=0.25)
    x, y = rng.standard_normal((16, T, F)), rng.standard_normal((16, 1))
    history = model.fit(x.astype(np.float32), y.astype(np.float32), epochs=4, verbose=0)
    assert model.train_function.compiled is not None
    assert np.isfinite(history.history["loss"]).all()
