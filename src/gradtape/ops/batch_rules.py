"""The batching rules primitives share (``ad/batching.py`` applies them).

A rule has the signature ``rule(size, args, batched, **params)`` and returns the output(s)
batched at axis 0. Elementwise primitives share ``batch_elementwise``; a primitive with no
rule of its own falls back to ``batch_by_loop``; rules whose op puts the batch axis
elsewhere end with ``move_batch_axis_to_front``.
"""

from __future__ import annotations

from . import index as _index
from . import shape as _shape
from . import stacking as _stacking
from .registry import bind


def batch_elementwise(prim, size, args, batched, **params):
    """Elementwise ops broadcast: give batched inputs the full rank so that the batch
    axis lines up in front of every other input's axes."""
    rank = max(len(a.shape) - int(f) for a, f in zip(args, batched))
    aligned = []
    for a, f in zip(args, batched):
        if f and len(a.shape) - 1 < rank:
            logical = tuple(a.shape[1:])
            a = _shape.reshape(a, (size,) + (1,) * (rank - len(logical)) + logical)
        aligned.append(a)
    return bind(prim, *aligned, **params)


def move_batch_axis_to_front(x, axis: int):
    """``x`` with its axis ``axis`` moved to 0 (for rules whose op put the batch elsewhere)."""
    if axis == 0:
        return x
    perm = (axis,) + tuple(i for i in range(len(x.shape)) if i != axis)
    return _shape.transpose(x, perm)


def batch_by_loop(prim, size, args, batched, **params):
    """Fallback: apply ``prim`` to each batch element and stack the results."""
    per_element = []
    for i in range(size):
        sliced = [_index.getitem(a, i) if f else a for a, f in zip(args, batched)]
        per_element.append(bind(prim, *sliced, **params))
    if prim.multiple_results:
        count = len(per_element[0])
        return tuple(_stacking.stack([outs[k] for outs in per_element]) for k in range(count))
    return _stacking.stack(per_element)
