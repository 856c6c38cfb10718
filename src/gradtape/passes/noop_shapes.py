"""Shape ops that do nothing for the static shapes removed, and chains of them collapsed.

- ``reshape`` to the input's shape, ``transpose`` by the identity permutation,
  ``broadcast_to``/``unbroadcast`` to the input's shape, ``sum`` over no axes,
  ``cast`` to the input's dtype and ``identity``: the input itself.
- ``reshape(reshape(x))`` -> one reshape; ``transpose(transpose(x))`` -> one transpose
  (or none); ``broadcast_to(broadcast_to(x))`` -> one broadcast;
  ``broadcast_to(reshape(x))`` -> ``broadcast_to(x)`` when the reshape only added or
  dropped leading size-1 axes (broadcasting adds those itself) and ``x`` has no more
  axes than the broadcast's result;
  ``unbroadcast`` over no axes -> a reshape; ``reshape(unbroadcast(g))`` and
  ``reshape(sum(g))`` -> one ``sum`` when the reshape only adds or drops the summed
  size-1 axes (``unbroadcast`` is ``reshape(sum(g))`` already). Except an
  ``unbroadcast`` that sums by GEMV (``ops/leading_sums.by_gemv``), which a user's
  ``np.sum`` does not: it stays one (``reshape(unbroadcast(g))`` -> one unbroadcast to
  the reshape's shape).
- An elementwise op's operand made by ``broadcast_to`` (or by a reshape adding leading
  size-1 axes) is read before that op when the output keeps its shape: the op
  broadcasts by itself (``add(a, broadcast_to(b))`` -> ``add(a, b)``).
The walk only accepts a replacement with the output's exact aval, so a dtype-changing
"no-op" (``sum`` of int8 is int64) stays.
"""

from __future__ import annotations

