"""Keras 3's merging layers beside ``Add`` and ``Concatenate`` (in ``core.py``):
``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum``, ``Dot``, and the
functional forms ``add``, ``subtract``, ``multiply``, ``average``, ``maximum``,
``minimum``, ``concatenate`` and ``dot`` (each makes the layer and calls it)."""

from __future__ import annotations

import string
from functools import reduce
from typing import Any

from ... import ops
from ...core.tensor import Tensor, convert_to_tensor
from ..losses import l2_normalize
from .configs import config_entries
from .core import Add, Concatenate, _Merge

__all__ = ["Average", "Dot", "Maximum", "Minimum", "Multiply", "Subtract", "add",
           "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]

class _Elementwise(_Merge):
    """Combines a list of same-shape (or broadcastable) tensors entry by entry."""

    def _combine(self, a: Tensor, b: Tensor) -> Tensor:
        raise NotImplementedError

    def call(self, inputs: Any) -> Tensor:
        tensors = [convert_to_tensor(t) for t in self._checked(inputs)]
        return reduce(self._combine, tensors)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape[0]


class Subtract(_Elementwise):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    def call(self, inputs: Any) -> Tensor:
        tensors = self._checked(inputs)
        if len(tensors) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs!r}")
        return convert_to_tensor(tensors[0]) - convert_to_tensor(tensors[1])


class Multiply(_Elementwise):
    """The product of the inputs."""

    def _combine(self, a: Tensor, b: Tensor) -> Tensor:
        return a * b


class Average(_Elementwise):
    """The mean of the inputs."""

    def call(self, inputs: Any) -> Tensor:
        tensors = [convert_to_tensor(t) for t in self._checked(inputs)]
        return reduce(lambda a, b: a + b, tensors) / len(tensors)


class Maximum(_Elementwise):
    """The entrywise maximum of the inputs."""

    def _combine(self, a: Tensor, b: Tensor) -> Tensor:
        return ops.maximum(a, b)


class Minimum(_Elementwise):
    """The entrywise minimum of the inputs."""

    def _combine(self, a: Tensor, b: Tensor) -> Tensor:
        return ops.minimum(a, b)


class Dot(_Merge):
    """The dot product of two batches of tensors along ``axes`` (an int, or one axis per
    input; the batch axis is 0 and is kept): Keras's ``batch_dot``. ``(batch, n)`` with
    ``(batch, n)`` gives ``(batch, 1)``. With ``normalize``, each input is first
    L2-normalized along its axis, so the result is the cosine similarity."""

    def __init__(self, axes: int | tuple[int, int], normalize: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(axes, int) and (not isinstance(axes, (list, tuple))
                                          or len(axes) != 2):
            raise TypeError(f"Invalid type for argument `axes`: it should be an int or a "
                            f"list/tuple of 2 ints. Received: axes={axes!r}")
        self.axes = axes
        self.normalize = normalize

    def get_config(self) -> dict:
        return {**super().get_config(), **config_entries(self, "axes", "normalize")}

    def _axes_for(self, rank1: int, rank2: int) -> tuple[int, int]:
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else tuple(self.axes)
        return axes[0] % rank1, axes[1] % rank2

    def call(self, inputs: Any) -> Tensor:
        tensors = self._checked(inputs)
        if len(tensors) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs!r}")
        x1, x2 = (convert_to_tensor(t) for t in tensors)
        axis1, axis2 = self._axes_for(x1.ndim, x2.ndim)
        if x1.shape[axis1] != x2.shape[axis2]:
            raise ValueError(f"Incompatible input shapes for Dot: axis {axis1} of "
                             f"{tuple(x1.shape)} and axis {axis2} of {tuple(x2.shape)} "
                             "differ.")
        if self.normalize:
            x1, x2 = l2_normalize(x1, axis1), l2_normalize(x2, axis2)
        return _batch_dot(x1, x2, axis1, axis2)


def _batch_dot(x1: Tensor, x2: Tensor, axis1: int, axis2: int) -> Tensor:
    """Contracts ``axis1`` of ``x1`` with ``axis2`` of ``x2``, batch by batch; a result
    of rank 1 gets a trailing axis, as Keras's ``batch_dot`` gives it."""
    letters = iter(string.ascii_letters[2:])
    first = ["a"] + [next(letters) for _ in range(x1.ndim - 1)]
    second = ["a"] + [next(letters) for _ in range(x2.ndim - 1)]
    first[axis1] = second[axis2] = "b"
    result = [c for c in first if c != "b"] + [c for c in second[1:] if c != "b"]
    spec = f"{''.join(first)},{''.join(second)}->{''.join(result)}"
    out = ops.einsum(spec, x1, x2)
    return ops.expand_dims(out, -1) if len(result) == 1 else out


def add(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs: list[Any], **kwargs: Any) -> Tensor:
    """``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: list[Any], axis: int = -1, **kwargs: Any) -> Tensor:
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs: list[Any], axes: int | tuple[int, int] = -1, normalize: bool = False,
        **kwargs: Any) -> Tensor:
    """``Dot(axes=axes, normalize=normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)

