"""Joining and splitting: concatenate, the stacks built on it, and split.

``concatenate`` is the one primitive; ``stack``, ``hstack`` and the rest reshape their
inputs and concatenate them. Every piece of a split is a slice (a single-output
``getitem``), so each piece's gradient is a ``scatter_add`` of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import tensor as _tensor_module
from ..core.errors import InvalidArgumentError, OutOfRangeError
from ..core.tensor import Tensor
from ..ir.nodes import Aval
from . import index as _index
from .numpy_dispatch import implements
from .registry import EVERY_INPUT, Primitive, bind, list_operands, operand
from .shape import _normalize_axis, broadcast_to, expand_dims, moveaxis, ravel, reshape

__all__: list[str] = []


# --- concatenate and the stacks built on it ------------------------------------------

def _concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _concatenate_shape(*xs, axis):
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return Aval(tuple(shape), np.result_type(*(x.dtype for x in xs)))


def _concatenate_vjp(g, y, *xs, axis):
    cts, start = [], 0
    for x in xs:
        stop = start + x.shape[axis]
        cts.append(_index.index_axis(g, axis, ("slice", start, stop, None)))
        start = stop
    return tuple(cts)


def _concatenate_jvp(ts, y, *xs, axis):
    from .elementwise import zeros_like

    return bind(concatenate_p, *(zeros_like(x) if t is None else t for t, x in zip(ts, xs)),
                axis=axis)


def _concatenate_batch(size, args, batched, *, axis):
    xs = [x if b else broadcast_to(x, (size,) + tuple(x.shape)) for x, b in zip(args, batched)]
    return bind(concatenate_p, *xs, axis=axis + 1)


concatenate_p = Primitive(
    "concatenate", _concatenate_impl, vjp=_concatenate_vjp, jvp=_concatenate_jvp,
    shape_rule=_concatenate_shape,
    batch=_concatenate_batch, same_dtype=EVERY_INPUT,
)


@implements(np.concatenate)
def concatenate(arrays: Any, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                casting: Any = None) -> Any:
    """Join tensors along an existing axis (all of them flattened if ``axis`` is None)."""
    if out is not None:
        raise TypeError("concatenate(..., out=) cannot write into a tensor: tensors are "
                        "immutable.")
    xs = list_operands(arrays)
    if not xs:
        raise ValueError("need at least one array to concatenate.")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if dtype is not None:
        from .elementwise import cast

        xs = [cast(x, dtype) for x in xs]
    ndim = len(xs[0].shape)
    if ndim == 0:
        raise ValueError("zero-dimensional tensors cannot be concatenated.")
    axis = _normalize_axis(int(axis), ndim)
    for x in xs[1:]:
        same = len(x.shape) == ndim and all(
            d == e for i, (d, e) in enumerate(zip(x.shape, xs[0].shape)) if i != axis
        )
        if not same:
            raise InvalidArgumentError(
                f"All tensors must have the same shape except along axis {axis}; got "
                f"{tuple(xs[0].shape)} and {tuple(x.shape)}."
            )
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, axis=axis)


def concat(values: Any, axis: int, name: str | None = None) -> Any:
    """TF's name for :func:`concatenate`."""
    del name
    return concatenate(values, axis=axis)


@implements(np.stack)
def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: Any = None, name: str | None = None) -> Any:
    """Join same-shaped tensors along a new axis (TF's ``tf.stack`` and NumPy's)."""
    del name
    if out is not None:
        raise TypeError("stack(..., out=) cannot write into a tensor: tensors are immutable.")
    xs = list_operands(arrays)
    if not xs:
        raise ValueError("need at least one array to stack.")
    shape = tuple(xs[0].shape)
    for x in xs[1:]:
        if tuple(x.shape) != shape:
            raise InvalidArgumentError(f"All tensors to stack must have the same shape; got "
                                       f"{shape} and {tuple(x.shape)}.")
    axis = _normalize_axis(int(axis), len(shape) + 1)
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis, dtype=dtype)


