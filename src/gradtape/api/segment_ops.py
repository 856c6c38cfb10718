"""TF's segment reductions and ``scatter_nd`` family, as compositions of existing ops.

Sums are a ``scatter_add`` (its transpose is a gather: derivatives of every order).
Max, min and prod gather each segment's rows into a padded ``(segments, width)`` layout
and reduce it with ``reduce_max``/``reduce_min``/``reduce_prod``, whose gradients are
TF's (tied extrema share the gradient equally; products handle zeros). The layout is a
non-differentiable index primitive on the ids, so a ``@gt.function`` trace takes new ids
at each call; its width (the largest segment) is read by Python, a guard like
``boolean_mask``'s count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor, convert_to_tensor
from ..ops.index import scatter_add
from ..ops.positions import last_occurrence_p, segment_layout_p
from ..ops.registry import bind, holds_tensor, operand

__all__ = [
    "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
    "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max",
    "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n",
    "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
]


def _any(condition: Tensor) -> Tensor:
    """Whether any element of a bool tensor holds (``reduce_any``)."""
    return ops.reduce_max(condition)


# --- checks ------------------------------------------------------------------------------

def _integer_ids(segment_ids: Any, what: str = "segment_ids") -> Tensor:
    ids = operand(segment_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{what} must be an int32 or int64 tensor, got {ids.dtype}; cast it "
                        "with gt.cast(ids, gt.int32).")
    return ids


def _leading_shape_matches(data: Tensor, ids: Tensor) -> None:
    if tuple(data.shape[:ids.ndim]) != tuple(ids.shape):
        raise InvalidArgumentError(
            f"segment_ids.shape {list(ids.shape)} must be a prefix of data.shape "
            f"{list(data.shape)}.")


def _num_segments(num_segments: Any) -> int:
    count = int(num_segments)  # a tensor's value is read (a guard while tracing)
    if count < 0:
        raise InvalidArgumentError(f"num_segments must be non-negative, got {count}.")
    return count


def _check_in_range(ids: Tensor, num_segments: int, allow_negative: bool) -> None:
    """TF's CPU check of ids (Python reads one bool: a guard while tracing)."""
    if ids.size == 0:
        return
    out_of_range = ops.greater_equal(ids, num_segments)
    if not allow_negative:  # an integer bound: TF's dtype rule takes no float beside ids
        out_of_range = ops.logical_or(ops.less(ids, 0), out_of_range)
    if bool(_any(out_of_range)):
        bad = np.asarray(ids).reshape(-1)
        bad = bad[(bad >= num_segments) | ((bad < 0) & (not allow_negative))]
        raise InvalidArgumentError(
            f"segment_ids holds {int(bad[0])}, out of range [0, {num_segments}): give "
            "num_segments > max(segment_ids)" + ("" if allow_negative else
                                                 " and use no negative ids") + ".")


def _sorted_segment_count(ids: Tensor) -> int:
    """``max(ids) + 1`` of sorted non-negative 1-d ids, after TF's checks."""
    if ids.ndim != 1:
        raise InvalidArgumentError(f"segment_ids should be a vector, got shape "
                                   f"{list(ids.shape)}.")
    if ids.size == 0:
        return 0
    if bool(_any(ops.less(ids[1:], ids[:-1]))):
        raise InvalidArgumentError("segment ids are not increasing: sort them, or use "
                                   "gt.math.unsorted_segment_* with num_segments.")
    if int(ids[0]) < 0:
        raise InvalidArgumentError("segment ids must be >= 0; use "
                                   "gt.math.unsorted_segment_* to drop negative ids.")
    return int(ids[-1]) + 1


# --- the reductions ----------------------------------------------------------------------

def _segment_sum(data: Tensor, ids: Tensor, count: int) -> Tensor:
    """Rows of ``data`` summed per id; negative ids go to an extra row that is dropped."""
    safe = ops.where(ops.less(ids, 0), count, ids)
    summed = scatter_add(data, (safe,), (("array", 0),),
                         (count + 1,) + tuple(data.shape[ids.ndim:]))
    return summed[:count]