from ..ir.abstract import abstract_eval
from ..ir.nodes import Eqn, IRValue, Program
from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.leading_sums import by_gemv
from .rewrite import Rewriter, applies_when, rewrite


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def same_as_input(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """The op leaves its input as it is (the walk checks shape and dtype agree)."""
    return eqn.inputs[0]


@applies_when(defined_by=[_shape.reshape_p, _shape.unbroadcast_p, _reduce.sum_p])
def reshape_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    inner = rw.definition(eqn.inputs[0])
    if inner is None:
        return None
    shape = tuple(eqn.params["shape"])
    if inner.prim is _shape.reshape_p:
        return _reshape(inner.inputs[0], shape, rw)
    if inner.prim is _shape.unbroadcast_p:
        g, axes = inner.inputs[0], tuple(inner.params["axes"])
        if by_gemv(tuple(g.shape), g.dtype, axes):
            return rw.emit(_shape.unbroadcast_p, (g,), {"axes": axes, "shape": shape})
        return _as_sum(g, axes, shape, rw)
    if inner.prim is _reduce.sum_p:
        return _as_sum(inner.inputs[0], tuple(inner.params["axis"]), shape, rw)
    return None


def _as_sum(g: IRValue, axes: tuple[int, ...], shape: tuple[int, ...],
            rw: Rewriter) -> IRValue | None:
    """``reshape(sum(g, axes), shape)`` as one sum, if ``shape`` is what a sum gives."""
    kept = [d for i, d in enumerate(g.shape) if i not in axes]
    if shape == tuple(kept):
        keepdims = False
    elif shape == tuple(1 if i in axes else d for i, d in enumerate(g.shape)):
        keepdims = True
    else:
        return None
    return rw.emit(_reduce.sum_p, (g,), {"axis": axes, "keepdims": keepdims})


def _reshape(x: IRValue, shape: tuple[int, ...], rw: Rewriter) -> IRValue | None:
    if tuple(x.shape) == tuple(shape):
        return x
    return rw.emit(_shape.reshape_p, (x,), {"shape": tuple(shape)})


def transpose_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    axes = tuple(eqn.params["axes"])
    if axes == tuple(range(len(axes))):
        return eqn.inputs[0]
    inner = rw.definition(eqn.inputs[0])
    if inner is not None and inner.prim is _shape.transpose_p:
        first = inner.params["axes"]
        combined = tuple(first[a] for a in axes)
        if combined == tuple(range(len(combined))):
            return inner.inputs[0]
        return rw.emit(_shape.transpose_p, (inner.inputs[0],), {"axes": combined})
    return None


@applies_when(defined_by=[_shape.broadcast_to_p, _shape.reshape_p])
def broadcast_to_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    inner = rw.definition(eqn.inputs[0])
    if inner is None:
        return None
    src = inner.inputs[0] if inner.inputs else None
    if inner.prim is _shape.broadcast_to_p:
        return rw.emit(_shape.broadcast_to_p, (src,), eqn.params)
    if inner.prim is _shape.reshape_p and _broadcasts_like(src, inner.outs[0], eqn.outs[0]):
        return rw.emit(_shape.broadcast_to_p, (src,), eqn.params)
    return None


def _broadcasts_like(src: IRValue, reshaped: IRValue, out: IRValue) -> bool:
    """Whether broadcasting ``src`` to ``out`` gives what broadcasting ``reshaped`` (a
    reshape of it) does: they differ only in leading size-1 axes, and ``src`` has no
    more axes than ``out`` (a (1, 1) source cannot broadcast to a rank-1 shape)."""
    return (len(src.shape) <= len(out.shape)
            and _strip_leading_ones(tuple(src.shape))
            == _strip_leading_ones(tuple(reshaped.shape)))


def unbroadcast_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """Over no axes: a reshape; when the result is what a plain sum gives and NumPy's
    sum is how it sums: that sum (``g.sum(axis=0)``, without unbroadcast's reshape)."""
    g, axes, shape = eqn.inputs[0], tuple(eqn.params["axes"]), tuple(eqn.params["shape"])
    if not axes:
        return _reshape(g, shape, rw)
    if by_gemv(tuple(g.shape), g.dtype, axes):
        return None
    return _as_sum(g, axes, shape, rw)


def sum_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    return eqn.inputs[0] if not eqn.params["axis"] else None


def cast_rule(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    return eqn.inputs[0]  # kept unless the dtype already matches (the walk checks)


def _broadcast_source(v: IRValue, rw: Rewriter) -> IRValue | None:
    """What ``v`` was broadcast from, when broadcasting would recreate ``v`` from it."""
    inner = rw.definition(v)
    if inner is None:
        return None
    if inner.prim is _shape.broadcast_to_p:
        return inner.inputs[0]
    if inner.prim is _shape.reshape_p:
        src = inner.inputs[0]
        if (len(src.shape) <= len(v.shape)
                and _strip_leading_ones(tuple(src.shape)) == _strip_leading_ones(tuple(v.shape))):
            return src
    return None


@applies_when(defined_by=[_shape.broadcast_to_p, _shape.reshape_p])
def implicit_broadcasts(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """Elementwise operands read before an explicit broadcast the op would do anyway."""
    if not eqn.prim.elementwise:
        return None
    inputs = list(eqn.inputs)
    out = eqn.outs[0]
    changed = False
    for i in range(len(inputs)):
        while (src := _broadcast_source(inputs[i], rw)) is not None:
            trial = inputs[:i] + [src] + inputs[i + 1:]
            try:
                (aval,) = abstract_eval(eqn.prim, tuple(trial), eqn.params)
            except Exception:
                break
            if tuple(aval.shape) != tuple(out.shape) or aval.dtype != out.dtype:
                break
            inputs, changed = trial, True
    return rw.emit(eqn.prim, inputs, eqn.params) if changed else None


RULES = {
    _shape.reshape_p: [same_as_input, reshape_rule],
    _shape.transpose_p: [transpose_rule],
    _shape.broadcast_to_p: [same_as_input, broadcast_to_rule],
    _shape.unbroadcast_p: [same_as_input, unbroadcast_rule],
    _shape.identity_p: [same_as_input],
    _reduce.sum_p: [sum_rule],
    _ew.cast_p: [cast_rule],
}


def remove_noop_shapes(program: Program) -> Program:
    """Drop shape ops that are no-ops for the static shapes; collapse chains of them."""
    return rewrite(program, RULES, late=(implicit_broadcasts,))
