"""Keras 3's ``KerasTensor``: a symbolic tensor (shape with ``None`` for unknown sizes,
dtype, name) and the graph of calls that made it.

A layer or a ``keras.ops`` function applied to KerasTensors records a ``Node`` (the
operation, its arguments) and returns new KerasTensors. The output shapes come from
running the operation on small concrete stand-ins: ones where a size is known, and each
unknown size tried at two lengths; an output size that follows them is unknown
(``None``). Arithmetic, comparisons and slicing on a KerasTensor are ``keras.ops``
calls, as in Keras 3 (``x + y`` records an ``add`` operation)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import ops as _ops
from ..core.dtypes import numpy_dtype
from ..core.tensor import constant
from ..ops.promotion import numpy_rule
from .naming import uniquify

__all__ = ["KerasTensor", "Node", "Operation", "any_symbolic", "flat", "map_structure",
           "symbolic_apply"]

# Two lengths for each unknown size: an output size that differs between them is None.
_PROBE_SIZES = (2, 3)

# Keras 3 raises ValueError both for NumPy's conversion and for a TF function's input.
_TF_FUNCTION_MESSAGE = (
    "A KerasTensor is symbolic: it's a placeholder for a shape and a dtype, used when "
    "constructing Keras Functional models. It doesn't have any actual numerical value, so "
    "it cannot be converted to a NumPy array or used as input to a TensorFlow (gt) "
    "function. You can only use it as input to a Keras layer or a Keras operation (from "
    "the namespaces `keras.layers` and `keras.ops`). Wrap the TF function in a layer "
    "instead: `keras.layers.Lambda(lambda t: tf_fn(t))(x)`, or a Layer subclass whose "
    "`call` applies it.")


class KerasTensor:
    """A symbolic input or output: ``shape`` (``None`` for the batch), ``dtype``,
    ``name``, and the call that made it. It has no value."""

    def __init__(self, shape: Any, dtype: Any = "float32", sparse: bool = False,
                 ragged: bool = False, record_history: bool = True, name: str | None = None,
                 node: Node | None = None):
        del ragged, record_history
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = numpy_dtype(dtype)
        self.sparse = bool(sparse)
        self.name = name or uniquify("keras_tensor")
        self.node = node

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def _keras_history(self) -> tuple[Any, int, int]:
        """(operation, its node's index among the operation's calls, output index)."""
        node = self.node
        if node is None:
            return None, 0, 0
        index = next(i for i, t in enumerate(flat(node.outputs)) if t is self)
        return node.operation, node.index, index

    def __repr__(self) -> str:
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, "
                f"sparse={self.sparse}, name={self.name}>")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError(_TF_FUNCTION_MESSAGE)

    def __bool__(self) -> bool:
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean: use "
                        "keras.ops.where or keras.ops.cond on it, or test values inside "
                        "a layer's call.")

    def __int__(self) -> int:
        raise ValueError("A KerasTensor is symbolic: it has no value to convert to an "
                         "int.")

    def __float__(self) -> float:
        raise ValueError("A KerasTensor is symbolic: it has no value to convert to a "
                         "float.")

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Iterating over a symbolic KerasTensor is not "
                                  "supported; use keras.ops.unstack or slicing (x[:, 0]).")

    def reshape(self, newshape: Any) -> KerasTensor:
        return symbolic_apply("reshape", _ops.reshape, (self, newshape), {})

    def squeeze(self, axis: Any = None) -> KerasTensor:
        return symbolic_apply("squeeze", _ops.squeeze, (self,), {"axis": axis})

    # Keras 3: the operators are keras.ops calls, recorded under the op's name.
    def __add__(self, other: Any) -> KerasTensor:
        return symbolic_apply("add", _ops.add, (self, other), {})

    def __radd__(self, other: Any) -> KerasTensor:
        return symbolic_apply("add", _ops.add, (other, self), {})

    def __sub__(self, other: Any) -> KerasTensor:
        return symbolic_apply("subtract", _ops.subtract, (self, other), {})

    def __rsub__(self, other: Any) -> KerasTensor:
        return symbolic_apply("subtract", _ops.subtract, (other, self), {})

    def __mul__(self, other: Any) -> KerasTensor:
        return symbolic_apply("multiply", _ops.multiply, (self, other), {})

    def __rmul__(self, other: Any) -> KerasTensor:
        return symbolic_apply("multiply", _ops.multiply, (other, self), {})

    def __truediv__(self, other: Any) -> KerasTensor:
        return symbolic_apply("true_divide", _ops.divide, (self, other), {})

    def __rtruediv__(self, other: Any) -> KerasTensor:
        return symbolic_apply("true_divide", _ops.divide, (other, self), {})

    def __floordiv__(self, other: Any) -> KerasTensor:
        return symbolic_apply("floor_divide", _ops.floor_divide, (self, other), {})

    def __rfloordiv__(self, other: Any) -> KerasTensor:
        return symbolic_apply("floor_divide", _ops.floor_divide, (other, self), {})

    def __mod__(self, other: Any) -> KerasTensor:
        return symbolic_apply("mod", _ops.mod, (self, other), {})

    def __rmod__(self, other: Any) -> KerasTensor:
        return symbolic_apply("mod", _ops.mod, (other, self), {})

    def __pow__(self, other: Any) -> KerasTensor:
        return symbolic_apply("power", _ops.power, (self, other), {})

    def __rpow__(self, other: Any) -> KerasTensor:
        return symbolic_apply("power", _ops.power, (other, self), {})

    def __matmul__(self, other: Any) -> KerasTensor:
        return symbolic_apply("matmul", _ops.matmul, (self, other), {})

    def __rmatmul__(self, other: Any) -> KerasTensor:
        return symbolic_apply("matmul", _ops.matmul, (other, self), {})

    def __neg__(self) -> KerasTensor:
        return symbolic_apply("negative", _ops.negative, (self,), {})

    def __pos__(self) -> KerasTensor:
        return self

    def __abs__(self) -> KerasTensor:
        return symbolic_apply("absolute", _ops.abs, (self,), {})

    def __lt__(self, other: Any) -> KerasTensor:
        return symbolic_apply("less", _ops.less, (self, other), {})

    def __le__(self, other: Any) -> KerasTensor:
        return symbolic_apply("less_equal", _ops.less_equal, (self, other), {})

    def __gt__(self, other: Any) -> KerasTensor:
        return symbolic_apply("greater", _ops.greater, (self, other), {})

    def __ge__(self, other: Any) -> KerasTensor:
        return symbolic_apply("greater_equal", _ops.greater_equal, (self, other), {})

    def __ne__(self, other: Any) -> KerasTensor:  # type: ignore[override]
        # Keras 3 records `!=` but leaves `==` the identity test (graphs key on it).
        return symbolic_apply("not_equal", _ops.not_equal, (self, other), {})

    def __and__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_and", _ops.logical_and, (self, other), {})

    def __rand__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_and", _ops.logical_and, (other, self), {})

    def __or__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_or", _ops.logical_or, (self, other), {})

    def __ror__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_or", _ops.logical_or, (other, self), {})

    def __xor__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_xor", _ops.logical_xor, (self, other), {})

    def __rxor__(self, other: Any) -> KerasTensor:
        return symbolic_apply("logical_xor", _ops.logical_xor, (other, self), {})

    def __invert__(self) -> KerasTensor:
        return symbolic_apply("logical_not", _ops.logical_not, (self,), {})

    def __round__(self, ndigits: int | None = None) -> KerasTensor:
        scale = 10.0 ** (ndigits or 0)
        return symbolic_apply("round", lambda x: _ops.round(x * scale) / scale, (self,), {})

    def __getitem__(self, key: Any) -> KerasTensor:
        return symbolic_apply("get_item", _ops.getitem, (self, key), {})

    __hash__ = object.__hash__  # identity: KerasTensors key the graph's dictionaries


class Operation:
    """A ``keras.ops`` function recorded in a functional graph (Keras 3's ``Operation``:
    named after the op, ``add``, ``add_1``...; not a layer, so it has no weights)."""

    def __init__(self, op_name: str, fn: Callable[..., Any]):
        self.name = uniquify(op_name)
        self.fn = fn
        self._inbound_nodes: list[Node] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Operation name={self.name}>"


_operation_classes: dict[str, type] = {}


def operation_class(op_name: str) -> type:
    """The ``Operation`` subclass named as Keras 3 names the op's class (``Add``)."""
    cls = _operation_classes.get(op_name)
    if cls is None:
        class_name = "".join(part.capitalize() for part in op_name.split("_"))
        cls = type(class_name, (Operation,), {"__module__": __name__})
        _operation_classes[op_name] = cls
    return cls


