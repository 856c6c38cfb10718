"""Building programs: while a builder is active, ops on IR values append equations."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .abstract import abstract_eval
from .nodes import Eqn, IRValue, Literal, Program, Var


class _BuilderStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Builder] = []


_builders = _BuilderStack()


class Builder:
    """Collects equations. ``loc`` tags new equations with the forward op they came from."""

    def __init__(self) -> None:
        self.eqns: list[Eqn] = []
        self.loc: Any = None

    def __enter__(self) -> Builder:
        _builders.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _builders.stack.pop()

    def program(self, inputs, outputs) -> Program:
        return Program(inputs, self.eqns, outputs)


def emit(prim, args, params) -> Any:
    """Append ``prim(*args, **params)`` to the active builder and return its output var(s)."""
    stack = _builders.stack
    if not stack:
        raise RuntimeError(f"IR value used in {prim.name!r} outside of a program builder.")
    b = stack[-1]
    inputs = tuple([a if isinstance(a, IRValue) else _as_ir(a, prim.name) for a in args])
    outs = tuple([Var(aval, prim.name) for aval in abstract_eval(prim, inputs, params)])
    b.eqns.append(Eqn(prim, inputs, outs, params, b.loc))
    return outs if prim.multiple_results else outs[0]


def _as_ir(value: Any, op_name: str) -> IRValue:
    if isinstance(value, IRValue):
        return value
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return Literal(value)
    raise TypeError(
        f"{op_name!r} got a concrete {type(value).__name__} while building a program; "
        "derivative rules may only use their inputs, outputs and Python scalars."
    )
