"""Real-program blockers in ``keras.Model``/``Sequential`` construction: the stray
``super().__init__(self)`` of TF's text-generation tutorial, and a last layer that
returns a tuple (an RNN with ``return_state=True``)."""
from __future__ import annotations

import numpy as np
import pytest

import gradtape as tf


class TutorialModel(tf.keras.Model):
    """TF's text-generation tutorial's model, as it writes its constructor."""

    def __init__(self, vocab_size: int, embedding_dim: int, rnn_units: int):
        super().__init__(self)
        self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
        self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True,
                                       return_state=True)
        self.dense = tf.keras.layers.Dense(vocab_size)

    def call(self, inputs, states=None, return_state=False, training=False):
        x = self.embedding(inputs, training=training)
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)
        return (x, states) if return_state else x


def test_super_init_with_self_builds_a_subclassed_model():
    model = TutorialModel(vocab_size=7, embedding_dim=4, rnn_units=5)
    assert model.name == "tutorial_model"
    tokens = np.array([[1, 2, 3], [4, 5, 6]])
    logits, states = model(tokens, return_state=True)
    assert tuple(logits.shape) == (2, 3, 7) and tuple(states.shape) == (2, 5)
    assert len(model.trainable_variables) == 1 + 3 + 2  # embedding, GRU, dense


def test_super_init_with_self_trains_with_fit():
    model = TutorialModel(vocab_size=6, embedding_dim=3, rnn_units=4)
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(0).integers(0, 6, size=(8, 5))
    history = model.fit(x, x, epochs=2, batch_size=4, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_other_stray_positionals_still_raise():
    class Stray(tf.keras.Model):
        def __init__(self):
            super().__init__(3)

    with pytest.raises(TypeError, match="super\\(\\).__init__\\(name=...\\)"):
        Stray()


def test_sequential_whose_last_layer_returns_a_tuple():
    rng = np.random.default_rng(1)
    gru = tf.keras.layers.GRU(4, return_state=True)
    model = tf.keras.Sequential([tf.keras.Input((5, 3)), gru])
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    output, state = model(x)
    expected_output, expected_state = gru(x)
    np.testing.assert_allclose(output.numpy(), expected_output.numpy(), rtol=1e-6)
    np.testing.assert_allclose(state.numpy(), expected_state.numpy(), rtol=1e-6)
    # for GRU the last output is the final state
    np.testing.assert_allclose(output.numpy(), state.numpy(), rtol=1e-6)


def test_sequential_tuple_output_built_late_and_summarized():
    model = tf.keras.Sequential([tf.keras.layers.LSTM(3, return_state=True)])
    model.build((None, 4, 2))
    lines: list[str] = []
    model.summary(print_fn=lines.append)
    row = next(line for line in lines if "lstm (LSTM)" in line)
    assert "[(None, 3), (None, 3), (None, 3)]" in row
    outputs = model(np.ones((2, 4, 2), np.float32))
    assert [tuple(o.shape) for o in outputs] == [(2, 3)] * 3
