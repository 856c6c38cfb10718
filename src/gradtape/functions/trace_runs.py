"""The loops a trace ran, reused by the call right after it.

Tracing runs each ``loop`` equation once on the call's values (the trace needs values
for Python's reads), stacks included, and the call right after the trace would run it
again on the same values: at T = 10,000 steps that second run is a third of the cold
cost. A loop is a pure function of its inputs when its sub-programs draw nothing, and
its inputs in that call are the values the trace computed (the same arguments,
variables and captures, no random draw and no Python call in the function), so that
call takes the trace's outputs of such loops and runs the rest of its program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir.nodes import Eqn, Program, Var
from ..ops import random
from ..ops.control_flow import loop_p, subprograms

# A loop the trace ran: its equation and the arrays it produced (one per output).
LoopRuns = dict[Var, tuple[Eqn, Sequence[Any]]]


def record_loop_run(tracer: Any, arrays: Sequence[Any]) -> None:
    """Keep what the loop the tracer has just written ran to: ``arrays``."""
    eqn = tracer.eqns[-1] if tracer.eqns else None
    if eqn is None or eqn.prim is not loop_p or len(eqn.outs) != len(arrays):
        return
    runs = tracer.__dict__.setdefault("loop_runs", {})
    runs[eqn.outs[0]] = (eqn, tuple(arrays))


def without_traced_loops(program: Program, runs: LoopRuns) -> tuple[Program, list] | None:
    """``program`` with each loop the trace ran (the same outputs) taken out, its outputs
    program inputs after the others, and their arrays; ``None`` if there is none."""
    eqns: list[Eqn] = []
    inputs: list[Var] = []
    arrays: list[Any] = []
    for eqn in program.eqns:
        run = runs.get(eqn.outs[0]) if eqn.prim is loop_p and eqn.outs else None
        if run is not None and _same_outputs(run[0], eqn) and not _draws(eqn):
            inputs += eqn.outs
            arrays += run[1]
            continue
        eqns.append(eqn)
    if not inputs:
        return None
    return Program(list(program.inputs) + inputs, eqns, program.outputs), arrays


def _same_outputs(traced: Eqn, eqn: Eqn) -> bool:
    return len(traced.outs) == len(eqn.outs) and all(
        a is b for a, b in zip(traced.outs, eqn.outs))


def _draws(eqn: Eqn) -> bool:
    """A random draw anywhere in ``eqn``'s sub-programs: each run draws anew."""
    for sub in subprograms(eqn.params):
        if random.streams_of(sub.eqns) or any(_draws(e) for e in sub.eqns):
            return True
    return False
