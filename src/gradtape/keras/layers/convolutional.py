"""Keras 3's convolution layers: ``Conv1D``/``2D``/``3D``, their transposes,
``DepthwiseConv2D`` and ``SeparableConv1D``/``2D``, on ``gt.nn``'s convolutions (what
Keras 3 runs on its TensorFlow backend: TF's SAME arithmetic, the odd pixel after)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...core.tensor import Tensor, convert_to_tensor
from ...ops.conv import tf_ops as _conv
from .. import activations, initializers, regularizers
from ..ops.conv_ops import conv_transpose_output_length
from .base import Layer
from .configs import config_entries
from .shape import standardize_data_format

__all__ = ["Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D",
           "Conv3DTranspose", "Convolution1D", "Convolution1DTranspose", "Convolution2D",
           "Convolution2DTranspose", "Convolution3D", "Convolution3DTranspose",
           "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
           "SeparableConvolution1D", "SeparableConvolution2D"]

_TF_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _standardize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """Keras's ``standardize_tuple``: an int or ``n`` positive ints."""
    values = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != n or not all(isinstance(v, (int, np.integer)) for v in values):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received {name}={value!r}")
    if any(v < 0 for v in values):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} non-negative "
                         f"integers. Received {name}={value!r}")
    return tuple(int(v) for v in values)


def _standardize_padding(padding: str, allow_causal: bool) -> str:
    padding = str(padding).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be a list/tuple or one of "
                         f"{allowed}. Received: {padding}")
    return padding


class _ConvOptions:
    """The arguments every convolution layer shares, checked as Keras 3's ``BaseConv``."""

    def __init__(self, layer: Layer, rank: int, kernel_size: Any, strides: Any, padding: Any,
                 data_format: Any, dilation_rate: Any, activation: Any, use_bias: bool,
                 bias_initializer: Any, bias_regularizer: Any, bias_constraint: Any):
        layer.rank = rank
        layer.kernel_size = _standardize_tuple(kernel_size, rank, "kernel_size")
        layer.strides = _standardize_tuple(strides, rank, "strides")
        layer.dilation_rate = _standardize_tuple(dilation_rate, rank, "dilation_rate")
        layer.padding = _standardize_padding(padding, allow_causal=rank == 1)
        layer.data_format = standardize_data_format(data_format)
        layer.activation = activations.get(activation)
        layer.use_bias = use_bias
        layer.bias_initializer = initializers.get(bias_initializer)
        layer.bias_regularizer = regularizers.get(bias_regularizer)
        layer.bias_constraint = bias_constraint
        if not all(layer.kernel_size):
            raise ValueError(f"The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={layer.kernel_size}.")
        if not all(layer.strides):
            raise ValueError(f"The argument `strides` cannot contains 0. Received "
                             f"strides={layer.strides}")
        if max(layer.strides) > 1 and max(layer.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with "
                             f"`dilation_rate > 1`. Received: strides={layer.strides} and "
                             f"dilation_rate={layer.dilation_rate}")


class _BaseConv(Layer):
    """What the layers share: the channel axis, the bias, the activation, the config."""

    rank: int

    def _channel(self, input_shape: Any) -> int:
        channel = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        if channel is None:
            raise ValueError(f"{type(self).__name__} needs the input's channel dimension "
                             f"to be known; got input shape {tuple(input_shape)}.")
        return int(channel)

    @property
    def _tf_format(self) -> str:
        return _TF_FORMATS[self.rank][self.data_format == "channels_first"]

    def _add_bias(self, units: int) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(units,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _inputs(self, inputs: Any, kernel: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        if inputs.dtype != kernel.dtype:  # integer images: Keras computes in float32
            inputs = ops.cast(inputs, kernel.dtype)
        return inputs

    def _finish(self, outputs: Any) -> Any:
        if self.bias is not None:
            units = self.bias.shape[0]
            shape = ((1,) * (self.rank + 1) + (units,) if self.data_format == "channels_last"
                     else (1, units) + (1,) * self.rank)
            outputs = outputs + ops.reshape(self.bias, shape)
        return self.activation(outputs)

    def _padding_for(self, inputs: Any) -> tuple[Any, str]:
        """Causal (``Conv1D``): left-pad by the dilated window minus one, then VALID."""
        if self.padding != "causal":
            return inputs, self.padding.upper()
        left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
        pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" else [
            [0, 0], [0, 0], [left, 0]]
        return ops.pad(inputs, pads), "VALID"

    # The weights' options: Keras 3's keys, per kind of kernel.
    _weight_keys: tuple[str, ...] = ("kernel_initializer", "kernel_regularizer",
                                     "kernel_constraint")

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "kernel_size", "strides", "padding", "data_format", "dilation_rate",
            "activation", "use_bias", "bias_initializer", "bias_regularizer",
            "bias_constraint", *self._weight_keys)}


