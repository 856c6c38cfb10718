"""TF's convolution arguments checked and made explicit, as TF checks them: data
formats, strides and dilations (an int, one per spatial axis, or one per axis with 1 for
batch and channels), ``'SAME'``/``'VALID'``/explicit padding (TF's SAME arithmetic)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.tensor import Tensor, concrete_value
from .kernels import dilated

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def channels_first(data_format: str | None, rank: int, op: str) -> bool:
    """Whether ``data_format`` puts channels before the spatial axes (ValueError if it
    is not one of TF's names for ``rank`` spatial axes)."""
    if data_format is None:
        return False
    last, first = _FORMATS[rank]
    # conv1d also takes the 2-d names, as TF does (it runs as a 2-d convolution).
    aliases = {last: False, first: True, "NHWC": False, "NCHW": True} if rank == 1 else {
        last: False, first: True}
    if not isinstance(data_format, str) or data_format not in aliases:
        raise ValueError(f"{op}: data_format must be {last!r} or {first!r} for {rank}-d "
                         f"inputs, got {data_format!r}.")
    return aliases[data_format]


def _as_ints(value: Any) -> list:
    if isinstance(value, Tensor):
        value = concrete_value(value)
    if isinstance(value, (numbers.Integral, np.integer)):
        return [int(value)]
    return [int(v) for v in np.asarray(value).reshape(-1)]


def per_spatial_axis(value: Any, rank: int, first: bool, name: str, op: str) -> tuple:
    """``strides``/``dilations`` per spatial axis: one value for all, ``rank`` values, or
    ``rank + 2`` values whose batch and channel entries are 1."""
    if value is None:
        return (1,) * rank
    values = _as_ints(value)
    if len(values) == 1:
        values = values * rank
    elif len(values) == rank + 2:
        outer = (values[0], values[1]) if first else (values[0], values[-1])
        if outer != (1, 1):
            raise InvalidArgumentError(
                f"{op}: {name} in the batch and depth dimensions must be 1, got {values}; "
                f"give one {name[:-1]} per spatial axis.")
        values = values[2:] if first else values[1:-1]
    elif len(values) != rank:
        raise ValueError(f"{op}: {name} must be an int or a list of 1, {rank} or {rank + 2} "
                         f"ints, got {values}.")
    if any(v < 1 for v in values):
        raise ValueError(f"{op}: {name} must be positive integers, got {values}.")
    return tuple(values)


def check_strides_with_dilations(strides: tuple, dilations: tuple, op: str) -> None:
    if any(s > 1 for s in strides) and any(d > 1 for d in dilations):
        raise ValueError(f"{op}: strides > 1 not supported in conjunction with dilation_rate "
                         f"> 1 (got strides={list(strides)}, dilations={list(dilations)}); "
                         "use one or the other, as TF does.")


def explicit_padding(padding: Any, spatial: tuple, window: tuple, strides: tuple,
                     dilations: tuple, first: bool, op: str) -> tuple:
    """``padding`` as one (before, after) pair per spatial axis. SAME is TF's: the
    output is ``ceil(in / stride)``, ``pad_total = max((out - 1) * stride +
    dilated_window - in, 0)``, the smaller half before."""
    rank = len(spatial)
    if isinstance(padding, str):
        if padding == "VALID":
            pads = ((0, 0),) * rank
        elif padding == "SAME":
            pads = tuple(_same(n, k, s, d) for n, k, s, d in
                         zip(spatial, window, strides, dilations))
        else:  # TF's kernels reject the attribute value: InvalidArgumentError
            raise InvalidArgumentError(f"{op}: padding must be 'SAME', 'VALID' or a list of "
                             f"{rank + 2} [before, after] pairs, got {padding!r}.")
    else:
        pads = _explicit_pairs(padding, rank, first, op)
    _check_output_size(spatial, window, strides, dilations, pads, op)
    return pads


def _same(size: int, k: int, s: int, d: int) -> tuple[int, int]:
    out = -(-size // s)
    total = max((out - 1) * s + dilated(k, d) - size, 0)
    return total // 2, total - total // 2


def _explicit_pairs(padding: Any, rank: int, first: bool, op: str) -> tuple:
    try:
        pairs = [tuple(int(v) for v in pair) for pair in padding]
    except TypeError:
        pairs = []
    if len(pairs) != rank + 2 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{op}: explicit padding must be a list of {rank + 2} [before, "
                         f"after] pairs (one per dimension of the input), got {padding!r}.")
    outer = (pairs[0], pairs[1]) if first else (pairs[0], pairs[-1])
    if outer != ((0, 0), (0, 0)):
        raise InvalidArgumentError(f"{op}: explicit padding of the batch and channel "
                                   f"dimensions must be [0, 0], got {pairs}.")
    if any(v < 0 for p in pairs for v in p):
        raise InvalidArgumentError(f"{op}: explicit padding must be nonnegative, got "
                                   f"{pairs}.")
    return tuple(pairs[2:] if first else pairs[1:-1])


def _check_output_size(spatial, window, strides, dilations, pads, op) -> None:
    for n, k, s, d, (lo, hi) in zip(spatial, window, strides, dilations, pads):
        if n + lo + hi - dilated(k, d) + s < 0:
            raise InvalidArgumentError(
                f"{op}: Computed output size would be negative: input size {n} padded by "
                f"{lo + hi} is smaller than the dilated filter size {dilated(k, d)} "
                f"(stride {s}); use a smaller filter or padding='SAME'.")


def check_operands(x: Any, filters: Any, rank: int, op: str) -> None:
    """Ranks and dtypes as TF's kernels check them (an ``InvalidArgumentError``, which
    is a ``ValueError`` too)."""
    if len(x.shape) != rank + 2:
        raise InvalidArgumentError(f"{op}: input must be {rank + 2}-dimensional (batch, "
                         f"{rank} spatial, channels), got shape {tuple(x.shape)}.")
    if len(filters.shape) != rank + 2:
        raise InvalidArgumentError(f"{op}: filter must be {rank + 2}-dimensional ({rank} spatial, "
                         f"in_channels, out_channels), got shape {tuple(filters.shape)}.")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"{op}: input must be a floating-point tensor, got {x.dtype}; "
                        "cast it first (gt.cast(x, 'float32')).")
    if x.dtype != filters.dtype:
        raise InvalidArgumentError(f"{op}: input is {x.dtype} but filters is "
                                   f"{filters.dtype}; cast one to the other's dtype.")
