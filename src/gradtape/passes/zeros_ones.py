"""Zeros and ones propagated: no ``g * 1``, ``g / 1``, ``g + 0``, ``-(-g)``, and no
materialized zero gradients feeding adds and multiplies, and no ``where`` whose
condition is known.

A materialized zero gradient (``zeros_like``, a broadcast zero: a zero-filled *var*)
is a zero cotangent, and stays one: ``0 * x``, ``0 / x`` become zeros, as if the
gradient had never been materialized (TF hands such cotangents to gradient functions
as ``None``; NumPy would give NaN where ``x`` is infinite or, for the division, zero).
A zero *literal* is a constant the user wrote (the VJP of ``x * 0.0`` is ``g * 0.0``)
and keeps IEEE arithmetic: ``inf * 0.0`` stays NaN, as in TF. ``where(c, 0, 0)`` is
zero either way. Every rewrite keeps the output's shape and dtype: ``x * 1.0`` for a
float32 ``x`` is ``x``, while ``x * np.float64(1)`` is ``cast(x, float64)``; when the
ones were wider than ``x``, ``x`` is broadcast to the output's shape.
"""

from __future__ import annotations

import numpy as np

from ..ir.nodes import Aval, Eqn, IRValue, Literal, Program
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from .fills import as_dtype, is_one, is_zero
from .fold import fill_value
from .rewrite import Rewriter, applies_when, rewrite

_multiply = _ew.multiply.primitive
_divide = _ew.divide.primitive
_add = _ew.add.primitive
_subtract = _ew.subtract.primitive


def coerce(x: IRValue, aval: Aval, rw: Rewriter) -> IRValue | None:
    """``x`` converted and broadcast to ``aval`` as NumPy's promotion would do it."""
    if isinstance(x, Literal):
        return None  # then the other operand is the fill, and folding handles it
    if x.dtype != aval.dtype:
        if not np.can_cast(x.dtype, aval.dtype, "safe"):
            return None
        x = rw.emit(_ew.cast_p, (x,), {"dtype": aval.dtype.name})
        if x is None:
            return None
    if tuple(x.shape) != tuple(aval.shape):
        x = rw.emit(_shape.broadcast_to_p, (x,), {"shape": tuple(aval.shape)})
    return x


def _zeros(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    out = eqn.outs[0]
    return fill_value(out.aval, out.dtype.type(0), rw)


def _negated(x: IRValue, eqn: Eqn, rw: Rewriter) -> IRValue | None:
    if isinstance(x, Literal):
        return None
    neg = rw.emit(_ew.negative_p, (x,), {})
    return None if neg is None else coerce(neg, eqn.outs[0].aval, rw)


def _zero_gradient(v: IRValue, rw: Rewriter) -> bool:
    """Whether ``v`` is a materialized zero (a var), not a zero the user wrote."""
    return not isinstance(v, Literal) and is_zero(rw.fill(v))


@applies_when(fill=True)
def multiply_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    if _zero_gradient(a, rw) or _zero_gradient(b, rw):
        return _zeros(eqn, rw)
    for x, c in ((a, rw.fill(b)), (b, rw.fill(a))):
        if c is None:
            continue
        if is_one(c):
            return coerce(x, eqn.outs[0].aval, rw)
        if bool(c == -1) and np.dtype(eqn.outs[0].dtype) == x.dtype:
            return _negated(x, eqn, rw)
    return None


@applies_when(fill=True)
def divide_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    if _zero_gradient(a, rw):
        return _zeros(eqn, rw)
    if is_one(rw.fill(b)):
        return coerce(a, eqn.outs[0].aval, rw)
    return None


@applies_when(fill=True)
def add_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    if is_zero(rw.fill(b)):
        return coerce(a, eqn.outs[0].aval, rw)
    if is_zero(rw.fill(a)):
        return coerce(b, eqn.outs[0].aval, rw)
    return None


@applies_when(fill=True)
def subtract_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    if is_zero(rw.fill(b)):
        return coerce(a, eqn.outs[0].aval, rw)
    if is_zero(rw.fill(a)) and eqn.outs[0].dtype == b.dtype:
        return _negated(b, eqn, rw)
    return None


@applies_when(defined_by=[_ew.negative_p])
def negative_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    inner = rw.definition(eqn.inputs[0])
    if inner is not None and inner.prim is _ew.negative_p:
        return inner.inputs[0]
    return None


@applies_when(fill=True)
def where_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    cond, a, b = eqn.inputs
    if is_zero(rw.fill(a)) and is_zero(rw.fill(b)):
        return _zeros(eqn, rw)
    return _known_branch(rw.fill(cond), a, b, eqn, rw)


def _known_branch(c, a: IRValue, b: IRValue, eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """The branch a uniform condition ``c`` selects: the ones seed reaching sqrt's VJP
    makes its zero test ``where(equal(1, 0), 0, g * d)`` just ``g * d``."""
    if c is None:
        return None
    chosen, out = (a if bool(c) else b), eqn.outs[0]
    if isinstance(chosen, Literal):  # a uniform result: the fill it is
        value = as_dtype(rw.fill(chosen), out.dtype)
        return None if value is None else fill_value(out.aval, value, rw)
    return coerce(chosen, out.aval, rw)


RULES = {
    _multiply: [multiply_rule],
    _divide: [divide_rule],
    _add: [add_rule],
    _subtract: [subtract_rule],
    _ew.negative_p: [negative_rule],
    _ew.where_p: [where_rule],
}


def propagate_zeros_ones(program: Program) -> Program:
    """Remove multiplications by one, additions of zero and double negations."""
    return rewrite(program, RULES)
