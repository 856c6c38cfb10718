"""TF's array functions ported code uses: ``top_k``, ``searchsorted``, ``unique``,
``bincount``, ``band_part``, ``meshgrid``, ``divide_no_nan``.

Each is built from existing ops, so every transform works on it; the integer parts
(``searchsorted``, ``unique``'s positions) are primitives without derivatives, taking
their inputs as program values, so a ``@gt.function`` trace takes new values at each
call. Where a result's length depends on the values (``unique``, ``bincount``), Python
reads that length (a guard while tracing), as ``boolean_mask`` reads its count.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .. import ops
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor
from ..ops.positions import searchsorted_p, unique_count_p, unique_p
from ..ops.registry import bind, operand
from ..ops.shape import stop_gradient
from ..ops.sorting import _gather_sorted, argsort_p
from .segment_ops import unsorted_segment_sum

__all__ = ["top_k", "searchsorted", "unique", "unique_with_counts", "bincount",
           "band_part", "meshgrid", "divide_no_nan"]

TopKV2 = namedtuple("TopKV2", ["values", "indices"])
UniqueOutput = namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an int, got {value!r}.")
    return int(value)  # a tensor's value is read (a guard while tracing)


def _index_dtype(dtype: Any, what: str) -> np.dtype:
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"{what} must be gt.int32 or gt.int64, got {dtype}.")
    return dtype


# --- top_k ------------------------------------------------------------------------------

def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = np.int32,
          name: str | None = None) -> TopKV2:
    """TF's ``tf.math.top_k``: the ``k`` largest entries of the last axis, largest first
    (equal values in index order), and their int32 indices. The gradient of ``values``
    scatters back to those indices."""
    del name, sorted  # always sorted, which TF allows for sorted=False
    x = operand(input)
    k = _static_int(k, "k")
    if x.ndim == 0:
        raise InvalidArgumentError("top_k needs an input of rank >= 1, got a scalar.")
    if k < 0:
        raise InvalidArgumentError(f"k must be non-negative, got {k}.")
    if x.shape[-1] < k:
        raise InvalidArgumentError(f"input must have at least k={k} columns, has "
                                   f"{x.shape[-1]}.")
    axis = x.ndim - 1
    order = bind(argsort_p, x, axis=axis, kind="stable", descending=True)[..., :k]
    values = _gather_sorted(x, order, axis)
    return TopKV2(values, ops.cast(order, _index_dtype(index_type, "index_type")))


# --- searchsorted -----------------------------------------------------------------------


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left",
                 out_type: Any = np.int32, name: str | None = None) -> Tensor:
    """TF's ``tf.searchsorted``: per row of the innermost axis, where each value would go
    in the sorted sequence (``side='left'``: before equal entries)."""
    del name
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}.")
    seq, vals = operand(sorted_sequence), operand(values)
    if seq.ndim == 0 or vals.ndim == 0:
        raise InvalidArgumentError("searchsorted needs tensors of rank >= 1: the innermost "
                                   "axis holds the sequences and the values.")
    if tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]):
        raise InvalidArgumentError(
            f"sorted_sequence {list(seq.shape)} and values {list(vals.shape)} must have "
            "the same leading dimensions (all but the innermost).")
    out = bind(searchsorted_p, seq, vals, side=side)
    return ops.cast(out, _index_dtype(out_type, "out_type"))


# --- unique ----------------------------------------------------------------------------


def _unique_parts(x: Any, out_idx: Any):
    x = operand(x)
    if x.ndim != 1:
        raise InvalidArgumentError(f"unique expects a 1D vector, got shape {list(x.shape)}; "
                                   "flatten it first (gt.reshape(x, [-1])).")
    size = int(bind(unique_count_p, x))  # the result's length: a guard while tracing
    first, idx, counts = bind(unique_p, x, size=size)
    y = ops.gather(stop_gradient(x), first)  # TF's Unique has no gradient
    dtype = _index_dtype(out_idx, "out_idx")
    return y, ops.cast(idx, dtype), ops.cast(counts, dtype)


def unique(x: Any, out_idx: Any = np.int32, name: str | None = None) -> UniqueOutput:
    """TF's ``tf.unique``: the distinct values of a 1-d tensor in order of first
    appearance, and for each element the index of its value in them."""
    del name
    y, idx, _ = _unique_parts(x, out_idx)
    return UniqueOutput(y, idx)


def unique_with_counts(x: Any, out_idx: Any = np.int32,
                       name: str | None = None) -> UniqueWithCountsOutput:
    """TF's ``tf.unique_with_counts``: ``unique`` and how often each value occurs."""
    del name
    return UniqueWithCountsOutput(*_unique_parts(x, out_idx))


