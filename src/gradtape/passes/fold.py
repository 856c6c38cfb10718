"""Constant folding: values known at compile time are computed at compile time.

- An equation whose output is a known fill (see ``fills``) becomes a literal when the
  output is a scalar, else the one canonical equation ``broadcast_to(c, shape)``: a
  chain like ``reshape(1.0) -> broadcast_to -> reshape -> broadcast_to`` collapses,
  and ``zeros_like(x)`` stops keeping ``x`` alive.
- Any other pure equation whose inputs are all literals is run now when its result is
  a scalar; the literal keeps the result's dtype (a NumPy scalar, never a Python float
  that would promote differently).
- A fill operand of an elementwise equation becomes a scalar literal when that leaves
  the output's shape and dtype unchanged (``x * full(2.0)`` -> ``x * 2.0``).
- Constant factors of a product are multiplied together, ``(x * a) * b`` ->
  ``x * (a * b)``, only where that is exact: one factor a power of two (so ``a * b``
  and the product keep one rounding) and one dtype throughout. ``x * 2.0 * (1 / n)``
  is what the VJP of a mean of squares emits.
"""

from __future__ import annotations

import numpy as np

from ..ir.abstract import abstract_eval
from ..ir.dtypes import is_floating
from ..ir.nodes import Aval, Eqn, IRValue, Literal, Program
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from .rewrite import Rewriter, applies_when, rewrite


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
    if eqn.prim.multiple_results or not eqn.inputs or not eqn.prim.pure:
        return None  # an impure equation (a random draw) gives new values on every run
    for v in eqn.inputs:
        if not isinstance(v, Literal):
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


@applies_when(fill=True)
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
        (aval,) = abstract_eval(eqn.prim, tuple(inputs), eqn.params)
    except Exception:
        return None
    if tuple(aval.shape) != tuple(out.shape) or aval.dtype != out.dtype:
        return None  # the fill decided the output's shape: it has to stay
    return rw.emit(eqn.prim, inputs, eqn.params)


def _power_of_two(c) -> bool:
    mantissa, _ = np.frexp(c)
    return bool(np.isfinite(c)) and abs(float(mantissa)) == 0.5


def _scale_of(v: IRValue, rw: Rewriter):
    """``(x, c)`` if ``v`` is ``x * c`` for a literal real scalar ``c``."""
    eqn = rw.definition(v)
    if eqn is None or eqn.prim is not _ew.multiply.primitive:
        return None
    for x, c in ((eqn.inputs[0], rw.fill(eqn.inputs[1])), (eqn.inputs[1], rw.fill(eqn.inputs[0]))):
        if c is not None and not isinstance(x, Literal) and np.isrealobj(c):
            return x, c
    return None


def _exact_product(a, b, dtype: np.dtype):
    """``a * b`` in ``dtype`` if both factors are exact there, one is a power of two and
    the product is a normal number (so scaling by it rounds as the two steps did)."""
    fa, fb = dtype.type(a), dtype.type(b)
    if fa != a or fb != b:
        return None
    pow2, other = (fa, fb) if _power_of_two(fa) else (fb, fa)
    if not _power_of_two(pow2):
        return None
    with np.errstate(all="ignore"):
        c = fa * fb
        normal = bool(np.isfinite(c)) and abs(c) >= np.finfo(dtype).tiny
    return c if normal and c / pow2 == other else None


@applies_when(fill=True)
def fold_scales(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``(x * a) * b`` -> ``x * (a * b)`` where that rounds exactly as before."""
    out = eqn.outs[0]
    if not is_floating(out.dtype):
        return None
    for v, b in ((eqn.inputs[0], rw.fill(eqn.inputs[1])), (eqn.inputs[1], rw.fill(eqn.inputs[0]))):
        inner = _scale_of(v, rw) if b is not None and np.isrealobj(b) else None
        if inner is None or not inner[0].dtype == v.dtype == out.dtype:
            continue
        c = _exact_product(inner[1], b, out.dtype)
        if c is not None:
            return rw.emit(_ew.multiply.primitive, (inner[0], scalar_literal(c)), {})
    return None


def fold_doubling(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``x + x`` -> ``x * 2`` (exact), merged into ``x``'s own scale when it has one: the
    VJP of ``x * x`` is ``g * x + g * x``."""
    a, b = eqn.inputs
    out = eqn.outs[0]
    if a is not b or isinstance(a, Literal) or a.aval != out.aval or not is_floating(
            out.dtype):
        return None
    two = out.dtype.type(2)
    inner = _scale_of(a, rw)
    if inner is not None and inner[0].dtype == out.dtype:
        c = _exact_product(inner[1], two, out.dtype)
        if c is not None:
            return rw.emit(_ew.multiply.primitive, (inner[0], scalar_literal(c)), {})
    return rw.emit(_ew.multiply.primitive, (a, scalar_literal(two)), {})


RULES = {_ew.multiply.primitive: [fold_scales], _ew.add.primitive: [fold_doubling]}


def fold_constants(program: Program) -> Program:
    """Fold every equation whose value is known at compile time."""
    return rewrite(program, RULES, generic=(fold_fill,), late=(literal_operands,))
