"""Shape primitives: reshape, transpose, broadcasting and their friends.

``unbroadcast`` is the one place broadcasting is undone: the summed axes are computed
from static shapes when the rule runs. It sums by GEMV over leading axes where ``leading_sums`` says
so, and generated code calls its implementation, as the interpreter does.
Primitives give explicit shape rules: the default (running the implementation on arrays
of ones) would allocate a full-size array per traced equation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.tensor import concrete_value
from ..ir.nodes import Aval
from . import index as _index
from .leading_sums import MIN_SIZE, by_gemv, gemv_sum
from .numpy_dispatch import implements
from .registry import ArrayShorthand, Primitive, bind, operand, unchanged

__all__ = ["reshape", "transpose", "broadcast_to", "unbroadcast", "expand_dims"]


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"axis {axis} is out of bounds for a tensor of rank {ndim}.")
    return axis % ndim


# --- reshape ------------------------------------------------------------------------

def _reshape_impl(x, shape):
    # The array's method skips np.reshape's dispatch layer: this runs on every eager op.
    try:
        return x.reshape(shape)
    except AttributeError:  # a Python scalar or list (an IR literal)
        return np.reshape(x, shape)


reshape_p = Primitive(
    "reshape", _reshape_impl,
    residuals=(),  # the rules read the input's shape only
    vjp=lambda g, y, x, shape: (reshape(g, x.shape),),
    jvp=lambda ts, y, x, shape: reshape(ts[0], shape),
    shape_rule=lambda x, shape: Aval(shape, x.dtype),
    batch=lambda size, args, batched, shape: reshape(args[0], (size,) + shape),
    template="reshape({0}, {shape})", array_template="{0}.reshape({shape})",
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
    size = math.prod(x.shape)  # Python ints: no overflow, and cheaper than np.prod here
    if -1 in shape:
        _check_one_unknown(shape)
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise InvalidArgumentError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if shape == tuple(x.shape):
        return unchanged(x)
    if math.prod(shape) != size:
        raise InvalidArgumentError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
    return bind(reshape_p, x, shape=shape)


def _check_one_unknown(shape: tuple[int, ...]) -> None:
    """TF's error for a shape with several -1 (which size each takes is ambiguous)."""
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise InvalidArgumentError(
            f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}: "
            f"reshape to {shape} leaves the sizes ambiguous; give all but one of them.")


# --- transpose ----------------------------------------------------------------------

def _transpose_impl(x, axes):
    try:
        return x.transpose(axes)
    except AttributeError:  # a Python scalar or list (an IR literal)
        return np.transpose(x, axes)


