"""TF's ``tf.linalg.diag`` and ``tf.linalg.set_diag``: diagonals placed into matrices.

Each diagonal is a ``diagonal_scatter`` (the transpose of ``diagonal``, so gradients of
every order flow to the diagonal values), the rest a ``where`` against the padding value
or the input matrix. ``k`` is one diagonal offset or a ``(low, high)`` band of them, as
TF's MatrixDiagV3; in a band, ``align`` says how shorter diagonals sit in their row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor, concrete_value
from ..ops.linalg.products import diagonal_scatter_p
from ..ops.registry import bind, operand

__all__ = ["diag", "set_diag"]

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _band(k: Any) -> tuple[int, int]:
    """``k`` as ``(low, high)``: a scalar is one diagonal."""
    values = np.asarray(concrete_value(k) if isinstance(k, Tensor) else k).reshape(-1)
    if values.size not in (1, 2) or values.dtype.kind not in "iu":
        raise InvalidArgumentError(f"k must be an integer or a pair (low, high) of "
                                   f"integers, got {k!r}.")
    low, high = int(values[0]), int(values[-1])
    if low > high:
        raise InvalidArgumentError(f"k's low ({low}) must not exceed its high ({high}).")
    return low, high


def _diagonal_length(d: int, rows: int, cols: int) -> int:
    return max(0, min(rows + min(0, d), cols - max(0, d)))


def _rows_of_band(diagonal: Tensor, low: int, high: int) -> list[tuple[int, Tensor]]:
    """``(offset, values)`` of each diagonal: the last axis for one diagonal, else the
    row ``high - d`` of the second-to-last axis (TF's layout)."""
    if low == high:
        return [(low, diagonal)]
    if diagonal.ndim < 2 or diagonal.shape[-2] != high - low + 1:
        raise InvalidArgumentError(
            f"For the band k=({low}, {high}) the diagonal needs shape [..., {high - low + 1}, "
            f"max_diag_len], got {list(diagonal.shape)}.")
    return [(d, diagonal[..., high - d, :]) for d in range(low, high + 1)]


def _aligned(values: Tensor, d: int, length: int, align: str, band: bool) -> Tensor:
    """The ``length`` entries of a (padded) band row that belong on diagonal ``d``."""
    width = int(values.shape[-1])
    if not band or length == width:
        return values
    right = align.split("_")[0 if d >= 0 else 1] == "RIGHT"
    return values[..., width - length:] if right else values[..., :length]


def _placed(diagonal: Tensor, k: Any, rows: int, cols: int, align: str):
    """The diagonals scattered into zeros of ``[..., rows, cols]``, and where they are."""
    if align not in _ALIGNS:
        raise InvalidArgumentError(f"align must be one of {list(_ALIGNS)}, got {align!r}.")
    low, high = _band(k)
    pieces = _rows_of_band(diagonal, low, high)
    batch = tuple(pieces[0][1].shape[:-1])
    shape = batch + (rows, cols)
    total, mask = None, np.zeros(shape, bool)
    for d, values in pieces:
        length = _diagonal_length(d, rows, cols)
        values = _aligned(values, d, length, align, low != high)
        if int(values.shape[-1]) != length:
            raise InvalidArgumentError(
                f"Diagonal {d} of a {rows}x{cols} matrix has {length} entries, the "
                f"diagonal given has {int(values.shape[-1])}.")
        placed = bind(diagonal_scatter_p, values, offset=d, axis1=len(shape) - 2,
                      axis2=len(shape) - 1, shape=shape)
        total = placed if total is None else total + placed
        i = np.arange(length)
        mask[..., i + max(-d, 0), i + max(d, 0)] = True
    return total, mask


def _output_size(diagonal: Tensor, k: Any, num_rows: Any, num_cols: Any) -> tuple[int, int]:
    """TF's MatrixDiagV3 rule: a square matrix just big enough unless given; one of the
    sizes given must be the least that fits."""
    low, high = _band(k)
    length = int(diagonal.shape[-1])
    min_rows, min_cols = length - min(high, 0), length + max(low, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise InvalidArgumentError(
            f"The number of rows ({rows}) or columns ({cols}) must be the least that fits "
            f"the diagonal ({min_rows} rows, {min_cols} columns) and neither smaller.")
    return rows, cols


def diag(diagonal: Any, name: str | None = None, k: Any = 0, num_rows: Any = -1,
         num_cols: Any = -1, padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """TF's ``tf.linalg.diag``: batched matrices with ``diagonal`` on diagonal ``k`` (or
    the band ``k=(low, high)``) and ``padding_value`` elsewhere."""
    del name
    diagonal = operand(diagonal)
    if diagonal.ndim < 1:
        raise InvalidArgumentError("diagonal must have rank >= 1, got a scalar.")
    rows, cols = _output_size(diagonal, k, num_rows, num_cols)
    placed, mask = _placed(diagonal, k, rows, cols, align)
    if isinstance(padding_value, (int, float)) and padding_value == 0:
        return placed
    if isinstance(padding_value, Tensor):
        padding = ops.cast(padding_value, diagonal.dtype)
    else:
        padding = np.asarray(padding_value, diagonal.dtype)
    return ops.where(mask, placed, ops.broadcast_to(padding, tuple(placed.shape)))


def set_diag(input: Any, diagonal: Any, name: str | None = None, k: Any = 0,
             align: str = "RIGHT_LEFT") -> Tensor:
    """TF's ``tf.linalg.set_diag``: ``input`` with diagonal ``k`` (or a band) replaced by
    ``diagonal``; gradients flow to both (zero where replaced)."""
    del name
    input, diagonal = operand(input), operand(diagonal)
    if input.ndim < 2:
        raise InvalidArgumentError(f"input must have rank >= 2, got shape "
                                   f"{list(input.shape)}.")
    rows, cols = int(input.shape[-2]), int(input.shape[-1])
    placed, mask = _placed(diagonal, k, rows, cols, align)
    if tuple(placed.shape) != tuple(input.shape):
        raise InvalidArgumentError(f"diagonal of shape {list(diagonal.shape)} does not fit "
                                   f"the diagonals of input of shape {list(input.shape)}.")
    return ops.where(mask, placed, input)
