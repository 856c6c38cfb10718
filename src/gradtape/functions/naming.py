"""The user's names for a traced program's values, as the eager tape gives them.

``@gt.function`` code then reads like the eager backward: parameters named after the
arguments and variables (``images``, ``hidden_kernel``), a statement's value after its
target (``loss``), an inner gradient's cotangents as the tape named them
(``d_predictions``). Names are cosmetic: the cache key is structural.
"""

from __future__ import annotations

from typing import Any

from ..codegen.user_source import statement_at
from ..compiler.value_names import variable_name
from ..ir.nodes import Eqn, Var


def copy_var(var: Var) -> Var:
    copied = Var(var.aval, var.hint)
    copied.name = var.name
    return copied


def name_inputs(inputs: dict[str, list[tuple[Var, Any]]]) -> None:
    """The names generated code gives the inputs, as the eager tape's: an argument's
    parameter name (``images``), a variable's own name (a Keras variable's layer and
    name, ``hidden/kernel``, written ``hidden_kernel``). Cosmetic: keys never read them."""
    for var, _ in inputs["arg"]:
        var.name = var.hint
    for var, variable in inputs["var"]:
        var.name = variable_name(variable)


def name_by_statements(eqns: list[Eqn], skip: set[Var]) -> None:
    """Each statement's targets for the outputs of its last op, where the statement
    binds that op's result (``Statement.direct``), as the eager tape names a value
    (``compiler/value_names.py``); an inner backward's equations keep the tape's names."""
    own = [eqn for eqn in eqns if not any(o in skip for o in eqn.outs)]
    statements = [statement_at(eqn.loc) for eqn in own]
    for i, (eqn, statement) in enumerate(zip(own, statements)):
        if statement is None or not statement.direct or not statement.targets:
            continue
        if i + 1 < len(own) and statements[i + 1] is statement:
            continue  # not the statement's last op
        if len(statement.targets) != len(eqn.outs):
            continue
        for out, target in zip(eqn.outs, statement.targets):
            if out.name is None:
                out.name = target
