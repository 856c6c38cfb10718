"""The reference interpreter: runs a program equation by equation.

It is the oracle the compiled code is tested against, and the path taken when
compilation is off. ``run`` works on arrays. (Running a program on tensors through the
dispatcher, so that outer tapes record every step, is ``nested.run_recorded``: it needs
the ops, which the IR does not import.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.backends import ArrayKind, kind_of_all
from .nodes import Eqn, Literal, Program
from .walk import read_outputs, walk


def run(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on arrays. A ``None`` output stays ``None`` (a zero). On
    another library's arrays (Dask, ...), each primitive runs in that library."""
    kind = kind_of_all(args)
    # Each value is dropped after its last use: a backward of large arrays (one with a
    # recompute_grad block, which is never compiled) then peaks as its generated code does.
    apply = None if kind is None else _applier(kind)
    return read_outputs(program, walk(program, args, apply, release=True), full_array)


def _applier(kind: ArrayKind) -> Callable[[Eqn, list], Any]:
    impl = kind.impl

    def apply(eqn: Eqn, ins: list) -> Any:
        return impl(eqn.prim)(*ins, **eqn.params)
    return apply


def full_array(literal: Literal) -> np.ndarray:
    """A constant output as the array it stands for."""
    return np.full(literal.aval.shape, literal.value, dtype=literal.aval.dtype)
