"""The derivatives of ``loop`` and ``switch`` (``ops/control_flow.py``), installed on them.

Reverse mode through a loop is a reversed loop. The forward loop stacks the values its
body's VJP reads (``with_residuals``: only those, and never an invariant or a row of an
input, which the backward reads where they are); the backward is a ``loop`` over the
forward's trip count, from the last iteration to the first, running the body's VJP on
one row of each stack. Its carry is the cotangent of the forward's carry and the
cotangents of the invariants, accumulated across iterations; the cotangents of the
rows the forward read come out stacked. The backward is an ordinary ``loop``, so it can
be differentiated again: if the values its VJP reads were not stacked, the VJP stacks
them with a loop of its own (the forward again, computed in the backward).

A ``switch``'s VJP is a ``switch`` over its branches' VJPs (each recomputes its branch);
an operand a branch does not use gets zeros, as TF's gradient of ``tf.cond`` gives.
Forward mode runs the tangents alongside: a loop (a switch) of the JVP of the body (of
the branches).

A ``recompute`` (a ``gt.recompute_grad`` block) is differentiated as a one-branch
switch: its VJP is a ``recompute`` of the block run again then its VJP, reading only the
block's operands (the forward keeps nothing else); its JVP a ``recompute`` of the
block's JVP. Both are ``recompute`` equations again, so second order and jacobians
through them recompute as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..ir import builder
from ..ir.builder import Builder
from ..ir.lower import is_differentiable_dtype
from ..ir.nodes import IRValue, Literal, Program, Var
from ..ir.walk import keep_literal, read_outputs, walk
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from ..ops.control_flow import loop_p, recompute_p, switch_p
from ..ops.registry import bind
from .reverse import vjp_program

# --- helpers on programs ----------------------------------------------------------------


def _fresh(values: Sequence[Any], hint: str = "v") -> list[Var]:
    return [Var(v.aval, getattr(v, "hint", hint)) for v in values]


def _inline(program: Program, args: Sequence[Any]) -> list[Any]:
    """``program``'s equations emitted into the active builder on ``args``; its outputs
    (a ``Literal`` output stays one, a ``None`` stays ``None``)."""
    def emit(eqn, ins):
        return builder.emit(eqn.prim, ins, eqn.params)
    env = walk(program, list(args), emit, keep_literal)
    return read_outputs(program, env, keep_literal)


def _value_like(value: IRValue | None, like: IRValue) -> IRValue:
    """``value`` as an array of ``like``'s aval (``like`` may belong to another program:
    only its aval is read): a zero for ``None``, a broadcast ``Literal``, a cast where
    the dtype differs."""
    shape, dtype = tuple(like.shape), like.dtype  # an IR value's or a tensor's
    if value is None and not isinstance(like, IRValue):  # a tensor: zeros now
        return _ew.zeros_like(like)
    if value is None:
        value = Literal(np.zeros((), dtype)[()])
    if isinstance(value, Literal):
        value = _shape.broadcast_to(Literal(value.value), shape)
    elif tuple(value.shape) != shape:
        value = _shape.broadcast_to(value, shape)
    if value.dtype != dtype:
        value = _ew.cast(value, dtype)
    return value


def _float(v: Any) -> bool:
    return is_differentiable_dtype(v.dtype)


def _zero_cotangents(g: Sequence[Any]) -> set:
    """The cotangents autodiff filled with ``zeros_like`` (outputs no cotangent reached),
    emitted just before a rule runs: those outputs need no backward work."""
    stack = builder._builders.stack
    if not stack:
        return set()
    eqns = stack[-1].eqns
    return {e.outs[0] for e in eqns[max(0, len(eqns) - len(g)):]
            if e.prim is _ew.zeros_like_p}


def body_vjp(body: Program) -> tuple[Program, list[Var]]:
    """The VJP of a body (cotangents of every output in, of every float input out) and
    the body values it reads."""
    wrt = [v for v in body.inputs if _float(v)]
    seeds = [Var(o.aval, "seed") if isinstance(o, Var) and _float(o) else None
             for o in body.outputs]
    backward, residuals = vjp_program(body, wrt, seeds)
    return _recompute_inner_loops(body, backward, residuals)


def _recompute_inner_loops(body: Program, backward: Program,
                           residuals: list[Var]) -> tuple[Program, list[Var]]:
    """A loop inside the body makes stacks whose length may change per iteration of
    the outer loop: the outer one cannot stack them. Its backward computes that loop
    again from its inputs (which it reads instead)."""
    made_by = {}
    for eqn in body.eqns:
        if eqn.prim is loop_p:
            for out in eqn.outs[eqn.params["n_carry"]:]:  # the trip count and stacks
                made_by[out] = eqn
    again: list = []
    while True:
        found = [made_by[r] for r in residuals if r in made_by and made_by[r] not in again]
        if not found:
            break
        for eqn in found:
            if eqn not in again:
                again.append(eqn)
        computed = {o for e in again for o in e.outs}
        needed: dict[Var, None] = {}
        for r in residuals:
            if r not in computed:
                needed[r] = None
        for e in again:
            for v in e.inputs:
                if isinstance(v, Var) and v not in computed:
                    needed[v] = None
        residuals = list(needed)
    if not again:
        return backward, residuals
    order = {id(e): i for i, e in enumerate(body.eqns)}
    again.sort(key=lambda e: order[id(e)])
    seeds = backward.inputs[len(backward.inputs) - _seed_count(backward, body):]
    program = Program(residuals + list(seeds), again + list(backward.eqns), backward.outputs)
    return program, residuals


def _seed_count(backward: Program, body: Program) -> int:
    return sum(1 for o in body.outputs if isinstance(o, Var) and _float(o))


def with_residuals(body: Program, n_carry: int, n_inv: int) -> Program:
    """``body`` with the values its VJP reads appended to its stacked outputs, except
    those a backward reads anyway: invariants, rows of the inputs, stacked outputs."""
    _, residuals = body_vjp(body)
    available = set(body.inputs[n_carry:]) | set(body.outputs[n_carry:])
    missing = [r for r in residuals if r not in available]
    if not missing:
        return body
    return Program(body.inputs, body.eqns, list(body.outputs) + missing)


# --- loop -------------------------------------------------------------------------------


def _loop_vjp(g: tuple, y: tuple, n: Any, *operands: Any, cond: Program | None,
              body: Program, n_carry: int, n_inv: int, reverse: bool, length: int) -> tuple:
    zeros = _zero_cotangents(g)
    carry_ins, inv_ins = operands[:n_carry], operands[n_carry:n_carry + n_inv]
    xs_ins = operands[n_carry + n_inv:]
    count, stacks = y[n_carry], list(y[n_carry + 1:])
    backward, residuals = body_vjp(body)
    outputs = body.outputs
    stacked_at = {o: s for s, o in enumerate(outputs[n_carry:]) if isinstance(o, Var)}
    places = {v: i for i, v in enumerate(body.inputs)}
    missing = [r for r in residuals if places.get(r, -1) < n_carry and r not in stacked_at]
    stacked_values = list(outputs[n_carry:]) + missing
    if missing:  # not stacked by the forward: stack them with the forward again
        extended = Program(body.inputs, body.eqns, list(outputs) + missing)
        again = bind(loop_p, n, *operands, cond=cond, body=extended, n_carry=n_carry,
                     n_inv=n_inv, reverse=reverse, length=length)
        stacks = list(again[n_carry + 1:])
        stacked_at.update({r: len(outputs) - n_carry + i for i, r in enumerate(missing)})
        count = again[n_carry]
    # The backward's operands: carry (carry cotangents, invariant accumulators),
    # invariants (the forward's invariants its VJP reads), rows (stacks, inputs' rows,
    # and the stacked outputs' cotangents).
    float_carry = [i for i in range(n_carry) if _float(carry_ins[i])]
    float_inv = [i for i in range(n_inv) if _float(inv_ins[i])]
    float_xs = [i for i in range(len(xs_ins)) if _float(xs_ins[i])]
    read_inv = [places[r] - n_carry for r in residuals if n_carry <= places.get(r, -1)
                < n_carry + n_inv]
    read_xs = [places[r] - n_carry - n_inv for r in residuals
               if places.get(r, -1) >= n_carry + n_inv]
    read_stacks = sorted({stacked_at[r] for r in residuals if r in stacked_at
                          and places.get(r, -1) < n_carry})
    seeded = [s for s in range(len(outputs) - n_carry)
              if s < len(g) - n_carry - 1 and g[n_carry + 1 + s] is not None
              and g[n_carry + 1 + s] not in zeros and _float(outputs[n_carry + s])]
    carry_init = ([_value_like(g[i], carry_ins[i]) for i in float_carry]
                  + [_ew.zeros_like(inv_ins[i]) for i in float_inv])
    inv_args = [inv_ins[i] for i in read_inv]
    row_args = ([stacks[s] for s in read_stacks] + [xs_ins[i] for i in read_xs]
                + [g[n_carry + 1 + s] for s in seeded])
    plan = _Plan(body, backward, residuals, n_carry, n_inv, float_carry, float_inv,
                 float_xs, read_inv, read_xs, read_stacks, seeded, stacked_at,
                 stacked_values)
    reverse_body = _reverse_body(plan, carry_ins, inv_ins)
    outs = bind(loop_p, count, *carry_init, *inv_args, *row_args, cond=None,
                body=reverse_body, n_carry=len(carry_init), n_inv=len(inv_args),
                reverse=not reverse, length=length)
    cts: list[Any] = [None] * (1 + len(operands))
    for k, i in enumerate(float_carry):
        cts[1 + i] = outs[k]
    for k, i in enumerate(float_inv):
        cts[1 + n_carry + i] = outs[len(float_carry) + k]
    rows = outs[len(carry_init) + 1:]
    for k, i in enumerate(float_xs):
        cts[1 + n_carry + n_inv + i] = rows[k]
    return tuple(cts)


class _Plan(NamedTuple):
    """What a loop's backward computes and reads, by position in the forward loop."""

    body: Program
    backward: Program  # the body's VJP (``body_vjp``)
    residuals: list[Var]  # the body values it reads
    n_carry: int
    n_inv: int
    float_carry: list[int]  # the carried values, invariants and rows whose cotangents
    float_inv: list[int]  # it computes
    float_xs: list[int]
    read_inv: list[int]  # the invariants it reads, as they are
    read_xs: list[int]  # the inputs whose rows it reads
    read_stacks: list[int]  # the stacks whose rows it reads
    seeded: list[int]  # the stacked outputs that have a cotangent
    stacked_at: dict  # body value -> its stack
    stacked_values: list  # the stacked body values (the forward's, then the recomputed)