class _Conv(_BaseConv):
    """Keras 3's ``BaseConv``: ``kernel`` ``kernel_size + (in_channels // groups,
    filters)``, ``bias`` ``(filters,)``."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = 1, groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None,
                 lora_rank: int | None = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank is not None:
            raise NotImplementedError(f"{type(self).__name__}(lora_rank=...) is not supported.")
        _ConvOptions(self, rank, kernel_size, strides, padding, data_format, dilation_rate,
                     activation, use_bias, bias_initializer, bias_regularizer, bias_constraint)
        self.filters, self.groups = filters, groups
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.kernel_constraint = kernel_constraint
        if filters is not None and filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly "
                             f"positive value. Received filters={filters}.")
        if groups <= 0:
            raise ValueError(f"The number of groups must be a positive integer. "
                             f"Received: groups={groups}.")
        if filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the "
                             f"number of groups. Received: groups={groups}, "
                             f"filters={filters}.")

    def build(self, input_shape: Any) -> None:
        channel = self._channel(input_shape)
        if channel % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by "
                             f"the number of groups. Received groups={self.groups}, but "
                             f"the input has {channel} channels (full input shape is "
                             f"{tuple(input_shape)}).")
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (channel // self.groups, self.filters),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self._add_bias(self.filters)
        self.built = True

    def call(self, inputs: Any) -> Any:
        inputs, padding = self._padding_for(self._inputs(inputs, self.kernel))
        outputs = _conv.convolution(inputs, self.kernel, strides=self.strides,
                                    padding=padding, data_format=self._tf_format,
                                    dilations=self.dilation_rate)
        return self._finish(outputs)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters, "groups": self.groups}


class Conv1D(_Conv):
    """Keras 3's ``Conv1D(filters, kernel_size, strides=1, padding="valid", ...)``;
    ``padding="causal"`` pads on the left only."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(1, filters, kernel_size, **kwargs)


class Conv2D(_Conv):
    """Keras 3's ``Conv2D(filters, kernel_size, strides=(1, 1), padding="valid", ...)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(2, filters, kernel_size, **kwargs)


class Conv3D(_Conv):
    """Keras 3's ``Conv3D(filters, kernel_size, strides=(1, 1, 1), ...)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(3, filters, kernel_size, **kwargs)


