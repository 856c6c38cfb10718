"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_DEFAULT_WIDTHS = (33, 24, 15)  # Keras 3's columns for a line length of 78


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


def _row(widths: tuple[int, ...], cells: tuple[str, str, str], bar: str) -> str:
    name, shape, params = cells
    return (f"{bar} {name:<{widths[0] - 2}} {bar} {shape:<{widths[1] - 2}} {bar} "
            f"{params:>{widths[2] - 2}} {bar}")


def _rule(widths: tuple[int, ...], left: str, fill: str, sep: str, right: str) -> str:
    return left + sep.join(fill * w for w in widths) + right


def _widths(rows: list[tuple[str, str, str]]) -> tuple[int, ...]:
    """Keras's column widths, widened where a cell would not fit."""
    return tuple(max(default, *(len(row[i]) + 2 for row in rows))
                 for i, default in enumerate(_DEFAULT_WIDTHS))


def _layer_row(layer: Any) -> tuple[str, str, str]:
    params = _count(layer.weights)[0] if layer.built else 0
    shape = layer._output_shape
    if shape is not None and not isinstance(shape, list) and len(shape) > 0:
        shape = (None,) + tuple(shape)[1:]  # the batch, as Keras shows it
    return f"{layer.name} ({type(layer).__name__})", _shape_text(shape), f"{params:,}"


def summary_lines(model: Any, layers: list[Any]) -> list[str]:
    """The lines of the summary of ``model`` listing ``layers``."""
    header = ("Layer (type)", "Output Shape", "Param #")
    rows = [_layer_row(layer) for layer in layers]
    widths = _widths([header] + rows)
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


def print_summary(model: Any, layers: list[Any], print_fn: Callable[..., Any] | None) -> None:
    lines = summary_lines(model, layers)
    if print_fn is None:
        print("\n".join(lines))
    else:
        for line in lines:
            print_fn(line)
