"""Keras 3's noise layers: ``GaussianNoise`` and ``GaussianDropout``. Both act only
when called with ``training=True`` (``fit`` passes it) and are the identity otherwise."""

from __future__ import annotations

import math
from typing import Any

from ...api import random
from ...core.tensor import convert_to_tensor
from .base import Layer

__all__ = ["GaussianDropout", "GaussianNoise"]


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


