"""Keras 3's activation layers: ``LeakyReLU``, ``ReLU``, ``PReLU``, ``ELU`` and
``Softmax`` (``Activation`` is in ``core.py``)."""

from __future__ import annotations

import warnings
from typing import Any

from ... import ops
from ...core.tensor import Tensor, convert_to_tensor
from .. import activations, initializers, regularizers
from .base import Layer
from .configs import config_entries

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"]


def _non_negative(layer: str, what: str, value: Any) -> float:
    if value is None or value < 0:
        raise ValueError(f"The {what} value of a {layer} layer cannot be None or negative; "
                         f"pass a number >= 0. Received: {what}={value!r}")
    return float(value)


class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below (Keras 3's default slope is
    0.3; Keras 2's ``alpha=`` still works, with Keras's deprecation warning)."""

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.",
                          stacklevel=2)
        super().__init__(**kwargs)
        self.negative_slope = _non_negative("Leaky ReLU", "negative_slope", negative_slope)
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "negative_slope")}

    def call(self, inputs: Any) -> Tensor:
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class ReLU(Layer):
    """``max_value`` above it, ``x`` from ``threshold`` up, and
    ``negative_slope * (x - threshold)`` below ``threshold``."""

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0,
                 threshold: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        if max_value is not None:
            max_value = _non_negative("ReLU", "max_value", max_value)
        self.max_value = max_value
        self.negative_slope = _non_negative("ReLU", "negative_slope", negative_slope)
        self.threshold = _non_negative("ReLU", "threshold", threshold)
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "max_value", "negative_slope", "threshold")}

    def call(self, inputs: Any) -> Tensor:
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class PReLU(Layer):
    """A leaky ReLU whose slope ``alpha`` is learned per entry (``input_shape[1:]``,
    size 1 along ``shared_axes``): ``relu(x) - alpha * relu(-x)``."""

    def __init__(self, alpha_initializer: Any = "Zeros", alpha_regularizer: Any = None,
                 alpha_constraint: Any = None, shared_axes: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = alpha_constraint
        if shared_axes is None or isinstance(shared_axes, (list, tuple)):
            self.shared_axes = list(shared_axes or [])
        else:
            self.shared_axes = [shared_axes]

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(
            self, "alpha_initializer", "alpha_regularizer", "alpha_constraint",
            "shared_axes")}

    def build(self, input_shape: Any) -> None:
        shape = list(input_shape[1:])
        for axis in self.shared_axes:
            shape[axis - 1] = 1
        self.alpha = self.add_weight(shape=shape, name="alpha",
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs: Any) -> Tensor:
        inputs = convert_to_tensor(inputs)
        return ops.relu(inputs) - self.alpha * ops.relu(-inputs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class ELU(Layer):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha = float(alpha)
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "alpha")}

    def call(self, inputs: Any) -> Tensor:
        return activations.elu(inputs, alpha=self.alpha)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


def _large_negative_number(dtype: Any) -> float:
    """Keras's stand-in for -inf at masked positions."""
    return -3e4 if str(dtype) == "float16" else -1e9


class Softmax(Layer):
    """``softmax(inputs)`` over ``axis`` (an int, or several axes at once). With
    ``mask`` (true or > 0.5: kept), masked positions get ``-1e9`` before the softmax and
    0 after, as Keras 3."""

    def __init__(self, axis: int | list[int] = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "axis")}

    def call(self, inputs: Any, mask: Any = None) -> Tensor:
        inputs = convert_to_tensor(inputs)
        if mask is not None:
            mask = convert_to_tensor(mask)
            if mask.dtype.kind != "b":
                mask = mask > 0.5
            negative = convert_to_tensor(_large_negative_number(inputs.dtype),
                                         dtype=inputs.dtype)
            inputs = ops.where(mask, inputs, negative)
        axis = self.axis
        if isinstance(axis, (list, tuple)) and len(axis) > 1:
            shifted = inputs - ops.reduce_logsumexp(inputs, axis=list(axis), keepdims=True)
            outputs = ops.exp(shifted)
        else:
            axis = axis[0] if isinstance(axis, (list, tuple)) else axis
            outputs = activations.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = outputs * ops.cast(mask, outputs.dtype)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape
