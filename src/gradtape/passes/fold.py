"""Constant folding: values known at compile time are computed at compile time.

- An equation whose output is a known fill (see ``fills``) becomes a literal when the
  output is a scalar, else the one canonical equation ``broadcast_to(c, shape)``: a
  chain like ``reshape(1.0) -> broadcast_to -> reshape -> broadcast_to`` collapses,
  and ``zeros_like(x)`` stops keeping ``x`` alive.
- Any other equation whose inputs are all literals is run now when its result is a
  scalar; the literal keeps the result's dtype (a NumPy scalar, never a Python float
  that would promote differently).
- A fill operand of an elementwise equation becomes a scalar literal when that leaves
  the output's shape and dtype unchanged (``x * full(2.0)`` -> ``x * 2.0``).
"""

from __future__ import annotations

import numpy as np

from ..ir.nodes import Aval, Eqn, IRValue, Literal, Program
from ..ops import shape as _shape
from .rewrite import Rewriter, rewrite


def scalar_literal(c: np.generic) -> Literal:
    return Literal(c, Aval((), c.dtype))


def fill_value(aval: Aval, c: np.generic, rw: Rewriter) -> IRValue | None:
    """A value of ``aval`` with every element ``c`` (a NumPy scalar of its dtype)."""
    if aval.shape == ():
        return scalar_literal(c)
    return rw.emit(_shape.broadcast_to_p, (scalar_literal(c),), {"shape": tuple(aval.shape)})


def _is_canonical_fill(eqn: Eqn) -> bool:
    if eqn.prim is not _shape.broadcast_to_p:
        return False
    src = eqn.inputs[0]
    return (isinstance(src, Literal) and isinstance(src.value, np.generic)
            and src.value.dtype == eqn.outs[0].dtype)


def fold_fill(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """An equation computing a known fill, replaced by a literal or canonical fill."""
    c = rw.fills.infer(eqn)
    if c is None:
        return _fold_literals(eqn)
    if _is_canonical_fill(eqn):
        return None
    return fill_value(eqn.outs[0].aval, c, rw)


def _fold_literals(eqn: Eqn) -> IRValue | None:
    if eqn.prim.multiple_results or not eqn.inputs:
        return None
    if not all(isinstance(v, Literal) for v in eqn.inputs):
        return None
    out = eqn.outs[0]
    if out.shape != ():
        return None
    try:
        with np.errstate(all="ignore"):
            result = np.asarray(eqn.prim.impl(*(v.value for v in eqn.inputs), **eqn.params))
    except Exception:  # it fails at run time too, where the user can see why
        return None
    if result.shape != () or result.dtype != out.dtype:
        return None
    return scalar_literal(result[()])


def literal_operands(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """Fill vars feeding an elementwise equation replaced by scalar literals."""
    if not eqn.prim.elementwise:
        return None
    inputs = list(eqn.inputs)
    changed = False
    for i, v in enumerate(inputs):
        if isinstance(v, Literal):
            continue
        c = rw.fill(v)
        if c is not None:
            inputs[i] = scalar_literal(c)
            changed = True
    if not changed:
        return None
    out = eqn.outs[0]
    try:
        (aval,) = eqn.prim.abstract_eval(tuple(inputs), eqn.params)
    except Exception:
        return None
    if tuple(aval.shape) != tuple(out.shape) or aval.dtype != out.dtype:
        return None  # the fill decided the output's shape: it has to stay
    return rw.emit(eqn.prim, inputs, eqn.params)


def fold_constants(program: Program) -> Program:
    """Fold every equation whose value is known at compile time."""
    return rewrite(program, {}, generic=(fold_fill,), late=(literal_operands,))
