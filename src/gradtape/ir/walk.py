"""The one walk over a Program that every evaluator shares.

Interpreting on arrays, re-running on tensors so tapes record, inlining into another
program, pushing tangents, batching: each is "bind the inputs, then for every equation
read its inputs and apply something, then bind its outputs". Only the *something*
differs, so it is the ``apply`` hook here:

    env = walk(program, args, apply)   # apply(eqn, ins) -> out (a tuple if the
    results = read_outputs(program, env, constant)  # primitive has many results)

``literal`` says what a ``Literal`` input reads as: its Python value by default (for
evaluators on arrays or tensors); ``keep_literal`` for evaluators that build IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .nodes import Eqn, Literal, Program, Var

Env = dict  # Var -> whatever the evaluator works on (array, tensor, IR value, pair)
Apply = Callable[[Eqn, list], Any]


def keep_literal(literal: Literal) -> Literal:
    """A ``Literal`` read as itself (evaluators that emit IR)."""
    return literal


def walk(program: Program, args: Sequence[Any], apply: Apply | None = None,
         literal: Callable[[Literal], Any] | None = None, release: bool = False) -> Env:
    """Apply ``apply`` to every equation in order; the environment of every var after.

    ``apply=None`` runs each primitive's implementation (the interpreter, inline: it
    runs a structure's first call). ``literal`` maps a ``Literal`` input to what
    ``apply`` receives (``None``: its value). ``release``: drop each var after its
    last use, so the result holds only the outputs (and inputs no equation reads).
    """
    env = dict(zip(program.inputs, args))
    dying = _dying(program) if release else None
    for index, eqn in enumerate(program.eqns):
        # Literals as values is the interpreter's case, the one on a cold call: no hook.
        if literal is None:
            ins = [v.value if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        else:
            ins = [literal(v) if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        out = eqn.prim.impl(*ins, **eqn.params) if apply is None else apply(eqn, ins)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out))
        else:
            env[eqn.outs[0]] = out
        if dying is not None:
            for v in dying.get(index, ()):
                env.pop(v, None)
    return env


def _dying(program: Program) -> dict[int, list[Var]]:
    """The vars no later equation reads, by the equation after which they die (an
    output never does): ``walk(release=True)`` drops each there, so a value is freed
    after its last use rather than when the walk returns."""
    last: dict[Var, int] = {v: -1 for v in program.inputs}
    for index, eqn in enumerate(program.eqns):
        for v in eqn.inputs:
            if isinstance(v, Var):
                last[v] = index
        for v in eqn.outs:
            last.setdefault(v, index)
    kept = {v for v in program.outputs if isinstance(v, Var)}
    dying: dict[int, list[Var]] = {}
    for v, index in last.items():
        if v not in kept and index >= 0:
            dying.setdefault(index, []).append(v)
    return dying


def read_outputs(program: Program, env: Env,
                 constant: Callable[[Literal], Any]) -> list[Any]:
    """The program's outputs from ``env``: ``None`` stays ``None`` (a zero), a
    ``Literal`` output becomes ``constant(literal)``."""
    return [None if v is None else constant(v) if isinstance(v, Literal) else env[v]
            for v in program.outputs]


def free_vars(program: Program, exclude: set = frozenset()) -> list[Var]:
    """Vars the program reads but never defines, in order of first use."""
    defined = set(exclude)
    free: dict[Var, None] = {}
    for eqn in program.eqns:
        for v in eqn.inputs:
            if isinstance(v, Var) and v not in defined:
                free[v] = None
        defined.update(eqn.outs)
    for v in program.outputs:
        if isinstance(v, Var) and v not in defined:
            free[v] = None
    return list(free)