def _segment_counts(data: Tensor, ids: Tensor, count: int, dtype: Any) -> Tensor:
    """How many rows each segment has, shaped to broadcast against a reduction."""
    ones = np.ones(tuple(ids.shape), dtype)
    counts = _segment_sum(ones, ids, count)
    return ops.reshape(counts, (count,) + (1,) * (data.ndim - ids.ndim))


def _padded_segments(data: Tensor, ids: Tensor, count: int, fill: Any) -> Tensor:
    """``(count, width, *rest)``: each segment's rows, then ``fill``."""
    rest = tuple(data.shape[ids.ndim:])
    rows = ops.reshape(data, (-1,) + rest)
    sizes = _segment_sum(np.ones(tuple(ids.shape), np.int64), ids, count)
    width = int(ops.reduce_max(sizes)) if count else 0  # a guard while tracing
    positions = bind(segment_layout_p, ids, num_segments=count, width=width)
    gathered = ops.gather(rows, ops.maximum(positions, 0), axis=0)
    present = ops.reshape(ops.greater_equal(positions, 0), (count, width) + (1,) * len(rest))
    return ops.where(present, gathered, np.asarray(fill, data.dtype))


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The reduction's identity, padding a segment's rows (``-inf`` for a float max)."""
    if kind == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    return np.iinfo(dtype).min if kind == "max" else np.iinfo(dtype).max


def _empty_value(kind: str, dtype: np.dtype) -> Any:
    """TF's unsorted max (min) of an empty segment: the dtype's lowest (highest) finite
    value, ``-3.4028235e38`` for float32, not ``-inf``."""
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _reduce_segments(kind: str, data: Tensor, ids: Tensor, count: int,
                     empty_is_zero: bool) -> Tensor:
    """max, min or prod of each segment; an empty one is 0 (sorted max/min, TF), 1 (the
    prods) or the dtype's lowest/highest finite value (unsorted max/min)."""
    padded = _padded_segments(data, ids, count, _identity(kind, data.dtype))
    reduce = {"max": ops.reduce_max, "min": ops.reduce_min, "prod": ops.reduce_prod}[kind]
    out = reduce(padded, axis=1)
    if kind == "prod":
        return out
    empty = 0 if empty_is_zero else _empty_value(kind, data.dtype)
    sizes = _segment_counts(data, ids, count, np.int64)
    # ``where`` also gives an empty segment a zero gradient (never the padding's).
    return ops.where(ops.greater(sizes, 0), out, np.asarray(empty, data.dtype))


def _unsorted(data: Any, segment_ids: Any, num_segments: Any):
    data, ids = operand(data), _integer_ids(segment_ids)
    _leading_shape_matches(data, ids)
    count = _num_segments(num_segments)
    _check_in_range(ids, count, allow_negative=True)
    return data, ids, count


def _sorted(data: Any, segment_ids: Any):
    data, ids = operand(data), _integer_ids(segment_ids)
    _leading_shape_matches(data, ids)
    return data, ids, _sorted_segment_count(ids)


