"""``gt.image``: TF's ``tf.image`` functions on 3-d ``(height, width, channels)`` and
4-d ``(batch, height, width, channels)`` images. ``resize`` is the ``resize`` primitive of
``ops/image.py`` (linear in the image: its gradient is exact); the flips, crops and pads
are gradtape's shape ops; the random flips draw from ``gt.random`` (its seed rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.namespaces import namespace as public_namespace
from ..ops import image as _resizing
from ..ops import reduce as _reduce
from ..ops.arrange import flip, pad
from ..ops.elementwise import cast, less, maximum, sqrt, where
from ..ops.index import getitem
from ..ops.registry import operand
from ..ops.shape import reshape
from ..ops.shape import transpose as _transpose
from . import random as _random

__all__ = ["namespace"]


class ResizeMethod:
    """TF's ``tf.image.ResizeMethod``: the method names ``resize`` takes."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def _image(image: Any, what: str = "image") -> Any:
    image = operand(image)
    if len(image.shape) not in (3, 4):
        raise ValueError(f"'{what}' (shape {tuple(image.shape)}) must have either 3 or 4 "
                         "dimensions: (height, width, channels) or (batch, height, width, "
                         "channels).")
    return image


def _size(size: Any) -> tuple[int, int]:
    values = size.numpy().tolist() if hasattr(size, "numpy") else list(size)
    if len(values) != 2:
        raise ValueError(f"'size' must be a 1-D Tensor of 2 elements: new_height, "
                         f"new_width; got {size!r}.")
    height, width = (int(v) for v in values)
    if height <= 0 or width <= 0:
        raise ValueError(f"'size' must be positive: new_height, new_width; got {size!r}.")
    return height, width


def _aspect_preserving(height: int, width: int, size: tuple[int, int]) -> tuple[int, int]:
    """TF's float32 arithmetic: the smaller scale, rounded half to even."""
    scale = min(np.float32(size[0]) / np.float32(height),
                np.float32(size[1]) / np.float32(width))
    return (int(np.round(np.float32(scale) * np.float32(height))),
            int(np.round(np.float32(scale) * np.float32(width))))


def resize(images: Any, size: Any, method: str = ResizeMethod.BILINEAR,
           preserve_aspect_ratio: bool = False, antialias: bool = False,
           name: str | None = None) -> Any:
    """TF's ``tf.image.resize``: ``images`` resized to ``size`` (height, width).

    Half-pixel centers (TF 2); ``antialias`` widens the bilinear/bicubic/lanczos/gaussian/
    mitchellcubic kernel when downsampling; ``preserve_aspect_ratio`` fits the image inside
    ``size``. The result is float32, except ``'nearest'``, which keeps the dtype."""
    del name
    images = _image(images, "images")
    method = str(method).lower()
    if method not in _resizing.METHODS:
        raise ValueError(f"Resize method is not implemented: {method!r}; use one of "
                         f"{list(_resizing.METHODS)}.")
    target = _size(size)
    axes = (0, 1) if len(images.shape) == 3 else (1, 2)
    height, width = images.shape[axes[0]], images.shape[axes[1]]
    if preserve_aspect_ratio:
        target = _aspect_preserving(height, width, target)
    if method != "nearest" and images.dtype != np.float32:
        images = cast(images, np.float32)
    return _resizing.resize(images, axes, target, method, antialias)


def flip_left_right(image: Any) -> Any:
    """TF's ``tf.image.flip_left_right``: the width axis reversed."""
    return flip(_image(image), -2)


def flip_up_down(image: Any) -> Any:
    """TF's ``tf.image.flip_up_down``: the height axis reversed."""
    return flip(_image(image), -3)


def _random_flip(image: Any, axis: int, seed: int | None) -> Any:
    """TF's ``_random_flip``: a 3-d image flips when its draw is below 0.5; in a batch
    each image flips when its draw rounds to 1 (above 0.5)."""
    image = _image(image)
    flipped = flip(image, axis)
    if len(image.shape) == 3:
        chosen = less(_random.uniform([], 0, 1.0, seed=seed), 0.5)
        return where(chosen, flipped, image)
    draws = _random.uniform([image.shape[0]], 0, 1.0, seed=seed)
    chosen = reshape(draws > 0.5, (image.shape[0], 1, 1, 1))
    return where(chosen, flipped, image)


def random_flip_left_right(image: Any, seed: int | None = None) -> Any:
    """TF's ``tf.image.random_flip_left_right``: each image mirrored with probability 1/2."""
    return _random_flip(image, -2, seed)


def random_flip_up_down(image: Any, seed: int | None = None) -> Any:
    """TF's ``tf.image.random_flip_up_down``: each image flipped with probability 1/2."""
    return _random_flip(image, -3, seed)


def _box_checks(offset_height, offset_width, target_height, target_width):
    for name, value in (("offset_height", offset_height), ("offset_width", offset_width)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}.")
    for name, value in (("target_height", target_height), ("target_width", target_width)):
        if value <= 0:
            raise ValueError(f"{name} must be > 0, got {value}.")


