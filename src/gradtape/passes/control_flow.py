"""Passes and sub-programs: the pipeline inside loop bodies and branches, and dropping
the stacks (and ``recompute`` results) nobody reads.

A ``loop`` or ``switch`` holds closed sub-programs (every value they read is an
operand), so the outer passes treat it as one equation; ``optimize_inside`` runs the
pipeline on each sub-program (their inputs and outputs stay, as for any program).
``drop_unread_stacks`` takes from a loop the stacked values no one reads (the residuals
a forward run without a gradient does not need), so the code generator writes no list
for them; the body loses the work only they needed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir.dce import eliminate_dead_code
from ..ir.nodes import Eqn, Program, Var
from ..ops.control_flow import CONTROL_FLOW, loop_p, recompute_p

Pass = Callable[[Program], Program]


def has_control_flow(program: Program) -> bool:
    # A plain loop: every build asks this, and a generator would cost a call per equation.
    for eqn in program.eqns:
        if eqn.prim in CONTROL_FLOW:
            return True
    return False


def _with_params(eqn: Eqn, params: dict, outs=None) -> Eqn:
    return Eqn(eqn.prim, eqn.inputs, eqn.outs if outs is None else outs, params, eqn.loc)


def optimize_inside(program: Program, optimize: Pass) -> Program:
    """``program`` with ``optimize`` run on every sub-program, at every depth."""
    if not has_control_flow(program):
        return program
    eqns = []
    for eqn in program.eqns:
        if eqn.prim in CONTROL_FLOW:
            params = {}
            for key, value in eqn.params.items():
                if isinstance(value, Program):
                    value = optimize(value)
                elif isinstance(value, tuple) and value and isinstance(value[0], Program):
                    value = tuple(optimize(p) for p in value)
                params[key] = value
            eqn = _with_params(eqn, params)
        eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs)


def drop_unread_stacks(program: Program) -> Program:
    """``program`` without the loop stacks nothing reads (in its sub-programs too)."""
    if not has_control_flow(program):
        return program
    read = {v for eqn in program.eqns for v in eqn.inputs if isinstance(v, Var)}
    read.update(v for v in program.outputs if isinstance(v, Var))
    eqns = []
    dropped = False
    for eqn in program.eqns:
        if eqn.prim is loop_p or eqn.prim is recompute_p:
            before = eqn
            eqn = _drop_stacks(eqn, read) if eqn.prim is loop_p else _drop_results(eqn, read)
            dropped = dropped or eqn is not before
        if eqn.prim in CONTROL_FLOW:
            eqn = _inside(eqn)
        eqns.append(eqn)
    program = Program(program.inputs, eqns, program.outputs)
    # What only a dropped value needed (the zeros a dropped accumulator started from).
    return eliminate_dead_code(program) if dropped else program


def _needed_inputs(program: Program, outputs: list) -> set:
    pruned = eliminate_dead_code(Program(program.inputs, program.eqns, outputs))
    needed = {v for e in pruned.eqns for v in e.inputs if isinstance(v, Var)}
    return needed | {v for v in outputs if isinstance(v, Var)}


def _drop_dead_carry(eqn: Eqn, read: set) -> Eqn:
    """Without the carried values nobody reads after the loop and no other carried
    value, stack or condition depends on (an invariant's gradient nobody asked for)."""
    params = eqn.params
    n_carry, body, cond = params["n_carry"], params["body"], params["cond"]
    live = {i for i in range(n_carry) if eqn.outs[i] in read}
    cond_needs = set() if cond is None else _needed_inputs(cond, list(cond.outputs))
    live |= {i for i in range(n_carry) if cond is not None and cond.inputs[i] in cond_needs}
    while True:
        outputs = [body.outputs[i] for i in sorted(live)] + list(body.outputs[n_carry:])
        needs = _needed_inputs(body, outputs)
        grown = live | {i for i in range(n_carry) if body.inputs[i] in needs}
        if grown == live:
            break
        live = grown
    if len(live) == n_carry:
        return eqn
    keep = sorted(live)
    rest = list(range(n_carry, len(body.inputs)))
    new_body = eliminate_dead_code(Program(
        [body.inputs[i] for i in keep] + [body.inputs[i] for i in rest],
        body.eqns, [body.outputs[i] for i in keep] + list(body.outputs[n_carry:])))
    new_cond = None if cond is None else Program(
        [cond.inputs[i] for i in keep] + list(cond.inputs[n_carry:]), cond.eqns,
        cond.outputs)
    inputs = (eqn.inputs[0],) + tuple(eqn.inputs[1 + i] for i in keep) + \
        tuple(eqn.inputs[1 + n_carry:])
    outs = tuple(eqn.outs[i] for i in keep) + eqn.outs[n_carry:]
    return Eqn(eqn.prim, inputs, outs, dict(params, body=new_body, cond=new_cond,
                                            n_carry=len(keep)), eqn.loc)


def _drop_stacks(eqn: Eqn, read: set) -> Eqn:
    eqn = _drop_dead_carry(eqn, read)
    n_carry = eqn.params["n_carry"]
    stacks = eqn.outs[n_carry + 1:]
    kept = [j for j, s in enumerate(stacks) if s in read]
    if len(kept) == len(stacks):
        return eqn
    body = eqn.params["body"]
    outputs = body.outputs[:n_carry] + [body.outputs[n_carry + j] for j in kept]
    body = eliminate_dead_code(Program(body.inputs, body.eqns, outputs))
    outs = eqn.outs[:n_carry + 1] + tuple(stacks[j] for j in kept)
    return _with_params(eqn, dict(eqn.params, body=body), outs)


def _drop_results(eqn: Eqn, read: set) -> Eqn:
    """A ``recompute`` without the results nobody reads (the gradient of an operand no
    one asked for): its block loses the work only they needed."""
    kept = [j for j, out in enumerate(eqn.outs) if out in read]
    if len(kept) == len(eqn.outs) or not kept:
        return eqn
    block = eqn.params["block"]
    outputs = [block.outputs[j] for j in kept]
    needed = _needed_inputs(block, outputs)
    used = [i for i, v in enumerate(block.inputs) if v in needed]  # it reads no others
    block = eliminate_dead_code(Program([block.inputs[i] for i in used], block.eqns, outputs))
    return Eqn(eqn.prim, [eqn.inputs[i] for i in used], [eqn.outs[j] for j in kept],
               dict(eqn.params, block=block), eqn.loc)


def _inside(eqn: Eqn) -> Eqn:
    params = {}
    for key, value in eqn.params.items():
        if isinstance(value, Program):
            value = drop_unread_stacks(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            value = tuple(drop_unread_stacks(p) for p in value)
        params[key] = value
    return _with_params(eqn, params)


# Work moved out of a loop runs even when the loop runs no iteration: only primitives
# that cannot raise on operands of the right shapes (elementwise ones, layout changes,
# products, static indexing) move, and only pure ones (never a random draw).
_HOISTABLE = frozenset(("transpose", "reshape", "broadcast_to", "matmul", "getitem"))


def _hoistable(eqn: Eqn) -> bool:
    prim = eqn.prim
    if not prim.pure or prim in CONTROL_FLOW or prim.multiple_results:
        return False
    if prim.name == "getitem":
        return len(eqn.inputs) == 1  # a static index: no index arrays
    return prim.elementwise or prim.name in _HOISTABLE


def hoist_invariants(program: Program) -> Program:
    """``program`` with each loop's loop-invariant work (in its body and condition)
    computed once before the loop, as new invariants (``w.T`` of a matmul's VJP)."""
    if not has_control_flow(program):
        return program
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        if eqn.prim is loop_p:
            moved, eqn = _hoist(eqn)
            eqns.extend(moved)
        eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs)


def _hoist(eqn: Eqn) -> tuple[list[Eqn], Eqn]:
    params = eqn.params
    n_carry, n_inv = params["n_carry"], params["n_inv"]
    body, cond = params["body"], params["cond"]
    operands = list(eqn.inputs[1:])
    # An invariant input of either sub-program -> the outer value it stands for.
    outer: dict = {}
    for program in (body, cond):
        if program is not None:
            for v, op in zip(program.inputs[n_carry:n_carry + n_inv],
                             operands[n_carry:n_carry + n_inv]):
                outer[v] = op
    moved: list[Eqn] = []
    new_invariants: list = []  # (outer value, the sub-program var it replaces)

    def strip(program: Program | None) -> Program | None:
        if program is None:
            return None
        kept = []
        for e in program.eqns:
            if _hoistable(e) and all(not isinstance(v, Var) or v in outer for v in e.inputs):
                out = Var(e.outs[0].aval, e.outs[0].hint)
                out.name = e.outs[0].name
                # A traced body's locations are the user's (file, line) alone.
                loc = (e.loc, e.prim.name) if e.loc is not None and isinstance(
                    e.loc[0], str) else e.loc
                moved.append(Eqn(e.prim, [outer.get(v, v) for v in e.inputs], [out],
                                 e.params, loc))
                outer[e.outs[0]] = out
                new_invariants.append((out, e.outs[0]))
            else:
                kept.append(e)
        return Program(program.inputs, kept, program.outputs)

    new_body, new_cond = strip(body), strip(cond)
    if not moved:
        return [], eqn
    extra = [out for out, _ in new_invariants]

    def with_inputs(program: Program | None) -> Program | None:
        if program is None:
            return None
        mine = {inner for _, inner in new_invariants if _defined_or_read(program, inner)}
        ins = [inner if inner in mine else Var(inner.aval, inner.hint)
               for _, inner in new_invariants]
        k = n_carry + n_inv
        return Program(program.inputs[:k] + ins + program.inputs[k:], program.eqns,
                       program.outputs)

    inputs = (eqn.inputs[0],) + tuple(operands[:n_carry + n_inv]) + tuple(extra) + \
        tuple(operands[n_carry + n_inv:])
    new_params = dict(params, body=with_inputs(new_body), cond=with_inputs(new_cond),
                      n_inv=n_inv + len(extra))
    return moved, Eqn(eqn.prim, inputs, eqn.outs, new_params, eqn.loc)


def _defined_or_read(program: Program, var: Var) -> bool:
    # ``is``, not ``in``: IR values compare with ``==`` by building an equation.
    return any(v is var for e in program.eqns for v in e.inputs) or \
        any(v is var for v in program.outputs)
