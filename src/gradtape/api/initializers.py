"""TF 2's top-level initializers: ``gt.random_uniform_initializer``,
``gt.random_normal_initializer``, ``gt.constant_initializer``, ``gt.zeros_initializer``,
``gt.ones_initializer`` and ``gt.glorot_uniform_initializer``.

Each is a class: make one with its arguments, then call it as ``init(shape,
dtype=gt.float32)`` for a tensor, as TF 2's ``init_ops_v2`` do (so they also serve as a
Keras ``kernel_initializer``). With ``seed=``, a random initializer draws statelessly
from ``[seed, 0]``: the same values on every call, as TF 2's; without it, from the
global stream. The values are NumPy's, not TF's Philox stream.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.dtypes import numpy_dtype
from ..core.tensor import Tensor, constant
from . import random

__all__ = ["constant_initializer", "glorot_uniform_initializer", "ones_initializer",
           "random_normal_initializer", "random_uniform_initializer", "zeros_initializer"]


def _shape(shape: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


class _Initializer:
    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> _Initializer:
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class zeros_initializer(_Initializer):
    """Zeros of ``shape`` and ``dtype``."""

    def __call__(self, shape: Any, dtype: Any = np.float32, **kwargs: Any) -> Tensor:
        return constant(np.zeros(_shape(shape), numpy_dtype(dtype)))


class ones_initializer(_Initializer):
    """Ones of ``shape`` and ``dtype``."""

    def __call__(self, shape: Any, dtype: Any = np.float32, **kwargs: Any) -> Tensor:
        return constant(np.ones(_shape(shape), numpy_dtype(dtype)))


class constant_initializer(_Initializer):
    """``value`` as a tensor of ``shape``: a scalar fills it; a list or array with as many
    entries as the shape is reshaped to it (TF's ``tf.constant(value, shape=shape)``)."""

    def __init__(self, value: Any = 0, support_partition: bool = False):
        if isinstance(value, Tensor):
            value = value.numpy()
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        shape = _shape(shape)
        value = np.asarray(self.value)
        # No dtype: the value's, as tf.constant gives it (Python ints int32, floats float32).
        dtype = numpy_dtype(dtype) if dtype is not None else constant(self.value).dtype
        if value.size == 1:
            return constant(np.full(shape, value.reshape(()), dtype))
        if value.size != math.prod(shape):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{value.tolist()} (converted from {self.value!r}) has "
                            f"{value.size} elements, but got `shape` {shape} with "
                            f"{math.prod(shape)} elements; pass a value with as many "
                            "entries as the shape, or a scalar.")
        return constant(value.reshape(shape).astype(dtype))

    def get_config(self) -> dict:
        return {"value": self.value}


class _Random(_Initializer):
    def __init__(self, seed: int | None = None):
        self.seed = seed

    def _seed_pair(self) -> list[int]:
        return [int(self.seed), 0]


class random_uniform_initializer(_Random):
    """Uniform values in ``[minval, maxval)`` (integers too, for an integer dtype)."""

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape: Any, dtype: Any = np.float32, **kwargs: Any) -> Tensor:
        shape, dtype = _shape(shape), numpy_dtype(dtype)
        if self.seed is None:
            return random.uniform(shape, self.minval, self.maxval, dtype=dtype)
        return random.stateless_uniform(shape, self._seed_pair(), self.minval, self.maxval,
                                        dtype=dtype)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class random_normal_initializer(_Random):
    """Normal values of ``mean`` and ``stddev``."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape: Any, dtype: Any = np.float32, **kwargs: Any) -> Tensor:
        shape, dtype = _shape(shape), numpy_dtype(dtype)
        if dtype.kind != "f":
            raise ValueError(f"Argument `dtype` expected to be floating point. Received: "
                             f"{dtype.name}; use a float dtype.")
        if self.seed is None:
            return random.normal(shape, self.mean, self.stddev, dtype=dtype)
        return random.stateless_normal(shape, self._seed_pair(), self.mean, self.stddev,
                                       dtype=dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """TF's fan-in and fan-out: a kernel's last two axes, times its receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class glorot_uniform_initializer(_Random):
    """Glorot (Xavier) uniform: ``U(-limit, limit)``, ``limit = sqrt(6 / (fan_in +
    fan_out))`` (TF's ``VarianceScaling(1.0, "fan_avg", "uniform")``)."""

    def __init__(self, seed: int | None = None, dtype: Any = np.float32):
        super().__init__(seed)
        self.dtype = numpy_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        shape = _shape(shape)
        dtype = numpy_dtype(dtype) if dtype is not None else self.dtype
        fan_in, fan_out = _fans(shape)
        limit = math.sqrt(3.0 / max(1.0, (fan_in + fan_out) / 2.0))
        return random_uniform_initializer(-limit, limit, self.seed)(shape, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}
