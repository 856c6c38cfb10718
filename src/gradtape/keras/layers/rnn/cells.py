"""Keras 3's recurrent cells: ``SimpleRNNCell``, ``GRUCell``, ``LSTMCell``. A cell is one
time step, ``output, new_states = cell(inputs, states)``; the ``RNN`` layer runs it over
a sequence. Weights, their names, shapes and gate order are Keras 3's (GRU: z, r, h;
LSTM: i, f, c, o), so ``set_weights`` with a Keras model's arrays gives its numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import ops
from ....api.creation import ones
from ....api.nn import dropout as _dropout
from ....core.tensor import Tensor, convert_to_tensor
from ... import activations, initializers, regularizers
from ..base import Layer

__all__ = ["DropoutRNNCell", "GRUCell", "LSTMCell", "SimpleRNNCell", "batch_size_of"]


def _check_units(units: Any) -> int:
    if not isinstance(units, (int, np.integer)) or units <= 0:
        raise ValueError("Received an invalid value for argument `units`, expected a "
                         f"positive integer, got {units!r}.")
    return int(units)


def batch_size_of(value: Any) -> int:
    """``get_initial_state``'s batch size: Keras 3's int, or (Keras 2's form, which TF's
    text-generation tutorial calls) the inputs, whose first dimension it is."""
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if value is None:
        raise ValueError("get_initial_state needs the batch size (an int), or the inputs.")
    return int(value)


def _rate(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


class DropoutRNNCell:
    """Keras 3's dropout of a cell: one mask for the inputs and one for the state, drawn
    once per sequence (the ``RNN`` layer draws them before its loop and drops them
    after), so every time step drops the same units."""

    dropout: float = 0.0
    recurrent_dropout: float = 0.0
    seed: int | None = None

    def _masks(self) -> dict:
        found = self.__dict__.get("_dropout_masks")
        if found is None:
            found = {}
            object.__setattr__(self, "_dropout_masks", found)
        return found

    def _draw(self, key: str, rate: float, like: Any) -> Tensor | None:
        masks = self._masks()
        if key not in masks and 0.0 < rate < 1.0:
            masks[key] = _dropout(ones(tuple(like.shape), like.dtype), rate, seed=self.seed)
        return masks.get(key)

    def get_dropout_mask(self, step_input: Any) -> Tensor | None:
        """The inputs' mask (``0`` or ``1 / (1 - dropout)``), the same for every step."""
        return self._draw("input", self.dropout, step_input)

    def get_recurrent_dropout_mask(self, step_state: Any) -> Tensor | None:
        """The state's mask, the same for every step."""
        return self._draw("state", self.recurrent_dropout, step_state)

    def reset_dropout_mask(self) -> None:
        self._masks().pop("input", None)

    def reset_recurrent_dropout_mask(self) -> None:
        self._masks().pop("state", None)

    def _dropped(self, inputs: Tensor, state: Tensor, training: Any) -> tuple[Tensor, Tensor]:
        """``inputs`` and ``state`` times their masks when training."""
        if not training:
            return inputs, state
        mask = self.get_dropout_mask(inputs)
        if mask is not None:
            inputs = inputs * mask
        mask = self.get_recurrent_dropout_mask(state)
        if mask is not None:
            state = state * mask
        return inputs, state


