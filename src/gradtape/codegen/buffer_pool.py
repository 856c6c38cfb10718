"""A compiled function that keeps the work buffers of its large intermediates.

``passes/pooling.py`` says which statements write into a pooled slot; this module
writes the function around them::

    buffer_pool = _runtime.BufferPool(((2000, 32), 'float32'), ...)   # in the header

    def forward(x, w):
        try:
            pooled = buffer_pool.pop()          # a free set of buffers, or
        except IndexError:
            pooled = buffer_pool.new()          # a new one (first call, or calls at once)
        try:
            pooled_1, pooled_2 = pooled
            matmul_1 = matmul(x, w, out=pooled_1)
            ...
            return (loss,)
        finally:
            buffer_pool.append(pooled)          # also when the call raises

``pop`` and ``append`` are single list operations, atomic between threads: two calls
running at once (threads, or a ``py_function`` calling the function again) take two sets.
"""

from __future__ import annotations

from typing import NamedTuple

import gast

from ..core.config import on_change
from ..ir.nodes import Program, Var
from ..passes.buffers import Reuse
from ..passes.pooling import plan_pool
from . import runtime
from .literals import LOAD, STORE, constant, literal, make, name
from .naming import GlobalNames, LocalNames

POOL_GLOBAL = "buffer_pool"


def _pooling_set(on: bool) -> None:
    if not on:
        runtime.clear_buffer_pools()


on_change.setdefault("pool_buffers", []).append(_pooling_set)


class Pooling(NamedTuple):
    """The pooled slots of one function: statement index -> the local it writes into."""

    out_names: dict[int, str]
    scratch: dict[Var, str]  # a temporary inside a fused expression -> its buffer
    pool: str  # the global BufferPool
    taken: str  # the local holding the set this call took
    slots: list[str]  # the locals of its buffers, in the set's order


def plan(program: Program, inlined: set[Var], reuse: dict[int, Reuse],
         globs: GlobalNames, locals_: LocalNames) -> Pooling | None:
    """Name the pool and its slots, if any statement of ``program`` writes into one."""
    pool_plan = plan_pool(program, inlined, reuse)
    if not pool_plan.avals:
        return None
    avals = [(shape, dtype.name) for shape, dtype in pool_plan.avals]
    definition = [make(gast.Tuple, elts=[literal(shape, globs), constant(dtype)], ctx=LOAD)
                  for shape, dtype in avals]
    pool = globs.bind(runtime.BufferPool(*avals), POOL_GLOBAL,
                      ("runtime", "BufferPool", definition))
    slots = [locals_.reserve(f"pooled_{k}") for k in range(1, len(avals) + 1)]
    out_names = {index: slots[slot] for index, slot in pool_plan.slots.items()}
    scratch = {v: slots[slot] for v, slot in pool_plan.scratch.items()}
    return Pooling(out_names, scratch, pool, locals_.reserve("pooled"), slots)


def wrap(pooling: Pooling, body: list[gast.stmt]) -> list[gast.stmt]:
    """``body`` (ending in its ``return``) between taking a set and giving it back."""
    taken = pooling.taken

    def method(attr: str, args: list) -> gast.expr:
        func = make(gast.Attribute, value=name(pooling.pool), attr=attr, ctx=LOAD)
        return make(gast.Call, func=func, args=args, keywords=[])

    def assign(value: gast.expr) -> gast.stmt:
        return make(gast.Assign, targets=[name(taken, store=True)], value=value,
                    type_comment=None)

    take = make(gast.Try, body=[assign(method("pop", []))], handlers=[make(
        gast.ExceptHandler, type=name("IndexError"), name=None,
        body=[assign(method("new", []))])], orelse=[], finalbody=[])
    targets = [name(s, store=True) for s in pooling.slots]
    unpack = make(gast.Assign, targets=[make(gast.Tuple, elts=targets, ctx=STORE)
                                        if len(targets) > 1 else targets[0]],
                  value=name(taken) if len(targets) > 1 else make(
                      gast.Subscript, value=name(taken), slice=constant(0), ctx=LOAD),
                  type_comment=None)
    give_back = make(gast.Expr, value=method("append", [name(taken)]))
    run = make(gast.Try, body=[unpack, *body], handlers=[], orelse=[],
               finalbody=[give_back])
    return [take, run]

