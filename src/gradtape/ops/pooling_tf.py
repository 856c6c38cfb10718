"""TF's pooling functions (``tf.nn.max_pool*``, ``avg_pool*``, ``pool``,
``max_pool_with_argmax``) over the primitives of ``ops/pooling.py``: their argument
rules (ksize and strides as an int or a list of 1, N or N + 2, ``'SAME'``/``'VALID'`` or
explicit padding, the data formats) turned into per-axis tuples.

TF's ``SAME``: ``ceil(n / stride)`` outputs, the padding split with the odd one after.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, NotFoundError
from . import pooling as _pooling
from .registry import operand

__all__: list[str] = []

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}

MaxPoolWithArgmax = namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def _channels_first(data_format: str | None, rank: int) -> bool:
    if data_format is None:
        return False
    formats = _FORMATS[rank]
    if data_format not in formats:
        raise ValueError(f"data_format must be one of {list(formats)} for a {rank}-d pool, "
                         f"got {data_format!r}.")
    return data_format.startswith("NC")


def _sequence(value: Any, n: int, channels_first: bool, name: str) -> tuple[int, ...]:
    """TF's ``_get_sequence``: an int, or 1, ``n`` or ``n + 2`` ints (the last with 1 for
    the batch and channel entries)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    values = [int(v) for v in (value.numpy().tolist() if hasattr(value, "numpy") else value)]
    if len(values) == 1:
        return (values[0],) * n
    if len(values) == n:
        return tuple(values)
    if len(values) == n + 2:
        spatial = values[2:] if channels_first else values[1:-1]
        outer = values[:2] if channels_first else [values[0], values[-1]]
        if outer != [1, 1]:
            raise InvalidArgumentError(
                f"Pooling over the batch or channel axis is not supported: {name}={values}; "
                "give 1 for those entries.")
        return tuple(spatial)
    raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: "
                     f"{name}={value} of length {len(values)}")


def _positive(values: tuple[int, ...], name: str) -> None:
    if any(v < 1 for v in values):
        raise InvalidArgumentError(f"{name} must be positive ints, got {list(values)}.")


def _same_pads(n: int, k: int, s: int, d: int) -> tuple[int, int]:
    total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _pads(padding: Any, shape, axes, window, strides, dilations, channels_first,
          explicit_ok: bool) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return ((0, 0),) * len(axes)
        if mode == "SAME":
            return tuple(_same_pads(shape[a], k, s, d)
                         for a, k, s, d in zip(axes, window, strides, dilations))
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}.")
    if not explicit_ok:
        raise ValueError(f"padding must be 'SAME' or 'VALID' here (explicit padding is for "
                         f"max_pool1d and max_pool2d), got {padding!r}.")
    pairs = [tuple(int(v) for v in p) for p in padding]
    if len(pairs) != len(shape) or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding needs a [before, after] pair for each of the "
                         f"{len(shape)} axes, got {padding!r}.")
    if any(pairs[a] != (0, 0) for a in range(len(shape)) if a not in axes):
        raise InvalidArgumentError("explicit padding of the batch or channel axis is not "
                                   f"supported, got {padding!r}.")
    spatial = [pairs[a] for a in axes]
    for (lo, hi), k in zip(spatial, window):
        if min(lo, hi) < 0 or max(lo, hi) >= k:
            raise InvalidArgumentError(f"explicit padding must be in [0, ksize) for each "
                                       f"window ({list(window)}), got {padding!r}.")
    return tuple(spatial)


def _prepared(input: Any, rank: int, ksize, strides, padding, data_format,
              dilations=None, explicit_ok: bool = False):
    """(x, axes, window, strides, dilations, pads) of a ``rank``-d pooling."""
    x = operand(input)
    if len(x.shape) != rank + 2:
        raise ValueError(f"a {rank}-d pool needs a {rank + 2}-d input (batch, spatial..., "
                         f"channels), got shape {tuple(x.shape)}.")
    first = _channels_first(data_format, rank)
    axes = tuple(range(2, rank + 2)) if first else tuple(range(1, rank + 1))
    window = _sequence(ksize, rank, first, "ksize")
    steps = _sequence(strides, rank, first, "strides")
    rates = (1,) * rank if dilations is None else _sequence(dilations, rank, first,
                                                             "dilations")
    for values, name in ((window, "ksize"), (steps, "strides"), (rates, "dilations")):
        _positive(values, name)
    shape = tuple(x.shape)
    pads = _pads(padding, shape, axes, window, steps, rates, first, explicit_ok)
    for a, k, d, (lo, hi) in zip(axes, window, rates, pads):
        if shape[a] + lo + hi < (k - 1) * d + 1:
            raise InvalidArgumentError(
                f"the window ({k} taps, dilation {d}) is larger than the padded input "
                f"axis {a} ({shape[a]} + {lo + hi}); use padding='SAME' or a smaller ksize.")
    return x, axes, window, steps, rates, pads


