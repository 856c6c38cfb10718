"""Keras 3's reshaping layers: ``Reshape``, ``Permute``, ``RepeatVector``,
``ZeroPadding1D/2D/3D``, ``Cropping1D/2D/3D`` and ``UpSampling1D/2D/3D``.

The spatial layers take ``data_format`` (``"channels_last"``, the default, or
``"channels_first"``) where Keras 3 has it. ``UpSampling2D(interpolation="bilinear")``
(or ``"bicubic"``, ``"lanczos3"``, ``"lanczos5"``) is ``tf.image.resize``'s (half-pixel
centers, no antialiasing): the ``resize`` primitive, which differentiates exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ...core.tensor import Tensor
from ...ops import image as _resizing
from .base import Layer
from .configs import config_entries

__all__ = ["Cropping1D", "Cropping2D", "Cropping3D", "Permute", "RepeatVector", "Reshape",
           "UpSampling1D", "UpSampling2D", "UpSampling3D", "ZeroPadding1D", "ZeroPadding2D",
           "ZeroPadding3D"]


def standardize_data_format(data_format: str | None) -> str:
    """Keras's rule: ``None`` is ``"channels_last"``; anything else must be a format."""
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format!r}")
    return data_format


def _spatial_axes(data_format: str, rank: int) -> list[int]:
    """The spatial axes of a ``rank``-d input (batch, spatial..., channels) or
    (batch, channels, spatial...)."""
    first = 2 if data_format == "channels_first" else 1
    return list(range(first, first + rank - 2))


def _int_tuple(value: Any, n: int, what: str) -> tuple[int, ...]:
    """An int or ``n`` ints, as a tuple of ``n`` non-negative ints (Keras's check)."""
    values = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != n or not all(isinstance(v, (int, np.integer)) and v >= 0
                                   for v in values):
        raise ValueError(f"The `{what}` argument must be an int or a tuple of {n} "
                         f"non-negative ints. Received: {what}={value!r}")
    return tuple(int(v) for v in values)


def _pairs(value: Any, n: int, what: str) -> tuple[tuple[int, int], ...]:
    """Keras's padding/cropping spec: an int (every side), ``n`` ints (symmetric per
    axis), or ``n`` pairs ``(before, after)``."""
    if isinstance(value, (int, np.integer)):
        return ((int(value), int(value)),) * n
    value = tuple(value)
    if len(value) == n and all(isinstance(v, (int, np.integer)) for v in value):
        return tuple((int(v), int(v)) for v in value)
    if len(value) == n and all(isinstance(v, (tuple, list)) and len(v) == 2 for v in value):
        return tuple(_int_tuple(v, 2, what) for v in value)  # type: ignore[misc]
    raise ValueError(f"`{what}` should be an int, a tuple of {n} ints, or a tuple of {n} "
                     f"tuples of 2 ints. Received: {what}={value!r}")


