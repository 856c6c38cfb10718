"""Shape primitives: reshape, transpose, broadcasting and their friends.

``unbroadcast`` is the one place broadcasting is undone: the summed axes are computed
from static shapes when the rule runs, so the generated code is a single ``np.sum``.
Primitives give explicit shape rules: the default (running the implementation on arrays
of ones) would allocate a full-size array per traced equation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InvalidArgumentError
from ..ir.nodes import Aval
from ..tensor import Tensor, concrete_value
from . import index as _index
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand, unchanged

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
    vjp=lambda g, y, x, shape: (reshape(g, x.shape),),
    jvp=lambda ts, y, x, shape: reshape(ts[0], shape),
    shape_rule=lambda x, shape: Aval(shape, x.dtype),
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
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise InvalidArgumentError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if shape == tuple(x.shape):
        return unchanged(x)
    if math.prod(shape) != size:
        raise InvalidArgumentError(f"Cannot reshape a tensor of shape {x.shape} into {shape}.")
    return bind(reshape_p, x, shape=shape)


# --- transpose ----------------------------------------------------------------------

def _transpose_impl(x, axes):
    try:
        return x.transpose(axes)
    except AttributeError:  # a Python scalar or list (an IR literal)
        return np.transpose(x, axes)


transpose_p = Primitive(
    "transpose", _transpose_impl,
    vjp=lambda g, y, x, axes: (transpose(g, tuple(np.argsort(axes).tolist())),),
    jvp=lambda ts, y, x, axes: transpose(ts[0], axes),
    shape_rule=lambda x, axes: Aval(tuple(x.shape[a] for a in axes), x.dtype),
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


broadcast_to_p = Primitive(
    "broadcast_to", _broadcast_to_impl,
    vjp=lambda g, y, x, shape: (unbroadcast(g, x.shape),),
    jvp=lambda ts, y, x, shape: broadcast_to(ts[0], shape),
    shape_rule=lambda x, shape: Aval(shape, x.dtype),
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
    return np.add.reduce(g, axis=axes).reshape(shape)


unbroadcast_p = Primitive(
    "unbroadcast", _unbroadcast_impl,
    vjp=lambda g, y, x, axes, shape: (broadcast_to(g, x.shape),),
    jvp=lambda ts, y, x, axes, shape: unbroadcast(ts[0], shape),
    shape_rule=lambda g, axes, shape: Aval(shape, g.dtype),
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
    shape_rule=lambda x: x.aval,
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


# --- batching rules: the batch axis is a leading axis the op leaves alone -------------------

def _batch_broadcast_to(size, args, batched, shape):
    x = args[0]
    logical = tuple(x.shape[1:])
    x = reshape(x, (size,) + (1,) * (len(shape) - len(logical)) + logical)
    return broadcast_to(x, (size,) + shape)


reshape_p.batch = lambda size, args, batched, shape: reshape(args[0], (size,) + shape)
transpose_p.batch = lambda size, args, batched, axes: transpose(
    args[0], (0,) + tuple(a + 1 for a in axes)
)
broadcast_to_p.batch = _batch_broadcast_to
unbroadcast_p.batch = lambda size, args, batched, axes, shape: bind(
    unbroadcast_p, args[0], axes=tuple(a + 1 for a in axes), shape=(size,) + shape
)
identity_p.batch = lambda size, args, batched: identity(args[0])


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


# --- concatenate and the stacks built on it ------------------------------------------

def _concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _concatenate_shape(*xs, axis):
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return Aval(tuple(shape), np.result_type(*(x.dtype for x in xs)))


def _concatenate_vjp(g, y, *xs, axis):
    cts, start = [], 0
    for x in xs:
        stop = start + x.shape[axis]
        cts.append(_index.index_axis(g, axis, ("slice", start, stop, None)))
        start = stop
    return tuple(cts)


def _concatenate_jvp(ts, y, *xs, axis):
    from .elementwise import zeros_like

    return bind(concatenate_p, *(zeros_like(x) if t is None else t for t, x in zip(ts, xs)),
                axis=axis)


concatenate_p = Primitive(
    "concatenate", _concatenate_impl, vjp=_concatenate_vjp, jvp=_concatenate_jvp,
    shape_rule=_concatenate_shape,
)


def _concatenate_batch(size, args, batched, *, axis):
    xs = [x if b else broadcast_to(x, (size,) + tuple(x.shape)) for x, b in zip(args, batched)]
    return bind(concatenate_p, *xs, axis=axis + 1)


concatenate_p.batch = _concatenate_batch


@implements(np.concatenate)
def concatenate(arrays: Any, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                casting: Any = None) -> Any:
    """Join tensors along an existing axis (all of them flattened if ``axis`` is None)."""
    if out is not None:
        raise TypeError("concatenate(..., out=) cannot write into a tensor: tensors are "
                        "immutable.")
    xs = [operand(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to concatenate.")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if dtype is not None:
        from .elementwise import cast

        xs = [cast(x, dtype) for x in xs]
    ndim = len(xs[0].shape)
    if ndim == 0:
        raise ValueError("zero-dimensional tensors cannot be concatenated.")
    axis = _normalize_axis(int(axis), ndim)
    for x in xs[1:]:
        same = len(x.shape) == ndim and all(
            d == e for i, (d, e) in enumerate(zip(x.shape, xs[0].shape)) if i != axis
        )
        if not same:
            raise InvalidArgumentError(
                f"All tensors must have the same shape except along axis {axis}; got "
                f"{tuple(xs[0].shape)} and {tuple(x.shape)}."
            )
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, axis=axis)


def concat(values: Any, axis: int, name: str | None = None) -> Any:
    """TF's name for :func:`concatenate`."""
    del name
    return concatenate(values, axis=axis)


