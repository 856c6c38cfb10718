"""TF's convolution functions (``tf.nn.conv2d`` and its family) over ``conv_general``.

Each takes TF's arguments, checks them as TF does (``arguments.py``), moves channels
last when ``data_format`` puts them first, and binds one ``conv_general``: grouped
convolution when the input has a multiple of the filter's input channels, depthwise as
one group per channel, a transposed convolution as the input gradient of the forward
one (``output_shape`` must be what that forward convolution takes, as in TF).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.tensor import Tensor, concrete_value
from .. import shape as _shape
from ..registry import operand
from . import arguments as _args
from .general import conv_general, transpose_lhs, transpose_rhs
from .kernels import out_spatial

__all__ = ["conv1d", "conv1d_transpose", "conv2d", "conv2d_backprop_filter",
           "conv2d_backprop_input", "conv2d_transpose", "conv3d", "conv3d_transpose",
           "conv_transpose", "convolution", "depthwise_conv2d",
           "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input",
           "separable_conv2d"]


def _channels_last(x: Any, first: bool) -> Any:
    if not first:
        return x
    rank = len(x.shape)
    return _shape.transpose(x, (0, *range(2, rank), 1))


def _channels_back(y: Any, first: bool) -> Any:
    if not first:
        return y
    rank = len(y.shape)
    return _shape.transpose(y, (0, rank - 1, *range(1, rank - 1)))


class _Spec:
    """One call's checked arguments: layout, strides, dilations."""

    def __init__(self, op: str, rank: int, strides: Any, data_format: Any, dilations: Any):
        self.op, self.rank = op, rank
        self.first = _args.channels_first(data_format, rank, op)
        self.strides = _args.per_spatial_axis(strides, rank, self.first, "strides", op)
        self.dilations = _args.per_spatial_axis(dilations, rank, self.first, "dilations", op)
        _args.check_strides_with_dilations(self.strides, self.dilations, op)

    def pads(self, padding: Any, spatial: tuple, window: tuple) -> tuple:
        return _args.explicit_padding(padding, spatial, window, self.strides, self.dilations,
                                      self.first, self.op)


def _groups(channels: int, filters: Any, op: str) -> int:
    depth, out = filters.shape[-2], filters.shape[-1]
    if depth == 0 or channels % depth:
        raise InvalidArgumentError(f"{op}: input depth must be evenly divisible by filter "
                                   f"depth: {channels} vs {depth}.")
    groups = channels // depth
    if out % groups:
        raise InvalidArgumentError(f"{op}: the filter's {out} output channels must be "
                                   f"evenly divisible by the number of groups {groups}.")
    return groups


def _forward(op: str, rank: int, input: Any, filters: Any, strides: Any, padding: Any,
             data_format: Any, dilations: Any) -> Any:
    x, filters = operand(input), operand(filters)
    _args.check_operands(x, filters, rank, op)
    spec = _Spec(op, rank, strides, data_format, dilations)
    x = _channels_last(x, spec.first)
    groups = _groups(x.shape[-1], filters, op)
    pads = spec.pads(padding, tuple(x.shape[1:-1]), tuple(filters.shape[:-2]))
    y = conv_general(x, filters, strides=spec.strides, padding=pads,
                     rhs_dilation=spec.dilations, feature_group_count=groups)
    return _channels_back(y, spec.first)


def convolution(input: Any, filters: Any, strides: Any = None, padding: Any = "VALID",
                data_format: str | None = None, dilations: Any = None,
                name: str | None = None) -> Any:
    """TF's ``tf.nn.convolution``: an N-d convolution, N from the input's rank."""
    del name
    rank = len(operand(input).shape) - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"convolution: input must be 3-, 4- or 5-dimensional (1 to 3 "
                         f"spatial axes), got shape {tuple(operand(input).shape)}.")
    return _forward("convolution", rank, input, filters, strides, padding, data_format,
                    dilations)


def conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: str = "NWC",
           dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.conv1d``: input ``(batch, width, channels)`` (``NWC``), filters
    ``(width, in_channels, out_channels)``."""
    del name
    return _forward("conv1d", 1, input, filters, stride, padding, data_format, dilations)


def conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NHWC",
           dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.conv2d``: filters ``(height, width, in_channels, out_channels)``;
    an input with a multiple of ``in_channels`` is a grouped convolution."""
    del name
    return _forward("conv2d", 2, input, filters, strides, padding, data_format, dilations)


