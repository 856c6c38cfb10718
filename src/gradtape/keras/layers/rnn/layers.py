"""Keras 3's ``SimpleRNN``, ``GRU`` and ``LSTM``: an ``RNN`` of their cell, named as
Keras names it (``gru/gru_cell/kernel``), with the cell's options as the layer's."""

from __future__ import annotations

from typing import Any

from .cells import GRUCell, LSTMCell, SimpleRNNCell
from .rnn import RNN

__all__ = ["GRU", "LSTM", "SimpleRNN"]

_RNN_OPTIONS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                "zero_output_for_mask")
# Layer options that go to the layer, not to its cell.
_LAYER_OPTIONS = ("name", "activity_regularizer", "input_shape", "input_dim",
                  "batch_input_shape", "batch_shape", "batch_size", "autocast")


class _CellLayer(RNN):
    """An ``RNN`` whose cell the layer makes from its own arguments."""

    _cell_type: type = SimpleRNNCell
    _cell_name = "simple_rnn_cell"

    def __init__(self, units: int, **kwargs: Any):
        rnn_options = {k: kwargs.pop(k) for k in _RNN_OPTIONS if k in kwargs}
        layer_options = {k: kwargs.pop(k) for k in _LAYER_OPTIONS if k in kwargs}
        shared = {k: kwargs[k] for k in ("dtype", "trainable") if k in kwargs}
        cell = self._cell_type(units, name=self._cell_name, **kwargs)
        super().__init__(cell, **rnn_options, **layer_options, **shared)

    def __getattr__(self, attr: str) -> Any:
        # Keras's layers expose their cell's options (`gru.units`, `gru.reset_after`).
        cell = self.__dict__.get("cell")
        if cell is not None and attr in cell.__dict__.get("_config", {}):
            return getattr(cell, attr)
        return super().__getattr__(attr)

    def get_config(self) -> dict:
        base = {k: v for k, v in super().get_config().items() if k != "cell"}
        cell_config = {k: v for k, v in self.cell.get_config().items()
                       if k not in ("name", "trainable", "dtype")}
        return {**base, **cell_config}


class SimpleRNN(_CellLayer):
    """A fully connected RNN: ``SimpleRNNCell`` over the sequence."""

    _cell_type, _cell_name = SimpleRNNCell, "simple_rnn_cell"


class GRU(_CellLayer):
    """A GRU: ``GRUCell`` over the sequence (``reset_after=True`` by default, Keras 3's
    and cuDNN's variant)."""

    _cell_type, _cell_name = GRUCell, "gru_cell"


class LSTM(_CellLayer):
    """An LSTM: ``LSTMCell`` over the sequence; its states are ``[h, c]``."""

    _cell_type, _cell_name = LSTMCell, "lstm_cell"
