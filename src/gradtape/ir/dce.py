"""Dead-code elimination, and pruning a program to the outputs someone asked for.

An equation is live when one of its outputs is read by a live equation or is a program
output, or when it runs for its effect (``Primitive.effect``: a print in a loop body);
everything else goes, in one backward sweep. A ``None`` output is a zero: it
needs no work. ``prune_outputs`` turns outputs nobody asked for (gradients of sources
not requested) into ``None`` first, keeping positions, so their work disappears too.
"""

from __future__ import annotations

from collections.abc import Iterable

from .nodes import Eqn, Program, Var


def eliminate_dead_code(program: Program) -> Program:
    """``program`` without the equations no output depends on (inputs unchanged)."""
    live = {v for v in program.outputs if isinstance(v, Var)}
    kept = []
    for eqn in reversed(program.eqns):
        outs = eqn.outs
        # Only an impure primitive (a print, or a loop or branch holding one) can run
        # for its effect: the pure ones skip the check's call.
        if (outs[0] in live if len(outs) == 1 else any(o in live for o in outs)) \
                or (not eqn.prim.pure and has_effect(eqn)):
            kept.append(eqn)
            live.update(eqn.inputs)  # literals too: harmless, no equation defines one
    kept.reverse()
    return Program(program.inputs, kept, program.outputs)


def has_effect(eqn: Eqn) -> bool:
    """Whether ``eqn`` runs for its effect: its primitive does, or one of the
    sub-programs it holds (a loop whose body prints) has such an equation. An effect
    primitive is declared impure (``pure=False``), as the loop and branch primitives."""
    if eqn.prim.effect:
        return True
    for value in eqn.params.values():
        programs = value if isinstance(value, tuple) else (value,)
        for program in programs:
            if isinstance(program, Program) and any(has_effect(e) for e in program.eqns):
                return True
    return False


def prune_outputs(program: Program, wanted: Iterable[int]) -> Program:
    """Only the outputs at positions ``wanted`` computed; the others become ``None``."""
    wanted = set(wanted)
    outputs = [v if i in wanted else None for i, v in enumerate(program.outputs)]
    return eliminate_dead_code(Program(program.inputs, program.eqns, outputs))