def conv3d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NDHWC",
           dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.conv3d``: filters ``(depth, height, width, in_channels, out)``."""
    del name
    return _forward("conv3d", 3, input, filters, strides, padding, data_format, dilations)


def _shape_list(value: Any, op: str, name: str) -> list[int]:
    if isinstance(value, Tensor):
        value = concrete_value(value)
    try:
        return [int(v) for v in np.asarray(value).reshape(-1)]
    except (TypeError, ValueError):
        raise ValueError(f"{op}: {name} must be a 1-D list of ints, got {value!r}.") from None


def _transposed(op: str, rank: int, input: Any, filters: Any, output_shape: Any,
                strides: Any, padding: Any, data_format: Any, dilations: Any,
                grouped: bool = False) -> Any:
    """The input gradient of the convolution from ``output_shape`` to ``input``'s shape
    (``grouped``: of a grouped convolution, as ``conv2d`` takes)."""
    g, filters = operand(input), operand(filters)
    _args.check_operands(g, filters, rank, op)
    spec = _Spec(op, rank, strides, data_format, dilations)
    g = _channels_last(g, spec.first)
    sizes = _shape_list(output_shape, op, "output_shape")
    if len(sizes) != rank + 2:
        raise ValueError(f"{op}: output_shape must have {rank + 2} elements (batch, "
                         f"{rank} spatial, channels), got {sizes}.")
    target = (sizes[0], *sizes[2:], sizes[1]) if spec.first else tuple(sizes)
    if g.shape[-1] != filters.shape[-1]:
        raise InvalidArgumentError(f"{op}: input and filter must have the same depth: "
                                   f"{g.shape[-1]} vs {filters.shape[-1]} (a transposed "
                                   "convolution's filter is (..., out_channels, in_channels)).")
    groups = _groups(target[-1], filters, op) if grouped else 1
    if not grouped and target[-1] != filters.shape[-2]:
        raise InvalidArgumentError(f"{op}: output_shape's depth {target[-1]} must equal the "
                                   f"filter's out_channels {filters.shape[-2]}.")
    if target[0] != g.shape[0]:
        raise InvalidArgumentError(f"{op}: output_shape's batch {target[0]} must equal the "
                                   f"input's batch {g.shape[0]}.")
    window = tuple(filters.shape[:-2])
    pads = spec.pads(padding, target[1:-1], window)
    _check_backprop_sizes(op, target[1:-1], window, spec, pads, tuple(g.shape[1:-1]))
    y = transpose_lhs(g, target, filters, strides=spec.strides, padding=pads,
                      lhs_dilation=(1,) * rank, rhs_dilation=spec.dilations,
                      feature_group_count=groups, batch_group_count=1)
    return _channels_back(y, spec.first)


def _check_backprop_sizes(op, spatial, window, spec, pads, given) -> None:
    expected = out_spatial(spatial, window, spec.strides, pads, (1,) * spec.rank,
                           spec.dilations)
    if expected != given:
        raise InvalidArgumentError(
            f"{op}: Size of out_backprop doesn't match computed: actual = {list(given)}, "
            f"computed = {list(expected)} (the convolution of output_shape's spatial size "
            f"{list(spatial)} with this filter, strides and padding); fix output_shape.")


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                   padding: Any = "SAME", data_format: str | None = None,
                   dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.conv_transpose``: ``conv{1,2,3}d_transpose`` by the input's rank."""
    del name
    rank = len(operand(input).shape) - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"conv_transpose: input must be 3-, 4- or 5-dimensional, got "
                         f"shape {tuple(operand(input).shape)}.")
    return _transposed("conv_transpose", rank, input, filters, output_shape, strides,
                       padding, data_format, dilations)


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                     padding: Any = "SAME", data_format: str = "NWC", dilations: Any = None,
                     name: str | None = None) -> Any:
    """TF's ``tf.nn.conv1d_transpose``: filters ``(width, out_channels, in_channels)``."""
    del name
    return _transposed("conv1d_transpose", 1, input, filters, output_shape, strides,
                       padding, data_format, dilations)


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                     padding: Any = "SAME", data_format: str = "NHWC", dilations: Any = None,
                     name: str | None = None) -> Any:
    """TF's ``tf.nn.conv2d_transpose``: the gradient of ``conv2d`` with respect to its
    input; filters ``(height, width, out_channels, in_channels)``."""
    del name
    return _transposed("conv2d_transpose", 2, input, filters, output_shape, strides,
                       padding, data_format, dilations)


def conv3d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                     padding: Any = "SAME", data_format: str = "NDHWC", dilations: Any = None,
                     name: str | None = None) -> Any:
    """TF's ``tf.nn.conv3d_transpose``."""
    del name
    return _transposed("conv3d_transpose", 3, input, filters, output_shape, strides,
                       padding, data_format, dilations)


def conv2d_backprop_input(input_sizes: Any, filters: Any, out_backprop: Any, strides: Any,
                          padding: Any, data_format: str = "NHWC", dilations: Any = None,
                          name: str | None = None) -> Any:
    """TF's ``tf.nn.conv2d_backprop_input``: ``conv2d_transpose`` of ``out_backprop``."""
    del name
    return _transposed("conv2d_backprop_input", 2, out_backprop, filters, input_sizes,
                       strides, padding, data_format, dilations, grouped=True)


