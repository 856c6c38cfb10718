"""Passes and sub-programs: the pipeline inside loop bodies and branches, and dropping
the stacks nobody reads.

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
from ..ops.control_flow import CONTROL_FLOW, loop_p

Pass = Callable[[Program], Program]


def has_control_flow(program: Program) -> bool:
    return any(eqn.prim in CONTROL_FLOW for eqn in program.eqns)


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
    for eqn in program.eqns:
        if eqn.prim is loop_p:
            eqn = _drop_stacks(eqn, read)
        if eqn.prim in CONTROL_FLOW:
            eqn = _inside(eqn)
        eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs)


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


def _inside(eqn: Eqn) -> Eqn:
    params = {}
    for key, value in eqn.params.items():
        if isinstance(value, Program):
            value = drop_unread_stacks(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            value = tuple(drop_unread_stacks(p) for p in value)
        params[key] = value
    return _with_params(eqn, params)
