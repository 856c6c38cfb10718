"""The pass pipeline: the backward Program as autodiff emits it -> the one codegen reads.

    dead code -> simplify (fold, zeros/ones, no-op shapes) -> CSE -> dead code

Every pass is Program -> Program and keeps the program valid; with ``verify=True`` the
verifier runs after each one (tests do this), so a broken rewrite is caught at the pass
that made it. ``optimize`` keeps the inputs as they are (same calling convention);
``optimize_backward`` also drops the inputs nobody reads and says which it kept.
"""

from __future__ import annotations

from ..ir.nodes import Program
from ..ir.verifier import verify as _verify
from .control_flow import has_control_flow, optimize_inside
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .residuals import ResidualSelection, select_residuals
from .simplify import simplify

PASSES = (eliminate_dead_code, simplify, eliminate_common_subexpressions, eliminate_dead_code)


def _simplify_inside(program: Program) -> Program:
    return simplify(program, in_loop=True)


PASSES_INSIDE = (eliminate_dead_code, _simplify_inside, eliminate_common_subexpressions,
                 eliminate_dead_code)


def optimize(program: Program, verify: bool = False, inside: bool = False) -> Program:
    """``program`` after every pass; inputs and outputs keep their order and avals.
    Loop bodies and branches (sub-programs, ``inside``) get every pass too, the
    simplification without its rewrites of matrix products."""
    for run_pass in PASSES_INSIDE if inside else PASSES:
        program = run_pass(program)
        if verify:
            _verify(program)
    if has_control_flow(program):
        program = optimize_inside(program, lambda p: optimize(p, verify, inside=True))
    return program


def optimize_backward(program: Program, verify: bool = False) -> ResidualSelection:
    """``optimize``, then residual selection: ``(program, kept)``, where the optimized
    program's inputs are ``[old_inputs[i] for i in kept]``."""
    selection = select_residuals(optimize(program, verify))
    if verify:
        _verify(selection.program)
    return selection