def _reverse_body(plan: _Plan, carry_ins: Sequence[Any], inv_ins: Sequence[Any]) -> Program:
    """One backward iteration: the body's VJP on one row of each stack."""
    (body, backward, residuals, n_carry, n_inv, float_carry, float_inv, float_xs,
     read_inv, read_xs, read_stacks, seeded, stacked_at, stacked_values) = plan
    outputs = body.outputs
    ct_carry = _fresh([carry_ins[i] for i in float_carry], "d_carry")
    acc = _fresh([inv_ins[i] for i in float_inv], "d_invariant")
    inv_vars = _fresh([inv_ins[i] for i in read_inv], "invariant")
    stack_rows = [Var(stacked_values[s].aval, "row") for s in read_stacks]
    x_rows = [Var(body.inputs[n_carry + n_inv + i].aval, "row") for i in read_xs]
    seed_rows = [Var(outputs[n_carry + s].aval, "d_row") for s in seeded]
    with Builder() as b:
        value: dict[Var, Any] = {}
        for i, v in zip(read_inv, inv_vars):
            value[body.inputs[n_carry + i]] = v
        for i, v in zip(read_xs, x_rows):
            value[body.inputs[n_carry + n_inv + i]] = v
        for s, v in zip(read_stacks, stack_rows):
            for r in residuals:
                if stacked_at.get(r) == s and r not in value:
                    value[r] = v
        seed_of = {i: ct for i, ct in zip(float_carry, ct_carry)}
        seed_of.update({n_carry + s: ct for s, ct in zip(seeded, seed_rows)})
        seeds = [seed_of.get(j) for j, o in enumerate(outputs)
                 if isinstance(o, Var) and _float(o)]
        seeds = [_value_like(s, o) for s, o in zip(seeds, [o for o in outputs if
                 isinstance(o, Var) and _float(o)])]
        cts = _inline(backward, [value[r] for r in residuals] + seeds)
        float_inputs = [v for v in body.inputs if _float(v)]
        ct_of = dict(zip(float_inputs, cts))
        new_carry = [_value_like(ct_of.get(body.inputs[i]), v)
                     for i, v in zip(float_carry, ct_carry)]
        new_acc = []
        for i, a in zip(float_inv, acc):
            ct = ct_of.get(body.inputs[n_carry + i])
            new_acc.append(a if ct is None else _ew.add(a, _value_like(ct, a)))
        x_cts = [_value_like(ct_of.get(body.inputs[n_carry + n_inv + i]),
                             body.inputs[n_carry + n_inv + i]) for i in float_xs]
        inputs = ct_carry + acc + inv_vars + stack_rows + x_rows + seed_rows
        return b.program(inputs, new_carry + new_acc + x_cts)


