"""The IR: typed SSA variables, equations and programs.

A ``Program`` is a list of equations over ``Var`` objects. Every equation applies one
primitive to inputs (``Var`` or ``Literal``) and defines fresh output vars. Vars carry
only an abstract value (shape and dtype); names are given to them when a program is
printed or compiled, so the same program always prints the same text.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.backends import dtype_of
from ..core.operators import OperatorMixin


class Aval(NamedTuple):
    """Abstract value: what the compiler knows about an array at trace time."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]"


def aval_of(value: Any) -> Aval:
    """The abstract value of a concrete array or scalar."""
    if not hasattr(value, "dtype"):
        value = np.asarray(value)
    return Aval(tuple(value.shape), dtype_of(value))


class IRValue(OperatorMixin):
    """Something a primitive can take while a program is being built."""

    __slots__ = ("aval",)
    aval: Aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.aval.shape, dtype=np.int64))

    # Vars are compared by identity; operators like == build IR instead.
    __hash__ = object.__hash__


class Var(IRValue):
    """An SSA variable. ``hint`` seeds its printed name (``tanh`` -> ``tanh_3``);
    ``name``, when set, is the user's word for the value (``hidden``, ``d_logits``),
    which generated code uses instead. Neither is part of any cache key."""

    __slots__ = ("hint", "name")

    def __init__(self, aval: Aval, hint: str = "v"):
        self.aval = aval
        self.hint = hint
        self.name: str | None = None

    def __repr__(self) -> str:
        return f"Var({self.hint}: {self.aval})"


class Literal(IRValue):
    """A Python scalar written into the program (``x * 2.0``); weakly typed like NumPy."""

    __slots__ = ("value",)

    def __init__(self, value: Any, aval: Aval | None = None):
        self.value = value
        self.aval = aval if aval is not None else Aval((), np.result_type(value))

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


class Eqn:
    """``outs = prim(*inputs, **params)``; ``loc`` is the user's (file, line) if known."""

    __slots__ = ("prim", "inputs", "outs", "params", "loc")

    def __init__(self, prim, inputs, outs, params, loc=None):
        self.prim = prim
        self.inputs: tuple[IRValue, ...] = tuple(inputs)
        self.outs: tuple[Var, ...] = tuple(outs)
        self.params: dict[str, Any] = params
        self.loc = loc

    def __repr__(self) -> str:
        return f"Eqn({self.prim.name}, {len(self.inputs)} in, {len(self.outs)} out)"


class Program:
    """Inputs, equations in execution order, and outputs (a ``None`` output is a zero)."""

    __slots__ = ("inputs", "eqns", "outputs")

    def __init__(self, inputs, eqns, outputs):
        self.inputs: list[Var] = list(inputs)
        self.eqns: list[Eqn] = list(eqns)
        self.outputs: list[IRValue | None] = list(outputs)

    def __str__(self) -> str:
        from .printer import format_program

        return format_program(self)