class _Cell(Layer, DropoutRNNCell):
    """What the three cells share: their options and their three weights."""

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 seed: int | None = None, **kwargs: Any):
        kwargs.pop("implementation", None)  # Keras's kernel choice: one here
        super().__init__(**kwargs)
        self._config = {
            "units": units, "activation": activation, "use_bias": use_bias,
            "kernel_initializer": kernel_initializer,
            "recurrent_initializer": recurrent_initializer,
            "bias_initializer": bias_initializer, "kernel_regularizer": kernel_regularizer,
            "recurrent_regularizer": recurrent_regularizer,
            "bias_regularizer": bias_regularizer, "kernel_constraint": kernel_constraint,
            "recurrent_constraint": recurrent_constraint, "bias_constraint": bias_constraint,
            "dropout": dropout, "recurrent_dropout": recurrent_dropout, "seed": seed}
        self.units = _check_units(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = _rate(dropout)
        self.recurrent_dropout = _rate(recurrent_dropout)
        self.seed = seed

    _gates = 1  # how many blocks of `units` columns the kernels have

    def _bias_shape(self) -> tuple:
        return (self._gates * self.units,)

    def _bias_initializer(self) -> Any:
        return self.bias_initializer

    def build(self, input_shape: Any) -> None:
        width = self._gates * self.units
        self.kernel = self.add_weight(
            shape=(input_shape[-1], width), name="kernel",
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width), name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=self._bias_shape(), name="bias", initializer=self._bias_initializer(),
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def get_initial_state(self, batch_size: Any = None) -> list[Tensor]:
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        batch = batch_size_of(batch_size)
        return [ops.zeros_like(np.zeros((batch, n), self._dtype)) for n in sizes]

    def get_config(self) -> dict:
        return {**super().get_config(), **self._config}


def _first_state(states: Any) -> Tensor:
    return states[0] if isinstance(states, (list, tuple)) else states


def _like_states(states: Any, new: list) -> Any:
    """The new states in the container the cell received (a tensor stays a tensor)."""
    return new if isinstance(states, (list, tuple)) else new[0]


class SimpleRNNCell(_Cell):
    """``h = activation(inputs @ kernel + bias + h_prev @ recurrent_kernel)``; the output
    is ``h``."""

    def __init__(self, units: int, activation: Any = "tanh", **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)
        self.state_size = self.units
        self.output_size = self.units

    def call(self, inputs: Any, states: Any, training: Any = None) -> tuple[Tensor, Any]:
        inputs, previous = self._dropped(convert_to_tensor(inputs), _first_state(states),
                                         training)
        h = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            h = h + self.bias
        output = self.activation(h + ops.matmul(previous, self.recurrent_kernel))
        return output, _like_states(states, [output])


class GRUCell(_Cell):
    """Keras 3's GRU step. With ``x = inputs @ kernel + input_bias`` split into
    ``x_z, x_r, x_h`` and ``u = h_prev @ recurrent_kernel (+ recurrent_bias)`` split
    alike: ``z = σ(x_z + u_z)``, ``r = σ(x_r + u_r)``, ``hh = tanh(x_h + r * u_h)``
    (``reset_after=True``, the default; bias ``(2, 3 * units)``: input, recurrent) or
    ``tanh(x_h + (r * h_prev) @ recurrent_kernel_h)`` (``reset_after=False``; bias
    ``(3 * units,)``), and ``h = z * h_prev + (1 - z) * hh``."""

    _gates = 3

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", reset_after: bool = True,
                 **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)
        self._config.update(recurrent_activation=recurrent_activation,
                            reset_after=reset_after)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)
        self.state_size = self.units
        self.output_size = self.units

    def _bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs: Any, states: Any, training: Any = None) -> tuple[Tensor, Any]:
        h_prev = _first_state(states)
        inputs, h_dropped = self._dropped(convert_to_tensor(inputs), h_prev, training)
        units = self.units
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = self.bias[0], self.bias[1]
            else:
                input_bias = self.bias
        x = ops.matmul(inputs, self.kernel)
        if input_bias is not None:
            x = x + input_bias
        x_z, x_r, x_h = x[:, :units], x[:, units:2 * units], x[:, 2 * units:]
        if self.reset_after:
            inner = ops.matmul(h_dropped, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
        else:
            inner = ops.matmul(h_dropped, self.recurrent_kernel[:, :2 * units])
        z = self.recurrent_activation(x_z + inner[:, :units])
        r = self.recurrent_activation(x_r + inner[:, units:2 * units])
        if self.reset_after:
            candidate = r * inner[:, 2 * units:]
        else:
            candidate = ops.matmul(r * h_dropped, self.recurrent_kernel[:, 2 * units:])
        hh = self.activation(x_h + candidate)
        h = z * h_prev + (1 - z) * hh
        return h, _like_states(states, [h])


class LSTMCell(_Cell):
    """Keras 3's LSTM step: ``z = inputs @ kernel + h_prev @ recurrent_kernel + bias``
    split into ``i, f, c, o``; ``c = σ(f) * c_prev + σ(i) * tanh(c)``,
    ``h = σ(o) * tanh(c)``; states ``[h, c]``. ``unit_forget_bias`` (the default) starts
    the forget gate's bias at one."""

    _gates = 4

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", unit_forget_bias: bool = True,
                 **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)
        self._config.update(recurrent_activation=recurrent_activation,
                            unit_forget_bias=unit_forget_bias)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [self.units, self.units]
        self.output_size = self.units

    def _bias_initializer(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def forget_gate_ones(shape: Any, dtype: Any = None) -> Tensor:
            parts = [base((units,), dtype=dtype), ops.ones_like(np.ones(units, dtype)),
                     base((2 * units,), dtype=dtype)]
            return ops.concat([convert_to_tensor(p) for p in parts], axis=0)

        return forget_gate_ones

    def call(self, inputs: Any, states: Any, training: Any = None) -> tuple[Tensor, Any]:
        h_prev, c_prev = states[0], states[1]
        inputs, h_prev = self._dropped(convert_to_tensor(inputs), h_prev, training)
        z = ops.matmul(inputs, self.kernel) + ops.matmul(h_prev, self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        u = self.units
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u:2 * u])
        c = f * c_prev + i * self.activation(z[:, 2 * u:3 * u])
        o = self.recurrent_activation(z[:, 3 * u:])
        h = o * self.activation(c)
        return h, [h, c]