@implements(np.stack)
def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: Any = None, name: str | None = None) -> Any:
    """Join same-shaped tensors along a new axis (TF's ``tf.stack`` and NumPy's)."""
    del name
    if out is not None:
        raise TypeError("stack(..., out=) cannot write into a tensor: tensors are immutable.")
    xs = [operand(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack.")
    shape = tuple(xs[0].shape)
    for x in xs[1:]:
        if tuple(x.shape) != shape:
            raise InvalidArgumentError(f"All tensors to stack must have the same shape; got "
                                       f"{shape} and {tuple(x.shape)}.")
    axis = _normalize_axis(int(axis), len(shape) + 1)
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis, dtype=dtype)


def unstack(value: Any, num: int | None = None, axis: int = 0,
            name: str | None = None) -> list:
    """TF's ``tf.unstack``: the slices of ``value`` along ``axis``, as a list."""
    del name
    value = operand(value)
    axis = _normalize_axis(int(axis), len(value.shape))
    n = value.shape[axis]
    if num is not None and num != n:
        raise ValueError(f"num={num} does not match the size {n} of axis {axis}.")
    return [_index.index_axis(value, axis, i) for i in range(n)]


def _atleast(arys, shape_of):
    out = []
    for a in arys:
        a = operand(a)
        out.append(reshape(a, shape_of(tuple(a.shape))))
    return out[0] if len(out) == 1 else out


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    """Each input viewed with at least one dimension."""
    return _atleast(arys, lambda s: s if len(s) >= 1 else (1,))


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    """Each input viewed with at least two dimensions (a row for 1-d inputs)."""
    return _atleast(arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def _shape_3d(s):
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return s + (1,)
    return s


@implements(np.atleast_3d)
def atleast_3d(*arys: Any) -> Any:
    """Each input viewed with at least three dimensions (NumPy's placement of new axes)."""
    return _atleast(arys, _shape_3d)


def _as_list(x):
    return x if isinstance(x, list) else [x]


@implements(np.hstack)
def hstack(tup: Any, *, dtype: Any = None, casting: Any = None) -> Any:
    """Join along the second axis (the first for 1-d inputs)."""
    xs = _as_list(atleast_1d(*tup))
    return concatenate(xs, axis=0 if len(xs[0].shape) == 1 else 1, dtype=dtype)


@implements(np.vstack)
def vstack(tup: Any, *, dtype: Any = None, casting: Any = None) -> Any:
    """Join along the first axis, 1-d inputs becoming rows."""
    return concatenate(_as_list(atleast_2d(*tup)), axis=0, dtype=dtype)


@implements(np.dstack)
def dstack(tup: Any) -> Any:
    """Join along the third axis."""
    return concatenate(_as_list(atleast_3d(*tup)), axis=2)


def _as_column(a: Any) -> Any:
    """NumPy's column_stack piece: a 1-d array as a column, a scalar as a 1x1 array."""
    a = operand(a)
    if len(a.shape) >= 2:
        return a
    return reshape(a, (a.shape[0], 1) if a.shape else (1, 1))


def _column_stack_rows(t: Any) -> Any:
    """``np.column_stack(t)`` of one tensor: NumPy iterates it, so its rows are the
    pieces (a 1-d tensor gives one row, (1, n)); built from the whole tensor at once."""
    shape = tuple(t.shape)
    if not shape:
        raise TypeError("iteration over a 0-d tensor: np.column_stack needs a sequence.")
    if len(shape) == 1:
        return reshape(t, (1, shape[0]))
    rows_side_by_side = moveaxis(t, 0, 1)  # (d1, n, d2, ...): row i at [:, i]
    return reshape(rows_side_by_side, (shape[1], -1) + shape[3:])


@implements(np.column_stack)
def column_stack(tup: Any) -> Any:
    """1-d inputs as columns, joined along the second axis (NumPy's rule)."""
    if isinstance(tup, Tensor):
        return _column_stack_rows(tup)
    return concatenate([_as_column(a) for a in tup], axis=1)


__all__ += ["concatenate", "concat", "stack", "unstack", "atleast_1d", "atleast_2d",
            "atleast_3d", "hstack", "vstack", "dstack", "column_stack"]


# --- split: slices, so every piece is a single-output op -------------------------------

def _pieces(x, axis: int, bounds) -> list:
    return [_index.index_axis(x, axis, ("slice", start, stop, None)) for start, stop in bounds]


def _np_split_bounds(n: int, indices_or_sections, equal: bool) -> list[tuple]:
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        if equal and extra:
            raise ValueError("array split does not result in an equal division.")
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        points = [0] + [int(i) for i in indices_or_sections] + [n]
    return list(zip(points[:-1], points[1:]))


def _np_split(ary, indices_or_sections, axis=0, *, equal=True):
    ary = operand(ary)
    axis = _normalize_axis(int(axis), len(ary.shape))
    bounds = _np_split_bounds(ary.shape[axis], indices_or_sections, equal)
    return _pieces(ary, axis, bounds)


@implements(np.split)
def _numpy_split(ary, indices_or_sections, axis=0):
    """NumPy's ``split``: an int (equal sections) or the indices where pieces start."""
    return _np_split(ary, indices_or_sections, axis)


@implements(np.array_split)
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's ``array_split``: like NumPy's split, sections may be unequal."""
    return _np_split(ary, indices_or_sections, axis, equal=False)


@implements(np.hsplit)
def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's ``hsplit``: split along the second axis (the first for 1-d)."""
    ary = operand(ary)
    if len(ary.shape) == 0:
        raise ValueError("hsplit only works on tensors of 1 or more dimensions.")
    return _np_split(ary, indices_or_sections, 1 if len(ary.shape) > 1 else 0)


@implements(np.vsplit)
def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's ``vsplit``: split along the first axis of a tensor of rank >= 2."""
    ary = operand(ary)
    if len(ary.shape) < 2:
        raise ValueError("vsplit only works on tensors of 2 or more dimensions.")
    return _np_split(ary, indices_or_sections, 0)


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None,
          name: str | None = None) -> list:
    """TF's ``tf.split``: an int gives that many equal pieces; a list gives the pieces'
    SIZES (one may be -1). ``np.split(t, ...)`` keeps NumPy's meaning (split indices)."""
    del name
    value = operand(value)
    axis = _normalize_axis(int(axis), len(value.shape))
    n = value.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)):
        pieces = int(num_or_size_splits)
        if pieces <= 0 or n % pieces:
            raise InvalidArgumentError(f"Cannot split axis {axis} of size {n} into {pieces} "
                                       "equal pieces; pass a list of sizes instead.")
        sizes = [n // pieces] * pieces
    else:
        sizes = [int(s) for s in np.asarray(num_or_size_splits).reshape(-1)]
        if sizes.count(-1) > 1:
            raise InvalidArgumentError("At most one size in num_or_size_splits may be -1.")
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise InvalidArgumentError(f"The sizes {sizes} do not add up to the size {n} of "
                                       f"axis {axis}.")
    if num is not None and num != len(sizes):
        raise ValueError(f"num={num} does not match the {len(sizes)} pieces.")
    points = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
    return _pieces(value, axis, list(zip(points[:-1], points[1:])))


__all__ += ["split", "array_split", "hsplit", "vsplit"]


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


# --- flip and roll: slices ---------------------------------------------------------------

@implements(np.flip)
def flip(m: Any, axis: Any = None) -> Any:
    """``m`` with the order of elements reversed along ``axis`` (all axes if None)."""
    m = operand(m)
    ndim = len(m.shape)
    axes = tuple(range(ndim)) if axis is None else _normalize_axes(axis, ndim)
    if not axes:
        return m
    template = tuple(("slice", None, None, -1) if i in axes else _index._FULL
                     for i in range(ndim))
    return bind(_index.getitem_p, m, index=template)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    """TF's ``tf.reverse``: :func:`flip` along the given axes."""
    del name
    return flip(tensor, axis=tuple(int(a) for a in np.asarray(axis).reshape(-1)))


@implements(np.fliplr)
def fliplr(m: Any) -> Any:
    """Reverse the second axis."""
    m = operand(m)
    if len(m.shape) < 2:
        raise ValueError("fliplr needs a tensor of rank >= 2.")
    return flip(m, 1)


@implements(np.flipud)
def flipud(m: Any) -> Any:
    """Reverse the first axis."""
    m = operand(m)
    if len(m.shape) < 1:
        raise ValueError("flipud needs a tensor of rank >= 1.")
    return flip(m, 0)


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None, name: str | None = None) -> Any:
    """Elements shifted cyclically by ``shift`` along ``axis`` (NumPy's and TF's)."""
    del name
    a = operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), tuple(a.shape))
    ndim = len(a.shape)
    total: dict[int, int] = {}
    for s, ax in np.broadcast(np.asarray(shift), np.asarray(axis)):
        ax = _normalize_axis(int(ax), ndim)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in sorted(total.items()):
        n = a.shape[ax]
        if n == 0 or s % n == 0:
            continue
        cut = n - s % n
        tail = _index.index_axis(a, ax, ("slice", cut, None, None))
        head = _index.index_axis(a, ax, ("slice", None, cut, None))
        a = concatenate([tail, head], axis=ax)
    return unchanged(a)


