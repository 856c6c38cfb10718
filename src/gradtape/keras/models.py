"""``keras.Model`` (subclassed, or functional from ``inputs``/``outputs``) and
``keras.Sequential``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops
from ..core.tensor import Tensor, convert_to_tensor
from .functional import (
    Input,
    InputLayer,
    KerasTensor,
    _flat,
    _map,
    nodes_between,
    run_nodes,
)
from .layers.base import Layer, unique_by_identity
from .naming import layer_scope, to_snake_case, uniquify
from .summary import print_summary
from .training import Trainer

__all__ = ["Model", "Sequential"]


class Model(Trainer, Layer):
    """Keras 3's ``Model``: a layer with ``compile``/``fit``/``evaluate``/``predict``,
    ``summary``, ``layers``. Subclass it (``__init__`` creating layers, ``call``), or call
    ``keras.Model(inputs=..., outputs=...)`` on ``keras.Input`` tensors."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Model:
        if issubclass(cls, Functional) or not _functional_arguments(cls, args, kwargs):
            return object.__new__(cls)
        # Keras 3: `Model(inputs, outputs)`, and a subclass called that way (the
        # "customizing fit" guide's `CustomModel(inputs, outputs)`), are functional.
        return object.__new__(Functional if cls is Model else _functional_subclass(cls))

    def __init__(self, *args: Any, **kwargs: Any):
        if args == (self,):
            # `super().__init__(self)`, as TF's text-generation tutorial writes it:
            # tf.keras 2 ignored the stray positional, so programs ported from it run.
            args = ()
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError("keras.Model(inputs, outputs) builds a functional model; a "
                            "subclass of keras.Model takes no inputs/outputs: call "
                            "super().__init__(name=...) and define call(). Received "
                            f"{len(args)} positional argument(s).")
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


def _functional_arguments(cls: type, args: tuple, kwargs: dict) -> bool:
    """Keras 3's test for functional construction: ``(inputs, outputs)`` given, the
    inputs KerasTensors (so a subclass's own positional arguments are not taken)."""
    if cls is Model:
        return bool(args) or "inputs" in kwargs
    given = len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or \
        ("inputs" in kwargs and "outputs" in kwargs)
    inputs = args[0] if args else kwargs.get("inputs")
    return given and any(isinstance(t, KerasTensor) for t in _flat(inputs))


_functional_subclasses: dict[type, type] = {}


def _functional_subclass(cls: type) -> type:
    """``cls`` with ``Functional`` under it (its own methods, such as ``train_step``,
    first); named as ``cls``, so the model's default name is ``custom_model``."""
    found = _functional_subclasses.get(cls)
    if found is None:
        found = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__,
                                                       "__qualname__": cls.__qualname__})
        _functional_subclasses[cls] = found
    return found