def jvp_program(program: Program, tangent_of: Sequence[bool]) -> Program:
    """``program`` with tangents: inputs, the primals then a tangent for each input
    ``tangent_of`` marks; outputs, the primals then a tangent for each float output."""
    primals = _fresh(program.inputs)
    tangents = [Var(v.aval, "tangent") for v, t in zip(program.inputs, tangent_of) if t]
    with Builder() as b:
        it = iter(tangents)
        pairs = [(p, next(it) if t else None) for p, t in zip(primals, tangent_of)]

        def push(eqn, ins):
            vals = [x for x, _ in ins]
            ts = tuple(t for _, t in ins)
            out = builder.emit(eqn.prim, vals, eqn.params)
            outs = out if eqn.prim.multiple_results else (out,)
            if not eqn.prim.differentiable or all(t is None for t in ts):
                out_ts = (None,) * len(outs)
            else:
                out_ts = eqn.prim.jvp(ts, out, *vals, **eqn.params)
                out_ts = out_ts if eqn.prim.multiple_results else (out_ts,)
            result = tuple(zip(outs, out_ts))
            return result if eqn.prim.multiple_results else result[0]

        env = walk(program, pairs, push, lambda lit: (lit, None))
        pairs_out = read_outputs(program, env, lambda lit: (lit, None))
        outs = [_value_like(p, o) if isinstance(p, Literal) else p
                for (p, _), o in zip(pairs_out, program.outputs)]
        out_ts = [_value_like(t, o) for (_, t), o in zip(pairs_out, program.outputs)
                  if _float(o)]
        return b.program(primals + tangents, outs + out_ts)


