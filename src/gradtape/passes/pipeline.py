"""The pass pipeline: the backward Program as autodiff emits it -> the one codegen reads.

Every pass is Program -> Program and keeps the program valid; with ``verify=True`` the
verifier runs after each one (tests do this), so a broken rewrite is caught at the pass
that made it.
"""

from __future__ import annotations

from ..ir.nodes import Program
from ..ir.verifier import verify as _verify
from .dce import eliminate_dead_code

PASSES = (eliminate_dead_code,)


def optimize(program: Program, verify: bool = False) -> Program:
    """``program`` after every pass; inputs and outputs keep their order and avals."""
    for run_pass in PASSES:
        program = run_pass(program)
        if verify:
            _verify(program)
    return program
