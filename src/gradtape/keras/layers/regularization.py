"""Keras 3's noise layers: ``GaussianNoise``, ``GaussianDropout`` and
``SpatialDropout1D/2D/3D``. They act only when called with ``training=True`` (``fit``
passes it) and are the identity otherwise."""

from __future__ import annotations

import math
from typing import Any

from ...api import random
from ...api.nn import dropout
from ...core.tensor import convert_to_tensor
from .base import Layer
from .configs import config_entries
from .shape import standardize_data_format

__all__ = ["GaussianDropout", "GaussianNoise", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D"]


def _fraction(layer: str, what: str, value: Any) -> float:
    if not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{what}` of {layer}. "
                         f"Expected a float value between 0 and 1. Received: "
                         f"{what}={value!r}")
    return float(value)


class GaussianNoise(Layer):
    """Adds zero-centered normal noise of ``stddev`` while training."""

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        self.stddev = _fraction("GaussianNoise", "stddev", stddev)
        self.seed = seed
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "stddev", "seed")}

    def call(self, inputs: Any, training: bool = False) -> Any:
        if not training or self.stddev == 0:
            return inputs
        inputs = convert_to_tensor(inputs)
        noise = random.normal(tuple(inputs.shape), stddev=self.stddev, dtype=inputs.dtype,
                              seed=self.seed)
        return inputs + noise

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class GaussianDropout(Layer):
    """Multiplies the inputs by normal noise of mean 1 and stddev
    ``sqrt(rate / (1 - rate))`` while training."""

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True  # Keras 3: a mask passes through
        self.rate = _fraction("GaussianDropout", "rate", rate)
        self.seed = seed
        self.built = True

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "rate", "seed")}

    def call(self, inputs: Any, training: bool = False) -> Any:
        if not training or not 0 < self.rate < 1:
            return inputs
        inputs = convert_to_tensor(inputs)
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = random.normal(tuple(inputs.shape), mean=1.0, stddev=stddev,
                              dtype=inputs.dtype, seed=self.seed)
        return inputs * noise

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape




class _SpatialDropout(Layer):
    """Dropout of whole channels: one draw per (sample, channel), shared by every
    spatial position (Keras 3's ``noise_shape``), scaled by ``1 / (1 - rate)``."""

    rank = 0

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.rate = _fraction(type(self).__name__, "rate", rate)
        self.data_format = standardize_data_format(data_format)
        self.seed = seed
        self.built = True

    def _noise_shape(self, shape: tuple) -> tuple:
        if len(shape) != self.rank + 2:
            raise ValueError(f"{type(self).__name__} expects a {self.rank + 2}-d input, "
                             f"got shape {shape}.")
        ones = (1,) * self.rank
        if self.data_format == "channels_first":
            return (shape[0], shape[1], *ones)
        return (shape[0], *ones, shape[-1])

    def call(self, inputs: Any, training: bool = False) -> Any:
        inputs = convert_to_tensor(inputs)
        noise_shape = self._noise_shape(tuple(inputs.shape))
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:  # every channel dropped (nn.dropout takes rates below 1)
            return inputs * inputs.dtype.type(0)
        return dropout(inputs, self.rate, noise_shape=noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        config = {**super().get_config(), "rate": self.rate, "seed": self.seed}
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of a (batch, steps, channels) input while training."""

    rank = 1

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any):
        super().__init__(rate, None, seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of a 4-d input while training."""

    rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole feature volumes of a 5-d input while training."""

    rank = 3
