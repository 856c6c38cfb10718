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
         literal: Callable[[Literal], Any] | None = None,
         release: list[list[Var]] | None = None, consume: bool = False) -> Env:
    """Apply ``apply`` to every equation in order; the environment of every var after.

    ``apply=None`` runs each primitive's implementation (the interpreter, inline: it
    runs a structure's first call). ``literal`` maps a ``Literal`` input to what
    ``apply`` receives (``None``: its value). With ``release`` (``dead_after``), each
    var leaves the environment after its last reader, so its value can be freed.
    ``consume``: ``args`` is a list its caller gives up; it is emptied once the
    environment holds its values, so with ``release`` the inputs die at their last
    reader too.
    """
    env = dict(zip(program.inputs, args))
    if consume:
        args.clear()  # type: ignore[attr-defined]
    for index, eqn in enumerate(program.eqns):
        # Literals as values is the interpreter's case, the one on a cold call: no hook.
        if literal is None:
            ins = [v.value if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        else:
            ins = [literal(v) if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        if apply is None and eqn.prim.run_consuming is not None and release is not None:
            # Let go of the previous equation's results first (the environment holds
            # them if they live on), so what dies here is held by ``ins`` alone.
            out = None
            out = _run_consuming(eqn, ins, env, release[index])
        else:
            out = eqn.prim.impl(*ins, **eqn.params) if apply is None else apply(eqn, ins)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out))
        else:
            env[eqn.outs[0]] = out
        if release is not None:
            for v in release[index]:
                if v in env:  # _run_consuming let go of the dead inputs already
                    del env[v]
    return env


def _run_consuming(eqn: Eqn, ins: list, env: Env, dead: list[Var]) -> Any:
    """``eqn``'s primitive on ``ins``, a list it may empty, with the inputs that die at
    ``eqn`` out of the environment first: nothing but that list holds them. (Of the
    vars dying at ``eqn``, those already in the environment are its inputs: its
    outputs are bound after it runs.)"""
    for v in dead:
        if v in env:
            del env[v]
    return eqn.prim.run_consuming(ins, **eqn.params)


# Values under this many elements are not released (as generated code writes no ``del``
# for them: codegen/liveness.py): their memory does not matter, the bookkeeping would.
RELEASE_MIN_SIZE = 4096


def dead_after(program: Program) -> list[list[Var]] | None:
    """Per equation, the large vars no later equation or output reads (its inputs read
    for the last time, its outputs never read): ``walk``'s ``release``; ``None`` if
    there are none (a program of scalars)."""
    last: dict[Var, int] = {v: -1 for v in program.inputs}
    for index, eqn in enumerate(program.eqns):
        for v in eqn.inputs:
            if isinstance(v, Var):
                last[v] = index
        for v in eqn.outs:
            last.setdefault(v, index)
    for v in program.outputs:
        if isinstance(v, Var):
            last.pop(v, None)
    release: list[list[Var]] = [[] for _ in program.eqns]
    found = False
    for v, index in last.items():
        if index < 0:  # an input no equation reads: the caller holds it anyway
            continue
        # dtypes.size_or_inf, inlined: a call per var shows in a cold build's calls
        size = 1
        for d in v.aval.shape:
            size = size * d if isinstance(d, int) else RELEASE_MIN_SIZE  # unknown: large
        if size >= RELEASE_MIN_SIZE:
            release[index].append(v)
            found = True
    return release if found else None


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