def _loop_jvp(ts: tuple, y: tuple, n: Any, *operands: Any, cond: Program | None,
              body: Program, n_carry: int, n_inv: int, reverse: bool, length: int) -> tuple:
    ts = ts[1:]
    carry, inv, xs = (operands[:n_carry], operands[n_carry:n_carry + n_inv],
                      operands[n_carry + n_inv:])
    # Every float carry carries a tangent (zeros where none came in): the body may
    # mix them. Invariants and rows carry one only where one came in.
    with_t = [(_float(v) if i < n_carry else ts[i] is not None and _float(v))
              for i, v in enumerate(operands)]
    tangent_body = jvp_program(body, with_t)
    carry_t = [_value_like(ts[i], carry[i]) for i in range(n_carry) if with_t[i]]
    inv_t = [ts[n_carry + i] for i in range(n_inv) if with_t[n_carry + i]]
    xs_t = [ts[n_carry + n_inv + i] for i in range(len(xs)) if with_t[n_carry + n_inv + i]]
    # Reorder the tangent body's inputs and outputs to the loop's layout.
    k_c, k_i = len(carry_t), len(inv_t)
    prim_in, tan_in = tangent_body.inputs[:len(operands)], tangent_body.inputs[len(operands):]
    n_out = len(body.outputs)
    prim_out, tan_out = tangent_body.outputs[:n_out], tangent_body.outputs[n_out:]
    float_out = [j for j, o in enumerate(body.outputs) if _float(o)]
    tan_of = dict(zip(float_out, tan_out))
    inputs = (prim_in[:n_carry] + tan_in[:k_c] + prim_in[n_carry:n_carry + n_inv]
              + tan_in[k_c:k_c + k_i] + prim_in[n_carry + n_inv:] + tan_in[k_c + k_i:])
    carry_tangent_out = [tan_of[j] for j in range(n_carry) if with_t[j]]
    outputs = (prim_out[:n_carry] + carry_tangent_out + prim_out[n_carry:]
               + [tan_of[j] for j in float_out if j >= n_carry])
    paired = Program(inputs, tangent_body.eqns, outputs)
    extra = [prim_in[i] for i in range(n_carry) if with_t[i]]
    extra_inv = [prim_in[n_carry + i] for i in range(n_inv) if with_t[n_carry + i]]
    outs = bind(loop_p, n, *carry, *carry_t, *inv, *inv_t, *xs, *xs_t, cond=_cond_with(
        cond, n_carry, extra, extra_inv), body=paired, n_carry=n_carry + k_c, n_inv=n_inv + k_i,
        reverse=reverse, length=length)
    n_c = n_carry + k_c
    result: list[Any] = []
    it = iter(outs[n_carry:n_c])
    for i in range(n_carry):
        result.append(next(it) if with_t[i] else None)
    result.append(None)  # the trip count
    stacks_t = iter(outs[n_c + 1 + n_out - n_carry:])
    for j in range(n_carry, n_out):
        result.append(next(stacks_t) if j in float_out else None)
    return tuple(result)