def _mean(data: Tensor, ids: Tensor, count: int, root: bool = False) -> Tensor:
    if not np.issubdtype(data.dtype, np.inexact):
        raise TypeError(f"segment means need a floating-point data tensor, got {data.dtype}.")
    sizes = ops.maximum(_segment_counts(data, ids, count, data.dtype), 1)
    return _segment_sum(data, ids, count) / (ops.sqrt(sizes) if root else sizes)


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_sum``: ``out[i] = sum(data[j] for segment_ids[j]
    == i)``; rows with a negative id are dropped, an empty segment is 0."""
    del name
    data, ids, count = _unsorted(data, segment_ids, num_segments)
    return _segment_sum(data, ids, count)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_mean`` (an empty segment is 0)."""
    del name
    return _mean(*_unsorted(data, segment_ids, num_segments))


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any,
                            name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_sqrt_n``: the sum over ``sqrt(count)``."""
    del name
    return _mean(*_unsorted(data, segment_ids, num_segments), root=True)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_max``; an empty segment is the dtype's lowest
    finite value (``dtype.min``, not ``-inf``); tied maxima share the gradient equally."""
    del name
    return _reduce_segments("max", *_unsorted(data, segment_ids, num_segments), False)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_min``; an empty segment is the dtype's highest
    finite value (``dtype.max``, not ``inf``)."""
    del name
    return _reduce_segments("min", *_unsorted(data, segment_ids, num_segments), False)


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.math.unsorted_segment_prod``; an empty segment is 1."""
    del name
    return _reduce_segments("prod", *_unsorted(data, segment_ids, num_segments), False)


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.segment_sum``: sorted 1-d ids, ``max(ids) + 1`` segments."""
    del name
    return _segment_sum(*_sorted(data, segment_ids))


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.segment_mean`` (an empty segment is 0)."""
    del name
    return _mean(*_sorted(data, segment_ids))


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.segment_max`` (an empty segment is 0)."""
    del name
    return _reduce_segments("max", *_sorted(data, segment_ids), True)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.segment_min`` (an empty segment is 0)."""
    del name
    return _reduce_segments("min", *_sorted(data, segment_ids), True)


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.segment_prod`` (an empty segment is 1)."""
    del name
    return _reduce_segments("prod", *_sorted(data, segment_ids), False)


# --- scatter_nd ------------------------------------------------------------------------

def _linear_positions(indices: Tensor, shape: tuple) -> tuple[Tensor, int]:
    """Each index row ``indices[..., :k]`` as one position in ``shape[:k]`` (C order),
    and the number of such positions; out-of-range rows raise TF's error."""
    depth = int(indices.shape[-1]) if indices.ndim else 0
    if indices.ndim == 0 or depth > len(shape):
        raise InvalidArgumentError(
            f"indices must have shape [..., k] with k <= rank of the shape {list(shape)}; "
            f"got indices of shape {list(indices.shape)}.")
    leading = shape[:depth]
    bounds = np.asarray(leading, np.int64)
    if indices.size and bool(_any(ops.logical_or(
            ops.less(indices, 0), ops.greater_equal(indices, bounds)))):
        raise InvalidArgumentError(
            f"indices hold a row that does not index into shape {list(shape)}: every "
            f"indices[..., j] must be in [0, {list(leading)}[j]).")
    strides = np.asarray([int(np.prod(leading[j + 1:])) for j in range(depth)], np.int64)
    linear = ops.reduce_sum(ops.cast(indices, np.int64) * strides, axis=-1)
    return linear, int(np.prod(leading))


def _check_updates(indices: Tensor, updates: Tensor, shape: tuple) -> None:
    depth = int(indices.shape[-1])
    expected = tuple(indices.shape[:-1]) + tuple(shape[depth:])
    if tuple(updates.shape) != expected:
        raise InvalidArgumentError(
            f"updates must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = "
            f"{list(expected)}, got {list(updates.shape)}.")


def _scatter_rows(indices: Tensor, updates: Tensor, shape: tuple) -> tuple[Tensor, Tensor, int]:
    """(linear positions, updates as rows, number of positions) for ``shape``."""
    linear, count = _linear_positions(indices, shape)
    _check_updates(indices, updates, shape)
    return linear, updates, count


