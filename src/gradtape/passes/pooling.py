"""Which work buffers a compiled function keeps between its calls (buffer pooling).

TensorFlow's allocator keeps the blocks of a graph's intermediates from one run to the
next; NumPy hands each step's temporaries back to malloc, which may return them to the
system and fault them in again on the next step. So a compiled function keeps the
buffers of its large intermediates and writes into them with ``out=`` (``codegen/
buffer_pool.py`` writes the code). This analysis says which.

A *buffer* is the array one statement's ufunc allocates, together with every later
statement that writes into it (``plan_reuse``'s ``out=`` and ``+=``). A buffer is
pooled only if nothing that may share its memory outlives the call: no returned value
(an output, a variable's new value, a residual) may alias it, and no reader may keep it
(an impure primitive, or one that runs other programs or the user's Python: a
``py_function`` could store the array). Any primitive that is not a ufunc may return a
view of its inputs, so its outputs count as the buffer. The trace fixes every shape and
dtype: a call with other shapes runs another trace with its own pool.

The pool holds what the call needs at once, not every buffer it makes: buffers whose
lifetimes (from the statement that allocates one to the last read of anything that may
alias it) don't overlap share a slot. A statement NumPy computes in its temporaries
(``buffers.elision``: ``-square(h) + c``) is not pooled: it allocates one temporary
and reuses it, where a pooled form takes a slot for its result and one for its
temporaries, held between calls (two layer-sized arrays more in the MLP step).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..ir.nodes import Program, Var
from .buffers import Reuse, elision, ufunc_of

# Smaller arrays come from malloc's bins without page faults: not worth a pooled slot.
POOL_MIN_BYTES = 64 * 1024


class PoolPlan(NamedTuple):
    """``slots``: statement (equation index) -> the pooled slot it writes into with
    ``out=``; ``scratch``: a temporary inside a fused expression -> its slot;
    ``avals``: each slot's ``(shape, dtype)``."""

    slots: dict[int, int]
    scratch: dict[Var, int]
    avals: list[tuple[tuple[int, ...], np.dtype]]


def _may_keep(prim) -> bool:
    """Whether running ``prim`` may keep a reference to its inputs past the call."""
    return not prim.pure or prim.kind_neutral


def plan_pool(program: Program, inlined: set[Var], reuse: dict[int, Reuse],
              min_bytes: int | None = None) -> PoolPlan:
    """The statements whose fresh buffer the function keeps between calls."""
    if min_bytes is None:
        min_bytes = POOL_MIN_BYTES
    defining = {v: e for e in program.eqns for v in e.outs}
    elided = {i for i, e in enumerate(program.eqns)
              if len(e.outs) == 1 and e.outs[0] not in inlined
              and ufunc_of(e) is not None and e.outs[0].aval.shape != ()
              and i not in reuse and elision(e, inlined, defining) is not None}
    owner: dict[Var, Var] = {}  # a statement's ufunc output -> the buffer it lives in
    may_alias: dict[Var, frozenset] = {}  # var -> the buffers it may share memory with
    escaped: set[Var] = set()
    roots: list[int] = []
    for i, eqn in enumerate(program.eqns):
        out = eqn.outs[0] if len(eqn.outs) == 1 else None
        fresh = out is not None and ufunc_of(eqn) is not None and out.aval.shape != ()
        if fresh and out in inlined:
            may_alias[out] = frozenset()  # a temporary inside one expression
            continue
        if fresh:
            planned = reuse.get(i)
            owner[out] = out if planned is None else owner[planned.buffer]
            may_alias[out] = frozenset((owner[out],))
            if planned is None and i not in elided:
                roots.append(i)
            continue
        shared = frozenset().union(*(may_alias.get(v, ()) for v in eqn.inputs
                                     if isinstance(v, Var)))
        for o in eqn.outs:
            may_alias[o] = shared
        if _may_keep(eqn.prim):
            escaped.update(shared)
    for v in program.outputs:
        if isinstance(v, Var):
            escaped.update(may_alias.get(v, ()))
    pooled = [i for i in roots if program.eqns[i].outs[0] not in escaped
              and _large(program.eqns[i].outs[0], min_bytes)]
    last = _last_reads(program, inlined, may_alias)
    for i, eqn in enumerate(program.eqns):  # a later statement writing into a buffer
        buffer = owner.get(eqn.outs[0]) if len(eqn.outs) == 1 else None
        if buffer is not None:
            last[buffer] = max(last.get(buffer, i), i)
    slots: dict[int, int] = {}
    avals: list[tuple[tuple[int, ...], np.dtype]] = []
    free_after: list[int] = []  # slot -> the statement that last reads its buffer
    for i in pooled:
        out = program.eqns[i].outs[0]
        kind = _kind(out)
        slot = next((k for k, aval in enumerate(avals)
                     if aval == kind and free_after[k] < i), None)
        if slot is None:
            slot = len(avals)
            avals.append(kind)
            free_after.append(i)
        slots[i] = slot
        free_after[slot] = max(i, last.get(out, i))
    skip = {program.eqns[i].outs[0] for i in elided}
    return PoolPlan(slots, _Scratch(program, inlined, min_bytes, avals, skip).slots, avals)


