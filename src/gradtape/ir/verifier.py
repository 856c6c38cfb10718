"""Well-formedness checks for programs; run after every transform in tests."""

from __future__ import annotations

from .nodes import Aval, Literal, Program, Var


class VerificationError(AssertionError):
    pass


def verify(program: Program) -> None:
    """Raise ``VerificationError`` unless every var is defined once, before its use,
    and every equation's outputs have the avals its primitive's shape rule gives; the
    sub-programs a loop or switch holds are checked the same way (each is closed: it
    reads only its own inputs)."""
    defined: set[Var] = set()
    for v in program.inputs:
        _check_var(v)
        if v in defined:
            raise VerificationError(f"input {v} listed twice")
        defined.add(v)
    for i, eqn in enumerate(program.eqns):
        for v in eqn.inputs:
            if isinstance(v, Literal):
                continue
            _check_var(v)
            if v not in defined:
                raise VerificationError(f"eqn {i} ({eqn.prim.name}) reads {v} before it is defined")
        for sub in _subprograms(eqn.params):  # a loop's body, a switch's branches
            try:
                verify(sub)
            except VerificationError as error:
                raise VerificationError(f"eqn {i} ({eqn.prim.name}): {error}") from None
        expected = eqn.prim.abstract_eval(eqn.inputs, eqn.params)
        if len(expected) != len(eqn.outs):
            raise VerificationError(f"eqn {i} ({eqn.prim.name}) has the wrong number of outputs")
        for out, aval in zip(eqn.outs, expected):
            _check_var(out)
            if out in defined:
                raise VerificationError(f"eqn {i} ({eqn.prim.name}) redefines {out}")
            if tuple(out.aval.shape) != tuple(aval.shape) or out.aval.dtype != aval.dtype:
                raise VerificationError(
                    f"eqn {i} ({eqn.prim.name}) output {out} disagrees with its shape rule: {aval}"
                )
            defined.add(out)
    for v in program.outputs:
        if isinstance(v, Var) and v not in defined:
            raise VerificationError(f"output {v} is never defined")


def _subprograms(params: dict) -> list[Program]:
    found = []
    for value in params.values():
        if isinstance(value, Program):
            found.append(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            found.extend(value)
    return found


def _check_var(v) -> None:
    if not isinstance(v, Var) or not isinstance(v.aval, Aval):
        raise VerificationError(f"{v!r} is not a typed Var")