class _ConvTranspose(_Conv):
    """Keras 3's ``BaseConvTranspose``: ``kernel`` ``kernel_size + (filters,
    in_channels)``; the output length ``input * stride`` (SAME) or ``input * stride +
    max(kernel - stride, 0)`` (VALID), or by ``output_padding``."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", output_padding: Any = None,
                 data_format: str | None = None, dilation_rate: Any = 1, **kwargs: Any):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        self.output_padding = (None if output_padding is None else
                               _standardize_tuple(output_padding, rank, "output_padding"))
        if self.output_padding is not None and any(
                p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"Strides must be greater than output padding. Received "
                             f"strides={self.strides}, output_padding={self.output_padding}.")

    def build(self, input_shape: Any) -> None:
        channel = self._channel(input_shape)
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (self.filters, channel),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self._add_bias(self.filters)
        self.built = True

    def call(self, inputs: Any) -> Any:
        inputs = self._inputs(inputs, self.kernel)
        shape = tuple(inputs.shape)
        first = self.data_format == "channels_first"
        spatial = shape[2:] if first else shape[1:-1]
        paddings = self.output_padding or (None,) * self.rank
        lengths = [conv_transpose_output_length(n, k, self.padding, p, s, d)
                   for n, k, p, s, d in zip(spatial, self.kernel_size, paddings,
                                            self.strides, self.dilation_rate)]
        output_shape = ([shape[0], self.filters, *lengths] if first
                        else [shape[0], *lengths, self.filters])
        outputs = _conv.conv_transpose(inputs, self.kernel, output_shape, self.strides,
                                       padding=self.padding.upper(),
                                       data_format=self._tf_format,
                                       dilations=self.dilation_rate)
        return self._finish(outputs)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["groups"]
        return {**config, "output_padding": self.output_padding}


class Conv1DTranspose(_ConvTranspose):
    """Keras 3's ``Conv1DTranspose(filters, kernel_size, strides=1, padding="valid",
    output_padding=None, ...)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(1, filters, kernel_size, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """Keras 3's ``Conv2DTranspose``: kernel ``(kh, kw, filters, in_channels)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(2, filters, kernel_size, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """Keras 3's ``Conv3DTranspose``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(3, filters, kernel_size, **kwargs)


def _depthwise(layer: _BaseConv, inputs: Any, kernel: Any, padding: str) -> Any:
    """Each channel convolved with its own ``depth_multiplier`` filters: a grouped
    convolution with one group per channel (output channel ``c * multiplier + m``)."""
    *window, channels, multiplier = kernel.shape
    grouped = ops.reshape(kernel, (*window, 1, channels * multiplier))
    return _conv.convolution(inputs, grouped, strides=layer.strides, padding=padding,
                             data_format=layer._tf_format, dilations=layer.dilation_rate)


class _DepthwiseConv(_BaseConv):
    """Keras 3's ``BaseDepthwiseConv``: ``kernel`` ``kernel_size + (in_channels,
    depth_multiplier)``, ``bias`` ``(in_channels * depth_multiplier,)``."""

    _weight_keys = ("depthwise_initializer", "depthwise_regularizer", "depthwise_constraint")

    def __init__(self, rank: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 depth_multiplier: int = 1, data_format: str | None = None,
                 dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _ConvOptions(self, rank, kernel_size, strides, padding, data_format, dilation_rate,
                     activation, use_bias, bias_initializer, bias_regularizer, bias_constraint)
        if padding == "causal":
            raise ValueError(f"{type(self).__name__} takes padding 'valid' or 'same', not "
                             "'causal'.")
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = depthwise_constraint

    def build(self, input_shape: Any) -> None:
        channel = self._channel(input_shape)
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (channel, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self._add_bias(channel * self.depth_multiplier)
        self.built = True

    def call(self, inputs: Any) -> Any:
        inputs = self._inputs(inputs, self.kernel)
        return self._finish(_depthwise(self, inputs, self.kernel, self.padding.upper()))

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier}


class DepthwiseConv1D(_DepthwiseConv):
    """Keras 3's ``DepthwiseConv1D(kernel_size, strides=1, padding="valid",
    depth_multiplier=1, ...)``."""

    def __init__(self, kernel_size: Any, **kwargs: Any):
        super().__init__(1, kernel_size, **kwargs)


class DepthwiseConv2D(_DepthwiseConv):
    """Keras 3's ``DepthwiseConv2D(kernel_size, strides=(1, 1), padding="valid",
    depth_multiplier=1, ...)``."""

    def __init__(self, kernel_size: Any, **kwargs: Any):
        super().__init__(2, kernel_size, **kwargs)


class _SeparableConv(_BaseConv):
    """Keras 3's ``BaseSeparableConv``: ``depthwise_kernel`` ``kernel_size +
    (in_channels, depth_multiplier)``, ``pointwise_kernel`` ``(1,) * rank +
    (in_channels * depth_multiplier, filters)``, ``bias`` ``(filters,)``."""

    _weight_keys = ("depthwise_initializer", "pointwise_initializer",
                    "depthwise_regularizer", "pointwise_regularizer",
                    "depthwise_constraint", "pointwise_constraint")

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: str | None = None,
                 dilation_rate: Any = 1, depth_multiplier: int = 1, activation: Any = None,
                 use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, pointwise_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 depthwise_constraint: Any = None, pointwise_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _ConvOptions(self, rank, kernel_size, strides, padding, data_format, dilation_rate,
                     activation, use_bias, bias_initializer, bias_regularizer, bias_constraint)
        if padding == "causal":
            raise ValueError("SeparableConv1D does not take padding='causal' (Keras 3's "
                             "takes 'valid' or 'same').")
        self.filters, self.depth_multiplier = filters, depth_multiplier
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape: Any) -> None:
        channel = self._channel(input_shape)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channel, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self.rank + (channel * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias(self.filters)
        self.built = True

    def call(self, inputs: Any) -> Any:
        inputs = self._inputs(inputs, self.depthwise_kernel)
        depthwise = _depthwise(self, inputs, self.depthwise_kernel, self.padding.upper())
        outputs = _conv.convolution(depthwise, self.pointwise_kernel, padding="VALID",
                                    data_format=self._tf_format)
        return self._finish(outputs)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "depth_multiplier": self.depth_multiplier}


class SeparableConv1D(_SeparableConv):
    """Keras 3's ``SeparableConv1D(filters, kernel_size, strides=1, ...)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(1, filters, kernel_size, **kwargs)


class SeparableConv2D(_SeparableConv):
    """Keras 3's ``SeparableConv2D(filters, kernel_size, strides=(1, 1), ...)``."""

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any):
        super().__init__(2, filters, kernel_size, **kwargs)


# Keras 3's aliases (keras.layers.Convolution2D is Conv2D).
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose = Conv1DTranspose, Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
