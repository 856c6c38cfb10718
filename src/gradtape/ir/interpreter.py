"""The reference interpreter: runs a program equation by equation.

It is the oracle the compiled code is tested against, and the path taken when
compilation is off. ``run`` works on arrays; ``run_recorded`` works on tensors through
the normal dispatch, so an outer tape records every step (higher-order derivatives).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .nodes import Eqn, Literal, Program
from .walk import read_outputs, walk


def run(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on arrays. A ``None`` output stays ``None`` (a zero)."""
    return read_outputs(program, walk(program, args), full_array)


def run_recorded(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on tensors via ``bind``, so active tapes record each step."""
    from ..ops.registry import bind

    def apply_recorded(eqn: Eqn, ins: list) -> Any:
        # A primitive that runs user code on tensors (custom_gradient's grad_fn) does so
        # itself, so that the recording tapes see that code's own operations.
        run_on_tensors = eqn.prim.run_on_tensors
        if run_on_tensors is not None:
            return run_on_tensors(*ins, **eqn.params)
        return bind(eqn.prim, *ins, **eqn.params)

    return read_outputs(program, walk(program, args, apply_recorded), full_array)


def full_array(literal: Literal) -> np.ndarray:
    """A constant output as the array it stands for."""
    return np.full(literal.aval.shape, literal.value, dtype=literal.aval.dtype)
