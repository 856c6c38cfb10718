"""Keras's functional API: ``keras.Input`` gives a symbolic ``KerasTensor``; calling a
layer on KerasTensors builds the layer (for the unknown sizes ``None``: its weights
exist as soon as the graph does, as in Keras 3), works out the output shapes by running
it in inference mode on stand-ins of zeros, and records the call. ``keras.Model(
inputs, outputs)`` replays the recorded calls, in order, on real tensors."""

from __future__ import annotations

from typing import Any

from .keras_tensor import (
    KerasTensor,
    Node,
    any_symbolic,
    flat,
    infer_outputs,
    map_structure,
    stand_in,
)
from .layers.base import Layer, _context
from .naming import uniquify

__all__ = ["Input", "InputLayer", "KerasTensor"]

# Kept for the modules that imported the private helpers from here.
_flat, _map = flat, map_structure


def is_symbolic(args: tuple, kwargs: dict) -> bool:
    """Whether a layer's arguments hold KerasTensors (the first one looked into, the
    others at one level: ``layer(query=q, value=v)`` too)."""
    first = args[0] if args else None
    if isinstance(first, KerasTensor):
        return True
    if isinstance(first, (list, tuple, dict)) and \
            any(isinstance(t, KerasTensor) for t in flat(first)):
        return True
    return any_symbolic(args[1:], kwargs) if (len(args) > 1 or kwargs) else False


def _first_input(args: tuple, kwargs: dict) -> Any:
    """What ``build`` gets the shape of: the first argument (``inputs=``, or the first
    keyword holding a KerasTensor, for a layer called with keywords only)."""
    if args:
        return args[0]
    if "inputs" in kwargs:
        return kwargs["inputs"]
    return next((v for v in kwargs.values() if isinstance(v, KerasTensor)), None)


class InputLayer(Layer):
    """The layer ``keras.Input`` makes: its output is the symbolic input."""

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 sparse: bool | None = None, batch_shape: Any = None,
                 input_tensor: Any = None, name: str | None = None, **kwargs: Any):
        kwargs.pop("ragged", None)
        kwargs.pop("optional", None)
        if shape is None and batch_shape is None and "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if sparse:
            raise NotImplementedError("keras.Input(sparse=True): gradtape has no sparse "
                                      "tensors; feed dense arrays.")
        if input_tensor is not None and not isinstance(input_tensor, KerasTensor):
            raise ValueError("Argument `input_tensor` (keras.Input's `tensor=`) must be "
                             f"a KerasTensor. Received: {input_tensor!r}")
        if input_tensor is not None:
            batch_shape, dtype = input_tensor.shape, dtype or input_tensor.dtype
        super().__init__(name=name or uniquify("input_layer"), dtype=dtype, **kwargs)
        self.batch_shape = _batch_shape(shape, batch_size, batch_shape)
        node = Node(self, (), {})
        if input_tensor is None:
            input_tensor = KerasTensor(self.batch_shape, self._dtype, name=self.name)
        self.output = input_tensor
        input_tensor.node = node
        node.outputs = input_tensor
        object.__setattr__(self, "_output_shape", self.batch_shape)
        self.built = True

    def call(self, inputs: Any) -> Any:
        return inputs

    def get_config(self) -> dict:
        """Keras 3's keys (no ``trainable``): an input layer has no weights."""
        return {"batch_shape": self.batch_shape, "dtype": self.dtype, "sparse": False,
                "ragged": False, "name": self.name, "optional": False}


def _batch_shape(shape: Any, batch_size: int | None, batch_shape: Any) -> tuple:
    if batch_shape is not None:
        return tuple(batch_shape)
    if shape is None:
        raise ValueError("You must pass a `shape` argument to keras.Input, e.g. "
                         "keras.Input(shape=(3,)).")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return (batch_size,) + shape


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None,
          sparse: bool | None = None, batch_shape: Any = None, name: str | None = None,
          tensor: Any = None, optional: bool = False) -> KerasTensor:
    """Keras's ``keras.Input(shape=(3,))``: a symbolic batch of inputs of that shape
    (``batch_shape`` gives the whole shape; ``tensor`` wraps a KerasTensor)."""
    del optional
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse,
                      batch_shape=batch_shape, input_tensor=tensor, name=name).output


def _symbolic_shape(t: Any) -> Any:
    return t.shape if isinstance(t, KerasTensor) else getattr(t, "shape", None)


def symbolic_call(layer: Layer, args: tuple, kwargs: dict) -> Any:
    """Calls ``layer`` on KerasTensors: builds it for their shapes (unknown sizes
    ``None``), runs it in inference mode on zeros to find the output shapes, and records
    the call."""
    layer.build_for(map_structure(_symbolic_shape, _first_input(args, kwargs)))
    concrete_kwargs = dict(kwargs)
    concrete_kwargs.pop("training", None)
    leaves = [t for t in flat((args, kwargs)) if isinstance(t, KerasTensor)]

    def run(size: int) -> Any:
        concrete = map_structure(lambda t: stand_in(t, size, fill=0.0),
                                 (args, concrete_kwargs))
        return layer(*concrete[0], **concrete[1])

    _context.training.append(False)
    try:
        specs = infer_outputs(run, any(d is None for t in leaves for d in t.shape))
    finally:
        _context.training.pop()
    layer._clear_losses()  # a symbolic call adds no loss, as in Keras 3
    node = Node(layer, args, kwargs)
    node.outputs = map_structure(lambda spec: spec.tensor(node), specs)
    object.__setattr__(layer, "_output_shape", map_structure(lambda t: t.shape,
                                                             node.outputs))
    return node.outputs


def nodes_between(inputs: list[KerasTensor], outputs: list[KerasTensor]) -> list[Node]:
    """The recorded calls from ``inputs`` to ``outputs``, each after those it reads."""
    input_ids = {id(t) for t in inputs}
    order: list[Node] = []
    done: set[int] = set()

    def visit(t: KerasTensor) -> None:
        if id(t) in input_ids:
            return
        node = t.node
        if node is None or isinstance(node.operation, InputLayer):
            raise ValueError(f"Output {t!r} of the model is not connected to its inputs "
                             f"{[i.name for i in inputs]}: build `outputs` from the "
                             "`inputs` you pass (add the missing keras.Input to inputs).")
        if id(node) in done:
            return
        for parent in node.parents():
            visit(parent)
        done.add(id(node))
        order.append(node)

    for t in outputs:
        visit(t)
    return order


def run_nodes(nodes: list[Node], inputs: list[KerasTensor], values: list[Any],
              outputs: Any) -> Any:
    """Evaluates the recorded calls on ``values`` (one per input); ``outputs``' values."""
    computed: dict[int, Any] = {id(t): v for t, v in zip(inputs, values)}

    def value_of(t: Any) -> Any:
        return computed[id(t)] if isinstance(t, KerasTensor) else t

    for node in nodes:
        result = node.operation(*map_structure(value_of, node.args),
                                **map_structure(value_of, node.kwargs))
        for t, v in zip(flat(node.outputs), flat(result)):
            computed[id(t)] = v
    return map_structure(value_of, outputs)
