"""Residual selection: the backward function receives only the values it reads.

Autodiff makes the backward program's inputs the forward values its rules read, then
the seeds. Simplification can make some of them unread (``zeros_like(x)`` only needed
``x``'s shape; ``x * 1`` no longer needs the ones). This pass drops unread inputs,
keeps the others in their original order, and reports which positions it kept so the
caller feeds the right values (``[args[i] for i in kept]``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..ir.nodes import Program, Var
from ..ir.walk import free_vars


class ResidualSelection(NamedTuple):
    """The program with only the inputs it reads, and their positions in the original."""

    program: Program
    kept: tuple[int, ...]


def read_vars(program: Program) -> set[Var]:
    """Every var an equation or an output of ``program`` reads."""
    read = {v for v in program.outputs if isinstance(v, Var)}
    for eqn in program.eqns:
        read.update(v for v in eqn.inputs if isinstance(v, Var))
    return read


def select_residuals(program: Program) -> ResidualSelection:
    """Drop the inputs ``program`` never reads; report the positions of those kept."""
    missing = free_vars(program, exclude=set(program.inputs))
    if missing:
        raise ValueError(
            f"The program reads {len(missing)} value(s) it is not given, first {missing[0]}; "
            "residual selection only removes inputs, so list every free var as an input."
        )
    read = read_vars(program)
    kept = tuple(i for i, v in enumerate(program.inputs) if v in read)
    inputs = [program.inputs[i] for i in kept]
    return ResidualSelection(Program(inputs, program.eqns, program.outputs), kept)