# --- bincount --------------------------------------------------------------------------

def _bincount_length(arr: Tensor, minlength: Any, maxlength: Any) -> int:
    length = int(ops.reduce_max(arr)) + 1 if arr.size else 0  # a guard while tracing
    if minlength is not None:
        length = max(length, _static_int(minlength, "minlength"))
    if maxlength is not None:
        length = min(length, _static_int(maxlength, "maxlength"))
    return length


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = np.int32, name: str | None = None, axis: int | None = None,
             binary_output: bool = False) -> Tensor:
    """TF's ``tf.math.bincount``: how often each value in ``[0, length)`` occurs in the
    non-negative int ``arr`` (the sum of their ``weights`` if given, in their dtype);
    ``length`` is ``max(arr) + 1`` bounded by ``minlength``/``maxlength``. ``axis=-1``
    counts each row of a 2-d ``arr``. No gradient, as in TF."""
    del name
    arr = operand(arr)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"arr must be an int tensor, got {arr.dtype}.")
    if axis not in (None, 0, -1) or (axis == -1 and arr.ndim != 2):
        raise InvalidArgumentError("bincount supports axis=None (all of arr) or axis=-1 "
                                   "with a 2-d arr (each row counted).")
    if arr.size and bool(ops.reduce_max(ops.less(arr, 0))):
        raise InvalidArgumentError("bincount needs non-negative values in arr.")
    length = _bincount_length(arr, minlength, maxlength)
    if weights is None:
        weights = np.ones(tuple(arr.shape), np.dtype(getattr(dtype, "as_numpy_dtype", dtype)))
    weights = stop_gradient(ops.broadcast_to(operand(weights), tuple(arr.shape)))
    if binary_output:
        weights = ops.ones_like(weights)  # each value once per row
    ids = ops.where(ops.less(arr, length), arr, -1)  # values past maxlength are dropped
    if axis == -1:  # one segment per (row, value)
        rows = np.arange(arr.shape[0], dtype=np.int64)[:, None] * length
        ids = ops.where(ops.less(ids, 0), -1, ops.cast(ids, np.int64) + rows)
        counts = unsorted_segment_sum(weights, ids, arr.shape[0] * length)
        counts = ops.reshape(counts, (arr.shape[0], length))
    else:
        counts = unsorted_segment_sum(weights, ids, length)
    return ops.minimum(counts, 1) if binary_output else counts


# --- band_part, meshgrid, divide_no_nan -------------------------------------------------

def band_part(input: Any, num_lower: Any, num_upper: Any,
              name: str | None = None) -> Tensor:
    """TF's ``tf.linalg.band_part``: each innermost matrix with the entries more than
    ``num_lower`` below or ``num_upper`` above the diagonal set to 0 (a negative count
    keeps that whole triangle)."""
    del name
    x = operand(input)
    if x.ndim < 2:
        raise ValueError(f"band_part needs a tensor of rank >= 2, got shape {list(x.shape)}.")
    lower, upper = _static_int(num_lower, "num_lower"), _static_int(num_upper, "num_upper")
    m, n = x.shape[-2:]
    offset = np.arange(n)[None, :] - np.arange(m)[:, None]  # j - i
    keep = np.ones((m, n), bool)
    if lower >= 0:
        keep &= offset >= -lower
    if upper >= 0:
        keep &= offset <= upper
    return ops.where(keep, x, np.zeros((), x.dtype))


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """TF's ``tf.meshgrid``: N-d coordinate grids from 1-d tensors (``indexing='xy'``,
    the default, or ``'ij'``); differentiable."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}.")
    return list(ops.numpy_extra.meshgrid(*args, indexing=indexing))


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.math.divide_no_nan``: ``x / y``, and 0 where ``y`` is 0 (also the
    gradients there, so no NaN flows back)."""
    del name
    x, y = operand(x), operand(y)
    if x.dtype != y.dtype:
        raise InvalidArgumentError(f"divide_no_nan needs x and y of one dtype, got "
                                   f"{x.dtype} and {y.dtype}; cast one of them.")
    if not np.issubdtype(x.dtype, np.inexact):
        raise TypeError(f"divide_no_nan needs floating-point or complex tensors, got "
                        f"{x.dtype}.")
    zero = ops.equal(y, 0)
    safe = ops.where(zero, np.ones((), y.dtype), y)
    return ops.where(zero, np.zeros((), x.dtype), x / safe)