def _cond_with(cond: Program | None, n_carry: int, carry_tangents: list,
               inv_tangents: list) -> Program | None:
    """``cond`` reading the tangent loop's operands (it ignores the tangents)."""
    if cond is None:
        return None
    ins = list(cond.inputs)
    dc = [Var(v.aval, "tangent") for v in carry_tangents]
    di = [Var(v.aval, "tangent") for v in inv_tangents]
    return Program(ins[:n_carry] + dc + ins[n_carry:] + di, cond.eqns, cond.outputs)


# --- switch -----------------------------------------------------------------------------


def _branch_vjp(branch: Program, float_ops: list[int], seeded: list[int]) -> Program:
    """A branch's backward: it computes the branch again, then its VJP; zeros for the
    float operands it does not use."""
    operands = _fresh(branch.inputs, "operand")
    seeds = [Var(branch.outputs[j].aval, "seed") for j in seeded]
    with Builder() as b:
        backward, residuals = vjp_program(
            branch, [branch.inputs[i] for i in float_ops],
            [seeds[seeded.index(j)] if j in seeded else None
             for j in range(len(branch.outputs))])
        env = walk(branch, operands, lambda e, ins: builder.emit(e.prim, ins, e.params),
                   keep_literal)
        env.update(zip(branch.inputs, operands))
        cts = _inline(backward, [env[r] for r in residuals] + seeds)
        outs = [_value_like(ct, operands[i]) for ct, i in zip(cts, float_ops)]
        return b.program(operands + seeds, outs)


def _switch_vjp(g: tuple, y: tuple, index: Any, *operands: Any,
                branches: tuple[Program, ...]) -> tuple:
    zeros = _zero_cotangents(g)
    float_ops = [i for i, v in enumerate(operands) if _float(v)]
    seeded = [j for j, ct in enumerate(g) if ct is not None and ct not in zeros
              and _float(y[j])]
    if not float_ops or not seeded:
        return (None,) * (1 + len(operands))
    backwards = tuple(_branch_vjp(br, float_ops, seeded) for br in branches)
    outs = bind(switch_p, index, *operands, *[g[j] for j in seeded], branches=backwards)
    cts: list[Any] = [None] * (1 + len(operands))
    for k, i in enumerate(float_ops):
        cts[1 + i] = outs[k]
    return tuple(cts)


def _switch_jvp(ts: tuple, y: tuple, index: Any, *operands: Any,
                branches: tuple[Program, ...]) -> tuple:
    ts = ts[1:]
    with_t = [t is not None and _float(v) for v, t in zip(operands, ts)]
    tangent_branches = tuple(jvp_program(br, with_t) for br in branches)
    outs = bind(switch_p, index, *operands, *[t for t, w in zip(ts, with_t) if w],
                branches=tangent_branches)
    n_out = len(branches[0].outputs)
    tangents = iter(outs[n_out:])
    return tuple(next(tangents) if _float(o) else None for o in branches[0].outputs)


# --- recompute --------------------------------------------------------------------------


def _recompute_vjp(g: tuple, y: tuple, *operands: Any, block: Program, name: str) -> tuple:
    zeros = _zero_cotangents(g)
    float_ops = [i for i, v in enumerate(operands) if _float(v)]
    seeded = [j for j, ct in enumerate(g) if ct is not None and ct not in zeros
              and _float(y[j])]
    if not float_ops or not seeded:
        return (None,) * len(operands)
    again = _branch_vjp(block, float_ops, seeded)  # the block again, then its VJP
    outs = bind(recompute_p, *operands, *[g[j] for j in seeded], block=again,
                name=f"{name}_grad")
    cts: list[Any] = [None] * len(operands)
    for k, i in enumerate(float_ops):
        cts[i] = outs[k]
    return tuple(cts)


def _recompute_jvp(ts: tuple, y: tuple, *operands: Any, block: Program, name: str) -> tuple:
    with_t = [t is not None and _float(v) for v, t in zip(operands, ts)]
    outs = bind(recompute_p, *operands, *[t for t, w in zip(ts, with_t) if w],
                block=jvp_program(block, with_t), name=f"{name}_jvp")
    tangents = iter(outs[len(block.outputs):])
    return tuple(next(tangents) if _float(o) else None for o in block.outputs)


def install() -> None:
    """Give ``loop``, ``switch`` and ``recompute`` their derivative rules."""
    loop_p.vjp, loop_p.jvp = _loop_vjp, _loop_jvp
    switch_p.vjp, switch_p.jvp = _switch_vjp, _switch_jvp
    recompute_p.vjp, recompute_p.jvp = _recompute_vjp, _recompute_jvp


install()
