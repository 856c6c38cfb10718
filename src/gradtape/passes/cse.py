"""Common-subexpression elimination: an equation computed twice is computed once.

Two equations are the same when they apply the same primitive, with params equal by
value, to the same inputs (a var by identity, a literal by type and exact value, so
``0.0`` and ``-0.0`` stay apart). ``add`` and ``multiply`` commute. Equations with
unhashable params, and primitives that declare themselves impure (``pure = False``)
or uncacheable (params holding Python callables), are left alone.

An ``add`` whose two operands became one value (a Hessian's ``m + m``, where a value
is read twice, as in ``x * x``) is written ``m * 2.0``: bitwise the same for real
floating point (both round the same ``2m``, overflow included; complex values are left
alone), and ``m`` is then read once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import Eqn, Literal, Program, Var
from ..ops import elementwise as _ew

_add = _ew.add.primitive
_multiply = _ew.multiply.primitive
_COMMUTATIVE = frozenset({_add, _multiply})


class _Unkeyable(Exception):
    pass


def literal_key(lit: Literal) -> tuple:
    """A hashable key equal only for literals that behave identically."""
    value = lit.value
    if isinstance(value, np.ndarray):
        body: Any = ("array", value.dtype.str, value.shape, value.tobytes())
    elif isinstance(value, np.generic):
        body = ("scalar", value.dtype.str, value.tobytes())
    else:  # a Python scalar: repr tells 0.0 from -0.0 and 1 from 1.0 from True
        body = (type(value).__name__, repr(value))
    return ("literal", body, tuple(lit.aval.shape), lit.aval.dtype.str)


def param_key(value: Any) -> Any:
    """``value`` as a key that tells apart params NumPy would treat differently."""
    if isinstance(value, tuple):
        return ("tuple", tuple(param_key(v) for v in value))
    if isinstance(value, (float, complex, np.generic)):
        return (type(value).__name__, repr(value))
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable from None
    return (type(value), value)


def _commuted(key: Any) -> tuple:
    """A total order on input keys (vars by rank, then literals), for commuting ops."""
    return (0, key, "") if key.__class__ is int else (1, 0, repr(key))


def eqn_key(eqn: Eqn, rank: dict[Var, int]) -> tuple | None:
    """The key two equations share exactly when they compute the same values."""
    prim = eqn.prim
    if not prim.pure or not prim.cacheable:
        return None
    params: tuple = ()
    if eqn.params:
        try:
            params = tuple([(k, param_key(v)) for k, v in sorted(eqn.params.items())])
        except _Unkeyable:
            return None
    # A var is keyed by its rank (an int), a literal by a tuple: never equal.
    ins: list[Any] = [literal_key(v) if isinstance(v, Literal) else rank[v]
                      for v in eqn.inputs]
    if prim in _COMMUTATIVE:
        if len(ins) == 2 and ins[0].__class__ is int and ins[1].__class__ is int:
            if ins[1] < ins[0]:
                ins.reverse()  # what the sort below does, for the usual two vars
        else:
            ins.sort(key=_commuted)
    return (prim, params, tuple(ins))


def eliminate_common_subexpressions(program: Program) -> Program:
    """Merge equations that compute the same thing; later uses read the first one."""
    rank: dict[Var, int] = {v: i for i, v in enumerate(program.inputs)}
    subst: dict[Var, Var] = {}
    seen: dict[tuple, Eqn] = {}
    eqns: list[Eqn] = []

    for eqn in program.eqns:
        inputs = eqn.inputs
        if subst:
            for v in inputs:
                if v in subst:  # dicts compare IR values by identity (never ``==``)
                    inputs = tuple([subst.get(v, v) for v in inputs])
                    eqn = _doubled(Eqn(eqn.prim, inputs, eqn.outs, eqn.params, eqn.loc))
                    break
        for v in inputs:  # a var read but never defined (a free var) still gets a rank
            if v not in rank and isinstance(v, Var):
                rank[v] = len(rank)
        key = eqn_key(eqn, rank)
        first = seen.get(key) if key is not None else None
        if first is not None and _same_avals(first, eqn):
            subst.update(zip(eqn.outs, first.outs))
            for dropped, kept in zip(eqn.outs, first.outs):
                if kept.name is None:
                    kept.name = dropped.name  # the user's word for it (codegen)
            continue
        if key is not None:
            seen.setdefault(key, eqn)
        eqns.append(eqn)
        for o in eqn.outs:
            rank[o] = len(rank)
    return Program(program.inputs, eqns, [subst.get(v, v) for v in program.outputs])


def _doubled(eqn: Eqn) -> Eqn:
    """``m + m`` as ``m * 2.0`` (real floating point only); any other equation as it is."""
    if eqn.prim is not _add or eqn.inputs[0] is not eqn.inputs[1] or \
            not np.issubdtype(eqn.outs[0].dtype, np.floating):
        return eqn  # complex too: (inf + 0j) * 2.0 is inf + nanj
    return Eqn(_multiply, (eqn.inputs[0], Literal(2.0)), eqn.outs, {}, eqn.loc)


def _same_avals(a: Eqn, b: Eqn) -> bool:
    return len(a.outs) == len(b.outs) and all(
        tuple(x.shape) == tuple(y.shape) and x.dtype == y.dtype for x, y in zip(a.outs, b.outs)
    )
