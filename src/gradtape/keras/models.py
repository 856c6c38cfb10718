"""``keras.Model`` (subclassed, or functional from ``inputs``/``outputs``) and
``keras.Sequential``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .functional import Input, InputLayer, KerasTensor, _flat, nodes_between, run_nodes
from .layers.base import Layer, unique_by_identity
from .naming import layer_scope, uniquify
from .summary import print_summary
from .training import Trainer

__all__ = ["Model", "Sequential"]


class Model(Trainer, Layer):
    """Keras 3's ``Model``: a layer with ``compile``/``fit``/``evaluate``/``predict``,
    ``summary``, ``layers``. Subclass it (``__init__`` creating layers, ``call``), or call
    ``keras.Model(inputs=..., outputs=...)`` on ``keras.Input`` tensors."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Model:
        if cls is Model and (args or "inputs" in kwargs):
            return object.__new__(Functional)
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError("keras.Model(inputs, outputs) builds a functional model; a "
                            "subclass of keras.Model takes no inputs/outputs: call "
                            "super().__init__(name=...) and define call().")
        Layer.__init__(self, **kwargs)
        Trainer.__init__(self)

    @property
    def layers(self) -> list[Layer]:
        """The layers assigned as attributes, in assignment order."""
        return self._sublayers()

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """The layer called ``name`` (or at ``index`` of ``layers``)."""
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model "
                                 f"only has {len(layers)} layers.")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in layers]}.")

    def summary(self, line_length: int | None = None, positions: Any = None,
                print_fn: Callable[..., Any] | None = None, expand_nested: bool = False,
                show_trainable: bool = False, layer_range: Any = None) -> None:
        """Prints the table of layers (name, type, output shape, parameters) and the
        parameter totals, as Keras 3 does (``print_fn`` receives each line)."""
        del line_length, positions, expand_nested, show_trainable, layer_range
        print_summary(self, self._summary_layers(), print_fn)

    def _summary_layers(self) -> list[Layer]:
        return self.layers


class Functional(Model):
    """A model from ``keras.Input`` tensors to outputs of layers called on them."""

    def __init__(self, inputs: Any, outputs: Any, name: str | None = None,
                 trainable: bool = True, **kwargs: Any):
        Layer.__init__(self, name=name or uniquify("functional"), trainable=trainable,
                       **kwargs)
        Trainer.__init__(self)
        object.__setattr__(self, "_inputs_struct", inputs)
        object.__setattr__(self, "_outputs_struct", outputs)
        flat_inputs = [t for t in _flat(inputs)]
        if not all(isinstance(t, KerasTensor) for t in flat_inputs):
            raise TypeError("keras.Model(inputs=...) takes keras.Input tensors, got "
                            f"{inputs!r}.")
        nodes = nodes_between(flat_inputs, list(_flat(outputs)))
        object.__setattr__(self, "_nodes", nodes)
        object.__setattr__(self, "_flat_inputs", flat_inputs)
        input_layers = [t.node.layer if t.node else None for t in flat_inputs]
        self._functional_layers = [layer for layer in input_layers if layer is not None] + \
            unique_by_identity(node.layer for node in nodes)
        self.built = True

    @property
    def inputs(self) -> list[KerasTensor]:
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list[KerasTensor]:
        return list(_flat(self._outputs_struct))

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        values = list(_flat(inputs)) if isinstance(inputs, (list, tuple, dict)) else [inputs]
        if len(values) != len(self._flat_inputs):
            raise ValueError(f"Model {self.name!r} expects {len(self._flat_inputs)} "
                             f"input(s), but it received {len(values)} input tensors.")
        return run_nodes(self._nodes, self._flat_inputs, values, self._outputs_struct)


class Sequential(Model):
    """A stack of layers, each called on the previous one's output. Built on the first
    call, or at once when the first entry is ``keras.Input(shape=...)`` or the first
    layer has ``input_shape=``."""

    def __init__(self, layers: list[Any] | None = None, trainable: bool = True,
                 name: str | None = None):
        super().__init__(trainable=trainable, name=name)
        self._sequential_layers: list[Layer] = []
        object.__setattr__(self, "_input_tensor", None)
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_build_from_input()

    def add(self, layer: Any, rebuild: bool = True) -> None:
        """Appends ``layer`` (a ``keras.Input`` only as the first entry)."""
        if isinstance(layer, KerasTensor):
            layer = layer.node.layer if layer.node else None
        if isinstance(layer, InputLayer):
            if self._sequential_layers or self._input_tensor is not None:
                raise ValueError("Sequential: keras.Input must be the first entry.")
            object.__setattr__(self, "_input_tensor", layer.output)
        elif not isinstance(layer, Layer):
            raise ValueError(f"Only instances of `keras.Layer` can be added to a Sequential "
                             f"model. Received: {layer!r} (of type {type(layer).__name__})")
        else:
            if not self._sequential_layers and self._input_tensor is None and \
                    layer._input_shape_arg is not None:
                object.__setattr__(self, "_input_tensor", Input(layer._input_shape_arg))
            self._sequential_layers.append(layer)
            self.built = False
        if rebuild:
            self._maybe_build_from_input()

    def pop(self) -> Layer:
        """Removes and returns the last layer."""
        if not self._sequential_layers:
            raise IndexError("There are no layers in the model.")
        layer = self._sequential_layers.pop()
        self._maybe_build_from_input()
        return layer

    @property
    def layers(self) -> list[Layer]:
        return list(self._sequential_layers)

    def _maybe_build_from_input(self) -> None:
        if self._input_tensor is not None and self._sequential_layers:
            self.build(self._input_tensor.shape)

    def build(self, input_shape: Any = None) -> None:
        """Builds every layer for inputs of ``input_shape`` (batch first)."""
        if input_shape is None:
            raise ValueError("Sequential.build needs the input shape, e.g. "
                             "model.build((None, 3)).")
        x = self._input_tensor
        if x is None or tuple(x.shape)[1:] != tuple(input_shape)[1:]:
            x = Input(batch_shape=(None,) + tuple(input_shape)[1:], dtype=self._dtype)
        with layer_scope(self):
            for layer in self._sequential_layers:
                x = layer(x)
        object.__setattr__(self, "_output_shape", x.shape)
        self.built = True

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        for layer in self._sequential_layers:
            inputs = layer(inputs)
        return inputs

