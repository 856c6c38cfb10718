"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_DEFAULT_WIDTHS = (33, 24, 15)  # Keras 3's columns for a line length of 78
# A graph that is not a chain: Keras 3's four columns (positions .3, .56, .74 of 108).
_GRAPH_WIDTHS = (31, 27, 18, 27)


def readable_size(n_bytes: float) -> str:
    """``1.25 KB`` (Keras's units, powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n_bytes < 1024 or unit == "TB":
            return f"{n_bytes:.2f} {unit}"
        n_bytes /= 1024
    raise AssertionError("unreachable")


def _count(variables: list[Any]) -> tuple[int, int]:
    """(number of scalars, bytes)."""
    params = sum(int(np.prod(v.shape)) for v in variables)
    return params, sum(int(np.prod(v.shape)) * v.dtype.itemsize for v in variables)


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return "[" + ", ".join(_shape_text(s) for s in shape) + "]"
    return str(tuple(shape))


def _row(widths: tuple[int, ...], cells: tuple[str, ...], bar: str) -> str:
    name, shape, params = cells[:3]
    text = (f"{bar} {name:<{widths[0] - 2}} {bar} {shape:<{widths[1] - 2}} {bar} "
            f"{params:>{widths[2] - 2}} {bar}")
    if len(cells) > 3:
        text += f" {cells[3]:<{widths[3] - 2}} {bar}"
    return text


def _rule(widths: tuple[int, ...], left: str, fill: str, sep: str, right: str) -> str:
    return left + sep.join(fill * w for w in widths) + right


def _widths(rows: list[tuple[str, ...]], defaults: tuple[int, ...]) -> tuple[int, ...]:
    """Keras's column widths, widened where a cell would not fit."""
    return tuple(max(default, *(len(row[i]) + 2 for row in rows))
                 for i, default in enumerate(defaults))


def _layer_row(layer: Any, nodes: list[Any] | None = None) -> tuple[str, ...]:
    if nodes is not None:  # a functional graph: its layers' and operations' rows
        return _graph_row(layer, nodes)
    params = _count(layer.weights)[0] if layer.built else 0
    shape = _unknown_batch(layer._output_shape)
    return f"{layer.name} ({type(layer).__name__})", _shape_text(shape), f"{params:,}"


def _unknown_batch(shape: Any) -> Any:
    """The batch shown as None, as Keras shows it; a nest of shapes (an RNN's
    ``return_state=True`` outputs) becomes the list of its shapes."""
    if shape is None or len(shape) == 0:
        return shape
    if isinstance(shape, (list, tuple)) and all(
            isinstance(s, (list, tuple)) or hasattr(s, "as_list") for s in shape):
        return [_unknown_batch(s) for s in shape]
    return (None,) + tuple(shape)[1:]


def _graph_row(operation: Any, nodes: list[Any]) -> tuple[str, ...]:
    """Name (type), the output shape of its last call in the graph, its parameters
    (an operation has none) and what each of its calls read."""
    mine = [n for n in nodes if n.operation is operation]
    outputs = mine[-1].outputs if mine else getattr(operation, "output", None)
    shapes = [t.shape for t in _flat_tensors(outputs)]
    shape = _shape_text(shapes[0] if len(shapes) == 1 else shapes) if shapes else "?"
    built = getattr(operation, "built", False)
    params = _count(operation.weights)[0] if built else 0
    connections = []
    for node in mine:
        for t in node.parents():
            source, node_index, tensor_index = t._keras_history
            connections.append(f"{source.name}[{node_index}][{tensor_index}]")
    return (f"{operation.name} ({type(operation).__name__})", shape, f"{params:,}",
            ", ".join(connections) or "-")


def _flat_tensors(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return [] if value is None else [value]


def is_chain(graph: Any) -> bool:
    """Keras 3 prints a functional model as a sequence (no "Connected to") when it is
    one chain: one input, each call reading only the previous call's one output, no
    layer called twice, one output."""
    nodes = graph._nodes
    previous = graph._flat_inputs
    if len(previous) != 1 or len(graph.outputs) != 1:
        return False
    if len({id(n.operation) for n in nodes}) != len(nodes):
        return False
    for node in nodes:
        parents = list(node.parents())
        if len(parents) != 1 or parents[0] is not previous[0]:
            return False
        previous = _flat_tensors(node.outputs)
        if len(previous) != 1:
            return False
    return True


def summary_lines(model: Any, layers: list[Any], graph: Any = None) -> list[str]:
    """The lines of the summary of ``model`` listing ``layers`` (the operations of a
    functional ``graph``, with "Connected to" unless it is a chain)."""
    connected = graph is not None and not is_chain(graph)
    nodes = graph._nodes if graph is not None else None
    header: tuple[str, ...] = ("Layer (type)", "Output Shape", "Param #")
    rows = [_layer_row(layer, nodes) for layer in layers]
    if connected:
        header += ("Connected to",)
    else:
        rows = [row[:3] for row in rows]
    widths = _widths([header] + rows, _GRAPH_WIDTHS if connected else _DEFAULT_WIDTHS)
    lines = [f'Model: "{model.name}"',
             _rule(widths, "┏", "━", "┳", "┓"),
             _row(widths, header, "┃"),
             _rule(widths, "┡", "━", "╇", "┩")]
    for i, row in enumerate(rows):
        lines.append(_row(widths, row, "│"))
        if i < len(rows) - 1:
            lines.append(_rule(widths, "├", "─", "┼", "┤"))
    lines.append(_rule(widths, "└", "─", "┴", "┘"))
    total = _count(model.weights)
    trainable = _count(model.trainable_weights)
    non_trainable = _count(model.non_trainable_weights)
    for label, (count, size) in (("Total", total), ("Trainable", trainable),
                                 ("Non-trainable", non_trainable)):
        lines.append(f" {label} params: {count:,} ({readable_size(size)})")
    return lines


def print_summary(model: Any, layers: list[Any], print_fn: Callable[..., Any] | None,
                  graph: Any = None) -> None:
    lines = summary_lines(model, layers, graph)
    if print_fn is None:
        print("\n".join(lines))
    else:
        for line in lines:
            print_fn(line)
