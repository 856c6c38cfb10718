"""Keras 3's pooling layers: ``MaxPooling1D/2D/3D``, ``AveragePooling1D/2D/3D`` (over
``gt.nn``'s pooling primitives) and ``GlobalMaxPooling1D/2D/3D``,
``GlobalAveragePooling1D/2D/3D`` (reductions over the spatial axes).

Keras 3's defaults: ``pool_size=2`` per axis, ``strides=None`` (the pool size),
``padding="valid"``, ``data_format=None`` (``"channels_last"``); ``"same"`` average
pooling divides by the number of valid elements (TF's backend).
"""

from __future__ import annotations

from typing import Any

from ... import ops
from ...ops import pooling as _pooling
from ...ops.pooling_tf import _same_pads, check_pool_dtype
from .base import Layer
from .shape import _int_tuple, standardize_data_format

__all__ = ["AveragePooling1D", "AveragePooling2D", "AveragePooling3D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
           "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
           "MaxPooling1D", "MaxPooling2D", "MaxPooling3D"]


def _spatial_axes(data_format: str, rank: int) -> tuple[int, ...]:
    first = 2 if data_format == "channels_first" else 1
    return tuple(range(first, first + rank))


def _padding(padding: str) -> str:
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                         f"Received: padding={padding!r}")
    return mode


class _Pooling(Layer):
    """A ``rank``-d max or average pooling layer (``kind``)."""

    rank = 0
    kind = ""

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, name: str | None = None, **kwargs: Any):
        super().__init__(name=name, **kwargs)
        self.pool_size = _int_tuple(pool_size, self.rank, "pool_size")
        self.strides = self.pool_size if strides is None else _int_tuple(
            strides, self.rank, "strides")
        if min(self.pool_size + self.strides) < 1:
            raise ValueError(f"`pool_size` and `strides` must be positive. Received: "
                             f"pool_size={pool_size!r}, strides={strides!r}")
        self.padding = _padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.built = True

    def _check_rank(self, shape: Any) -> None:
        if len(shape) != self.rank + 2:
            raise ValueError(f"Input 0 of layer \"{self.name}\" is incompatible with the "
                             f"layer: expected ndim={self.rank + 2}, found ndim={len(shape)}. "
                             f"Full shape received: {tuple(shape)}")

    def compute_output_shape(self, input_shape: Any) -> tuple:
        self._check_rank(input_shape)
        shape = list(input_shape)
        for axis, k, s in zip(_spatial_axes(self.data_format, self.rank), self.pool_size,
                              self.strides):
            n = shape[axis]
            if n is not None:
                shape[axis] = (n - k) // s + 1 if self.padding == "valid" else (n - 1) // s + 1
        return tuple(shape)

    def call(self, inputs: Any) -> Any:
        self._check_rank(inputs.shape)
        axes = _spatial_axes(self.data_format, self.rank)
        shape = tuple(inputs.shape)
        if self.padding == "same":
            pads = tuple(_same_pads(shape[a], k, s, 1)
                         for a, k, s in zip(axes, self.pool_size, self.strides))
        else:
            pads = ((0, 0),) * self.rank
            for a, k in zip(axes, self.pool_size):
                if shape[a] < k:
                    raise ValueError(f"{type(self).__name__}: pool_size {self.pool_size} is "
                                     f"larger than the input's spatial shape "
                                     f"{tuple(shape[b] for b in axes)}; use padding='same'.")
        check_pool_dtype(self.kind, inputs)
        return _pooling.pool(inputs, self.kind, axes, self.pool_size, self.strides,
                             (1,) * self.rank, pads)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size,
                "padding": self.padding, "strides": self.strides,
                "data_format": self.data_format}


class MaxPooling1D(_Pooling):
    """The maximum over windows of ``pool_size`` steps (Keras 3)."""
    rank, kind = 1, "max"


class MaxPooling2D(_Pooling):
    """The maximum over ``pool_size`` windows of the two spatial axes (Keras 3)."""
    rank, kind = 2, "max"


class MaxPooling3D(_Pooling):
    """The maximum over ``pool_size`` windows of the three spatial axes (Keras 3)."""
    rank, kind = 3, "max"


class AveragePooling1D(_Pooling):
    """The mean over windows of ``pool_size`` steps (Keras 3)."""
    rank, kind = 1, "avg"


class AveragePooling2D(_Pooling):
    """The mean over ``pool_size`` windows of the two spatial axes (Keras 3)."""
    rank, kind = 2, "avg"


class AveragePooling3D(_Pooling):
    """The mean over ``pool_size`` windows of the three spatial axes (Keras 3)."""
    rank, kind = 3, "avg"


class _GlobalPooling(Layer):
    """The max or mean over every spatial axis; ``keepdims`` keeps them as size 1."""

    rank = 0
    kind = ""

    def __init__(self, data_format: str | None = None, keepdims: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.built = True

    def compute_output_shape(self, input_shape: Any) -> tuple:
        axes = _spatial_axes(self.data_format, len(input_shape) - 2)
        if self.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(input_shape))
        return tuple(d for i, d in enumerate(input_shape) if i not in axes)

    def _reduce(self, inputs: Any, axes: tuple[int, ...]) -> Any:
        reduce = ops.reduce_max if self.kind == "max" else ops.reduce_mean
        return reduce(inputs, axis=list(axes), keepdims=self.keepdims)

    def call(self, inputs: Any) -> Any:
        if len(inputs.shape) != self.rank + 2:
            raise ValueError(f"{type(self).__name__} expects a {self.rank + 2}-d input, "
                             f"got shape {tuple(inputs.shape)}.")
        return self._reduce(inputs, _spatial_axes(self.data_format, self.rank))

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps of a (batch, steps, features) input."""
    rank, kind = 1, "max"


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over height and width."""
    rank, kind = 2, "max"


class GlobalMaxPooling3D(_GlobalPooling):
    """The maximum over the three spatial axes."""
    rank, kind = 3, "max"


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps; with a ``mask`` (batch, steps), over the unmasked ones
    (Keras 3)."""
    rank, kind = 1, "avg"

    def call(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None:
            return super().call(inputs)
        steps = 2 if self.data_format == "channels_first" else 1
        weights = ops.cast(mask, inputs.dtype)
        weights = ops.expand_dims(weights, 1 if steps == 2 else 2)
        total = ops.reduce_sum(inputs * weights, axis=steps, keepdims=self.keepdims)
        count = ops.reduce_sum(weights, axis=steps, keepdims=self.keepdims)
        return total / count


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean over height and width."""
    rank, kind = 2, "avg"


class GlobalAveragePooling3D(_GlobalPooling):
    """The mean over the three spatial axes."""
    rank, kind = 3, "avg"


# Keras 3's aliases: the same classes.
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (GlobalMaxPooling1D, GlobalMaxPooling2D,
                                                     GlobalMaxPooling3D)
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (
    GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D)
__all__ += ["AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D",
            "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
            "MaxPool1D", "MaxPool2D", "MaxPool3D"]
