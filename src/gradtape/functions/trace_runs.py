"""The values a trace computed, reused by the call right after it.

Tracing runs each ``loop`` equation once on the call's values (the trace needs values
for Python's reads), stacks included, and a ``tape.gradient`` inside the function runs
its backward (its reversed loops too); the call right after the trace would run them
again on the same values: at T = 10,000 steps that second run is a third of the cold
cost. Such a value is a pure function of the call's inputs when nothing under it draws,
and the inputs of that call are the ones the trace ran on (the same arguments,
variables and captures, no random draw, print or Python call in the function): so that
call takes these values and runs the rest of its program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir.dce import eliminate_dead_code
from ..ir.nodes import Eqn, Program, Var
from ..ops import random
from ..ops.control_flow import subprograms

# The trace's value of a program value, by the value (``Var``s compare by identity).
TraceValues = dict[Var, Any]


def record_values(tracer: Any, values: Sequence[Any], arrays: Sequence[Any],
                  computed_by: Sequence[Eqn]) -> None:
    """Keep the arrays the trace computed for ``values`` by the equations
    ``computed_by``, unless one of them draws or prints (each run does it anew)."""
    if runs_anew(computed_by):
        return
    kept = tracer.__dict__.setdefault("trace_values", {})
    for value, array in zip(values, arrays):
        if isinstance(value, Var):
            kept[value] = array


def without_traced_values(program: Program, traced: TraceValues
                          ) -> tuple[Program, list[Any]] | None:
    """``program`` without the equations whose outputs read anywhere all have traced
    values (those become inputs, after the others) nor what only they read, and the
    values; ``None`` if no equation has them. (An inner gradient is some outputs of a
    reversed loop: the others, its unread stacks, need no value.)"""
    read = {v for e in program.eqns for v in e.inputs if isinstance(v, Var)}
    read.update(v for v in program.outputs if isinstance(v, Var))
    eqns: list[Eqn] = []
    inputs: list[Var] = []
    for eqn in program.eqns:
        needed = [o for o in eqn.outs if o in read]
        if needed and all(o in traced for o in needed):
            inputs += needed
            continue
        eqns.append(eqn)
    if not inputs:
        return None
    reduced = Program(list(program.inputs) + inputs, eqns, program.outputs)
    return eliminate_dead_code(reduced), [traced[v] for v in inputs]


def runs_anew(eqns: Sequence[Eqn]) -> bool:
    """A random draw or an effect (a ``print``) among ``eqns`` or in their sub-programs
    (a loop's body): each run must do it again, so nothing under it can be reused."""
    if random.streams_of(eqns) or any(e.prim.effect for e in eqns):
        return True
    return any(runs_anew(sub.eqns) for e in eqns for sub in subprograms(e.params))
