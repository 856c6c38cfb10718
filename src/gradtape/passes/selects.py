"""Selects merged: sums of ``where``s on one condition become one ``where`` of sums.

Reverse mode writes a value that is chosen by a condition in the forward
(``where(c, a, b)``, ``maximum``, ``abs``) as one ``where`` per path it took, each with a
zero on the other side, and adds them up. A numerically stable sigmoid cross-entropy
written out with ``where``s (``max(z, 0) - z * y + log1p(exp(-|z|))``; gt.nn's is one
primitive with the textbook rule) gives three, so its backward read

    -y/16 + where(c, 0, s) - where(c, s, 0) + where(c, 1/16, 0)

instead of the textbook ``sigmoid(z) - y`` (over 16):

    where(c, -y/16 - s + 1/16, -y/16 + s)

The rule: an elementwise ``+``, ``-`` or ``*`` tree of single-reader values in which at
least two leaves are ``where``s on the same condition is that ``where`` of the tree with
every such leaf replaced by its branch; the zeros rules then drop the ``+ 0``s.

Exact: each element computes the same operations on the same operands in the same order
as before, the select just comes last (IEEE arithmetic is elementwise), so the results
are bitwise those of the original, except that ``x + 0`` for ``x = -0.0`` is ``-0.0``
now, as everywhere the zeros rules apply. A guard stays a guard: the ``where`` is kept,
only merged, so the lanes it discards may still hold an ``inf`` or NaN and never reach
the result. Only for floating-point trees whose values all have the output's dtype
(promotion order cannot change), and only where it saves equations.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..ir.dtypes import is_inexact
from ..ir.nodes import Eqn, IRValue, Literal
from ..ops import elementwise as _ew
from .fills import is_zero
from .rewrite import Rewriter, applies_when

_add = _ew.add.primitive
_subtract = _ew.subtract.primitive
_multiply = _ew.multiply.primitive
_where = _ew.where_p
_TREE = frozenset({_add, _subtract, _multiply, _ew.negative_p})
_MAX_DEPTH = 6  # how far below the merging op a where is looked for

# A branch expression: an IR value, or ``(primitive, operands)`` still to be emitted.
Branch = Any


class _Select(NamedTuple):
    cond: IRValue
    on_true: Branch
    on_false: Branch
    cost: int  # equations the tree takes now, its wheres included


def _same_dtype(v: IRValue, dtype: np.dtype) -> bool:
    """Whether ``v`` computes in ``dtype`` wherever it is read: a value of that dtype or
    a Python scalar (weakly typed: NumPy converts it to the array's dtype)."""
    if isinstance(v, Literal):
        value = v.value
        return type(value) in (int, float) or np.asarray(value).dtype == dtype
    return v.dtype == dtype


def _select_form(v: IRValue, dtype: np.dtype, rw: Rewriter, depth: int) -> _Select | None:
    """``v`` as ``where(c, T, F)``: ``v`` is a single-reader where, or a single-reader
    tree op over such forms (on one condition) and plain values."""
    eqn = rw.definition(v)
    if eqn is None or rw.uses(v) != 1 or eqn.outs[0].dtype != dtype:
        return None
    if eqn.prim is _where:
        cond, a, b = eqn.inputs
        if _same_dtype(a, dtype) and _same_dtype(b, dtype):
            return _Select(cond, a, b, 1)
        return None
    if eqn.prim not in _TREE or depth == 0:
        return None
    forms = [_select_form(x, dtype, rw, depth - 1) for x in eqn.inputs]
    return _combine(eqn.prim, eqn.inputs, forms, dtype)


def _combine(prim, operands, forms, dtype: np.dtype) -> _Select | None:
    conds = [f.cond for f in forms if f is not None]
    if not conds or any(c is not conds[0] for c in conds):
        return None
    if any(f is None and not _same_dtype(x, dtype) for x, f in zip(operands, forms)):
        return None
    on_true = (prim, tuple(x if f is None else f.on_true for x, f in zip(operands, forms)))
    on_false = (prim, tuple(x if f is None else f.on_false for x, f in zip(operands, forms)))
    return _Select(conds[0], on_true, on_false, 1 + sum(f.cost for f in forms if f))


def _branch_cost(branch: Branch, rw: Rewriter) -> tuple[int, bool]:
    """(equations ``branch`` will take once the zeros rules ran, whether it is zero)."""
    if not isinstance(branch, tuple):
        return 0, is_zero(rw.fill(branch))
    prim, operands = branch
    parts = [_branch_cost(x, rw) for x in operands]
    total = sum(cost for cost, _ in parts)
    if prim is _ew.negative_p:
        return (total, True) if parts[0][1] else (total + 1, False)
    if prim is _add and (parts[0][1] or parts[1][1]):
        return total, parts[0][1] and parts[1][1]
    if prim is _subtract and parts[1][1]:
        return total, parts[0][1]
    return total + 1, False


def _emit(branch: Branch, rw: Rewriter) -> IRValue | None:
    if not isinstance(branch, tuple):
        return branch
    prim, operands = branch
    values = [_emit(x, rw) for x in operands]
    if any(v is None for v in values):
        return None
    return rw.emit(prim, values, {})


@applies_when(defined_by=[_where, *_TREE])
def merge_selects(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    if _where not in rw.made:
        return None  # no where defined yet: nothing to merge (most backwards)
    out = eqn.outs[0]
    if not is_inexact(out.dtype):
        return None
    forms = [_select_form(x, out.dtype, rw, _MAX_DEPTH) for x in eqn.inputs]
    if sum(f is not None for f in forms) < 2:
        return None  # one where: nothing to merge it with
    merged = _combine(eqn.prim, eqn.inputs, forms, out.dtype)
    if merged is None:
        return None
    new_cost = 1 + _branch_cost(merged.on_true, rw)[0] + _branch_cost(merged.on_false, rw)[0]
    if new_cost >= merged.cost:
        return None
    on_true, on_false = _emit(merged.on_true, rw), _emit(merged.on_false, rw)
    if on_true is None or on_false is None:
        return None
    return rw.emit(_where, (merged.cond, on_true, on_false), {})


RULES = {prim: [merge_selects] for prim in (_add, _subtract, _multiply)}