class Node:
    """One recorded call: the operation (a layer or an ``Operation``), its arguments
    (holding KerasTensors) and the KerasTensors it produced."""

    def __init__(self, operation: Any, args: tuple, kwargs: dict):
        self.operation, self.args, self.kwargs = operation, args, kwargs
        self.outputs: Any = None
        inbound = _inbound_nodes(operation)
        self.index = len(inbound)
        inbound.append(self)

    @property
    def layer(self) -> Any:
        return self.operation

    def parents(self) -> Iterator[KerasTensor]:
        return (t for t in flat((self.args, self.kwargs)) if isinstance(t, KerasTensor))


def _inbound_nodes(operation: Any) -> list[Node]:
    nodes = operation.__dict__.get("_inbound_nodes")
    if nodes is None:
        nodes = []
        object.__setattr__(operation, "_inbound_nodes", nodes)
    return nodes


def flat(value: Any) -> Iterator[Any]:
    """The leaves of nested lists, tuples and dicts (dict values in order)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from flat(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from flat(item)
    else:
        yield value


def map_structure(fn: Callable[[Any], Any], value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(map_structure(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: map_structure(fn, v) for k, v in value.items()}
    return fn(value)


def any_symbolic(args: tuple, kwargs: dict) -> bool:
    """Whether a KerasTensor is among the arguments (one level of lists looked into)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, KerasTensor):
            return True
        if isinstance(value, (list, tuple)) and any(isinstance(v, KerasTensor) for v in value):
            return True
    return False


