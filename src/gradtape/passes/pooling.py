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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..ir.nodes import Program, Var
from .buffers import Reuse, ufunc_of

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
            if planned is None:
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
    slots: dict[int, int] = {}
    avals: list[tuple[tuple[int, ...], np.dtype]] = []
    for i in roots:
        out = program.eqns[i].outs[0]
        if out not in escaped and _large(out, min_bytes):
            slots[i] = len(avals)
            avals.append(_kind(out))
    return PoolPlan(slots, _Scratch(program, inlined, min_bytes, avals).slots, avals)


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
                 avals: list) -> None:
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
            if not (len(eqn.outs) == 1 and eqn.outs[0] in inlined):
                in_use: set[int] = set()
                for v in self._children(eqn):
                    self._visit(v, in_use)

    def _children(self, eqn) -> list[Var]:
        return [v for v in eqn.inputs if isinstance(v, Var) and v in self.inlined]

    def _visit(self, v: Var, in_use: set[int]) -> None:
        """Give ``v`` (and the temporaries under it) a slot, in evaluation order."""
        eqn = self.defining[v]
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