transpose_p = Primitive(
    "transpose", _transpose_impl,
    residuals=(),  # the rules read the input's shape only
    vjp=lambda g, y, x, axes: (transpose(g, tuple(np.argsort(axes).tolist())),),
    jvp=lambda ts, y, x, axes: transpose(ts[0], axes),
    shape_rule=lambda x, axes: Aval(tuple(x.shape[a] for a in axes), x.dtype),
    batch=lambda size, args, batched, axes: transpose(
        args[0], (0,) + tuple(a + 1 for a in axes)
    ),
    template="transpose({0}, {axes})", array_template="{0}.transpose({axes})",
    array_shorthands=(ArrayShorthand(lambda p: tuple(p["axes"]) == (1, 0), "{0}.T",
                                     frozenset({"axes"})),),
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
        raise InvalidArgumentError(
            f"axes {axes} are not a permutation of a rank-{ndim} tensor's axes.")
    if axes == tuple(range(ndim)):
        return unchanged(x)
    return bind(transpose_p, x, axes=axes)


# --- broadcasting and its transpose -------------------------------------------------

def _broadcast_to_impl(x, shape):
    return np.broadcast_to(x, shape)


def _batch_broadcast_to(size, args, batched, shape):
    """The batch axis is a leading axis the op leaves alone."""
    x = args[0]
    logical = tuple(x.shape[1:])
    x = reshape(x, (size,) + (1,) * (len(shape) - len(logical)) + logical)
    return broadcast_to(x, (size,) + shape)


broadcast_to_p = Primitive(
    "broadcast_to", _broadcast_to_impl,
    residuals=(),  # the rules read the input's shape only
    vjp=lambda g, y, x, shape: (unbroadcast(g, x.shape),),
    jvp=lambda ts, y, x, shape: broadcast_to(ts[0], shape),
    shape_rule=lambda x, shape: Aval(shape, x.dtype),
    batch=_batch_broadcast_to,
    template="broadcast_to({0}, {shape})",
)


@implements(np.broadcast_to)
def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view in NumPy; a new tensor here)."""
    shape = tuple(int(d) for d in shape)
    x = operand(x)
    if tuple(x.shape) == shape:
        return unchanged(x)
    np.broadcast_shapes(tuple(x.shape), shape)  # raises ValueError if incompatible
    return bind(broadcast_to_p, x, shape=shape)


def _unbroadcast_impl(g, axes, shape):
    # The size first: a small sum asks nothing more (it runs in every eager step).
    if g.__class__ is np.ndarray and g.size >= MIN_SIZE and by_gemv(g.shape, g.dtype, axes):
        return gemv_sum(g, axes).reshape(shape)
    return np.add.reduce(g, axis=axes).reshape(shape)


def _unbroadcast_vjp(g, y, x, axes, shape):
    """Spread ``g`` back over the summed ``axes``. They are the equation's own: a
    batched unbroadcast keeps its leading batch axis and sums axis 1, which
    ``broadcast_to`` alone would align wrongly."""
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return (broadcast_to(reshape(g, kept), x.shape),)


def _unbroadcast_jvp(ts, y, x, axes, shape):
    """Linear: the same sum of the tangent, over the equation's ``axes`` (recomputing
    them from the shapes, as ``unbroadcast`` does, takes a batch axis for a leading one)."""
    t = ts[0]
    if tuple(t.shape) != tuple(x.shape):
        t = broadcast_to(t, x.shape)
    return bind(unbroadcast_p, t, axes=axes, shape=shape)


unbroadcast_p = Primitive(
    "unbroadcast", _unbroadcast_impl,
    vjp=_unbroadcast_vjp,
    jvp=_unbroadcast_jvp,
    shape_rule=lambda g, axes, shape: Aval(shape, g.dtype),
    batch=lambda size, args, batched, axes, shape: bind(
        unbroadcast_p, args[0], axes=tuple(a + 1 for a in axes), shape=(size,) + shape
    ),
    # No template: generated code calls the implementation, so it sums as the
    # interpreter does, bit for bit (the GEMV's order is not np.sum's).
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
    kind_neutral=True,
    vjp=lambda g, y, x: (g,),
    jvp=lambda ts, y, x: ts[0],
    shape_rule=lambda x: x.aval,
    batch=lambda size, args, batched: identity(args[0]),
    template="{0}",
)


def identity(x):
    """A new tensor with the same value (TF's ``tf.identity``); gradients pass through."""
    return bind(identity_p, operand(x))


@implements(np.copy)
def _np_copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """NumPy's ``copy``: a new tensor with ``a``'s value (a snapshot of a variable);
    the gradient passes through, as ``identity``'s."""
    del order, subok  # a tensor's layout is not observable
    return identity(a)


__all__.append("identity")


# --- stop_gradient -------------------------------------------------------------------

# No VJP: never recorded by a tape, and skipped by autodiff when it appears in IR.
# (``custom_gradient``, its counterpart, is the tape's: ``tape/custom_gradient.py``.)
stop_gradient_p = Primitive(
    "stop_gradient", _identity_impl,
    kind_neutral=True,
    batch=lambda size, args, batched: bind(stop_gradient_p, args[0]),
)


def stop_gradient(input: Any, name: str | None = None) -> Any:  # TF's name
    """``input`` as a constant: no gradient flows through it (``tf.stop_gradient``)."""
    del name
    return bind(stop_gradient_p, operand(input))


# --- axis helpers --------------------------------------------------------------------

def _normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (an int or a sequence) as a sorted tuple of distinct non-negative axes."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = sorted(_normalize_axis(int(a), ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"Repeated axis in {tuple(axes)}.")
    return tuple(out)


# --- squeeze, ravel, swapaxes, moveaxis (composites of reshape and transpose) -----------

@implements(np.squeeze)
def squeeze(a: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Any:
    """``a`` without its size-1 axes (only those in ``axis`` if given; TF's and NumPy's)."""
    del name
    if squeeze_dims is not None:
        axis = squeeze_dims
    a = operand(a)
    shape = tuple(a.shape)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = _normalize_axes(axis, len(shape))
        for ax in axes:
            if shape[ax] != 1:
                raise InvalidArgumentError(
                    f"Cannot squeeze axis {ax} of a tensor of shape {shape}: its size is "
                    f"{shape[ax]}, not 1."
                )
    return reshape(a, tuple(d for i, d in enumerate(shape) if i not in axes))


@implements(np.ravel)
def ravel(a: Any, order: str = "C") -> Any:
    """``a`` as a 1-d tensor (row-major)."""
    return reshape(a, (-1,), order=order)


flatten = ravel


@implements(np.swapaxes)
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``a`` with two axes exchanged."""
    a = operand(a)
    ndim = len(a.shape)
    perm = list(range(ndim))
    i, j = _normalize_axis(int(axis1), ndim), _normalize_axis(int(axis2), ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, tuple(perm))


@implements(np.moveaxis)
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """``a`` with the axes ``source`` moved to positions ``destination`` (NumPy's)."""
    a = operand(a)
    ndim = len(a.shape)
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements.")
    src = tuple(_normalize_axis(int(s), ndim) for s in src)
    dst = tuple(_normalize_axis(int(d), ndim) for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis in moveaxis `source` or `destination`.")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, tuple(order))


__all__ += ["squeeze", "ravel", "flatten", "swapaxes", "moveaxis"]


# --- tile and repeat: broadcasting in disguise -----------------------------------------

@implements(np.tile)
def tile(A: Any, reps: Any = None, multiples: Any = None, name: str | None = None) -> Any:
    """``A`` repeated ``reps`` times along each axis (TF calls ``reps`` ``multiples``)."""
    del name
    if multiples is not None:
        reps = multiples
    A = operand(A)
    reps = tuple(int(r) for r in np.asarray(reps).reshape(-1))
    shape = tuple(A.shape)
    ndim = max(len(shape), len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - len(shape)) + shape
    if any(r < 0 for r in reps):
        raise InvalidArgumentError(f"tile repetitions must be non-negative, got {reps}.")
    A = reshape(A, shape)
    if all(r == 1 for r in reps):
        return A
    # (d1, d2) -> (1, d1, 1, d2) -> broadcast (r1, d1, r2, d2) -> (r1*d1, r2*d2)
    interleaved = tuple(v for d in shape for v in (1, d))
    tiled = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    out = broadcast_to(reshape(A, interleaved), tiled)
    return reshape(out, tuple(r * d for r, d in zip(reps, shape)))


@implements(np.repeat)
def repeat(a: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Any:
    """Each element repeated ``repeats`` times (an int, or one count per element)."""
    del name
    a = operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = tuple(a.shape)
    axis = _normalize_axis(int(axis), len(shape))
    counts = np.asarray(concrete_value(repeats) if hasattr(repeats, "_value") else repeats)
    if not np.issubdtype(counts.dtype, np.integer):
        raise TypeError(f"repeats must be integers, got {counts.dtype}.")
    if counts.ndim == 0 or counts.size == 1:
        r = int(counts.reshape(()))
        if r < 0:
            raise InvalidArgumentError("repeats may not contain negative values.")
        # (.., d, ..) -> (.., d, 1, ..) -> broadcast (.., d, r, ..) -> (.., d*r, ..)
        x = reshape(a, shape[:axis + 1] + (1,) + shape[axis + 1:])
        x = broadcast_to(x, shape[:axis + 1] + (r,) + shape[axis + 1:])
        return reshape(x, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])
    index = np.repeat(np.arange(shape[axis]), counts)  # NumPy's errors for bad counts
    return _index.take_static(a, index, axis=axis)


__all__ += ["tile", "repeat"]
