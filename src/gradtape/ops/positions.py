"""Index primitives: integer (or bool) results that say where entries are, never
differentiated (no VJP: positions are integers). The TF functions built on them live in
``api/``: ``searchsorted`` and ``unique`` (``api/array_ops.py``), the segment reductions
and ``tensor_scatter_nd_update`` (``api/segment_ops.py``).

Each result depends on the values of its batch member, so most batch by a loop
(``looped``).
"""

from __future__ import annotations

import numpy as np

from ..ir.nodes import Aval
from .batch_rules import batch_by_loop
from .registry import Primitive, bind, per_primitive
from .shape import broadcast_to

__all__: list[str] = []  # no public names: the functions are in api/


def looped(prim: Primitive):
    """The batching rule of an index primitive whose result depends on each member's
    values (positions, counts): one call per batch member."""
    return lambda size, args, batched, **params: batch_by_loop(prim, size, args, batched,
                                                                **params)


def _segment_layout_impl(ids, num_segments, width):
    """``(num_segments, width)`` positions of the rows of each segment in order, ``-1``
    where a segment has fewer rows; ids outside ``[0, num_segments)`` are left out."""
    flat = np.asarray(ids).reshape(-1)
    rows = np.flatnonzero((flat >= 0) & (flat < num_segments))
    segment = flat[rows]
    order = np.argsort(segment, kind="stable")
    rows, segment = rows[order], segment[order]
    counts = np.bincount(segment, minlength=num_segments)
    starts = np.cumsum(counts) - counts
    slot = np.arange(len(segment)) - starts[segment]
    positions = np.full((num_segments, width), -1, np.intp)
    positions[segment, slot] = rows
    return positions


segment_layout_p = Primitive(  # no vjp: positions are integers
    "segment_layout", _segment_layout_impl, batch=per_primitive(looped),
    shape_rule=lambda ids, num_segments, width: Aval((num_segments, width), np.dtype(np.intp)),
)


def _last_occurrence_impl(ids):
    """True where an id does not occur again later (the write that wins an update)."""
    flat = np.asarray(ids).reshape(-1)
    _, first_of_reversed = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, bool)
    keep[len(flat) - 1 - first_of_reversed] = True
    return keep.reshape(np.shape(ids))


last_occurrence_p = Primitive(
    "last_occurrence", _last_occurrence_impl, batch=per_primitive(looped),
    shape_rule=lambda ids: Aval(tuple(ids.shape), np.dtype(bool)),
)



# --- searchsorted and unique -------------------------------------------------------

def _searchsorted_impl(sorted_sequence, values, side):
    rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    queries = values.reshape(-1, values.shape[-1])
    out = np.stack([np.searchsorted(r, q, side=side) for r, q in zip(rows, queries)])
    return out.reshape(values.shape)


def _searchsorted_batch(size, args, batched, side):
    """The implementation already maps over leading axes: give both inputs the batch."""
    full = [a if b else broadcast_to(a, (size,) + tuple(a.shape))
            for a, b in zip(args, batched)]
    return bind(searchsorted_p, *full, side=side)


searchsorted_p = Primitive(  # no vjp: positions are integers
    "searchsorted", _searchsorted_impl, batch=_searchsorted_batch,
    shape_rule=lambda s, v, side: Aval(tuple(v.shape), np.dtype(np.intp)),
)


def _unique_count_impl(x):
    return np.asarray(len(np.unique(x)), np.int64)


unique_count_p = Primitive(
    "unique_count", _unique_count_impl, batch=per_primitive(looped),
    shape_rule=lambda x: Aval((), np.dtype(np.int64)),
)


def _unique_impl(x, size):
    """(first position of each distinct value in order of appearance, the index of each
    element's value among them, how often each occurs)."""
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True)
    appearance = np.argsort(first, kind="stable")
    rank = np.empty_like(appearance)
    rank[appearance] = np.arange(len(appearance))
    return first[appearance], rank[inverse.reshape(-1)], counts[appearance]


unique_p = Primitive(
    "unique", _unique_impl, multiple_results=True, batch=per_primitive(looped),
    shape_rule=lambda x, size: (Aval((size,), np.dtype(np.intp)),
                                Aval(tuple(x.shape), np.dtype(np.intp)),
                                Aval((size,), np.dtype(np.intp))),
)

