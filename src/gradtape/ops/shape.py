"""Shape primitives: reshape, transpose, broadcasting and their friends.

``unbroadcast`` is the one place broadcasting is undone: the summed axes are computed
from static shapes when the rule runs, so the generated code is a single ``np.sum``.
"""

from __future__ import annotations

import numpy as np

from .numpy_dispatch import implements
from .registry import Primitive, bind, operand

__all__ = ["reshape", "transpose", "broadcast_to", "unbroadcast", "expand_dims"]


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for a tensor of rank {ndim}.")
    return axis % ndim


# --- reshape ------------------------------------------------------------------------

def _reshape_impl(x, shape):
    return np.reshape(x, shape)


reshape_p = Primitive(
    "reshape", _reshape_impl,
    vjp=lambda g, y, x, shape: (reshape(g, x.shape),),
    jvp=lambda ts, y, x, shape: reshape(ts[0], shape),
)


@implements(np.reshape)
def reshape(x, shape, order="C"):
    """``x`` with a new shape (one dimension may be -1)."""
    if order != "C":
        raise ValueError("gradtape reshape supports order='C' only.")
    x = operand(x)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        size = int(np.prod(x.shape, dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if shape == tuple(x.shape):
        return x
    if int(np.prod(shape, dtype=np.int64)) != int(np.prod(x.shape, dtype=np.int64)):
        raise ValueError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
    return bind(reshape_p, x, shape=shape)


# --- transpose ----------------------------------------------------------------------

def _transpose_impl(x, axes):
    return np.transpose(x, axes)


transpose_p = Primitive(
    "transpose", _transpose_impl,
    vjp=lambda g, y, x, axes: (transpose(g, tuple(np.argsort(axes).tolist())),),
    jvp=lambda ts, y, x, axes: transpose(ts[0], axes),
)


@implements(np.transpose)
def transpose(x, axes=None, perm=None):
    """Permute axes (reverse them by default). ``perm`` is TF's name for ``axes``."""
    if perm is not None:
        axes = perm
    x = operand(x)
    ndim = len(x.shape)
    axes = tuple(range(ndim))[::-1] if axes is None else tuple(
        _normalize_axis(int(a), ndim) for a in axes
    )
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"axes {axes} are not a permutation of a rank-{ndim} tensor's axes.")
    if axes == tuple(range(ndim)):
        return x
    return bind(transpose_p, x, axes=axes)


# --- broadcasting and its transpose -------------------------------------------------

def _broadcast_to_impl(x, shape):
    return np.broadcast_to(x, shape)


broadcast_to_p = Primitive(
    "broadcast_to", _broadcast_to_impl,
    vjp=lambda g, y, x, shape: (unbroadcast(g, x.shape),),
    jvp=lambda ts, y, x, shape: broadcast_to(ts[0], shape),
)


@implements(np.broadcast_to)
def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view in NumPy; a new tensor here)."""
    shape = tuple(int(d) for d in shape)
    x = operand(x)
    if tuple(x.shape) == shape:
        return x
    np.broadcast_shapes(tuple(x.shape), shape)  # raises ValueError if incompatible
    return bind(broadcast_to_p, x, shape=shape)


def _unbroadcast_impl(g, axes, shape):
    return np.reshape(np.sum(g, axis=axes), shape)


unbroadcast_p = Primitive(
    "unbroadcast", _unbroadcast_impl,
    vjp=lambda g, y, x, axes, shape: (broadcast_to(g, x.shape),),
    jvp=lambda ts, y, x, axes, shape: unbroadcast(ts[0], shape),
)


def unbroadcast(g, shape):
    """Sum ``g`` over the axes that broadcasting to ``g.shape`` added to ``shape``."""
    shape = tuple(shape)
    g_shape = tuple(g.shape)
    if g_shape == shape:
        return g
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and g_shape[lead + i] != 1
    )
    return bind(unbroadcast_p, g, axes=axes, shape=shape)


# --- expand_dims --------------------------------------------------------------------

@implements(np.expand_dims)
def expand_dims(x, axis):
    """Insert a size-1 axis at ``axis`` (an int or a tuple of ints)."""
    x = operand(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = len(x.shape) + len(axes)
    axes = sorted(_normalize_axis(a, ndim) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


# --- identity -----------------------------------------------------------------------

def _identity_impl(x):
    return x


identity_p = Primitive(
    "identity", _identity_impl,
    vjp=lambda g, y, x: (g,),
    jvp=lambda ts, y, x: ts[0],
)


def identity(x):
    """A new tensor with the same value (TF's ``tf.identity``); gradients pass through."""
    return bind(identity_p, operand(x))


__all__.append("identity")
