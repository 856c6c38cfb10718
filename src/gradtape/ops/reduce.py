"""Reductions over axes, with keepdims, and their rules."""

from __future__ import annotations

import builtins

import numpy as np

from . import shape as _shape
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand

__all__ = ["sum", "reduce_sum"]


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for a tensor of rank {ndim}.")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"Repeated axis in {tuple(axis)}.")
    return tuple(sorted(out))


def keepdims_shape(shape, axes) -> tuple[int, ...]:
    """``shape`` with the reduced ``axes`` kept as size 1."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def expand_reduced(g, x_shape, axes, keepdims):
    """A reduction's cotangent broadcast back to its input's shape."""
    if not keepdims:
        g = _shape.reshape(g, keepdims_shape(x_shape, axes))
    return _shape.broadcast_to(g, x_shape)


def _sum_impl(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims)


sum_p = Primitive(
    "sum", _sum_impl,
    vjp=lambda g, y, x, axis, keepdims: (expand_reduced(g, x.shape, axis, keepdims),),
    jvp=lambda ts, y, x, axis, keepdims: sum(ts[0], axis, keepdims),
)


@implements(np.sum)
def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    """Sum over ``axis`` (all axes by default)."""
    if dtype is not None:
        raise TypeError("gradtape sum: cast the input instead of passing dtype=.")
    x = operand(x)
    axes = normalize_axes(axis, len(x.shape))
    if not axes and not keepdims:
        return x
    return bind(sum_p, x, axis=axes, keepdims=bool(keepdims))


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """TF's name for :func:`sum`."""
    del name
    return sum(input_tensor, axis=axis, keepdims=keepdims)