def _depthwise_as_grouped(filter: Any, channels: int, op: str) -> Any:
    """``(h, w, channels, multiplier)`` as a grouped kernel ``(h, w, 1, channels * m)``."""
    if filter.shape[-2] != channels:
        raise InvalidArgumentError(f"{op}: input and filter must have the same depth: "
                                   f"{channels} vs {filter.shape[-2]}.")
    kh, kw, c, m = filter.shape
    return _shape.reshape(filter, (kh, kw, 1, c * m))


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any,
                     data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Any:
    """TF's ``tf.nn.depthwise_conv2d``: filter ``(h, w, in_channels, multiplier)``;
    output channel ``c * multiplier + m`` is channel ``c`` convolved with ``[..., c, m]``."""
    del name
    op = "depthwise_conv2d"
    x, filter = operand(input), operand(filter)
    _args.check_operands(x, filter, 2, op)
    spec = _Spec(op, 2, strides, data_format, dilations)
    x = _channels_last(x, spec.first)
    kernel = _depthwise_as_grouped(filter, x.shape[-1], op)
    pads = spec.pads(padding, tuple(x.shape[1:-1]), tuple(filter.shape[:2]))
    y = conv_general(x, kernel, strides=spec.strides, padding=pads,
                     rhs_dilation=spec.dilations, feature_group_count=x.shape[-1])
    return _channels_back(y, spec.first)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,
                     padding: Any, data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Any:
    """TF's ``tf.nn.separable_conv2d``: ``depthwise_conv2d`` then a 1x1 ``conv2d``
    with ``pointwise_filter`` ``(1, 1, in_channels * multiplier, out_channels)``."""
    del name
    pointwise = operand(pointwise_filter)
    if len(pointwise.shape) != 4 or tuple(pointwise.shape[:2]) != (1, 1):
        raise ValueError(f"separable_conv2d: pointwise_filter must be (1, 1, in_channels * "
                         f"channel_multiplier, out_channels), got {tuple(pointwise.shape)}.")
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding,
                                 data_format=data_format, dilations=dilations)
    return conv2d(depthwise, pointwise, 1, "VALID", data_format=data_format or "NHWC")


def depthwise_conv2d_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any,
                                    strides: Any, padding: Any, data_format: str = "NHWC",
                                    dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.depthwise_conv2d_backprop_input``: the input gradient of
    ``depthwise_conv2d`` for an input of ``input_sizes``."""
    del name
    op = "depthwise_conv2d_backprop_input"
    g, filter = operand(out_backprop), operand(filter)
    spec = _Spec(op, 2, strides, data_format, dilations)
    g = _channels_last(g, spec.first)
    sizes = _shape_list(input_sizes, op, "input_sizes")
    target = (sizes[0], *sizes[2:], sizes[1]) if spec.first else tuple(sizes)
    kernel = _depthwise_as_grouped(filter, target[-1], op)
    pads = spec.pads(padding, target[1:-1], tuple(filter.shape[:2]))
    _check_backprop_sizes(op, target[1:-1], tuple(filter.shape[:2]), spec, pads,
                          tuple(g.shape[1:-1]))
    y = transpose_lhs(g, target, kernel, strides=spec.strides, padding=pads,
                      lhs_dilation=(1, 1), rhs_dilation=spec.dilations,
                      feature_group_count=target[-1], batch_group_count=1)
    return _channels_back(y, spec.first)


def _filter_gradient(op: str, input: Any, filter_sizes: Any, out_backprop: Any,
                     strides: Any, padding: Any, data_format: Any, dilations: Any,
                     depthwise: bool) -> Any:
    x, g = operand(input), operand(out_backprop)
    spec = _Spec(op, 2, strides, data_format, dilations)
    x, g = _channels_last(x, spec.first), _channels_last(g, spec.first)
    sizes = _shape_list(filter_sizes, op, "filter_sizes")
    if len(sizes) != 4:
        raise ValueError(f"{op}: filter_sizes must have 4 elements, got {sizes}.")
    window = tuple(sizes[:2])
    groups = x.shape[-1] if depthwise else x.shape[-1] // sizes[2]
    pads = spec.pads(padding, tuple(x.shape[1:-1]), window)
    _check_backprop_sizes(op, tuple(x.shape[1:-1]), window, spec, pads, tuple(g.shape[1:-1]))
    kernel = transpose_rhs(g, x, window, strides=spec.strides, padding=pads,
                           lhs_dilation=(1, 1), rhs_dilation=spec.dilations,
                           feature_group_count=groups, batch_group_count=1)
    return _shape.reshape(kernel, tuple(sizes)) if depthwise else kernel


def conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,
                           padding: Any, data_format: str = "NHWC", dilations: Any = None,
                           name: str | None = None) -> Any:
    """TF's ``tf.nn.conv2d_backprop_filter``: the filter gradient of ``conv2d``."""
    del name
    return _filter_gradient("conv2d_backprop_filter", input, filter_sizes, out_backprop,
                            strides, padding, data_format, dilations, depthwise=False)


def depthwise_conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,
                                     strides: Any, padding: Any, data_format: str = "NHWC",
                                     dilations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.nn.depthwise_conv2d_backprop_filter``."""
    del name
    return _filter_gradient("depthwise_conv2d_backprop_filter", input, filter_sizes,
                            out_backprop, strides, padding, data_format, dilations,
                            depthwise=True)


MEMBERS = {name: globals()[name] for name in __all__}
