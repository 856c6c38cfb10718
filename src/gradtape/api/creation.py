"""TF's tensor-creating functions (``gt.zeros``, ``gt.range``, ``gt.eye``, ...) and the
shape queries (``gt.shape``, ``gt.size``, ``gt.rank``), with TF's signatures and default
dtypes. Their results are constants: nothing here is differentiable (as in TF, where
these take shapes and Python numbers)."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..core.dtypes import numpy_dtype
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor, _to_array, concrete_value, wrap

__all__ = ["zeros", "ones", "fill", "range", "linspace", "eye", "shape", "size", "rank"]

_FLOAT32 = np.dtype(np.float32)
_INT32 = np.dtype(np.int32)


def _dims(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """A shape argument (int, list, tuple, TensorShape, 1-D int tensor) as a tuple of
    non-negative ints."""
    if isinstance(shape, Tensor):
        shape = concrete_value(shape)
    array = np.asarray(shape)
    if array.ndim > 1 or (array.size and array.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{what} must be a 1-D list of ints, got {shape!r}.")
    dims = tuple(int(d) for d in array.reshape(-1))
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"Dimensions of {what} must be >= 0, got {list(dims)}.")
    return dims


def zeros(shape: Any, dtype: Any = np.float32, name: str | None = None) -> Tensor:
    """TF's ``tf.zeros``: float32 unless ``dtype`` is given."""
    del name
    return wrap(np.zeros(_dims(shape), numpy_dtype(dtype)))


def ones(shape: Any, dtype: Any = np.float32, name: str | None = None) -> Tensor:
    """TF's ``tf.ones``: float32 unless ``dtype`` is given."""
    del name
    return wrap(np.ones(_dims(shape), numpy_dtype(dtype)))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.fill``: ``value`` (a scalar, with TF's dtype rules: 1.0 is float32) in
    every element."""
    del name
    scalar = _to_array(value)
    if scalar.ndim != 0:
        raise InvalidArgumentError(f"value must be a scalar, got shape {scalar.shape}.")
    return wrap(np.full(_dims(dims, "dims"), scalar, scalar.dtype))


# tf.range's dtype inference: the widest of its arguments' dtypes, in this order.
_RANGE_HIERARCHY = [np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32,
                                           np.float64)]


def _range_dtype(args: list[np.ndarray]) -> np.dtype:
    dtypes = [a.dtype for a in args]
    if all(d in _RANGE_HIERARCHY for d in dtypes):
        return builtins.max(dtypes, key=_RANGE_HIERARCHY.index)
    return np.result_type(*dtypes)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
          name: str = "range") -> Tensor:
    """TF's ``tf.range``: ``range(limit)`` or ``range(start, limit, delta)``. Python ints
    give int32, floats float32 (the widest argument decides), unless ``dtype`` is given."""
    del name
    if limit is None:
        start, limit = 0, start
    args = [_to_array(a) for a in (start, limit, delta)]
    for a, what in zip(args, ("start", "limit", "delta")):
        if a.ndim != 0:
            raise InvalidArgumentError(f"{what} must be a scalar, not shape {a.shape}.")
    out_dtype = _range_dtype(args) if dtype is None else numpy_dtype(dtype)
    first, last, step = (a.astype(out_dtype)[()] for a in args)
    _check_range(first, last, step)
    return wrap(np.arange(first, last, step, dtype=out_dtype))


def _check_range(start: Any, limit: Any, delta: Any) -> None:
    """TF's InvalidArgumentErrors for a range that goes the wrong way or nowhere."""
    if delta == 0:
        raise InvalidArgumentError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise InvalidArgumentError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise InvalidArgumentError(f"Requires start >= limit when delta < 0: {start}/{limit}")


# TF's true division: small ints divide in float32, 32- and 64-bit ints in float64.
_TRUEDIV = {"int8": np.float32, "uint8": np.float32, "int16": np.float32,
            "uint16": np.float32, "int32": np.float64, "int64": np.float64}


def linspace(start: Any, stop: Any, num: Any, name: str | None = None,
             axis: int = 0) -> Tensor:
    """TF's ``tf.linspace``: ``num`` evenly spaced values from ``start`` to ``stop``
    (both included), along a new ``axis`` when they are tensors. The dtype is
    ``start``'s (float32 for Python floats; an integer start divides like TF's ``/``:
    int32 gives float64)."""
    del name
    first = _to_array(start)
    kind = first.dtype
    out_dtype = np.dtype(_TRUEDIV.get(kind.name, kind))
    if out_dtype.kind not in "fc":
        raise TypeError(f"linspace needs a float or integer start, got {kind.name}.")
    last = _to_array(stop, kind)
    count = int(concrete_value(num)) if isinstance(num, Tensor) else int(num)
    if count < 0:
        raise InvalidArgumentError(f"Requires num >= 0: {count}")
    values = np.linspace(first.astype(out_dtype), last.astype(out_dtype), count,
                         axis=axis, dtype=out_dtype)
    return wrap(values)


def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None,
        dtype: Any = np.float32, name: str | None = None) -> Tensor:
    """TF's ``tf.eye``: an identity matrix (``num_rows`` x ``num_columns``), float32
    unless ``dtype`` is given, repeated over ``batch_shape``."""
    del name
    rows, = _dims([num_rows], "num_rows")
    columns = rows if num_columns is None else _dims([num_columns], "num_columns")[0]
    matrix = np.eye(rows, columns, dtype=numpy_dtype(dtype))
    if batch_shape is not None:
        batch = _dims(batch_shape, "batch_shape")
        matrix = np.broadcast_to(matrix, batch + matrix.shape).copy()
    return wrap(matrix)


def _out_type(out_type: Any) -> np.dtype:
    dtype = numpy_dtype(out_type)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"out_type must be int32 or int64, got {dtype.name}.")
    return dtype


def shape(input: Any, out_type: Any = np.int32, name: str | None = None) -> Tensor:
    """TF's ``tf.shape``: the shape as a 1-D int32 tensor (int64 with ``out_type``)."""
    del name
    return wrap(np.array(np.shape(_value(input)), _out_type(out_type)))


def _numeric_out_type(out_type: Any) -> np.dtype:
    """TF 2's ``tf.size`` takes any non-quantized numeric ``out_type`` (float32 too)."""
    dtype = numpy_dtype(out_type)
    if dtype.kind not in "iuf":
        raise TypeError(f"out_type must be a numeric dtype (int32, int64, float32...), got "
                        f"{dtype.name}.")
    return dtype


def size(input: Any, out_type: Any = np.int32, name: str | None = None) -> Tensor:
    """TF's ``tf.size``: the number of elements as a scalar tensor of ``out_type``
    (int32 by default; any numeric dtype, as TF 2)."""
    del name
    # The product of the static shape: np.size would compute a Dask array.
    return wrap(np.array(math.prod(np.shape(_value(input))), _numeric_out_type(out_type)))


def rank(input: Any, name: str | None = None) -> Tensor:
    """TF's ``tf.rank``: the number of dimensions as an int32 scalar tensor."""
    del name
    return wrap(np.array(np.ndim(_value(input)), _INT32))


def _value(x: Any) -> Any:
    """``x``'s array without a read guard (only its shape is used), or ``x`` converted."""
    return x._value if isinstance(x, Tensor) else _to_array(x)