# --- unstack: one op with a result per slice ---------------------------------------------
# One op rather than a getitem per slice: each getitem's cotangent is a zero array the
# size of the whole input with one slice written, so T slices cost O(T^2) in the
# backward; unstack's cotangent is the T slices' cotangents stacked once.

def _unstack_impl(x, *, axis):
    lead = (slice(None),) * axis
    return [x[lead + (i,)] for i in range(x.shape[axis])]  # views, as x[i] gives


def _unstack_shape(x, *, axis):
    shape = tuple(x.shape[:axis]) + tuple(x.shape[axis + 1:])
    return [Aval(shape, x.dtype)] * x.shape[axis]


unstack_p = Primitive(
    "unstack", _unstack_impl, multiple_results=True, kind_neutral=True,
    vjp=lambda g, y, x, *, axis: (stack(list(g), axis=axis),),
    jvp=lambda ts, y, x, *, axis: bind(unstack_p, ts[0], axis=axis),
    shape_rule=_unstack_shape,
    batch=lambda size, args, batched, *, axis: bind(unstack_p, args[0], axis=axis + 1),
)


def unstack(value: Any, num: int | None = None, axis: int = 0,
            name: str | None = None) -> list:
    """TF's ``tf.unstack``: the slices of ``value`` along ``axis``, as a list."""
    del name
    value = operand(value)
    axis = _normalize_axis(int(axis), len(value.shape))
    n = value.shape[axis]
    if num is not None and num != n:
        raise ValueError(f"num={num} does not match the size {n} of axis {axis}.")
    if n == 0:
        return []
    return list(bind(unstack_p, value, axis=axis))