def _pooled(kind: str, rank: int, input, ksize, strides, padding, data_format,
            explicit_ok: bool):
    x, axes, window, steps, rates, pads = _prepared(input, rank, ksize, strides, padding,
                                                    data_format, explicit_ok=explicit_ok)
    check_pool_dtype(kind, x)
    return _pooling.pool(x, kind, axes, window, steps, rates, pads)


def check_pool_dtype(kind: str, x: Any) -> None:
    """TF registers average pooling for floats only (no kernel, NotFoundError) and max
    pooling for real numbers."""
    dtype = np.dtype(x.dtype)
    if kind == "avg" and dtype.kind != "f":
        raise NotFoundError(f"avg_pool has no kernel for {dtype.name} inputs (as TF's): "
                            "cast them first, gt.cast(x, gt.float32).")
    if dtype.kind not in "fiub":
        raise NotFoundError(f"max_pool has no kernel for {dtype.name} inputs (as TF's); "
                            "pool the real and imaginary parts apart.")


def _input_rank(input: Any, name: str) -> int:
    rank = len(operand(input).shape) - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"{name} needs a 3-, 4- or 5-d input, got rank {rank + 2}.")
    return rank


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.max_pool1d``: the maximum over each window of a (batch, width,
    channels) input (``'NCW'``: channels first); padding is never the maximum."""
    return _pooled("max", 1, input, ksize, strides, padding, data_format, True)


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.max_pool2d`` over (batch, height, width, channels) (``'NCHW'``)."""
    return _pooled("max", 2, input, ksize, strides, padding, data_format, True)


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NDHWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.max_pool3d`` over (batch, depth, height, width, channels)."""
    return _pooled("max", 3, input, ksize, strides, padding, data_format, False)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.avg_pool1d``: each window's mean over its valid (unpadded) elements."""
    return _pooled("avg", 1, input, ksize, strides, padding, data_format, False)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NHWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.avg_pool2d``: each window's mean over its valid elements."""
    return _pooled("avg", 2, input, ksize, strides, padding, data_format, False)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: Any,
               data_format: str = "NDHWC", name: str | None = None) -> Any:
    """TF's ``tf.nn.avg_pool3d``: each window's mean over its valid elements."""
    return _pooled("avg", 3, input, ksize, strides, padding, data_format, False)


