"""Keras's functional API: ``keras.Input`` gives a symbolic ``KerasTensor``; calling a
layer on one builds the layer (for a batch dimension of ``None``), works out the output
shape by running the layer on a batch of one zero, and records the call. ``keras.Model(
inputs, outputs)`` replays the recorded calls, in order, on real tensors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.dtypes import numpy_dtype
from ..core.tensor import constant
from .layers.base import Layer, _context
from .naming import uniquify

__all__ = ["Input", "InputLayer", "KerasTensor"]


class KerasTensor:
    """A symbolic input or output: its shape (``None`` for the batch) and dtype, and the
    layer call that made it."""

    def __init__(self, shape: tuple, dtype: Any, name: str, node: Node | None = None):
        self.shape = tuple(shape)
        self.dtype = numpy_dtype(dtype)
        self.name = name
        self.node = node

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, sparse=False, "
                f"name={self.name}>")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("A KerasTensor is symbolic: it has no value. Use it as the input "
                        "of Keras layers, then call the keras.Model built from them on "
                        "data; apply gt functions inside a layer (keras.layers.Lambda).")


class Node:
    """One recorded layer call: the layer, its arguments (holding KerasTensors)."""

    def __init__(self, layer: Layer, args: tuple, kwargs: dict):
        self.layer, self.args, self.kwargs = layer, args, kwargs
        self.outputs: Any = None  # the KerasTensors it produced

    def parents(self) -> Iterator[KerasTensor]:
        return (t for t in _flat((self.args, self.kwargs)) if isinstance(t, KerasTensor))


def _flat(value: Any) -> Iterator[Any]:
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _flat(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flat(item)
    else:
        yield value


def _map(fn: Any, value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return fn(value)


def is_symbolic(args: tuple, kwargs: dict) -> bool:
    """Whether a layer's inputs are KerasTensors (checks the first input only)."""
    first = args[0] if args else kwargs.get("inputs")
    if isinstance(first, KerasTensor):
        return True
    if isinstance(first, (list, tuple, dict)):
        return any(isinstance(t, KerasTensor) for t in _flat(first))
    return False


class InputLayer(Layer):
    """The layer ``keras.Input`` makes: its output is the symbolic input."""

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 batch_shape: Any = None, name: str | None = None, **kwargs: Any):
        kwargs.pop("sparse", None)
        kwargs.pop("ragged", None)
        if shape is None and batch_shape is None and "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        super().__init__(name=name or uniquify("input_layer"), dtype=dtype, **kwargs)
        if batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument to keras.Input, e.g. "
                                 "keras.Input(shape=(3,)).")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size,) + shape
        self.batch_shape = tuple(batch_shape)
        node = Node(self, (), {})
        self.output = KerasTensor(self.batch_shape, self._dtype, name=self.name, node=node)
        node.outputs = self.output
        object.__setattr__(self, "_output_shape", self.batch_shape)
        self.built = True

    def call(self, inputs: Any) -> Any:
        return inputs


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None,
          sparse: Any = None, batch_shape: Any = None, name: str | None = None,
          tensor: Any = None, optional: bool = False) -> KerasTensor:
    """Keras's ``keras.Input(shape=(3,))``: a symbolic batch of inputs of that shape."""
    del sparse, optional
    if tensor is not None:
        raise NotImplementedError("keras.Input(tensor=...) is not supported; pass shape=.")
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype,
                      batch_shape=batch_shape, name=name).output


def _zeros_like_symbolic(t: Any) -> Any:
    """A batch of one zero for a KerasTensor (other arguments unchanged)."""
    if not isinstance(t, KerasTensor):
        return t
    return constant(np.zeros(tuple(1 if d is None else d for d in t.shape), t.dtype))


def _symbolic_shape(t: Any) -> Any:
    return t.shape if isinstance(t, KerasTensor) else getattr(t, "shape", None)


def symbolic_call(layer: Layer, args: tuple, kwargs: dict) -> Any:
    """Calls ``layer`` on KerasTensors: builds it for their shapes (batch ``None``), runs
    it in inference mode on zeros to find the output shapes, and records the call."""
    shapes = _map(_symbolic_shape, args[0] if args else kwargs.get("inputs"))
    layer.build_for(shapes)
    concrete_args = _map(_zeros_like_symbolic, args)
    concrete_kwargs = _map(_zeros_like_symbolic, dict(kwargs))
    concrete_kwargs.pop("training", None)
    _context.training.append(False)
    try:
        outputs = layer(*concrete_args, **concrete_kwargs)
    finally:
        _context.training.pop()
    layer._clear_losses()  # a symbolic call adds no loss, as in Keras 3
    node = Node(layer, args, kwargs)
    batch_unknown = any(isinstance(t, KerasTensor) and t.shape[:1] == (None,)
                        for t in _flat((args, kwargs)))

    def symbolic(out: Any) -> KerasTensor:
        shape = tuple(out.shape)
        if batch_unknown and shape:
            shape = (None,) + shape[1:]
        return KerasTensor(shape, out.dtype, name=uniquify("keras_tensor"), node=node)

    symbolic_outputs = _map(symbolic, outputs)
    node.outputs = symbolic_outputs
    object.__setattr__(layer, "_output_shape", _map(lambda t: t.shape, symbolic_outputs))
    return symbolic_outputs


def nodes_between(inputs: list[KerasTensor], outputs: list[KerasTensor]) -> list[Node]:
    """The recorded calls from ``inputs`` to ``outputs``, each after those it reads."""
    input_ids = {id(t) for t in inputs}
    order: list[Node] = []
    done: set[int] = set()

    def visit(t: KerasTensor) -> None:
        if id(t) in input_ids:
            return
        node = t.node
        if node is None:
            raise ValueError(f"{t!r} is not connected to the model's inputs: build "
                             "`outputs` by calling layers on the `inputs` you pass.")
        if id(node) in done or isinstance(node.layer, InputLayer):
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
        result = node.layer(*_map(value_of, node.args), **_map(value_of, node.kwargs))
        for t, v in zip(_flat(node.outputs), _flat(result)):
            computed[id(t)] = v
    return _map(value_of, outputs)