def _atleast(arys, shape_of):
    out = []
    for a in arys:
        a = operand(a)
        out.append(reshape(a, shape_of(tuple(a.shape))))
    return out[0] if len(out) == 1 else out


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    """Each input viewed with at least one dimension."""
    return _atleast(arys, lambda s: s if len(s) >= 1 else (1,))


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    """Each input viewed with at least two dimensions (a row for 1-d inputs)."""
    return _atleast(arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def _shape_3d(s):
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return s + (1,)
    return s


@implements(np.atleast_3d)
def atleast_3d(*arys: Any) -> Any:
    """Each input viewed with at least three dimensions (NumPy's placement of new axes)."""
    return _atleast(arys, _shape_3d)


def _as_list(x):
    return x if isinstance(x, list) else [x]


@implements(np.hstack)
def hstack(tup: Any, *, dtype: Any = None, casting: Any = None) -> Any:
    """Join along the second axis (the first for 1-d inputs)."""
    xs = _as_list(atleast_1d(*tup))
    return concatenate(xs, axis=0 if len(xs[0].shape) == 1 else 1, dtype=dtype)


@implements(np.vstack)
def vstack(tup: Any, *, dtype: Any = None, casting: Any = None) -> Any:
    """Join along the first axis, 1-d inputs becoming rows."""
    return concatenate(_as_list(atleast_2d(*tup)), axis=0, dtype=dtype)


@implements(np.dstack)
def dstack(tup: Any) -> Any:
    """Join along the third axis."""
    return concatenate(_as_list(atleast_3d(*tup)), axis=2)


def _as_column(a: Any) -> Any:
    """NumPy's column_stack piece: a 1-d array as a column, a scalar as a 1x1 array."""
    a = operand(a)
    if len(a.shape) >= 2:
        return a
    return reshape(a, (a.shape[0], 1) if a.shape else (1, 1))


def _column_stack_rows(t: Any) -> Any:
    """``np.column_stack(t)`` of one tensor: NumPy iterates it, so its rows are the
    pieces (a 1-d tensor gives one row, (1, n)); built from the whole tensor at once."""
    shape = tuple(t.shape)
    if not shape:
        raise TypeError("iteration over a 0-d tensor: np.column_stack needs a sequence.")
    if len(shape) == 1:
        return reshape(t, (1, shape[0]))
    rows_side_by_side = moveaxis(t, 0, 1)  # (d1, n, d2, ...): row i at [:, i]
    return reshape(rows_side_by_side, (shape[1], -1) + shape[3:])


@implements(np.column_stack)
def column_stack(tup: Any) -> Any:
    """1-d inputs as columns, joined along the second axis (NumPy's rule)."""
    if isinstance(tup, Tensor):
        return _column_stack_rows(tup)
    return concatenate([_as_column(a) for a in tup], axis=1)


# gt.convert_to_tensor([t1, t2]) stacks, as TF packs a list holding tensors (core's hook).
_tensor_module.pack_list = stack

__all__ += ["concatenate", "concat", "stack", "unstack", "atleast_1d", "atleast_2d",
            "atleast_3d", "hstack", "vstack", "dstack", "column_stack"]


# --- split: slices, so every piece is a single-output op -------------------------------

def _pieces(x, axis: int, bounds) -> list:
    return [_index.index_axis(x, axis, ("slice", start, stop, None)) for start, stop in bounds]


def _np_split_bounds(n: int, indices_or_sections, equal: bool) -> list[tuple]:
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        if equal and extra:
            raise ValueError("array split does not result in an equal division.")
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        points = [0] + [int(i) for i in indices_or_sections] + [n]
    return list(zip(points[:-1], points[1:]))


def _np_split(ary, indices_or_sections, axis=0, *, equal=True):
    ary = operand(ary)
    axis = _normalize_axis(int(axis), len(ary.shape))
    bounds = _np_split_bounds(ary.shape[axis], indices_or_sections, equal)
    return _pieces(ary, axis, bounds)


@implements(np.split)
def _numpy_split(ary, indices_or_sections, axis=0):
    """NumPy's ``split``: an int (equal sections) or the indices where pieces start."""
    return _np_split(ary, indices_or_sections, axis)


@implements(np.array_split)
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's ``array_split``: like NumPy's split, sections may be unequal."""
    return _np_split(ary, indices_or_sections, axis, equal=False)


@implements(np.hsplit)
def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's ``hsplit``: split along the second axis (the first for 1-d)."""
    ary = operand(ary)
    if len(ary.shape) == 0:
        raise ValueError("hsplit only works on tensors of 1 or more dimensions.")
    return _np_split(ary, indices_or_sections, 1 if len(ary.shape) > 1 else 0)


@implements(np.vsplit)
def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's ``vsplit``: split along the first axis of a tensor of rank >= 2."""
    ary = operand(ary)
    if len(ary.shape) < 2:
        raise ValueError("vsplit only works on tensors of 2 or more dimensions.")
    return _np_split(ary, indices_or_sections, 0)


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None,
          name: str | None = None) -> list:
    """TF's ``tf.split``: an int gives that many equal pieces; a list gives the pieces'
    SIZES (one may be -1). ``np.split(t, ...)`` keeps NumPy's meaning (split indices)."""
    del name
    value = operand(value)
    axis = _normalize_axis(int(axis), len(value.shape))
    n = value.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)):
        pieces = int(num_or_size_splits)
        if pieces <= 0 or n % pieces:
            raise InvalidArgumentError(f"Cannot split axis {axis} of size {n} into {pieces} "
                                       "equal pieces; pass a list of sizes instead.")
        sizes = [n // pieces] * pieces
    else:
        sizes = [int(s) for s in np.asarray(num_or_size_splits).reshape(-1)]
        if sizes.count(-1) > 1:
            raise InvalidArgumentError("At most one size in num_or_size_splits may be -1.")
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise InvalidArgumentError(f"The sizes {sizes} do not add up to the size {n} of "
                                       f"axis {axis}.")
    if num is not None and num != len(sizes):
        raise ValueError(f"num={num} does not match the {len(sizes)} pieces.")
    points = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
    return _pieces(value, axis, list(zip(points[:-1], points[1:])))


__all__ += ["split", "array_split", "hsplit", "vsplit"]


# --- one row written: a TensorArray's buffer inside a compiled loop --------------------

def row_write_capacity(rows: int, index: Any, grow: bool) -> tuple[int, int]:
    """The row index written and the rows the buffer needs for it: twice its rows
    until the index fits, with ``grow`` (``dynamic_size``); else ``OutOfRangeError``."""
    i = int(index)
    if i < 0 or (i >= rows and not grow):
        raise OutOfRangeError(f"Tried to write to index {i} but array size is: {rows}. "
                              "Create the TensorArray with a larger size (or "
                              "dynamic_size=True).")
    capacity = max(rows, 1)
    while capacity <= i:
        capacity *= 2
    return i, max(capacity, rows)


def _row_write_impl(buffer, index, value, grow=False):
    i, capacity = row_write_capacity(len(buffer), index, grow)
    if capacity > len(buffer):  # dynamic_size: the buffer doubles
        grown = np.zeros((capacity,) + buffer.shape[1:], buffer.dtype)
        grown[:len(buffer)] = buffer
        buffer = grown
    else:
        buffer = buffer.copy()  # the loop carries buffers as values: the old one stays
    buffer[i] = value
    return buffer


def row_write_in_place(buffer, index, value, grow=False):
    """``row_write`` for generated code that owns ``buffer`` (a loop's carry, copied as
    the loop starts and read by nothing but this write): the row is written into it, no
    copy of the buffer per write; a buffer that must grow is a new one, as always."""
    i, capacity = row_write_capacity(len(buffer), index, grow)
    if capacity > len(buffer):
        return _row_write_impl(buffer, index, value, grow)
    buffer[i] = value
    return buffer


def _row_write_vjp(g, y, buffer, index, value, grow=False):
    from .elementwise import zeros_like

    # The overwritten row's cotangent goes to the value; the buffer keeps the rest. (A
    # grown buffer never reaches a gradient: its trace's guard on the size fails first.)
    return (bind(row_write_p, g, index, zeros_like(value), grow=grow), None,
            _index.getitem(g, index))


def _row_write_jvp(ts, y, buffer, index, value, grow=False):
    from .elementwise import zeros_like

    t_buffer, _, t_value = ts
    if t_buffer is None and t_value is None:
        return None
    t_buffer = zeros_like(buffer) if t_buffer is None else t_buffer
    t_value = zeros_like(value) if t_value is None else t_value
    return bind(row_write_p, t_buffer, index, t_value, grow=grow)


def _row_write_batch(size, args, batched, *, grow=False):
    from . import batch_rules

    buffer, index, value = args
    if batched[1] or grow:  # a row per element, or a size per element: one at a time
        return batch_rules.batch_by_loop(row_write_p, size, args, batched, grow=grow)
    if not batched[0]:
        buffer = broadcast_to(buffer, (size,) + tuple(buffer.shape))
    if not batched[2]:
        value = broadcast_to(value, (size,) + tuple(value.shape))
    written = bind(row_write_p, moveaxis(buffer, 0, 1), index, value)  # rows in front
    return moveaxis(written, 0, 1)


row_write_p = Primitive(
    "row_write", _row_write_impl, vjp=_row_write_vjp, jvp=_row_write_jvp,
    batch=_row_write_batch,
    shape_rule=lambda buffer, index, value, grow=False: Aval(tuple(buffer.shape),
                                                             buffer.dtype),
)


def row_write(buffer: Any, index: Any, value: Any, grow: bool = False) -> Tensor:
    """``buffer`` with row ``index`` replaced by ``value`` (a ``TensorArray.write``
    inside a compiled loop); an index out of range raises ``OutOfRangeError``, unless
    ``grow`` (``dynamic_size``), which doubles the rows until it fits."""
    return bind(row_write_p, operand(buffer), operand(index), operand(value), grow=grow)
