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

from ..ir.nodes import Eqn, Literal, Program, Var

# Writing into a buffer saves an allocation but ``out=`` costs a keyword argument:
# only worth it for arrays at least this large (elements). ``+=`` is used at any size.
MIN_OUT_SIZE = 4096

_INF = float("inf")

# NumPy computes ``a * b`` in the memory of an operand that is an unnamed temporary
# (``b = square(y)`` inlined), when the temporary is at least this large: its temporary
# elision. Such a statement allocates nothing, so an ``out=`` buffer would only keep a
# dead buffer alive beside the temporary (one layer-sized array more at the peak).
ELIDE_MIN_BYTES = 256 * 1024
# A dead buffer at least this large is not held across a statement that allocates, for
# a later statement to write into: freeing it keeps the peak lower. Smaller ones are,
# since their memory matters less than reusing memory the cache holds.
HOLD_LIMIT_BYTES = 1 << 20
# The operator ufuncs, and whether NumPy also writes into their right operand.
_ELIDING_OPERATORS = {np.add: True, np.multiply: True, np.subtract: False,
                      np.true_divide: False}


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


class Elision(NamedTuple):
    """How an operator statement is written so that NumPy computes it in the memory of
    its temporary operand: ``negate`` writes ``c - t`` as ``-t + c``; ``swap`` writes
    ``c * t`` as ``t * c`` (NumPy computes in a temporary right operand only beside an
    array); a Python number in ``typed`` is written as a scalar of the temporary's
    dtype (NumPy 2 casts a Python float to float64 first, which float32 cannot hold
    safely). Each is the same number in IEEE arithmetic."""

    negate: bool
    typed: int | None
    swap: bool = False


def _fresh_temporary(v, eqn: Eqn, inlined: set[Var], defining: dict) -> bool:
    """Whether ``v`` is written inside ``eqn``'s expression as a new array of ``eqn``'s
    result shape and dtype, large enough for NumPy to compute into."""
    if not isinstance(v, Var) or v not in inlined or ufunc_of(defining[v]) is None:
        return False
    out = eqn.outs[0].aval
    return (v.aval.shape == out.shape and v.aval.dtype == out.dtype
            and _size(out.shape) * out.dtype.itemsize >= ELIDE_MIN_BYTES)


def _other_operand(v, out: Var) -> tuple[bool, bool]:
    """Whether the operand beside a temporary lets NumPy write into it, and whether
    that takes writing the operand as a typed scalar."""
    dtype = out.aval.dtype
    if isinstance(v, Var):  # one to broadcast against the temporary: no elision
        return v.aval.shape in ((), out.aval.shape) and np.can_cast(v.aval.dtype, dtype), \
            False
    value = v.value
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return isinstance(value, np.generic) and np.can_cast(value.dtype, dtype), False
    if dtype == np.float64 and isinstance(value, float):
        return True, False
    try:
        with np.errstate(over="ignore"):
            typed = dtype.type(value)
    except OverflowError:  # an int beyond every float
        return False, False
    return typed.item() == value, True  # written as float32(1.0) only if exactly equal


def elision(eqn: Eqn, inlined: set[Var], defining: dict) -> Elision | None:
    """How NumPy can write ``eqn``'s operator expression into an operand's temporary
    (only float results: ``-t`` of an unsigned or bool array is another number), or
    ``None`` if it cannot."""
    commutes = _ELIDING_OPERATORS.get(ufunc_of(eqn))
    if commutes is None or len(eqn.inputs) != 2 or eqn.outs[0].aval.dtype.kind != "f":
        return None
    a, b = eqn.inputs
    if _fresh_temporary(a, eqn, inlined, defining):
        allowed, typed = _other_operand(b, eqn.outs[0])
        if allowed:
            return Elision(False, 1 if typed else None)
    if not _fresh_temporary(b, eqn, inlined, defining):
        return None
    allowed, typed = _other_operand(a, eqn.outs[0])
    if not allowed:
        return None
    if commutes:
        scalar = isinstance(a, Literal) or a.aval.shape == ()
        return Elision(False, 0 if typed else None, swap=scalar)
    if ufunc_of(eqn) is np.subtract and isinstance(a, Literal):
        return Elision(True, 0 if typed else None)
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
    freed_at: dict[Var, int] = {}

    def release(pos: int) -> None:
        for b in dying.get(pos, ()):
            free.setdefault((b.aval.shape, b.aval.dtype), {})[b] = None
            freed_at[b] = pos

    def expire(pos: int) -> None:
        """Statement ``pos`` allocated: a large buffer dead before it is let go rather
        than held for a later statement, since holding it made the peak one array
        higher (its last reader's ``del`` frees it instead)."""
        for pool in free.values():
            for b in [b for b in pool if freed_at[b] < pos and _size(b.aval.shape) *
                      b.aval.dtype.itemsize >= HOLD_LIMIT_BYTES]:
                del pool[b]

    plan: dict[int, Reuse] = {}
    for pos, i in enumerate(statements):
        release(pos)  # buffers whose last reader is this statement: ufuncs allow overlap
        eqn = program.eqns[i]
        if not eqn.outs:  # run for its effect (a branch that only prints): no buffer
            continue
        out = eqn.outs[0]
        if out not in fresh:
            continue
        reuse = _reuse_for(eqn, free.get((out.aval.shape, out.aval.dtype)), min_out_size,
                           inlined, defining, fresh, statement_leaves[i], may_alias)
        if reuse is not None:
            plan[i] = reuse
        if reuse is None or _writes_temporaries(eqn, inlined, defining):
            expire(pos)
    return plan


def _reuse_for(eqn: Eqn, pool: dict | None, min_out_size: int, inlined: set[Var],
               defining: dict, fresh: dict, leaves: list[Var],
               may_alias: dict) -> Reuse | None:
    """The dead buffer a statement writes into (taken from ``pool``), if any."""
    if not pool:
        return None
    if ufunc_of(eqn) is np.add:
        for position, v in enumerate(eqn.inputs):
            if isinstance(v, Var) and v in fresh and v in pool:
                del pool[v]
                return Reuse("iadd", v, position)
    out = eqn.outs[0]
    if _size(out.aval.shape) >= min_out_size and elision(eqn, inlined, defining) is None:
        buffer = _pick(pool, eqn, leaves, may_alias)
        if buffer is not None:
            del pool[buffer]
            return Reuse("out", buffer)
    return None


def _writes_temporaries(eqn: Eqn, inlined: set[Var], defining: dict) -> bool:
    """Whether ``eqn``'s expression computes an unnamed array (an inlined ufunc's)."""
    return any(isinstance(v, Var) and v in inlined and (
        ufunc_of(defining[v]) is not None or _writes_temporaries(defining[v], inlined,
                                                                 defining))
        for v in eqn.inputs)


def _pick(pool: dict, eqn: Eqn, leaves: list[Var], may_alias: dict) -> Var | None:
    """The oldest free buffer ``eqn`` can write into. A generalized ufunc (``matmul``)
    whose output overlaps an input copies that input first, so it gets one it doesn't
    read."""
    if ufunc_of(eqn).signature is None:
        return next(iter(pool))
    read = frozenset().union(*(may_alias.get(v, ()) for v in leaves))
    return next((b for b in pool if b not in read), None)
