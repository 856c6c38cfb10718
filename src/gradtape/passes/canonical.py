"""Canonical forms of a forward program, for differentiation: the same values, written
the way whose derivative is cheapest and most accurate.

Users write one computation several ways. ``matmul(X, expand_dims(w, -1))[..., 0]`` is
``matvec(X, w)``, but its derivative goes through a scatter into a zero column, a
transposed product and a reshape, where ``matvec``'s is one ``g @ X``; on Dask every
one of those is a layer of tasks per chunk. ``log1p(exp(u))`` is ``softplus(u)``, but its
derivative ``e / (1 + e)`` reads ``exp(u)`` and is ``inf / inf = nan`` once ``exp``
overflows, where softplus's is ``sigmoid(u)``.

``canonicalize`` replaces such an equation by its canonical one *with the same output
var*, so every value keeps its name: a tape's recorded values still feed the backward,
and the forward that ran is not changed (only its derivative is taken from the
canonical form). Equations made dead stay for dead-code elimination.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir.nodes import Eqn, IRValue, Literal, Program, Var
from ..ops import elementwise as _ew
from ..ops import index as _index
from ..ops import shape as _shape
from ..ops.linalg import products as _products
from ..ops.softplus_of_exp import softplus_of_exp_p

_FULL = ("slice", None, None, None)  # ``:`` in a getitem's index

Definitions = dict[Var, Eqn]
# Whether a backward may read a var (``None``: every var).
Available = Callable[[Var], bool] | None


def canonicalize(program: Program, available: Callable[[Var], bool] | None = None
                 ) -> Program:
    """``program`` with each equation that has a canonical form replaced by it.
    ``available(v)``: whether the backward may read ``v`` (a tape keeps only its records'
    residuals); a canonical form whose rules read a value that is not available is not
    used (``None``: every value is)."""
    defs: Definitions = {}
    eqns = []
    changed = False
    for eqn in program.eqns:
        rule = _RULES.get(eqn.prim)
        new = rule(eqn, defs, available) if rule is not None else None
        if new is not None and (available is None or _reads_available(new, available)):
            eqn, changed = new, True
        for out in eqn.outs:
            defs[out] = eqn
        eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs) if changed else program


def _reads_available(eqn: Eqn, available: Callable[[Var], bool]) -> bool:
    """Whether every value ``eqn``'s derivative rules read (its primitive's residuals)
    is available."""
    prim = eqn.prim
    kept = prim.kept_inputs
    inputs = eqn.inputs if kept is None else [eqn.inputs[p] for p in kept
                                              if p < len(eqn.inputs)]
    outputs = eqn.outs if prim.keeps_outputs else ()
    return all(available(v) for v in (*inputs, *outputs) if isinstance(v, Var))


# --- shape no-ops around a matrix product: matvec and vecmat --------------------------

def _vector_of(v: IRValue, defs: Definitions, unit_axis: int) -> Var | None:
    """The 1-d ``w`` when ``v`` is ``w`` as a column (``unit_axis=1``: ``w[:, None]``,
    ``expand_dims(w, -1)``, ``reshape(w, (-1, 1))``) or a row (``unit_axis=0``)."""
    eqn = defs.get(v) if isinstance(v, Var) else None
    if eqn is None or len(v.aval.shape) != 2 or v.aval.shape[unit_axis] != 1:
        return None
    w = eqn.inputs[0]
    if not isinstance(w, Var) or len(w.aval.shape) != 1:
        return None
    if eqn.prim is _shape.reshape_p:
        return w
    if eqn.prim is _index.getitem_p and len(eqn.inputs) == 1:
        new_axis = ((_FULL, None),) if unit_axis == 1 else ((None, _FULL), (None,))
        if eqn.params["index"] in new_axis:
            return w
    return None


def _drops_unit_axis(eqn: Eqn, axis: int) -> Var | None:
    """The operand when ``eqn`` only drops its unit axis ``axis`` (-1 or -2) of a
    product's result: ``m[..., 0]``, ``m[:, 0]``, ``m[0]``, or the reshape to the
    shape without it. ``None`` for any other index (``m[:, 1]`` is not a no-op)."""
    m = eqn.inputs[0]
    if not isinstance(m, Var) or len(m.aval.shape) < 2 or m.aval.shape[axis] != 1:
        return None
    shape = tuple(m.aval.shape)
    kept = shape[:axis] + (shape[axis + 1:] if axis != -1 else ())
    if eqn.prim is _shape.reshape_p:
        return m if tuple(eqn.outs[0].aval.shape) == kept else None
    if len(eqn.inputs) != 1:
        return None
    index = eqn.params["index"]
    if axis == -1:
        ok = index in ((Ellipsis, 0), (Ellipsis, -1)) or (
            len(shape) == 2 and index in ((_FULL, 0), (_FULL, -1)))
    else:
        ok = len(shape) == 2 and index in ((0,), (-1,), (0, _FULL), (-1, _FULL))
    return m if ok else None


def _transposed(v: IRValue, defs: Definitions) -> Var | None:
    """``x`` when ``v`` is the transpose of a matrix ``x``."""
    eqn = defs.get(v) if isinstance(v, Var) else None
    if eqn is not None and eqn.prim is _shape.transpose_p and eqn.params["axes"] == (1, 0):
        return eqn.inputs[0]
    return None


def _as_vector_product(eqn: Eqn, defs: Definitions, available: Available) -> Eqn | None:
    """``matmul(a, w[:, None])[..., 0]`` -> ``matvec(a, w)``; ``matmul(w[None], a)[0]``
    -> ``vecmat(w, a)``; a transposed 2-d ``a`` swaps one for the other."""
    for axis in (-1, -2):
        m = _drops_unit_axis(eqn, axis)
        product = defs.get(m) if m is not None else None
        if product is None or product.prim is not _products.matmul_p:
            continue
        a, b = product.inputs
        if axis == -1:  # a @ column
            w, matrix = _vector_of(b, defs, unit_axis=1), a
        else:  # row @ a
            w, matrix = _vector_of(a, defs, unit_axis=0), b
        if w is None or not isinstance(matrix, Var) or w.aval.dtype != matrix.aval.dtype:
            return None
        x = _transposed(matrix, defs)
        if x is not None:  # a.T @ w is w @ a, and w @ a.T is a @ w
            matrix, axis = x, -3 - axis
        prim = _products.matvec_p if axis == -1 else _products.vecmat_p
        inputs = (matrix, w) if axis == -1 else (w, matrix)
        return Eqn(prim, inputs, eqn.outs, {}, eqn.loc)
    return None


# --- softplus ------------------------------------------------------------------------

def _is_one(v: IRValue) -> bool:
    return isinstance(v, Literal) and getattr(v.value, "shape", ()) == () and v.value == 1


def _exp_argument(v: IRValue, defs: Definitions) -> IRValue | None:
    eqn = defs.get(v) if isinstance(v, Var) else None
    return eqn.inputs[0] if eqn is not None and eqn.prim is _ew.exp.primitive else None


def _as_softplus(eqn: Eqn, defs: Definitions, available: Available) -> Eqn | None:
    """``log1p(exp(u))``, ``log(1 + exp(u))`` and ``log(exp(u) + 1)`` -> ``softplus(u)``
    (``softplus_of_exp(u, exp(u))`` where only exp's output is available)."""
    arg = eqn.inputs[0]
    if eqn.prim is _ew.log.primitive:
        total = defs.get(arg) if isinstance(arg, Var) else None
        if total is None or total.prim is not _ew.add.primitive:
            return None
        left, right = total.inputs
        arg = right if _is_one(left) else left if _is_one(right) else None
        if arg is None or tuple(arg.aval.shape) != tuple(eqn.outs[0].aval.shape):
            return None  # the 1 broadcast the sum to a larger shape
    u = _exp_argument(arg, defs)
    if u is None or u.aval.dtype != eqn.outs[0].aval.dtype:
        return None
    if available is None or not isinstance(u, Var) or available(u):
        return Eqn(_ew.softplus.primitive, (u,), eqn.outs, {}, eqn.loc)
    if np.dtype(u.aval.dtype).kind != "f":
        return None
    # A tape that keeps exp's output but not its argument: the same derivative, from e.
    return Eqn(softplus_of_exp_p, (u, arg), eqn.outs, {}, eqn.loc)


_RULES: dict[object, Callable[[Eqn, Definitions, Available], Eqn | None]] = {
    _index.getitem_p: _as_vector_product,
    _shape.reshape_p: _as_vector_product,
    _ew.log1p.primitive: _as_softplus,
    _ew.log.primitive: _as_softplus,
}