def crop_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                         target_height: int, target_width: int) -> Any:
    """TF's ``tf.image.crop_to_bounding_box``: the ``target`` box whose top-left corner
    is at ``offset``."""
    image = _image(image)
    _box_checks(offset_height, offset_width, target_height, target_width)
    height, width = image.shape[-3], image.shape[-2]
    if height < offset_height + target_height:
        raise ValueError(f"height must be >= target + offset: {height} < "
                         f"{target_height} + {offset_height}.")
    if width < offset_width + target_width:
        raise ValueError(f"width must be >= target + offset: {width} < "
                         f"{target_width} + {offset_width}.")
    box = (slice(offset_height, offset_height + target_height),
           slice(offset_width, offset_width + target_width), slice(None))
    return getitem(image, (Ellipsis, *box))


def pad_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                        target_height: int, target_width: int) -> Any:
    """TF's ``tf.image.pad_to_bounding_box``: ``image`` at ``offset`` in a zero image of
    the ``target`` size."""
    image = _image(image)
    if offset_height < 0 or offset_width < 0:
        raise ValueError(f"offset_height and offset_width must be >= 0, got "
                         f"{offset_height} and {offset_width}.")
    height, width = image.shape[-3], image.shape[-2]
    after_h = target_height - offset_height - height
    after_w = target_width - offset_width - width
    if after_h < 0:
        raise ValueError(f"height must be <= target - offset: {height} > "
                         f"{target_height} - {offset_height}.")
    if after_w < 0:
        raise ValueError(f"width must be <= target - offset: {width} > "
                         f"{target_width} - {offset_width}.")
    widths = [[0, 0]] * (len(image.shape) - 3) + [[offset_height, after_h],
                                                   [offset_width, after_w], [0, 0]]
    return pad(image, widths)


def transpose(image: Any, name: str | None = None) -> Any:
    """TF's ``tf.image.transpose``: height and width swapped."""
    image = _image(image)
    perm = (1, 0, 2) if len(image.shape) == 3 else (0, 2, 1, 3)
    return _transpose(image, perm)


def rot90(image: Any, k: int = 1, name: str | None = None) -> Any:
    """TF's ``tf.image.rot90``: ``k`` quarter turns counter-clockwise (``np.rot90`` over
    height and width)."""
    image = _image(image)
    rows = len(image.shape) - 3
    k = int(k.numpy() if hasattr(k, "numpy") else k) % 4
    if k == 0:
        return image
    if k == 2:
        return flip(image, (rows, rows + 1))
    perm = list(range(len(image.shape)))
    perm[rows], perm[rows + 1] = rows + 1, rows
    if k == 1:  # TF's _rot90: reverse the width, then transpose
        return _transpose(flip(image, rows + 1), tuple(perm))
    return flip(_transpose(image, tuple(perm)), rows + 1)


def central_crop(image: Any, central_fraction: float) -> Any:
    """TF's ``tf.image.central_crop``: the central ``central_fraction`` (in (0, 1]) of the
    height and width, the start rounded down as TF's ``int32`` cast."""
    image = _image(image)
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"central_fraction must be within (0, 1], got {central_fraction}.")
    if central_fraction == 1.0:
        return image
    height, width = image.shape[-3], image.shape[-2]
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return crop_to_bounding_box(image, top, left, height - 2 * top, width - 2 * left)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Any:
    """TF's ``tf.image.resize_with_crop_or_pad``: a central crop where the image is larger
    than the target, zero padding around it where smaller (each axis on its own)."""
    image = _image(image)
    _box_checks(0, 0, target_height, target_width)
    height, width = image.shape[-3], image.shape[-2]
    crop_top, crop_left = max((height - target_height) // 2, 0), max(
        (width - target_width) // 2, 0)
    pad_top, pad_left = max((target_height - height) // 2, 0), max(
        (target_width - width) // 2, 0)
    cropped = crop_to_bounding_box(image, crop_top, crop_left, min(target_height, height),
                                   min(target_width, width))
    return pad_to_bounding_box(cropped, pad_top, pad_left, target_height, target_width)


def per_image_standardization(image: Any) -> Any:
    """TF's ``tf.image.per_image_standardization``: ``(x - mean) / max(stddev,
    1 / sqrt(N))`` over each image's ``N`` height * width * channels values (integers are
    cast to float32 first)."""
    image = operand(image)
    if len(image.shape) < 3:
        raise ValueError(f"'image' (shape {tuple(image.shape)}) must be at least "
                         "three-dimensional.")
    if not np.issubdtype(image.dtype, np.floating):
        image = cast(image, np.float32)
    axes = [-1, -2, -3]
    count = int(np.prod(image.shape[-3:]))
    mean = _reduce.mean(image, axis=axes, keepdims=True)
    stddev = sqrt(_reduce.mean((image - mean) ** 2, axis=axes, keepdims=True))
    floor = image.dtype.type(1.0 / np.sqrt(count))
    return (image - mean) / maximum(stddev, floor)


namespace = public_namespace("gradtape.image", "TF's tf.image names over gradtape's ops.", {
    "ResizeMethod": ResizeMethod, "resize": resize, "flip_left_right": flip_left_right,
    "flip_up_down": flip_up_down, "random_flip_left_right": random_flip_left_right,
    "random_flip_up_down": random_flip_up_down,
    "crop_to_bounding_box": crop_to_bounding_box,
    "pad_to_bounding_box": pad_to_bounding_box,
    "per_image_standardization": per_image_standardization, "transpose": transpose,
    "rot90": rot90, "central_crop": central_crop,
    "resize_with_crop_or_pad": resize_with_crop_or_pad,
})
