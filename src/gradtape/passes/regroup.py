"""Products regrouped to do less work: ``(A * v) * w`` -> ``A * (v * w)`` when ``v``
and ``w`` are smaller than ``A`` (a matrix scaled by two vectors, as Hessians and
batched backwards produce, takes one matrix-sized product instead of two), and
``a * b + a * c`` -> ``a * (b + c)`` (one product fewer).

Only for floating-point values, and only where the regrouped products have no other
reader. The result can differ from the written order in the last bit, like any
reassociation (integers, whose products may overflow differently, are left alone).
"""

from __future__ import annotations

import numpy as np

from ..ir.dtypes import is_inexact
from ..ir.dtypes import size as _size
from ..ir.nodes import Eqn, IRValue, Literal
from ..ops import elementwise as _ew
from .rewrite import Rewriter, applies_when, rewrite

_multiply = _ew.multiply.primitive


@applies_when(defined_by=[_multiply])
def regroup_product(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    out = eqn.outs[0]
    if not is_inexact(out.dtype):
        return None
    size = _size(out.shape)
    if size <= 1:
        return None  # no factor can be smaller than the product
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


def _factor(v: IRValue, rw: Rewriter):
    """The operands of ``v`` if it is a product only one equation reads."""
    eqn = rw.definition(v)
    if eqn is None or eqn.prim is not _multiply or rw.uses(v) != 1:
        return None
    return eqn.inputs


@applies_when(defined_by=[_multiply])
def factor_common(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``a * b + a * c`` -> ``a * (b + c)`` (and ``-``): one product fewer. Autodiff
    writes these when a value is read twice with the same cotangent (``x * x``'s and
    ``exp(-x * x)``'s gradients). Only for floating-point sums of equal-shaped products
    whose operands are not bigger than the sum."""
    out = eqn.outs[0]
    if not is_inexact(out.dtype):
        return None
    left, right = (_factor(v, rw) for v in eqn.inputs)
    if left is None or right is None:
        return None
    size = _size(out.shape)
    for a, b in (left, left[::-1]):
        for c, d in (right, right[::-1]):
            if a is c and not isinstance(a, Literal) and _size(a.shape) == size:
                inner = rw.emit(eqn.prim, (b, d), {})
                return None if inner is None else rw.emit(_multiply, (a, inner), {})
    return None


RULES = {_multiply: [regroup_product], _ew.add.primitive: [factor_common],
         _ew.subtract.primitive: [factor_common]}


def regroup_products(program):
    """``program`` with its broadcasting products regrouped (run DCE afterwards)."""
    return rewrite(program, RULES)