def _indices(indices: Any) -> Tensor:
    return _integer_ids(indices, "indices")


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.scatter_nd``: zeros of ``shape`` with ``updates`` added at ``indices``
    (repeated indices add up)."""
    del name
    indices, updates = _indices(indices), operand(updates)
    shape = tuple(int(d) for d in (np.asarray(shape) if isinstance(shape, Tensor) else shape))
    linear, rows, count = _scatter_rows(indices, updates, shape)
    return ops.reshape(_segment_sum(rows, linear, count), shape)


def _updates_for(tensor: Tensor, updates: Any) -> Any:
    """Python numbers and lists take ``tensor``'s dtype, as TF's op conversion gives them
    (``tensor_scatter_nd_update(float64_tensor, [[0]], [7.0])``); tensors keep theirs."""
    python_list = isinstance(updates, (list, tuple)) and not holds_tensor(updates)
    if python_list or isinstance(updates, (int, float)):
        return convert_to_tensor(updates, dtype=tensor.dtype)
    return operand(updates)


def _tensor_and_rows(tensor: Any, indices: Any, updates: Any):
    tensor, indices = operand(tensor), _indices(indices)
    updates = _updates_for(tensor, updates)
    if updates.dtype != tensor.dtype:
        raise InvalidArgumentError(f"updates ({updates.dtype}) must have the dtype of "
                                   f"tensor ({tensor.dtype}); cast one of them.")
    shape = tuple(tensor.shape)
    linear, rows, count = _scatter_rows(indices, updates, shape)
    flat = ops.reshape(tensor, (count,) + shape[int(indices.shape[-1]):])
    return tensor, flat, linear, rows, count


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.tensor_scatter_nd_add``: ``tensor`` with ``updates`` added at
    ``indices`` (repeated indices add up)."""
    del name
    tensor, flat, linear, rows, count = _tensor_and_rows(tensor, indices, updates)
    return ops.reshape(flat + _segment_sum(rows, linear, count), tuple(tensor.shape))


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.tensor_scatter_nd_sub``: ``tensor`` minus ``updates`` at ``indices``."""
    del name
    tensor, flat, linear, rows, count = _tensor_and_rows(tensor, indices, updates)
    return ops.reshape(flat - _segment_sum(rows, linear, count), tuple(tensor.shape))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any,
                             name: str | None = None) -> Tensor:
    """TF's ``tf.tensor_scatter_nd_update``: ``tensor`` with ``updates`` written at
    ``indices``; of repeated indices the last write wins (TF leaves the order
    unspecified). Gradients: ``tensor`` where not overwritten, each winning update."""
    del name
    tensor, flat, linear, rows, count = _tensor_and_rows(tensor, indices, updates)
    wins = bind(last_occurrence_p, linear)
    kept = ops.reshape(wins, tuple(wins.shape) + (1,) * (rows.ndim - wins.ndim))
    written = _segment_sum(ops.where(kept, rows, np.zeros((), rows.dtype)), linear, count)
    hit = ops.greater(_segment_counts(flat, linear, count, np.int64), 0)
    return ops.reshape(ops.where(hit, written, flat), tuple(tensor.shape))


def _scatter_extremum(kind: str, tensor: Any, indices: Any, updates: Any) -> Tensor:
    """``tensor``'s rows and the updates reduced per position: ties between them share
    the gradient equally, as TF's rule for TensorScatterMax/Min."""
    tensor, flat, linear, rows, count = _tensor_and_rows(tensor, indices, updates)
    rest = tuple(flat.shape[1:])
    data = ops.concat([flat, ops.reshape(rows, (-1,) + rest)], axis=0)
    ids = ops.concat([np.arange(count, dtype=np.int64), ops.reshape(linear, (-1,))], axis=0)
    return ops.reshape(_reduce_segments(kind, data, ids, count, False), tuple(tensor.shape))


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.tensor_scatter_nd_max``: the larger of ``tensor`` and the updates at
    ``indices``."""
    del name
    return _scatter_extremum("max", tensor, indices, updates)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any,
                          name: str | None = None) -> Tensor:
    """TF's ``tf.tensor_scatter_nd_min``: the smaller of ``tensor`` and the updates."""
    del name
    return _scatter_extremum("min", tensor, indices, updates)
