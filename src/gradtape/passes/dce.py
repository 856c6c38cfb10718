"""Dead-code elimination: drop equations whose outputs nothing reads."""

from __future__ import annotations

from ..ir.nodes import Program, Var


def eliminate_dead_code(program: Program) -> Program:
    live = {v for v in program.outputs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(program.eqns):
        if any(o in live for o in eqn.outs):
            kept.append(eqn)
            live.update(v for v in eqn.inputs if isinstance(v, Var))
    kept.reverse()
    inputs = program.inputs
    return Program(inputs, kept, program.outputs)