__all__ += ["flip", "reverse", "fliplr", "flipud", "roll"]


# --- pad ------------------------------------------------------------------------------

def _pad_impl(x, pad_width, value):
    return np.pad(x, pad_width, mode="constant", constant_values=value)


def _pad_shape(x, pad_width, value):
    shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pad_width))
    return Aval(shape, x.dtype)


def _pad_vjp(g, y, x, pad_width, value):
    template = tuple(("slice", b, b + d, None) for d, (b, _) in zip(x.shape, pad_width))
    return (bind(_index.getitem_p, g, index=template),)


pad_p = Primitive(
    "pad", _pad_impl, vjp=_pad_vjp,
    jvp=lambda ts, y, x, pad_width, value: bind(pad_p, ts[0], pad_width=pad_width, value=0),
    shape_rule=_pad_shape,
)

pad_p.batch = lambda size, args, batched, pad_width, value: bind(
    pad_p, args[0], pad_width=((0, 0),) + pad_width, value=value
)

_GATHER_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


@implements(np.pad)
def pad(array: Any, pad_width: Any = None, mode: str = "constant", constant_values: Any = 0,
        *, paddings: Any = None, name: str | None = None, **kwargs: Any) -> Any:
    """NumPy's ``pad`` and TF's ``tf.pad(tensor, paddings, mode, constant_values)``.

    Modes: constant (a scalar value), edge, reflect, symmetric, wrap (TF's CONSTANT,
    REFLECT, SYMMETRIC). The padding value gets no gradient, as in TF.
    """
    del name
    if paddings is not None:
        pad_width = paddings
    if kwargs:
        raise TypeError(f"gradtape pad does not support the arguments {sorted(kwargs)}.")
    array = operand(array)
    ndim = len(array.shape)
    widths = np.asarray(concrete_value(pad_width) if hasattr(pad_width, "_value") else pad_width)
    if not np.issubdtype(widths.dtype, np.integer):
        raise TypeError(f"pad widths must be integers, got {widths.dtype}.")
    if widths.ndim == 2 and widths.shape[0] != ndim:
        raise ValueError(f"paddings has {widths.shape[0]} rows for a tensor of rank {ndim}.")
    widths = np.broadcast_to(widths, (ndim, 2))
    if (widths < 0).any():
        raise InvalidArgumentError("pad widths must be non-negative.")
    pad_width = tuple((int(b), int(a)) for b, a in widths)
    mode = str(mode).lower()
    if all(b == 0 and a == 0 for b, a in pad_width):
        return array
    if mode == "constant":
        if np.ndim(constant_values) != 0:
            raise NotImplementedError("gradtape pad takes one scalar constant value.")
        value = np.asarray(constant_values).item()
        return bind(pad_p, array, pad_width=pad_width, value=value)
    if mode not in _GATHER_PAD_MODES:
        raise NotImplementedError(
            f"pad mode {mode!r} is not supported; use one of constant, "
            f"{', '.join(_GATHER_PAD_MODES)}."
        )
    # These modes copy existing elements: gather them along each axis.
    for ax, (b, a) in enumerate(pad_width):
        if b or a:
            index = np.pad(np.arange(array.shape[ax]), (b, a), mode=mode)
            array = _index.take_static(array, index, axis=ax)
    return array