class Functional(Model):
    """A model from ``keras.Input`` tensors to outputs of layers (and ``keras.ops``)
    called on them; inputs and outputs may be one tensor, lists or dicts of them."""

    def __init__(self, inputs: Any, outputs: Any, name: str | None = None,
                 trainable: bool = True, **kwargs: Any):
        if name is None:
            name = uniquify("functional" if type(self) is Functional
                            else to_snake_case(type(self).__name__))
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        Trainer.__init__(self)
        flat_inputs = list(_flat(inputs))
        if not flat_inputs or not all(isinstance(t, KerasTensor) for t in flat_inputs):
            raise TypeError("keras.Model(inputs=...) takes keras.Input tensors (one, a "
                            f"list or a dict of them), got {inputs!r}.")
        flat_outputs = list(_flat(outputs))
        if not all(isinstance(t, KerasTensor) for t in flat_outputs):
            raise TypeError("keras.Model(outputs=...) takes the KerasTensors that layers "
                            f"called on the inputs returned, got {outputs!r}.")
        nodes = nodes_between(flat_inputs, flat_outputs)
        for name_, value in (("_inputs_struct", inputs), ("_outputs_struct", outputs),
                             ("_nodes", nodes), ("_flat_inputs", flat_inputs)):
            object.__setattr__(self, name_, value)
        self._functional_layers = [op for op in self._operations if isinstance(op, Layer)]
        self.built = True

    @property
    def _operations(self) -> list[Any]:
        """The input layers, then each layer and ``keras.ops`` operation of the graph
        once, in call order (a property: checkpoints walk the attributes)."""
        inputs = [t.node.operation for t in self._flat_inputs if t.node is not None]
        return unique_by_identity([*inputs, *(n.operation for n in self._nodes)])

    @property
    def layers(self) -> list[Layer]:
        """The layers of the graph, inputs first, each once (not ``keras.ops``)."""
        return list(self._functional_layers)

    @property
    def inputs(self) -> list[KerasTensor]:
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list[KerasTensor]:
        return list(_flat(self._outputs_struct))

    @property
    def input(self) -> Any:
        """The inputs as given to ``Model(inputs, ...)`` (one tensor, a list, a dict)."""
        return self._inputs_struct

    @property
    def output(self) -> Any:
        return self._outputs_struct

    @property
    def output_names(self) -> list[str]:
        """Each output's name, as ``compile``'s loss dicts and the logs use it: the
        outputs dict's keys, else the layer (or op) that made each output."""
        if isinstance(self._outputs_struct, dict):
            return list(self._outputs_struct)
        return [t._keras_history[0].name for t in self.outputs]

    @property
    def input_shape(self) -> Any:
        """One input's shape (batch ``None``), or a list (dict) of them."""
        return _shapes(self._inputs_struct)

    @property
    def output_shape(self) -> Any:
        return _shapes(self._outputs_struct)

    def call(self, inputs: Any, training: bool | None = None, mask: Any = None) -> Any:
        values = self._input_values(inputs)
        return run_nodes(self._nodes, self._flat_inputs, values, self._outputs_struct)

    def _convert_inputs(self, value: Any) -> Any:
        return value  # Keras 3: a functional model does not cast its inputs (see below)

    def _input_values(self, inputs: Any) -> list[Any]:
        """One value per input (a dict matched by key, or by the inputs' names); arrays
        become tensors of their input's dtype, as Keras 3's functional models do."""
        values = self._matched_inputs(inputs)
        return [v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=t.dtype)
                for v, t in zip(values, self._flat_inputs)]

    def _matched_inputs(self, inputs: Any) -> list[Any]:
        if isinstance(inputs, dict):
            keys = (list(self._inputs_struct) if isinstance(self._inputs_struct, dict)
                    else [t.name for t in self._flat_inputs])
            missing = [k for k in keys if k not in inputs]
            if missing:
                raise ValueError(f"Model {self.name!r} expects inputs {keys}; missing "
                                 f"{missing} in the dict passed (keys {list(inputs)}).")
            return [inputs[k] for k in keys]
        values = list(_flat(inputs)) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(values) != len(self._flat_inputs):
            raise ValueError(f"Model {self.name!r} expects {len(self._flat_inputs)} "
                             f"input(s), but it received {len(values)} input tensors.")
        return values

    def summary(self, line_length: int | None = None, positions: Any = None,
                print_fn: Callable[..., Any] | None = None, expand_nested: bool = False,
                show_trainable: bool = False, layer_range: Any = None) -> None:
        """Keras 3's table; a graph that is not a chain adds the "Connected to"
        column (``dense[0][0]``: the layer, which of its calls, which output)."""
        del line_length, positions, expand_nested, show_trainable, layer_range
        print_summary(self, self._operations, print_fn, graph=self)

    def _summary_layers(self) -> list[Any]:
        return list(self._operations)


def _batch_none(shape: Any) -> Any:
    """A shape (or a nest of them) as a tuple whose first entry is ``None``."""
    if isinstance(shape, list):
        return [_batch_none(s) for s in shape]
    return (None,) + tuple(shape)[1:]


def _shapes(struct: Any) -> Any:
    shapes = _map(lambda t: t.shape, struct)
    if isinstance(shapes, (list, tuple)) and len(shapes) == 1:
        return shapes[0]
    return shapes


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

    @property
    def input_shape(self) -> Any:
        """The input's shape, batch ``None``, once known (``input_shape=``,
        ``keras.Input`` or a call), as Keras 3's; before that an ``AttributeError``."""
        if self._input_tensor is None:
            raise AttributeError(f"Sequential model {self.name!r} has no defined input "
                                 "shape yet: give its first layer `input_shape=`, start "
                                 "it with `keras.Input(shape)`, or call it once.")
        return tuple(self._input_tensor.shape)

    @property
    def output_shape(self) -> Any:
        """The last layer's output shape, batch ``None`` (the DCGAN tutorial asserts
        it after each ``add``), once the input shape is known."""
        if self._output_shape is None or not self.built:
            raise AttributeError(f"Sequential model {self.name!r} has no defined outputs "
                                 "yet: give its first layer `input_shape=`, start it "
                                 "with `keras.Input(shape)`, or call it once.")
        return _batch_none(self._output_shape)

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
        # Keras 3: the last layer may return a nest (an RNN with return_state=True).
        object.__setattr__(self, "_output_shape", _map(lambda t: t.shape, x))
        self.built = True

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        for layer in self._sequential_layers:
            inputs = layer(inputs)
        return inputs

    def _convert_inputs(self, value: Any) -> Any:
        """Keras 3's ``Sequential.input_dtype``: floating inputs become the dtype of its
        ``keras.Input`` (``Input(shape, dtype="float64")`` keeps float64), else its own."""
        dtype = getattr(self._input_tensor, "dtype", None)
        if dtype is None or not isinstance(value, (Tensor, np.ndarray)):
            return super()._convert_inputs(value)
        tensor = convert_to_tensor(value)
        if self._autocast and tensor.dtype.kind == "f" and tensor.dtype != dtype:
            return ops.cast(tensor, dtype)
        return tensor