class Reshape(Layer):
    """Reshapes the non-batch axes to ``target_shape`` (one entry may be ``-1``)."""

    def __init__(self, target_shape: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError("There can only be one unknown dimension (-1) in "
                             f"`target_shape`. Received: target_shape={target_shape!r}")

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "target_shape")}

    def compute_output_shape(self, input_shape: Any) -> tuple:
        size = math.prod(d for d in input_shape[1:] if d is not None)
        known = math.prod(d for d in self.target_shape if d != -1)
        if -1 not in self.target_shape:
            if None not in input_shape[1:] and size != known:
                raise ValueError(f"The total size of the tensor must be unchanged. "
                                 f"Received: input_shape={tuple(input_shape)}, "
                                 f"target_shape={self.target_shape}")
            return (input_shape[0], *self.target_shape)
        if known == 0 or size % known:
            raise ValueError(f"The total size of the tensor must be unchanged. Received: "
                             f"input_shape={tuple(input_shape)}, "
                             f"target_shape={self.target_shape}")
        return (input_shape[0],
                *(size // known if d == -1 else d for d in self.target_shape))

    def call(self, inputs: Any) -> Tensor:
        shape = self.compute_output_shape(tuple(inputs.shape))
        return ops.reshape(inputs, (-1, *shape[1:]))


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` numbers them from 1 (``(2, 1)`` swaps the
    first two)."""

    def __init__(self, dims: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute layer. The "
                             f"set of indices in `dims` must be consecutive and start "
                             f"from 1. Received: dims={dims!r}")

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "dims")}

    def compute_output_shape(self, input_shape: Any) -> tuple:
        return (input_shape[0], *(input_shape[d] for d in self.dims))

    def call(self, inputs: Any) -> Tensor:
        return ops.transpose(inputs, (0, *self.dims))


class RepeatVector(Layer):
    """Repeats a ``(batch, features)`` input ``n`` times: ``(batch, n, features)``."""

    def __init__(self, n: int, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(n, (int, np.integer)):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = int(n)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "n")}

    def compute_output_shape(self, input_shape: Any) -> tuple:
        return (input_shape[0], self.n, input_shape[1])

    def call(self, inputs: Any) -> Tensor:
        if len(inputs.shape) != 2:
            raise ValueError(f"RepeatVector expects a 2-d input (batch, features). "
                             f"Received: input shape {tuple(inputs.shape)}")
        return ops.tile(ops.expand_dims(inputs, 1), (1, self.n, 1))


class _Spatial(Layer):
    """What the padding, cropping and upsampling layers share: ``rank`` spatial axes
    found from ``data_format``."""

    rank = 0

    def __init__(self, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)

    def _axes(self, inputs: Any) -> list[int]:
        if len(inputs.shape) != self.rank + 2:
            raise ValueError(f"{type(self).__name__} expects inputs of rank "
                             f"{self.rank + 2} (batch, {self.rank} spatial axes, channels"
                             f"). Received: input shape {tuple(inputs.shape)}")
        return _spatial_axes(self.data_format, self.rank + 2)


class _ZeroPadding(_Spatial):
    def __init__(self, padding: Any, data_format: str | None = None, **kwargs: Any):
        super().__init__(data_format, **kwargs)
        self.padding = _pairs(padding, self.rank, "padding")

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        for axis, (before, after) in zip(_spatial_axes(self.data_format, len(shape)),
                                         self.padding):
            shape[axis] = None if shape[axis] is None else shape[axis] + before + after
        return tuple(shape)

    def call(self, inputs: Any) -> Tensor:
        widths = [[0, 0] for _ in inputs.shape]
        for axis, pair in zip(self._axes(inputs), self.padding):
            widths[axis] = list(pair)
        return ops.pad(inputs, widths)


class ZeroPadding1D(_ZeroPadding):
    """Pads axis 1 (the steps) with zeros: ``padding`` an int or ``(left, right)``."""

    rank = 1

    def __init__(self, padding: Any = 1, data_format: str | None = None, **kwargs: Any):
        if not isinstance(padding, (int, np.integer)):
            padding = (tuple(padding),)
        super().__init__(padding, data_format, **kwargs)

    def get_config(self) -> dict:
        # Keras 3 keeps the one pair itself: (1, 2), not ((1, 2),)
        return {**super().get_config(), "padding": self.padding[0],
                "data_format": self.data_format}


class ZeroPadding2D(_ZeroPadding):
    """Pads rows and columns with zeros: an int, ``(rows, cols)`` (symmetric) or
    ``((top, bottom), (left, right))``."""

    rank = 2

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None,
                 **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "padding", "data_format")}


class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes with zeros (an int, 3 ints, or 3 pairs)."""

    rank = 3

    def __init__(self, padding: Any = ((1, 1), (1, 1), (1, 1)),
                 data_format: str | None = None, **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "padding", "data_format")}


class _Cropping(_Spatial):
    def __init__(self, cropping: Any, data_format: str | None = None, **kwargs: Any):
        super().__init__(data_format, **kwargs)
        self.cropping = _pairs(cropping, self.rank, "cropping")

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        for axis, (before, after) in zip(_spatial_axes(self.data_format, len(shape)),
                                         self.cropping):
            if shape[axis] is not None:
                if before + after >= shape[axis]:
                    raise ValueError(
                        f"Values in `cropping` argument should be smaller than the "
                        f"corresponding spatial dimension of the input. Received: "
                        f"input_shape={tuple(input_shape)}, cropping={self.cropping}")
                shape[axis] -= before + after
        return tuple(shape)

    def call(self, inputs: Any) -> Tensor:
        self.compute_output_shape(tuple(inputs.shape))  # Keras's check of the sizes
        index: list[Any] = [slice(None)] * len(inputs.shape)
        for axis, (before, after) in zip(self._axes(inputs), self.cropping):
            index[axis] = slice(before, inputs.shape[axis] - after)
        return inputs[tuple(index)]


class Cropping1D(_Cropping):
    """Crops axis 1 (the steps): ``cropping`` an int or ``(start, end)``."""

    rank = 1

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any):
        if not isinstance(cropping, (int, np.integer)):
            cropping = (tuple(cropping),)
        super().__init__(cropping, None, **kwargs)

    def get_config(self) -> dict:
        # Keras 3 keeps the one pair itself: (1, 2), not ((1, 2),)
        return {**super().get_config(), "cropping": self.cropping[0]}


class Cropping2D(_Cropping):
    """Crops rows and columns: an int, ``(rows, cols)`` (symmetric) or
    ``((top, bottom), (left, right))``."""

    rank = 2

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None,
                 **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "cropping", "data_format")}


class Cropping3D(_Cropping):
    """Crops the three spatial axes (an int, 3 ints, or 3 pairs)."""

    rank = 3

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)),
                 data_format: str | None = None, **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "cropping", "data_format")}


class _UpSampling(_Spatial):
    def __init__(self, size: Any, data_format: str | None = None, **kwargs: Any):
        super().__init__(data_format, **kwargs)
        self.size = _int_tuple(size, self.rank, "size")

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        for axis, factor in zip(_spatial_axes(self.data_format, len(shape)), self.size):
            shape[axis] = None if shape[axis] is None else shape[axis] * factor
        return tuple(shape)

    def call(self, inputs: Any) -> Tensor:
        for axis, factor in zip(self._axes(inputs), self.size):
            inputs = ops.repeat(inputs, factor, axis=axis)
        return inputs


class UpSampling1D(_UpSampling):
    """Repeats each step ``size`` times along axis 1."""

    rank = 1

    def __init__(self, size: int = 2, **kwargs: Any):
        super().__init__((size,) if isinstance(size, (int, np.integer)) else size, None,
                         **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size[0]}  # Keras 3: an int


class UpSampling2D(_UpSampling):
    """Repeats rows and columns ``size`` times (``"nearest"``), or resizes by ``size``
    with ``tf.image.resize``'s interpolation (``"bilinear"``, ``"bicubic"``,
    ``"lanczos3"``, ``"lanczos5"``: half-pixel centers, no antialiasing), Keras 3's."""

    rank = 2
    _INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5")

    def __init__(self, size: Any = (2, 2), data_format: str | None = None,
                 interpolation: str = "nearest", **kwargs: Any):
        super().__init__(size, data_format, **kwargs)
        if interpolation not in self._INTERPOLATIONS:
            raise ValueError(f"`interpolation` argument should be one of "
                             f"{list(self._INTERPOLATIONS)}. Received: "
                             f"interpolation={interpolation!r}")
        self.interpolation = interpolation

    def call(self, inputs: Any) -> Tensor:
        if self.interpolation == "nearest":
            return super().call(inputs)
        rows, cols = self._axes(inputs)
        target = (inputs.shape[rows] * self.size[0], inputs.shape[cols] * self.size[1])
        return _resizing.resize(inputs, (rows, cols), target, self.interpolation)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling3D(_UpSampling):
    """Repeats each of the three spatial axes ``size`` times."""

    rank = 3

    def __init__(self, size: Any = (2, 2, 2), data_format: str | None = None,
                 **kwargs: Any):
        super().__init__(size, data_format, **kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "size", "data_format")}