def _last_reads(program: Program, inlined: set[Var], may_alias: dict[Var, frozenset]
                ) -> dict[Var, int]:
    """The index of the last statement that reads each buffer (by any alias). A
    temporary inside an expression is read where its statement is."""
    at: dict[Var, int] = {}  # an inlined var -> the statement that writes it
    for i in reversed(range(len(program.eqns))):
        eqn = program.eqns[i]
        where = at.get(eqn.outs[0], i) if len(eqn.outs) == 1 else i
        for v in eqn.inputs:
            if isinstance(v, Var) and v in inlined:
                at.setdefault(v, where)
    last: dict[Var, int] = {}
    for i, eqn in enumerate(program.eqns):
        where = at.get(eqn.outs[0], i) if len(eqn.outs) == 1 else i
        for v in eqn.inputs:
            if isinstance(v, Var):
                for b in may_alias.get(v, ()):
                    last[b] = max(last.get(b, -1), where)
    return last


def _kind(v: Var) -> tuple[tuple[int, ...], np.dtype]:
    return tuple(v.aval.shape), np.dtype(v.aval.dtype)


def _large(v: Var, min_bytes: int) -> bool:
    shape, dtype = _kind(v)
    return all(isinstance(d, int) for d in shape) and _nbytes(shape, dtype) >= min_bytes


class _Scratch:
    """Slots for the temporaries inside fused expressions (``tanh(a @ w + b)``'s sum).

    A temporary is dead once the ufunc reading it has run, and that ufunc's result is a
    new array (never a view of it), so the slot serves every later statement again. An
    elementwise ufunc writes into the slot of a temporary of its shape it reads (exact
    overlap is safe); a temporary read by anything but a ufunc keeps its own array.
    """

    def __init__(self, program: Program, inlined: set[Var], min_bytes: int,
                 avals: list, skip: set[Var] = frozenset()) -> None:
        self.defining = {v: e for e in program.eqns for v in e.outs if v in inlined}
        self.inlined = inlined
        self.avals = avals
        self.by_kind: dict[tuple, list[int]] = {}  # (shape, dtype) -> its scratch slots
        self.slots: dict[Var, int] = {}
        self.eligible = {v for e in program.eqns if ufunc_of(e) is not None
                         for v in e.inputs if isinstance(v, Var) and v in inlined and
                         ufunc_of(self.defining[v]) is not None and v.aval.shape != () and
                         _large(v, min_bytes)}
        for eqn in program.eqns:
            if not (len(eqn.outs) == 1 and eqn.outs[0] in inlined) and \
                    not (eqn.outs and eqn.outs[0] in skip):
                in_use: set[int] = set()
                for v in self._children(eqn):
                    self._visit(v, in_use)

    def _children(self, eqn) -> list[Var]:
        return [v for v in eqn.inputs if isinstance(v, Var) and v in self.inlined]

    def _visit(self, v: Var, in_use: set[int]) -> None:
        """Give ``v`` (and the temporaries under it) a slot, in evaluation order."""
        eqn = self.defining[v]
        if elision(eqn, self.inlined, self.defining) is not None:
            return  # computed in its own temporary, which NumPy reuses (not pooled)
        children = self._children(eqn)
        for u in children:
            self._visit(u, in_use)
        held = [u for u in children if u in self.slots]
        if v in self.eligible:
            kind = _kind(v)
            same = [u for u in held if _kind(u) == kind] if ufunc_of(eqn).signature is None \
                else []
            if same:
                slot = self.slots[same[0]]
                held.remove(same[0])
            else:
                slot = self._free_slot(kind, in_use)
            in_use.add(slot)
            self.slots[v] = slot
        for u in held:
            in_use.discard(self.slots[u])

    def _free_slot(self, kind: tuple, in_use: set[int]) -> int:
        slots = self.by_kind.setdefault(kind, [])
        for slot in slots:
            if slot not in in_use:
                return slot
        slots.append(len(self.avals))
        self.avals.append(kind)
        return slots[-1]


def _nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    n = dtype.itemsize
    for d in shape:
        n *= d
    return n
