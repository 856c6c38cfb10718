"""Products regrouped so that broadcasting comes last: ``(A * v) * w`` -> ``A * (v * w)``
when ``v`` and ``w`` are smaller than ``A`` (a matrix scaled by two vectors, as
Hessians and batched backwards produce, does one matrix-sized product instead of two).

Only for floating-point products whose inner product has no other reader; the result
can differ from the written order in the last bit, like any reassociation (integers,
whose products may overflow differently, are left alone).
"""

from __future__ import annotations

import numpy as np

from ..ir.nodes import Eqn, IRValue
from ..ops import elementwise as _ew
from .rewrite import Rewriter, rewrite

_multiply = _ew.multiply.primitive


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def regroup_product(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    out = eqn.outs[0]
    if not np.issubdtype(out.dtype, np.inexact):
        return None
    size = _size(out.shape)
    for product, w in (eqn.inputs, eqn.inputs[::-1]):
        inner = rw.definition(product)
        if inner is None or inner.prim is not _multiply or rw.uses(product) != 1:
            continue
        if _size(w.shape) >= size:
            continue
        for big, v in (inner.inputs, inner.inputs[::-1]):
            if _size(big.shape) != size or _size(v.shape) >= size:
                continue
            try:
                small = np.broadcast_shapes(tuple(v.shape), tuple(w.shape))
            except ValueError:
                continue
            if _size(small) < size:
                vw = rw.emit(_multiply, (v, w), {})
                return None if vw is None else rw.emit(_multiply, (big, vw), {})
    return None


RULES = {_multiply: [regroup_product]}


def regroup_products(program):
    """``program`` with its broadcasting products regrouped (run DCE afterwards)."""
    return rewrite(program, RULES)
