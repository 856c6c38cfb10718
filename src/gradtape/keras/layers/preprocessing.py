"""Keras 3's image preprocessing layers: ``Resizing`` (over ``gt.image.resize``) and
``RandomFlip``. Both take 3-d ``(height, width, channels)`` or 4-d batches, channels last
unless ``data_format="channels_first"``, and compute in float32 (Keras's compute dtype).
"""

from __future__ import annotations

from typing import Any

from ... import ops
from ...api import image as _image
from ...api import random
from ...core.tensor import convert_to_tensor
from ...ops.arrange import flip, pad
from ...ops.shape import moveaxis
from .base import Layer
from .shape import standardize_data_format

__all__ = ["RandomFlip", "Resizing"]

_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                   "gaussian", "mitchellcubic")


def _spatial(rank: int, data_format: str) -> tuple[int, int]:
    """The (height, width) axes of a rank-3 or rank-4 image tensor."""
    last = rank - 1 if data_format == "channels_first" else rank - 2
    return last - 1, last


class Resizing(Layer):
    """Resizes images to ``(height, width)`` with ``interpolation``; with
    ``crop_to_aspect_ratio`` the largest central box of the target's aspect ratio is
    resized (nothing is distorted), with ``pad_to_aspect_ratio`` the image is first padded
    evenly with ``fill_value`` to that ratio (Keras 3's arithmetic for both)."""

    def __init__(self, height: int, width: int, interpolation: str = "bilinear",
                 crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                 fill_mode: str = "constant", fill_value: float = 0.0,
                 antialias: bool = False, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`: expected one of "
                             f"{list(_INTERPOLATIONS)}. Received: "
                             f"interpolation={interpolation!r}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` "
                             "can be True.")
        if fill_mode != "constant":
            raise ValueError(f"Resizing supports fill_mode='constant' only (as Keras 3). "
                             f"Received: fill_mode={fill_mode!r}")
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, float(fill_value)
        self.antialias = bool(antialias)
        self.data_format = standardize_data_format(data_format)
        self.built = True

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        rows, cols = _spatial(len(shape), self.data_format)
        shape[rows], shape[cols] = self.height, self.width
        return tuple(shape)

    def _cropped(self, images: Any, rows: int, cols: int) -> Any:
        height, width = images.shape[rows], images.shape[cols]
        crop_h = max(min(height, int(width * self.height / self.width)), 1)
        crop_w = max(min(width, int(height * self.width / self.height)), 1)
        top, left = int((height - crop_h) / 2), int((width - crop_w) / 2)
        index = [slice(None)] * len(images.shape)
        index[rows], index[cols] = slice(top, top + crop_h), slice(left, left + crop_w)
        return images[tuple(index)]

    def _padded(self, images: Any, rows: int, cols: int) -> Any:
        height, width = images.shape[rows], images.shape[cols]
        pad_h = max(height, int(width * self.height / self.width))
        pad_w = max(width, int(height * self.width / self.height))
        top, left = int((pad_h - height) / 2), int((pad_w - width) / 2)
        widths = [[0, 0] for _ in images.shape]
        widths[rows], widths[cols] = [top, top], [left, left]
        return pad(images, widths, constant_values=self.fill_value)

    def call(self, inputs: Any) -> Any:
        images = ops.cast(convert_to_tensor(inputs), "float32")
        rows, cols = _spatial(len(images.shape), self.data_format)
        if self.crop_to_aspect_ratio:
            images = self._cropped(images, rows, cols)
        elif self.pad_to_aspect_ratio:
            images = self._padded(images, rows, cols)
        channels_first = self.data_format == "channels_first"
        if channels_first:  # tf.image.resize is channels last
            images = moveaxis(images, cols - 2, -1)
        out = _image.resize(images, (self.height, self.width), method=self.interpolation,
                            antialias=self.antialias)
        return moveaxis(out, -1, cols - 2) if channels_first else out

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
                "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "antialias": self.antialias, "data_format": self.data_format}


class RandomFlip(Layer):
    """Flips each image with probability 1/2 while training (``mode`` ``"horizontal"``,
    ``"vertical"`` or ``"horizontal_and_vertical"``), the identity in inference. As Keras
    3 draws one ``uniform <= 0.5`` per image and uses it for both axes, the last mode
    flips an image both ways or not at all."""

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if mode not in self._MODES:
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode "
                             f"argument {mode!r}; use one of {list(self._MODES)}.")
        self.mode, self.seed = mode, seed
        self.data_format = standardize_data_format(data_format)
        self.built = True

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def call(self, inputs: Any, training: bool = True) -> Any:
        images = ops.cast(convert_to_tensor(inputs), "float32")
        if not training:
            return images
        batched = len(images.shape) == 4
        if len(images.shape) not in (3, 4):
            raise ValueError(f"RandomFlip expects a 3-d image or a 4-d batch, got shape "
                             f"{tuple(images.shape)}.")
        shape = (images.shape[0], 1, 1, 1) if batched else (1, 1, 1)
        flips = random.uniform(shape, seed=self.seed) <= 0.5
        rows, cols = _spatial(len(images.shape), self.data_format)
        if self.mode != "vertical":
            images = ops.where(flips, flip(images, cols), images)
        if self.mode != "horizontal":
            images = ops.where(flips, flip(images, rows), images)
        return images

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode, "seed": self.seed,
                "data_format": self.data_format}
