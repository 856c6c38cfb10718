"""``keras.ops``' convolutions (Keras 3's ``conv``, ``conv_transpose``,
``depthwise_conv``, ``separable_conv``) on ``gt.nn``'s, as Keras 3's TensorFlow backend
runs them: ``padding`` ``"valid"``/``"same"`` (TF's SAME), ``data_format``
``"channels_last"``/``"channels_first"``."""

from __future__ import annotations

from typing import Any

from ... import ops as g
from ...core.tensor import Tensor, convert_to_tensor
from ...ops.conv import tf_ops as _conv
from .symbolic import keras_op

_TF_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _tf_format(data_format: str | None, rank: int, op: str) -> str:
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{op}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}.")
    return _TF_FORMATS[rank][data_format == "channels_first"]


def _tf_padding(padding: str, op: str) -> str:
    if str(padding).lower() not in ("valid", "same"):
        raise ValueError(f"{op}: padding must be 'valid' or 'same', got {padding!r}.")
    return str(padding).upper()


def _rank(inputs: Tensor, op: str) -> int:
    rank = len(inputs.shape) - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"{op}: inputs must be 3-, 4- or 5-dimensional (batch, 1 to 3 "
                         f"spatial axes, channels), got shape {tuple(inputs.shape)}.")
    return rank


def conv_transpose_output_length(size: int, kernel: int, padding: str, output_padding: Any,
                                 stride: int, dilation: int) -> int:
    """Keras 3's ``compute_conv_transpose_output_length``."""
    kernel = kernel + (kernel - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


def _per_axis(value: Any, rank: int) -> tuple:
    return (value,) * rank if isinstance(value, int) or value is None else tuple(value)


@keras_op
def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
         data_format: str | None = None, dilation_rate: Any = 1) -> Tensor:
    """Keras 3's ``keras.ops.conv``: kernel ``(*window, in_channels // groups, out)``."""
    inputs = convert_to_tensor(inputs)
    rank = _rank(inputs, "conv")
    return _conv.convolution(inputs, kernel, strides=strides,
                             padding=_tf_padding(padding, "conv"),
                             data_format=_tf_format(data_format, rank, "conv"),
                             dilations=dilation_rate)


@keras_op
def depthwise_conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   data_format: str | None = None, dilation_rate: Any = 1) -> Tensor:
    """Keras 3's ``keras.ops.depthwise_conv``: kernel ``(*window, in_channels,
    multiplier)``; output channel ``c * multiplier + m``."""
    inputs, kernel = convert_to_tensor(inputs), convert_to_tensor(kernel)
    rank = _rank(inputs, "depthwise_conv")
    *window, channels, multiplier = kernel.shape
    grouped = g.reshape(kernel, (*window, 1, channels * multiplier))
    return _conv.convolution(inputs, grouped, strides=strides,
                             padding=_tf_padding(padding, "depthwise_conv"),
                             data_format=_tf_format(data_format, rank, "depthwise_conv"),
                             dilations=dilation_rate)


@keras_op
def separable_conv(inputs: Any, depthwise_kernel: Any, pointwise_kernel: Any,
                   strides: Any = 1, padding: str = "valid", data_format: str | None = None,
                   dilation_rate: Any = 1) -> Tensor:
    """Keras 3's ``keras.ops.separable_conv``: ``depthwise_conv`` then a pointwise
    ``conv`` with ``pointwise_kernel`` ``(1, ..., in_channels * multiplier, out)``."""
    depthwise = depthwise_conv.__wrapped__(inputs, depthwise_kernel, strides, padding,
                                           data_format, dilation_rate)
    return conv.__wrapped__(depthwise, pointwise_kernel, 1, "valid", data_format, 1)


@keras_op
def conv_transpose(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   output_padding: Any = None, data_format: str | None = None,
                   dilation_rate: Any = 1) -> Tensor:
    """Keras 3's ``keras.ops.conv_transpose``: kernel ``(*window, out_channels,
    in_channels)``; the output length by Keras 3's rule (``in * stride`` for
    ``"same"``, ``in * stride + max(kernel - stride, 0)`` for ``"valid"``)."""
    inputs, kernel = convert_to_tensor(inputs), convert_to_tensor(kernel)
    rank = _rank(inputs, "conv_transpose")
    tf_format = _tf_format(data_format, rank, "conv_transpose")
    first = tf_format.startswith("NC")
    shape = tuple(inputs.shape)
    spatial = shape[2:] if first else shape[1:-1]
    lengths = [conv_transpose_output_length(n, k, str(padding).lower(), p, s, d)
               for n, k, p, s, d in zip(spatial, kernel.shape[:-2],
                                         _per_axis(output_padding, rank),
                                         _per_axis(strides, rank),
                                         _per_axis(dilation_rate, rank))]
    filters = kernel.shape[-2]
    output_shape = [shape[0], filters, *lengths] if first else [shape[0], *lengths, filters]
    return _conv.conv_transpose(inputs, kernel, output_shape, strides,
                                padding=_tf_padding(padding, "conv_transpose"),
                                data_format=tf_format, dilations=dilation_rate)


__all__ = ["conv", "conv_transpose", "depthwise_conv", "separable_conv"]
