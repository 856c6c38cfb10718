"""Keras 3's ``Bidirectional`` (an RNN forwards and a copy of it backwards, merged) and
``TimeDistributed`` (a layer applied to every time step)."""

from __future__ import annotations

from typing import Any

from .... import ops
from ....api.control_flow import map_fn
from ....core.tensor import Tensor, convert_to_tensor
from ..base import Layer, _mask_rule, _training_argument
from .rnn import RNN

__all__ = ["Bidirectional", "TimeDistributed"]

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _recreated(layer: Any, name: str, **changes: Any) -> Any:
    """A new layer of ``layer``'s class and configuration (Keras recreates it from its
    config, so the copy carries no state or weights)."""
    config = layer.get_config()
    config.update(changes, name=name)
    return type(layer)(**config)


def _without_prefix(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


def _merge(mode: str | None, y: Tensor, y_rev: Tensor) -> Any:
    if mode == "concat":
        return ops.concat([y, y_rev], axis=-1)
    if mode == "sum":
        return y + y_rev
    if mode == "ave":
        return (y + y_rev) / 2
    if mode == "mul":
        return y * y_rev
    return (y, y_rev)


class Bidirectional(Layer):
    """Runs ``layer`` forwards and a copy with the opposite ``go_backwards`` (or
    ``backward_layer``), the backward outputs flipped back in time with
    ``return_sequences``, and merges them (``merge_mode``: ``"concat"`` (the default),
    ``"sum"``, ``"mul"``, ``"ave"``, or None for the pair). ``return_state`` adds the
    forward states, then the backward ones."""

    def __init__(self, layer: Any, merge_mode: str | None = "concat", weights: Any = None,
                 backward_layer: Any = None, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer!r}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `keras.layers.Layer` "
                             f"instance. Received: {backward_layer!r}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode "
                             'should be one of {"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        self.forward_layer = _recreated(layer, "forward_" + _without_prefix(layer.name,
                                                                            "forward_"))
        if backward_layer is None:
            backward_layer = _recreated(
                layer, "backward_" + _without_prefix(layer.name, "backward_"),
                go_backwards=not layer.go_backwards)
        self.backward_layer = backward_layer
        self._check_pair()
        for inner in (self.forward_layer, self.backward_layer):
            if isinstance(inner, RNN):  # Keras: a masked step outputs zeros here
                inner.zero_output_for_mask = inner.return_sequences
        self.merge_mode = merge_mode
        self._initial_weights = weights
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True

    def _check_pair(self) -> None:
        forward, backward = self.forward_layer, self.backward_layer
        if forward.go_backwards == backward.go_backwards:
            raise ValueError("Forward layer and backward layer should have different "
                             "`go_backwards` value. Received: forward_layer.go_backwards "
                             f"{forward.go_backwards}, backward_layer.go_backwards="
                             f"{backward.go_backwards}")
        for attribute in ("stateful", "return_sequences", "return_state"):
            a, b = getattr(forward, attribute), getattr(backward, attribute)
            if a != b:
                raise ValueError("Forward layer and backward layer are expected to have "
                                 f'the same value for attribute "{attribute}", got "{a}" '
                                 f'for forward layer and "{b}" for backward layer')

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        self.forward_layer.build_for(sequences_shape)
        self.backward_layer.build_for(sequences_shape)
        if self._initial_weights is not None:
            half = len(self._initial_weights) // 2
            self.forward_layer.set_weights(self._initial_weights[:half])
            self.backward_layer.set_weights(self._initial_weights[half:])
        self.built = True

    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, mask=mask)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, mask=mask)
        states: tuple = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = ops.flip(y_rev, axis=1)
        output = _merge(self.merge_mode, y, y_rev)
        if self.return_state:
            return (*output, *states) if self.merge_mode is None else (output, *states)
        return output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.return_sequences:
            output_mask = (mask, mask) if not self.merge_mode else mask
        else:
            output_mask = (None, None) if not self.merge_mode else None
        if self.return_state:
            count = 2 * len(self.forward_layer.state_size)
            heads = list(output_mask) if isinstance(output_mask, tuple) else [output_mask]
            return heads + [None] * count
        return output_mask

    def reset_states(self) -> None:
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    reset_state = reset_states

    @property
    def states(self) -> tuple | None:
        forward, backward = self.forward_layer.states, self.backward_layer.states
        return tuple(forward + backward) if forward and backward else None

    def get_config(self) -> dict:
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": _recreated(self.forward_layer, self.forward_layer.name),
                "backward_layer": _recreated(self.backward_layer, self.backward_layer.name)}


class TimeDistributed(Layer):
    """Applies ``layer`` to every time step (axis 1) of its input, one step at a time
    as Keras 3 does (a ``BatchNormalization`` inside sees each step's batch); a mask
    passes through."""

    def __init__(self, layer: Any, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        shape = tuple(input_shape)
        if len(shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` "
                             f"with at least 3 dimensions, received: {shape}")
        self.layer.build_for((shape[0],) + shape[2:])
        self.built = True

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        inputs = convert_to_tensor(inputs)
        takes_training = _training_argument(type(self.layer))[0]
        takes_mask = _mask_rule(type(self.layer))[0] and mask is not None
        kwargs = {"training": training} if takes_training else {}
        steps = _swap_batch_and_time(inputs)
        if takes_mask:
            elems = (steps, _swap_batch_and_time(convert_to_tensor(mask)))
            outputs = map_fn(lambda e: self.layer.call(e[0], mask=e[1], **kwargs), elems)
        else:
            outputs = map_fn(lambda x_t: self.layer.call(x_t, **kwargs), steps)
        return _swap_batch_and_time(outputs)

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": self.layer}


def _swap_batch_and_time(x: Tensor) -> Tensor:
    return ops.transpose(x, (1, 0) + tuple(range(2, x.ndim)))
