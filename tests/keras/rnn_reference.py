"""Keras 3's recurrent cells and time loop written out in NumPy (float64), from the
equations in keras/src/layers/rnn/*.py: the reference the recurrent layers' tests
compare with."""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simple_step(x, states, kernel, recurrent_kernel, bias):
    h = np.tanh(x @ kernel + bias + states[0] @ recurrent_kernel)
    return h, [h]


def gru_step(x, states, kernel, recurrent_kernel, bias, reset_after=True):
    h_prev = states[0]
    u = recurrent_kernel.shape[0]
    if reset_after:
        input_bias, recurrent_bias = bias[0], bias[1]
    else:
        input_bias, recurrent_bias = bias, np.zeros(3 * u)
    x_z, x_r, x_h = np.split(x @ kernel + input_bias, 3, axis=-1)
    if reset_after:
        r_z, r_r, r_h = np.split(h_prev @ recurrent_kernel + recurrent_bias, 3, axis=-1)
    else:
        r_z, r_r = np.split(h_prev @ recurrent_kernel[:, :2 * u], 2, axis=-1)
    z = sigmoid(x_z + r_z)
    r = sigmoid(x_r + r_r)
    if reset_after:
        hh = np.tanh(x_h + r * r_h)
    else:
        hh = np.tanh(x_h + (r * h_prev) @ recurrent_kernel[:, 2 * u:])
    h = z * h_prev + (1 - z) * hh
    return h, [h]


def lstm_step(x, states, kernel, recurrent_kernel, bias):
    h_prev, c_prev = states
    i, f, c, o = np.split(x @ kernel + h_prev @ recurrent_kernel + bias, 4, axis=-1)
    c = sigmoid(f) * c_prev + sigmoid(i) * np.tanh(c)
    h = sigmoid(o) * np.tanh(c)
    return h, [h, c]


def run(step, x, states, mask=None, go_backwards=False, zero_output_for_mask=False):
    """Keras 3's ``backend.rnn``: returns (last output, outputs (batch, time, units),
    last states); outputs in processing order (reversed with ``go_backwards``)."""
    steps = list(range(x.shape[1]))
    if go_backwards:
        steps = steps[::-1]
    output = np.zeros((x.shape[0], states[0].shape[-1]))
    outputs = []
    for t in steps:
        new_output, new_states = step(x[:, t], states)
        if mask is not None:
            keep = mask[:, t][:, None]
            new_states = [np.where(keep, n, s) for n, s in zip(new_states, states)]
            fallback = np.zeros_like(new_output) if zero_output_for_mask else output
            new_output = np.where(keep, new_output, fallback)
        output, states = new_output, new_states
        outputs.append(output)
    return output, np.stack(outputs, axis=1), states


def random_weights(rng, kind, features, units, reset_after=True):
    """Random weights in Keras's order and shapes: kernel, recurrent_kernel, bias."""
    gates = {"simple": 1, "gru": 3, "lstm": 4}[kind]
    bias_shape = (2, 3 * units) if kind == "gru" and reset_after else (gates * units,)
    return [rng.standard_normal((features, gates * units)) * 0.5,
            rng.standard_normal((units, gates * units)) * 0.5,
            rng.standard_normal(bias_shape) * 0.5]


STEPS = {"simple": simple_step, "gru": gru_step, "lstm": lstm_step}
