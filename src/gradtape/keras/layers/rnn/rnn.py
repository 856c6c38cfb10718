"""Keras 3's ``RNN(cell)`` and ``StackedRNNCells``: any cell with a ``state_size`` and
``call(inputs, states)`` (the built-in ones or a user's) run over a sequence by
``time_loop``."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .... import ops
from ....core import nest
from ....core.tensor import Tensor, convert_to_tensor
from ....core.variable import Variable as _GtVariable
from ..base import Layer
from .cells import DropoutRNNCell, batch_size_of
from .time_loop import time_loop

__all__ = ["RNN", "StackedRNNCells"]


def _is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _zero_states(state_size: Any, batch: int, dtype: Any) -> list:
    """Zeros of ``state_size`` (an int, or a list of them, nested for stacked cells)."""
    sizes = state_size if _is_nested(state_size) else [state_size]
    return [_zero_states(n, batch, dtype) if _is_nested(n) else
            convert_to_tensor(np.zeros((batch, int(n)), dtype)) for n in sizes]


def _first_size(state_size: Any) -> int:
    while _is_nested(state_size):
        state_size = state_size[0]
    return int(state_size)


class StackedRNNCells(Layer):
    """Cells run one after another in each time step: each cell's output is the next
    cell's input; the states are one list per cell."""

    def __init__(self, cells: Any, **kwargs: Any):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError("All cells must have a `call` method and a `state_size` "
                                 f"attribute. Received: cell={cell!r}")
        self.cells = list(cells)

    @property
    def state_size(self) -> list:
        return [c.state_size for c in self.cells]

    @property
    def output_size(self) -> int:
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _first_size(last.state_size)

    def get_initial_state(self, batch_size: Any = None) -> list:
        states = []
        for cell in self.cells:
            make = getattr(cell, "get_initial_state", None)
            found = make(batch_size=batch_size) if make else \
                _zero_states(cell.state_size, batch_size_of(batch_size), self._dtype)
            states.append(found)
        return states

    def build(self, input_shape: Any) -> None:
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer):
                cell.build_for(shape)
            size = getattr(cell, "output_size", None) or _first_size(cell.state_size)
            shape = shape[:-1] + (size,)
        self.built = True

    def call(self, inputs: Any, states: Any, training: Any = None) -> tuple[Tensor, list]:
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            cell_states = list(cell_states) if _is_nested(cell_states) else [cell_states]
            inputs, found = cell(inputs, cell_states)
            new_states.append(list(found) if _is_nested(found) else [found])
        return inputs, new_states

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [_clone_cell(c) for c in self.cells]}


class _StateVariables:
    """A stateful layer's states, kept out of its weights (as Keras 3 does)."""

    def __init__(self, variables: list) -> None:
        self.variables = variables


def _clone_cell(cell: Any) -> Any:
    """A new, unbuilt cell like ``cell``, of its name (``Bidirectional``'s backward
    layer; a config, which Keras 3 rebuilds with the cell's name)."""
    config = getattr(cell, "_config", None)
    if config is not None:  # the built-in cells
        return type(cell)(**{**config, "name": cell.name})
    if isinstance(cell, StackedRNNCells):
        return StackedRNNCells([_clone_cell(c) for c in cell.cells], name=cell.name)
    if isinstance(cell, Layer) and cell.built:
        raise ValueError(f"Cannot make a new cell like {cell.name!r}, which is built; pass "
                         "an unbuilt cell, or backward_layer= to Bidirectional.")
    return copy.deepcopy(cell)


