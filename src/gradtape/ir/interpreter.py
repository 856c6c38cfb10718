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
from .walk import dead_after, read_outputs, walk

# What a caller keeping a program's ``dead_after`` passes when it found none.
NOTHING_TO_RELEASE: list = []


def run(program: Program, args: Sequence[Any], consume: bool = False,
        release: list | None = None) -> list[Any]:
    """Evaluate ``program`` on arrays. A ``None`` output stays ``None`` (a zero). On
    another library's arrays (Dask, ...), each primitive runs in that library.

    Each value is let go after its last use, as generated code's ``del`` lines do, so a
    structure's first call (interpreted) keeps about what its compiled calls keep. With
    ``consume``, ``args`` is a list only the caller held: it is emptied, so the inputs
    too die at their last use (a backward's ``feeds``). ``release``: the program's
    ``dead_after``, if the caller keeps it.
    """
    kind = kind_of_all(args)
    apply = None if kind is None else _applier(kind)
    if release is None:
        release = dead_after(program)
    elif release is NOTHING_TO_RELEASE:
        release = None
    # walk empties a consumed list once the environment holds its values (an iterator
    # over a copy would not do: zip stops before exhausting it, so it keeps the copy).
    return read_outputs(program, walk(program, args, apply, release=release,
                                      consume=consume), full_array)


def _applier(kind: ArrayKind) -> Callable[[Eqn, list], Any]:
    impl = kind.impl

    def apply(eqn: Eqn, ins: list) -> Any:
        return impl(eqn.prim)(*ins, **eqn.params)
    return apply


def full_array(literal: Literal) -> np.ndarray:
    """A constant output as the array it stands for."""
    return np.full(literal.aval.shape, literal.value, dtype=literal.aval.dtype)
