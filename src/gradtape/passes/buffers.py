"""Liveness-based buffer reuse: ``out=`` into dead temporaries, ``+=`` accumulation.

An analysis the code generator consumes. It only ever writes into a buffer the backward
function allocated itself: the result of a NumPy ufunc (always a fresh array) computed
earlier in the same call. Inputs (residuals the tape holds, output gradients the user
passed) are never written to, and neither is anything that may be a view of them.

Any primitive that is not a ufunc may return a view of its inputs (reshape, transpose,
broadcast_to, identity, indexing ...), so its output is treated as an alias of every
buffer its inputs may alias; a buffer is dead only when every possible alias is. A
returned value is live to the end of the function. When in doubt, nothing is reused.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..ir.nodes import Eqn, Program, Var

# Writing into a buffer saves an allocation but ``out=`` costs a keyword argument:
# only worth it for arrays at least this large (elements). ``+=`` is used at any size.
MIN_OUT_SIZE = 4096

_INF = float("inf")


class Reuse(NamedTuple):
    """How a statement writes its result: ``kind`` is ``"out"`` (``ufunc(..., out=b)``)
    or ``"iadd"`` (``b += other``, ``b`` being input ``position`` of an add)."""

    kind: str
    buffer: Var
    position: int = -1


def ufunc_of(eqn: Eqn) -> np.ufunc | None:
    """The one-output NumPy ufunc an equation applies, if it is one."""
    impl = eqn.prim.impl
    if isinstance(impl, np.ufunc) and impl.nout == 1 and not eqn.prim.multiple_results:
        return impl
    return None


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def plan_reuse(program: Program, inlined: set[Var],
               min_out_size: int | None = None) -> dict[int, Reuse]:
    """For each statement (equation index) that can write into a dead buffer, how."""
    if min_out_size is None:
        min_out_size = MIN_OUT_SIZE
    defining = {out: eqn for eqn in program.eqns for out in eqn.outs}
    statements = [i for i, e in enumerate(program.eqns)
                  if not (len(e.outs) == 1 and e.outs[0] in inlined)]
    if not any(ufunc_of(program.eqns[i]) is not None and program.eqns[i].outs[0].aval.shape != ()
               for i in statements):
        return {}  # no statement makes a buffer of its own: nothing to reuse (scalar code)

    def leaves(eqn: Eqn) -> list[Var]:
        found = []
        for v in eqn.inputs:
            if not isinstance(v, Var):
                continue
            if v in inlined:
                found.extend(leaves(defining[v]))
            else:
                found.append(v)
        return found

    last_use: dict[Var, float] = {}
    statement_leaves: dict[int, list[Var]] = {}
    for pos, i in enumerate(statements):
        statement_leaves[i] = leaves(program.eqns[i])
        for v in statement_leaves[i]:
            last_use[v] = pos
    for v in program.outputs:
        if isinstance(v, Var):
            last_use[v] = _INF

    # may_alias[v]: the fresh buffers (named by the var that created them) v may share.
    # fresh[b]: the statement after which buffer b is dead (its definition at the
    # earliest). A dict, not a set: its order must not depend on ids.
    fresh: dict[Var, float] = {}
    may_alias: dict[Var, frozenset] = {}
    for pos, i in enumerate(statements):
        eqn = program.eqns[i]
        if ufunc_of(eqn) is not None and eqn.outs[0].aval.shape != ():
            fresh[eqn.outs[0]] = pos
            may_alias[eqn.outs[0]] = frozenset((eqn.outs[0],))
        else:
            shared = frozenset().union(*(may_alias.get(v, ()) for v in statement_leaves[i]))
            for out in eqn.outs:
                may_alias[out] = shared
    end = dict(fresh)
    for v, buffers in may_alias.items():
        t = last_use.get(v, -1)
        for b in buffers:
            if t > end[b]:
                end[b] = t

    # A buffer last read by statement p is free from p on (ufuncs allow their output to
    # overlap their inputs); one never read is free only after its own statement.
    dying: dict[int, list[Var]] = {}
    for b, t in end.items():
        if t != _INF:
            dying.setdefault(int(t) + (t == fresh[b]), []).append(b)
    # (shape, dtype) -> dead buffers, oldest first. Dicts, not lists: ``==`` on a Var
    # builds IR, so Vars are only ever compared by identity (hashing).
    free: dict[tuple, dict[Var, None]] = {}

    def release(pos: int) -> None:
        for b in dying.get(pos, ()):
            free.setdefault((b.aval.shape, b.aval.dtype), {})[b] = None

    plan: dict[int, Reuse] = {}
    for pos, i in enumerate(statements):
        release(pos)  # buffers whose last reader is this statement: ufuncs allow overlap
        eqn = program.eqns[i]
        if not eqn.outs:  # run for its effect (a branch that only prints): no buffer
            continue
        out = eqn.outs[0]
        if out not in fresh:
            continue
        pool = free.get((out.aval.shape, out.aval.dtype))
        if not pool:
            continue
        if ufunc_of(eqn) is np.add:
            for position, v in enumerate(eqn.inputs):
                if isinstance(v, Var) and v in fresh and v in pool:
                    del pool[v]
                    plan[i] = Reuse("iadd", v, position)
                    break
            if i in plan:
                continue
        if _size(out.aval.shape) >= min_out_size:
            buffer = _pick(pool, eqn, statement_leaves[i], may_alias)
            if buffer is not None:
                del pool[buffer]
                plan[i] = Reuse("out", buffer)
    return plan


def _pick(pool: dict, eqn: Eqn, leaves: list[Var], may_alias: dict) -> Var | None:
    """The oldest free buffer ``eqn`` can write into. A generalized ufunc (``matmul``)
    whose output overlaps an input copies that input first, so it gets one it doesn't
    read."""
    if ufunc_of(eqn).signature is None:
        return next(iter(pool))
    read = frozenset().union(*(may_alias.get(v, ()) for v in leaves))
    return next((b for b in pool if b not in read), None)
