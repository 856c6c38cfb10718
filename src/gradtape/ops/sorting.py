"""Sorting: ``sort`` and ``argsort`` (NumPy's and TF's).

``argsort`` is a primitive with no derivative (a permutation is a constant to tapes);
``sort`` gathers along the axis by that permutation, so its gradient scatters back
through it (``getitem``'s rule) to every order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import Aval
from . import shape as _shape
from .elementwise import cast
from .index import _aranges, getitem_p
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand

__all__ = ["sort", "argsort"]


# --- sort and argsort: a permutation (not differentiable), then a gather along the axis ---

def _argsort_impl(x, axis, kind, descending):
    if not descending:
        return np.argsort(x, axis=axis, kind=kind)
    # TF's DESCENDING order (it is top_k) keeps equal values in index order: a stable
    # ascending sort of the reversed axis, read backwards and mapped to forward indices.
    backwards = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (x.shape[axis] - 1) - np.flip(backwards, axis)


argsort_p = Primitive(  # no rules: never recorded, its output is a constant to tapes
    "argsort", _argsort_impl,
    shape_rule=lambda x, axis, kind, descending: Aval(tuple(x.shape), np.dtype(np.intp)),
    batch=lambda size, args, batched, axis, kind, descending: bind(
        argsort_p, args[0], axis=axis + 1, kind=kind, descending=descending
    ),
)


def _sort_order(x: Any, axis: int | None, kind: str | None, descending: bool):
    """(x, its sorting permutation along ``axis``, the axis): ``x`` flattened first when
    ``axis`` is None, as NumPy does."""
    x = operand(x)
    if axis is None:
        x, axis = _shape.ravel(x), 0
    if not x.shape:
        raise ValueError("Cannot sort a scalar (rank-0) tensor: sorting needs an axis.")
    axis = _shape._normalize_axis(int(axis), len(x.shape))
    return x, bind(argsort_p, x, axis=axis, kind=kind, descending=descending), axis


def _gather_sorted(x: Any, order: Any, axis: int) -> Any:
    """``x`` rearranged by ``order`` along ``axis``: its gradient scatters back through
    the same permutation (getitem's rule), so every derivative order comes for free."""
    template = _aranges(tuple(x.shape), axis)
    template[axis] = ("array", 0)
    return bind(getitem_p, x, order, index=tuple(template))


def _numpy_sort_kind(kind: str | None, order: Any, stable: bool | None) -> str | None:
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if stable:
        if kind is not None:
            raise ValueError("`kind` and `stable` parameters can't be provided at the same "
                             "time. Use only one of them.")
        return "stable"
    return kind


@implements(np.sort)
def _np_sort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
             stable: bool | None = None) -> Any:
    """NumPy's ``sort``: differentiable, the gradient following each element to its
    sorted place (``axis=None`` sorts the flattened tensor)."""
    x, permutation, axis = _sort_order(a, axis, _numpy_sort_kind(kind, order, stable), False)
    return _gather_sorted(x, permutation, axis)


_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _tf_sort_order(values: Any, axis: Any, direction: str):
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}.")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ValueError(f"axis must be a constant scalar int, got {axis!r}.")
    return _sort_order(values, int(axis), "stable", direction == "DESCENDING")


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING",
         name: str | None = None) -> Any:
    """TF's ``tf.sort``: ``values`` sorted along ``axis``; equal values keep their order
    in either direction (TF sorts with top_k). Differentiable."""
    del name
    x, permutation, axis = _tf_sort_order(values, axis, direction)
    return _gather_sorted(x, permutation, axis)


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Any:
    """TF's ``tf.argsort``: the int32 indices that sort ``values`` along ``axis`` (equal
    values in index order). Not differentiable."""
    del name, stable  # always stable, which TF allows for stable=False
    return cast(_tf_sort_order(values, axis, direction)[1], np.int32)