def stand_in(t: Any, unknown_size: int, fill: float = 1.0) -> Any:
    """A concrete tensor for a KerasTensor (other values unchanged)."""
    if not isinstance(t, KerasTensor):
        return t
    shape = tuple(unknown_size if d is None else d for d in t.shape)
    return constant(np.full(shape, fill, t.dtype))


class Spec:
    """An inferred output: its shape (``None`` where unknown) and dtype."""

    def __init__(self, shape: tuple, dtype: Any):
        self.shape, self.dtype = shape, dtype

    def tensor(self, node: Node) -> KerasTensor:
        return KerasTensor(self.shape, self.dtype, node=node)


def infer_outputs(run: Callable[[int], Any], has_unknown: bool) -> Any:
    """Runs ``run(size)`` at each probe size; the outputs' shapes, with ``None`` where a
    size followed the unknown input sizes."""
    with warnings.catch_warnings():  # ones through log or divide are only shape probes
        warnings.simplefilter("ignore", RuntimeWarning)
        first = run(_PROBE_SIZES[0])
        if not has_unknown:
            return map_structure(lambda out: Spec(tuple(out.shape), out.dtype), first)
        second = run(_PROBE_SIZES[1])
    firsts, seconds = list(flat(first)), list(flat(second))
    specs = iter([Spec(tuple(None if a != b else a for a, b in zip(x.shape, y.shape)),
                       x.dtype) for x, y in zip(firsts, seconds)])
    return map_structure(lambda out: next(specs), first)


def symbolic_apply(op_name: str, fn: Callable[..., Any], args: tuple,
                   kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` on KerasTensors: records an ``op_name`` operation and
    returns KerasTensors of the shapes and dtypes ``fn`` gives on stand-ins. ``fn``
    keeps NumPy's promotion under dtype_promotion="tf", as Keras's ops promote."""
    fn = numpy_rule(fn)
    leaves = [t for t in flat((args, kwargs)) if isinstance(t, KerasTensor)]
    has_unknown = any(d is None for t in leaves for d in t.shape)

    def run(size: int) -> Any:
        concrete = map_structure(lambda t: stand_in(t, size), (args, kwargs))
        return fn(*concrete[0], **concrete[1])

    try:
        specs = infer_outputs(run, has_unknown)
    except (ValueError, TypeError, IndexError) as error:
        raise type(error)(f"keras.ops.{op_name} on KerasTensors "
                          f"{[t.shape for t in leaves]}: {error}") from error
    node = Node(operation_class(op_name)(op_name, fn), args, kwargs)
    node.outputs = map_structure(lambda spec: spec.tensor(node), specs)
    return node.outputs


def replay(node: Node, value_of: Callable[[Any], Any]) -> Any:
    """Runs ``node``'s operation on the values ``value_of`` gives its KerasTensors."""
    args = map_structure(value_of, node.args)
    kwargs = map_structure(value_of, node.kwargs)
    return node.operation(*args, **kwargs)
