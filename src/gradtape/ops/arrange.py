"""Rearranging and masking elements: flip and roll (slices), pad (the transpose of a
slice), and triu and tril (masks of the last two axes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, concrete_value
from ..ir.nodes import Aval
from . import index as _index
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand, unchanged
from .shape import _normalize_axes, _normalize_axis, broadcast_to, ravel, reshape
from .stacking import concatenate

__all__: list[str] = []


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
    if isinstance(shift, Tensor) and state.tracer is not None:
        return _roll_by_tensor(a, shift, axis)
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


def _roll_by_tensor(a: Any, shift: Tensor, axis: Any) -> Any:
    """``roll`` by a tensor's amounts while a ``@gt.function`` traces: a gather at
    ``(arange(n) - shift) % n``, computed by ops, so the shift is an input of the trace
    (not a guard on its value)."""
    from .elementwise import cast, mod

    if not np.issubdtype(shift.dtype, np.integer):
        raise TypeError(f"roll's shift must be integers, got {shift.dtype}.")
    axes = np.asarray(axis)
    if shift.ndim > 1 or axes.ndim > 1 or (shift.ndim == 1 and axes.ndim == 1
                                           and shift.shape[0] != axes.shape[0]):
        raise ValueError(f"roll's shift (shape {tuple(shift.shape)}) and axis "
                         f"({axis!r}) must be scalars or 1-d of the same length.")
    ndim = len(a.shape)
    count = max(shift.shape[0] if shift.ndim else 1, axes.size)
    for k in range(count):
        s = _index.getitem(shift, k) if shift.ndim else shift
        ax = _normalize_axis(int(axes.flat[k if axes.ndim else 0]), ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        positions = mod(np.arange(n, dtype=np.int64) - cast(s, np.int64), n)
        a = _index.take(a, positions, axis=ax)
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
    batch=lambda size, args, batched, pad_width, value: bind(
        pad_p, args[0], pad_width=((0, 0),) + pad_width, value=value
    ),
)


_GATHER_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(tensor: Any, paddings: Any = None, mode: str = "CONSTANT", constant_values: Any = 0,
        name: str | None = None, *, pad_width: Any = None, **kwargs: Any) -> Any:
    """TF's ``tf.pad(tensor, paddings, mode, constant_values)``: one ``(before, after)``
    row per axis (one int or pair broadcasts to all axes). Modes: CONSTANT, REFLECT,
    SYMMETRIC (and NumPy's edge and wrap). The padding value gets no gradient, as in TF."""
    del name
    if paddings is None:
        paddings = pad_width
    return _pad(tensor, paddings, mode, constant_values, kwargs, one_row_per_axis=True)


@implements(np.pad)
def _np_pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """NumPy's ``pad``: constant, edge, reflect, symmetric, wrap. ``pad_width``
    broadcasts as NumPy's (an int, one ``(before, after)`` pair for all axes, or one
    pair per axis); ``constant_values`` too."""
    constant_values = kwargs.pop("constant_values", 0)
    return _pad(array, pad_width, mode, constant_values, kwargs, one_row_per_axis=False)


def _pad(array: Any, pad_width: Any, mode: str, constant_values: Any, kwargs: dict,
         one_row_per_axis: bool) -> Any:
    if kwargs.get("reflect_type", "even") == "even":
        kwargs.pop("reflect_type", None)
    if kwargs:
        raise TypeError(f"gradtape pad does not support the arguments {sorted(kwargs)} "
                        "(reflect_type='odd' neither).")
    array = operand(array)
    pad_width = _pad_pairs(pad_width, len(array.shape), one_row_per_axis)
    mode = str(mode).lower()
    if all(b == 0 and a == 0 for b, a in pad_width):
        return array
    if mode == "constant":
        return _constant_pad(array, pad_width, constant_values)
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


def _pad_pairs(pad_width: Any, ndim: int, one_row_per_axis: bool) -> tuple[tuple[int, int], ...]:
    """One ``(before, after)`` pair per axis. NumPy broadcasts ``pad_width`` to
    ``(ndim, 2)`` (``3``, ``(3,)``, ``(1, 2)`` and ``((1, 2),)`` mean every axis); TF's
    ``paddings`` given as rows needs one row per axis."""
    widths = np.asarray(concrete_value(pad_width) if hasattr(pad_width, "_value") else pad_width)
    if not np.issubdtype(widths.dtype, np.integer):
        raise TypeError(f"pad widths must be integers, got {widths.dtype}.")
    if one_row_per_axis and widths.ndim == 2 and widths.shape[0] != ndim:
        raise ValueError(f"paddings has {widths.shape[0]} rows for a tensor of rank {ndim}: "
                         "give one (before, after) row per axis.")
    try:
        widths = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad_width of shape {widths.shape} does not fit a tensor of rank {ndim}: give "
            "an int, one (before, after) pair for all axes, or one pair per axis."
        ) from None
    if (widths < 0).any():
        raise InvalidArgumentError("pad widths must be non-negative.")
    return tuple((int(b), int(a)) for b, a in widths)


def _constant_pad(array: Any, pad_width: tuple, constant_values: Any) -> Any:
    """Constant padding: one value for every side (one primitive), or NumPy's per-axis
    ``(before, after)`` values, padded side by side, axis by axis as NumPy fills them (so
    a later axis's value fills the corners it shares with an earlier one)."""
    values = np.asarray(concrete_value(constant_values)
                        if hasattr(constant_values, "_value") else constant_values)
    if values.ndim == 0:
        return bind(pad_p, array, pad_width=pad_width, value=values.item())
    try:
        values = np.broadcast_to(values, (len(pad_width), 2))
    except ValueError:
        raise ValueError(
            f"constant_values of shape {values.shape} does not fit a tensor of rank "
            f"{len(pad_width)}: give a value, one (before, after) pair, or one per axis."
        ) from None
    no_pad = ((0, 0),) * len(pad_width)
    for ax, (widths, sides) in enumerate(zip(pad_width, values)):
        for side, (width, value) in enumerate(zip(widths, sides)):
            if width:
                one_side = no_pad[:ax] + ((0, width) if side else (width, 0),) + no_pad[ax + 1:]
                array = bind(pad_p, array, pad_width=one_side, value=value.item())
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
    # Both act on the last two axes: a leading batch axis changes nothing.
    batch=lambda size, args, batched, k: bind(triu_p, args[0], k=k),
)
tril_p = Primitive(
    "tril", _tril_impl,
    vjp=lambda g, y, x, k: (bind(tril_p, g, k=k),),
    jvp=lambda ts, y, x, k: bind(tril_p, ts[0], k=k),
    shape_rule=_same_aval,
    batch=lambda size, args, batched, k: bind(tril_p, args[0], k=k),
)


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