class RNN(Layer):
    """Keras 3's ``RNN``: ``cell`` (or a list of cells, stacked) over axis 1 of
    ``(batch, time, features)`` inputs. ``return_sequences`` gives every output,
    ``return_state`` adds the last states, ``go_backwards`` runs from the end (outputs
    in that order), ``stateful`` starts each call from the last call's states
    (``reset_states`` zeroes them), ``unroll`` unrolls the loop; a mask (``Masking``,
    ``Embedding(mask_zero=True)`` or ``mask=``) skips steps."""

    def __init__(self, cell: Any, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False, **kwargs: Any):
        if _is_nested(cell):
            cell = StackedRNNCells(cell, dtype=kwargs.get("dtype"))
        if not hasattr(cell, "call"):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: "
                             f"cell={cell!r}")
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have a `state_size` attribute (single "
                             "integer or list of integers, one integer per RNN state). "
                             f"Received: cell={cell!r}")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        object.__setattr__(self, "_states", None)

    @property
    def state_size(self) -> list:
        size = self.cell.state_size
        return list(size) if _is_nested(size) else [size]

    @property
    def states(self) -> list | None:
        """A stateful layer's state variables (None before it is built)."""
        return None if self._states is None else self._states.variables

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        shape = tuple(sequences_shape)
        if len(shape) < 3:
            raise ValueError(f"Input of {type(self).__name__} must be 3D (batch, time, "
                             f"features); got shape {shape}.")
        if isinstance(self.cell, Layer):
            self.cell.build_for((shape[0],) + shape[2:])
        if self.stateful:
            if shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must "
                                 f"be static. Found dynamic batch size: sequence.shape="
                                 f"{shape}")
            variables = [_GtVariable(s, trainable=False, name="rnn_state")
                         for s in nest.flatten(self.get_initial_state(shape[0]))]
            object.__setattr__(self, "_states", _StateVariables(variables))
        self.built = True

    def get_initial_state(self, batch_size: Any) -> list:
        make = getattr(self.cell, "get_initial_state", None)
        if make is None:
            return _zero_states(self.state_size, batch_size_of(batch_size), self._dtype)
        found = make(batch_size=batch_size)
        return list(found) if _is_nested(found) else [found]

    def reset_states(self, states: Any = None) -> None:
        """Zeroes a stateful layer's states (or sets them to ``states``)."""
        if self._states is None:
            raise AttributeError("Layer must be stateful (and built) to reset its states.")
        values = [None] * len(self.states) if states is None else nest.flatten(states)
        for variable, value in zip(self.states, values):
            variable.assign(np.zeros(variable.shape, variable.dtype) if value is None
                            else value)

    reset_state = reset_states

    def _initial_states(self, sequences: Tensor, initial_state: Any) -> list:
        if initial_state is not None:
            states = list(initial_state) if _is_nested(initial_state) else [initial_state]
            return nest.map_structure(
                lambda s: ops.cast(convert_to_tensor(s), self._dtype), states)
        if self.stateful:
            flat = [v.read_value() for v in self.states]
            return nest.pack_sequence_as(self.get_initial_state(1), flat)
        return self.get_initial_state(int(sequences.shape[0]))

    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        sequences = convert_to_tensor(sequences)
        states = self._initial_states(sequences, initial_state)
        batch = int(sequences.shape[0])
        _prepare_dropout(self.cell, sequences[:, 0], states, training)
        size = getattr(self.cell, "output_size", None) or _first_size(self.state_size)
        output_zeros = convert_to_tensor(np.zeros((batch, int(size)), sequences.dtype))

        def step(x_t: Tensor, states: Any) -> tuple[Tensor, Any]:
            output, new_states = self.cell(x_t, states)
            return output, list(new_states) if _is_nested(new_states) else [new_states]

        try:
            last, outputs, final = time_loop(
                step, sequences, states, output_zeros, mask=mask,
                go_backwards=self.go_backwards, unroll=self.unroll,
                return_sequences=self.return_sequences,
                zero_output_for_mask=self.zero_output_for_mask)
        finally:
            _reset_dropout(self.cell)
        if self.stateful:
            for variable, value in zip(self.states, nest.flatten(final)):
                variable.assign(value)
        output = outputs if self.return_sequences else last
        return (output, *final) if self.return_state else output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if _is_nested(mask):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self.state_size)
        return output_mask

    def _rnn_config(self) -> dict:
        return {"return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask}

    def get_config(self) -> dict:
        return {**super().get_config(), **self._rnn_config(), "cell": _clone_cell(self.cell)}


def _prepare_dropout(cell: Any, step_input: Tensor, states: list, training: Any) -> None:
    """Draws the cells' dropout masks before the loop (Keras 3 does too), so the loop
    body draws nothing and every step uses the same masks."""
    if not training:
        return
    if isinstance(cell, DropoutRNNCell):
        if cell.dropout > 0 and getattr(cell, "kernel", None) is not None:
            cell.get_dropout_mask(ops.zeros_like(step_input))
        if cell.recurrent_dropout > 0:
            cell.get_recurrent_dropout_mask(nest.flatten(states)[0])
    if isinstance(cell, StackedRNNCells):
        width = step_input
        for inner, inner_states in zip(cell.cells, states):
            _prepare_dropout(inner, width, inner_states if _is_nested(inner_states) else
                             [inner_states], training)
            size = getattr(inner, "output_size", None) or _first_size(inner.state_size)
            width = convert_to_tensor(np.zeros((int(width.shape[0]), size), width.dtype))


def _reset_dropout(cell: Any) -> None:
    if isinstance(cell, DropoutRNNCell):
        cell.reset_dropout_mask()
        cell.reset_recurrent_dropout_mask()
    for inner in getattr(cell, "cells", ()):
        _reset_dropout(inner)
