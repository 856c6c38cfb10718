"""Batching ``loop`` (``vectorized_map``, ``jacobian``): one loop over batched carries.

When the trip count does not depend on a batched value (a counted loop, a ``scan``, the
reversed loop of a backward under ``jacobian``), every element runs the same iterations:
the batched loop is the loop with its body batched. A carry is batched when it starts
batched or the body makes it so from a batched value (found by iterating to a fixed
point); the others stay as they are, so a counter stays a scalar and the condition
reading it stays unbatched. A batched ``xs`` is read one row per iteration with the
batch behind the row axis, and the stacks come out with the batch in front again.

When the condition reads a batched value (Newton's loop under ``vectorized_map``), each
element stops at its own iteration: the batched loop runs until every element is done,
and an element that is done keeps its carry (``where``), its own trip count carried
beside. Its stacks hold the rows of the longest-running element; an element's rows
past its own count are never read (a stack is read by a loop over that element's trip
count). Only a batched bound (``maximum_iterations``) still runs one loop per element.

``install()`` gives ``loop_p`` the rule (``ad/`` stands above ``ops/``, as for the
loop's derivatives).
"""

from __future__ import annotations

from typing import Any

from ..ir.builder import Builder
from ..ir.nodes import Aval, Literal, Program, Var
from ..ops import elementwise as _ew
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.batch_rules import batch_by_loop
from ..ops.control_flow import COUNT_DTYPE, install_loop_batching, loop_p
from ..ops.registry import bind
from .batching import batch_program, batched_outputs
from .control_flow import _inline


def _carry_flags(body: Program, n_carry: int, start: list[bool], rest: list[bool]) -> list[bool]:
    """The carries batched at some iteration: those starting batched, then those the
    body computes from a batched value, until nothing changes."""
    flags = list(start)
    while True:
        made = batched_outputs(body, flags + rest)[:n_carry]
        grown = [a or b for a, b in zip(flags, made)]
        if grown == flags:
            return flags
        flags = grown


def _swap_leading(x: Any) -> Any:
    """Axes 0 and 1 swapped: a batched ``xs`` (batch, rows, ...) read a row at a time,
    and a stack (rows, batch, ...) back to (batch, rows, ...)."""
    rank = len(x.shape)
    return _shape.transpose(x, (1, 0) + tuple(range(2, rank)))


def _with_batch(x: Any, is_batched: bool, size: int) -> Any:
    return x if is_batched else _shape.broadcast_to(x, (size,) + tuple(x.shape))


def batch_loop(size: int, args: list, batched: list, *, cond: Program | None, body: Program,
               n_carry: int, n_inv: int, reverse: bool, length: int) -> tuple:
    """``loop``'s batching rule: its outputs (final carry, trip count, stacks), each
    with the batch at axis 0."""
    params = dict(cond=cond, body=body, n_carry=n_carry, n_inv=n_inv, reverse=reverse,
                  length=length)
    n, operands = args[0], args[1:]
    split = (1 + n_carry, 1 + n_carry + n_inv)
    start, inv_flags, xs_flags = (list(batched[1:split[0]]), list(batched[split[0]:split[1]]),
                                  list(batched[split[1]:]))
    carry_flags = _carry_flags(body, n_carry, start, inv_flags + xs_flags)
    cond_batched = cond is not None and batched_outputs(cond, carry_flags + inv_flags)[0]
    stacks = len(body.outputs) - n_carry
    if batched[0]:  # a bound per element
        return batch_by_loop(loop_p, size, args, batched, **params)
    carry = list(operands[:n_carry])
    invariants = list(operands[n_carry:n_carry + n_inv])
    xs = [_swap_leading(x) if f else x for x, f in zip(operands[n_carry + n_inv:], xs_flags)]
    if cond_batched:
        return _until_all_done(size, n, carry, start, invariants, inv_flags, xs, xs_flags,
                               params)
    # A carry the body makes batched enters batched (its first value broadcast).
    carry = [_with_batch(c, f0, size) if f else c for c, f, f0 in zip(carry, carry_flags, start)]
    new_body = batch_program(body, carry_flags + inv_flags + xs_flags, size,
                             broadcast=carry_flags + [True] * stacks)
    new_cond = None if cond is None else batch_program(
        cond, carry_flags + inv_flags, size, broadcast=[False])
    outs = bind(loop_p, n, *carry, *invariants, *xs, **dict(params, cond=new_cond,
                                                              body=new_body))
    final = [_with_batch(c, f, size) for c, f in zip(outs[:n_carry], carry_flags)]
    count = _shape.broadcast_to(outs[n_carry], (size,))
    return tuple(final + [count] + [_swap_leading(s) for s in outs[n_carry + 1:]])


def _until_all_done(size: int, n: Any, carry: list, start: list[bool], invariants: list,
                    inv_flags: list[bool], xs: list, xs_flags: list[bool],
                    params: dict) -> tuple:
    """The loop run while any element's condition holds; an element whose condition
    fails keeps its carry from then on, and counts its own iterations."""
    cond, body, n_carry = params["cond"], params["body"], params["n_carry"]
    every = [True] * n_carry
    cond_b = batch_program(cond, every + inv_flags, size)
    body_b = batch_program(body, every + inv_flags + xs_flags, size)
    carry = [_with_batch(c, f, size) for c, f in zip(carry, start)]
    count0 = _shape.broadcast_to(Literal(COUNT_DTYPE.type(0)), (size,))
    carry_vars = [Var(Aval(tuple(c.shape), c.dtype), "carry") for c in carry]
    count_var = Var(Aval((size,), COUNT_DTYPE), "trips")
    inv_vars = [Var(Aval(tuple(v.shape), v.dtype), "invariant") for v in invariants]
    x_vars = [Var(Aval(tuple(x.shape[1:]), x.dtype), "row") for x in xs]

    with Builder() as b:  # any element still running
        live = _inline(cond_b, carry_vars + inv_vars)[0]
        running = _ew.greater(_reduce.sum(_ew.cast(live, COUNT_DTYPE)), Literal(0))
    any_cond = Program(carry_vars + [count_var] + inv_vars, b.eqns, [running])

    with Builder() as b:  # one iteration, kept only where the element runs
        live = _inline(cond_b, carry_vars + inv_vars)[0]
        outs = _inline(body_b, carry_vars + inv_vars + x_vars)
        stepped, rows = outs[:n_carry], outs[n_carry:]
        kept = []
        for new, old in zip(stepped, carry_vars):
            mask = _shape.reshape(live, (size,) + (1,) * (len(old.shape) - 1))
            kept.append(_ew.where(mask, new, old))
        counted = _ew.add(count_var, _ew.cast(live, COUNT_DTYPE))
    step = Program(carry_vars + [count_var] + inv_vars + x_vars, b.eqns,
                   kept + [counted] + rows)

    outs = bind(loop_p, n, *carry, count0, *invariants, *xs,
                **dict(params, cond=any_cond, body=step, n_carry=n_carry + 1))
    # Element k's rows past its own count repeat its last state: nothing reads them, a
    # stack is read by a loop over that element's trip count (its reversed loop).
    return tuple(outs[:n_carry + 1]) + tuple(_swap_leading(s) for s in outs[n_carry + 2:])


def install() -> None:
    """The rule ``loop_p`` batches by (its default runs one loop per element)."""
    install_loop_batching(batch_loop)


install()