__all__ += ["pad"]


# --- triu and tril -----------------------------------------------------------------------

def _triu_impl(x, k):
    return np.triu(x, k)


def _tril_impl(x, k):
    return np.tril(x, k)


def _same_aval(x, k):
    return Aval(tuple(x.shape), x.dtype)


triu_p = Primitive(
    "triu", _triu_impl,
    vjp=lambda g, y, x, k: (bind(triu_p, g, k=k),),
    jvp=lambda ts, y, x, k: bind(triu_p, ts[0], k=k),
    shape_rule=_same_aval,
)
tril_p = Primitive(
    "tril", _tril_impl,
    vjp=lambda g, y, x, k: (bind(tril_p, g, k=k),),
    jvp=lambda ts, y, x, k: bind(tril_p, ts[0], k=k),
    shape_rule=_same_aval,
)


# Both act on the last two axes: a leading batch axis changes nothing.
triu_p.batch = lambda size, args, batched, k: bind(triu_p, args[0], k=k)
tril_p.batch = lambda size, args, batched, k: bind(tril_p, args[0], k=k)


def _triangle(prim, m, k):
    m = operand(m)
    if len(m.shape) == 0:
        raise ValueError(f"{prim.name} needs a tensor of rank >= 1.")
    if len(m.shape) == 1:  # NumPy's rule: a 1-d input is repeated into rows
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return bind(prim, m, k=int(k))


@implements(np.triu)
def triu(m: Any, k: int = 0) -> Any:
    """The upper triangle of the last two axes (zero below the ``k``-th diagonal)."""
    return _triangle(triu_p, m, k)


@implements(np.tril)
def tril(m: Any, k: int = 0) -> Any:
    """The lower triangle of the last two axes (zero above the ``k``-th diagonal)."""
    return _triangle(tril_p, m, k)


__all__ += ["triu", "tril"]