def max_pool(input: Any, ksize: Any, strides: Any, padding: Any,
             data_format: str | None = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.max_pool``: 1-, 2- or 3-d by the input's rank."""
    rank = _input_rank(input, "max_pool")
    return _pooled("max", rank, input, ksize, strides, padding, data_format, rank < 3)


def avg_pool(input: Any, ksize: Any, strides: Any, padding: Any,
             data_format: str | None = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.avg_pool``: 1-, 2- or 3-d by the input's rank."""
    rank = _input_rank(input, "avg_pool")
    return _pooled("avg", rank, input, ksize, strides, padding, data_format, False)


def pool(input: Any, window_shape: Any, pooling_type: str, strides: Any = None,
         padding: str = "VALID", data_format: str | None = None, dilations: Any = None,
         name: str | None = None) -> Any:
    """TF's ``tf.nn.pool``: ``'MAX'`` or ``'AVG'`` pooling, N-d by ``window_shape``, with
    ``dilations`` (then ``strides`` must be 1). As TF builds a dilated ``SAME`` pool
    (``with_space_to_batch``), its padding is zeros that count in max and mean alike."""
    kind = {"MAX": "max", "AVG": "avg"}.get(str(pooling_type).upper())
    if kind is None:
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}.")
    window = [int(window_shape)] if isinstance(window_shape, (int, np.integer)) \
        else [int(k) for k in window_shape]
    rank = len(window)
    if rank not in (1, 2, 3):
        raise ValueError(f"window_shape must have 1, 2 or 3 entries, got {window_shape!r}.")
    strides = [1] * rank if strides is None else strides
    rates = (1,) * rank if dilations is None else _sequence(dilations, rank, False,
                                                             "dilations")
    steps = _sequence(strides, rank, False, "strides")
    if any(r > 1 for r in rates) and any(s > 1 for s in steps):
        raise ValueError(f"strides > 1 not supported in conjunction with dilations > 1, "
                         f"got strides={list(steps)} and dilations={list(rates)}.")
    dilated_same = any(r > 1 for r in rates) and str(padding).upper() == "SAME"
    x = operand(input)
    if dilated_same:  # TF: space_to_batch's zeros, then a VALID pool that sees them
        x, padding = _zero_padded_same(x, rank, window, rates, data_format), "VALID"
    x, axes, window, steps, rates, pads = _prepared(x, rank, window, steps, padding,
                                                    data_format, dilations=rates)
    check_pool_dtype(kind, x)
    return _pooling.pool(x, kind, axes, window, steps, rates, pads)


def _zero_padded_same(x, rank, window, rates, data_format):
    from .arrange import pad

    first = _channels_first(data_format, rank)
    axes = range(2, rank + 2) if first else range(1, rank + 1)
    widths = [[0, 0] for _ in x.shape]
    for a, k, d in zip(axes, window, rates):
        widths[a] = list(_same_pads(x.shape[a], k, 1, d))
    return pad(x, widths)


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: Any,
                         data_format: str = "NHWC", output_dtype: Any = np.int64,
                         include_batch_in_index: bool = False,
                         name: str | None = None) -> MaxPoolWithArgmax:
    """TF's ``tf.nn.max_pool_with_argmax``: ``(output, argmax)``, the max pool of an
    NHWC input and, for each output, the flattened index of its first maximum:
    ``(y * width + x) * channels + c``, with ``b * height * width * channels`` added when
    ``include_batch_in_index``. The argmax has no gradient (integers)."""
    if data_format != "NHWC":
        raise ValueError(f"max_pool_with_argmax supports data_format 'NHWC' only (as TF), "
                         f"got {data_format!r}.")
    dtype = np.dtype(getattr(output_dtype, "as_numpy_dtype", output_dtype))
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"output_dtype must be int32 or int64, got {dtype.name}.")
    x, axes, window, steps, rates, pads = _prepared(input, 2, ksize, strides, padding,
                                                    data_format)
    check_pool_dtype("max", x)
    output = _pooling.pool(x, "max", axes, window, steps, rates, pads)
    taps = _pooling.argmax_taps(x, output, axes, window, steps, rates, pads)
    return MaxPoolWithArgmax(output, _flat_index(taps, tuple(x.shape), window, steps, pads,
                                                 include_batch_in_index, dtype))


def _flat_index(taps, shape, window, strides, pads, include_batch, dtype):
    """NHWC flattened input index of each output's chosen tap."""
    from .elementwise import cast

    n, height, width, channels = shape
    taps = cast(taps, np.int64)
    out_h, out_w = taps.shape[1], taps.shape[2]
    row0 = (np.arange(out_h) * strides[0] - pads[0][0]).reshape(1, -1, 1, 1)
    col0 = (np.arange(out_w) * strides[1] - pads[1][0]).reshape(1, 1, -1, 1)
    rows = taps // window[1] + row0
    cols = taps % window[1] + col0
    index = (rows * width + cols) * channels + np.arange(channels).reshape(1, 1, 1, -1)
    if include_batch:
        index = index + (np.arange(n) * (height * width * channels)).reshape(-1, 1, 1, 1)
    return cast(index, dtype)


MEMBERS = {
    "max_pool": max_pool, "max_pool1d": max_pool1d, "max_pool2d": max_pool2d,
    "max_pool3d": max_pool3d, "avg_pool": avg_pool, "avg_pool1d": avg_pool1d,
    "avg_pool2d": avg_pool2d, "avg_pool3d": avg_pool3d, "pool": pool,
    "max_pool_with_argmax": max_pool_with_argmax,
}
