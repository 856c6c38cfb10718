"""Negations folded into their neighbours: ``x + (-y)`` -> ``x - y``, ``x - (-y)`` ->
``x + y``, ``(-x) * c`` -> ``x * (-c)``, ``-(x * c)`` -> ``x * (-c)``, ``(-x) * (-y)`` ->
``x * y``, and ``p + a * (-b)`` -> ``p - a * b`` when the product has no other reader.

A negation that cannot be absorbed where it is sinks towards its reader through ops
that commute with it and do not grow the array (``sum(-x)`` -> ``-sum(x)``, same for
``unbroadcast``, ``reshape``, ``transpose``, products and quotients), so the add or
subtract that finally reads it can absorb it. A negation read twice stays put.

VJP rules emit these all the time (``cos``'s is ``g * -sin(x)``, ``subtract``'s is
``unbroadcast(-g)``). Each rewrite is exact in IEEE arithmetic for floating-point
dtypes: ``x - y`` is defined as ``x + (-y)`` and rounding is symmetric in sign (integer
negation wraps, so integers are left alone). None adds an equation.
"""

from __future__ import annotations

import numpy as np

from ..ir.dtypes import is_inexact, size
from ..ir.nodes import Eqn, IRValue, Literal, Program
from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from .fold import scalar_literal
from .rewrite import Rewriter, applies_when, rewrite

_multiply = _ew.multiply.primitive
_add = _ew.add.primitive
_subtract = _ew.subtract.primitive


def negated(v: IRValue, rw: Rewriter) -> IRValue | None:
    """``x`` if ``v`` is ``-x``."""
    eqn = rw.definition(v)
    return eqn.inputs[0] if eqn is not None and eqn.prim is _ew.negative_p else None


def _sinkable(v: IRValue, eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``x`` if ``v`` is ``-x``, read only by ``eqn``, and floating-point like its output."""
    x = negated(v, rw)
    if x is None or rw.uses(v) != 1:
        return None
    if not (is_inexact(x.dtype) and is_inexact(eqn.outs[0].dtype)):
        return None
    return x


def _size(v: IRValue) -> int:
    return size(v.aval.shape)


def _negation_of(prim, inputs, params, rw: Rewriter) -> IRValue | None:
    inner = rw.emit(prim, inputs, params)
    return None if inner is None else rw.emit(_ew.negative_p, (inner,), {})


@applies_when(defined_by=[_ew.negative_p])
def sink_negation(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``f(-x)`` -> ``-f(x)`` for ``f`` linear in ``x`` that keeps or shrinks the size."""
    x = _sinkable(eqn.inputs[0], eqn, rw)
    if x is None:
        return None
    return _negation_of(eqn.prim, (x,), eqn.params, rw)


def _sink_through_product(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``a * (-b)``, ``(-a) / b``, ``a / (-b)`` -> the negation of the product/quotient,
    unless the negation would then run over a bigger array."""
    out = eqn.outs[0]
    inputs = list(eqn.inputs)
    for i, v in enumerate(inputs):
        x = _sinkable(v, eqn, rw)
        if x is not None and _size(v) == _size(out):
            inputs[i] = x
            return _negation_of(eqn.prim, inputs, eqn.params, rw)
    return None


def _minus(v: IRValue, rw: Rewriter) -> IRValue | None:
    """``-c`` for a constant ``v``, typed like ``v`` (a Python scalar stays one)."""
    c = rw.fill(v)
    if c is None or not is_inexact(np.asarray(c).dtype):
        return None  # -c of an integer can overflow
    if isinstance(v, Literal) and not isinstance(v.value, np.generic):
        return Literal(-c)
    return scalar_literal(-v.dtype.type(c))


def _product_of_negation(v: IRValue, rw: Rewriter) -> tuple[IRValue, IRValue] | None:
    """``(a, b)`` if ``v`` is ``a * (-b)`` (either order) and only one equation reads it."""
    eqn = rw.definition(v)
    if eqn is None or eqn.prim is not _multiply or rw.uses(v) != 1:
        return None
    a, b = eqn.inputs
    if (nb := negated(b, rw)) is not None:
        return a, nb
    if (na := negated(a, rw)) is not None:
        return b, na
    return None


@applies_when(defined_by=[_ew.negative_p, _multiply])
def add_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    for p, q in ((a, b), (b, a)):
        if (y := negated(q, rw)) is not None:
            return rw.emit(_subtract, (p, y), {})
    for p, q in ((a, b), (b, a)):
        if (pair := _product_of_negation(q, rw)) is not None:
            product = rw.emit(_multiply, pair, {})
            return None if product is None else rw.emit(_subtract, (p, product), {})
    return None


@applies_when(defined_by=[_ew.negative_p, _multiply])
def subtract_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    if (y := negated(b, rw)) is not None:
        return rw.emit(_add, (a, y), {})
    if (pair := _product_of_negation(b, rw)) is not None:
        product = rw.emit(_multiply, pair, {})
        return None if product is None else rw.emit(_add, (a, product), {})
    if (x := _sinkable(a, eqn, rw)) is not None and _size(a) == _size(eqn.outs[0]):
        return _negation_of(_add, (x, b), {}, rw)  # -x - b = -(x + b)
    return None


@applies_when(defined_by=[_ew.negative_p])
def multiply_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    na, nb = negated(a, rw), negated(b, rw)
    if na is not None and nb is not None:
        return rw.emit(_multiply, (na, nb), {})
    for x, other in ((na, b), (nb, a)):
        if x is not None and (minus := _minus(other, rw)) is not None:
            return rw.emit(_multiply, (x, minus), {})
    return _sink_through_product(eqn, rw)


@applies_when(defined_by=[_ew.negative_p])
def divide_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    a, b = eqn.inputs
    na, nb = negated(a, rw), negated(b, rw)
    if na is not None and nb is not None:
        return rw.emit(_ew.divide.primitive, (na, nb), {})
    return _sink_through_product(eqn, rw)


@applies_when(defined_by=[_multiply])
def negative_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``-(x * c)`` -> ``x * (-c)`` for a constant ``c``; ``-(A * v)`` -> ``A * (-v)``
    when ``v`` is smaller than ``A`` and the product has no other reader."""
    product = eqn.inputs[0]
    inner = rw.definition(product)
    if inner is None or inner.prim is not _multiply:
        return None
    a, b = inner.inputs
    for x, other in ((a, b), (b, a)):
        if not isinstance(x, Literal) and (minus := _minus(other, rw)) is not None:
            return rw.emit(_multiply, (x, minus), {})
    out = eqn.outs[0]
    if rw.uses(product) != 1 or not is_inexact(out.dtype):
        return None
    for x, other in ((a, b), (b, a)):
        if _size(x) == _size(out) and _size(other) < _size(out):
            minus = rw.emit(_ew.negative_p, (other,), {})
            return None if minus is None else rw.emit(_multiply, (x, minus), {})
    return None


RULES = {
    _add: [add_rule],
    _subtract: [subtract_rule],
    _multiply: [multiply_rule],
    _ew.negative_p: [negative_rule],
    _ew.divide.primitive: [divide_rule],
    _reduce.sum_p: [sink_negation],
    _shape.unbroadcast_p: [sink_negation],
    _shape.reshape_p: [sink_negation],
    _shape.transpose_p: [sink_negation],
}


def fold_negations(program: Program) -> Program:
    """Absorb negations into the adds, subtracts and constant multiplies next to them."""
    return rewrite(program, RULES)
