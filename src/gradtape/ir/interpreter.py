"""The reference interpreter: runs a program equation by equation.

It is the oracle the compiled code is tested against, and the path taken when
compilation is off. ``run`` works on arrays; ``run_recorded`` works on tensors through
the normal dispatch, so an outer tape records every step (higher-order derivatives).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .nodes import Literal, Program


def run(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on arrays. A ``None`` output stays ``None`` (a zero)."""
    env = dict(zip(program.inputs, args))
    for eqn in program.eqns:
        vals = [v.value if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        out = eqn.prim.impl(*vals, **eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out))
        else:
            env[eqn.outs[0]] = out
    return [_read(env, v) for v in program.outputs]


def run_recorded(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on tensors via ``bind``, so active tapes record each step."""
    from ..ops.registry import bind

    env = dict(zip(program.inputs, args))
    for eqn in program.eqns:
        vals = [v.value if isinstance(v, Literal) else env[v] for v in eqn.inputs]
        # A primitive that runs user code on tensors (custom_gradient's grad_fn) does so
        # itself, so that the recording tapes see that code's own operations.
        run_on_tensors = eqn.prim.run_on_tensors
        if run_on_tensors is not None:
            out = run_on_tensors(*vals, **eqn.params)
        else:
            out = bind(eqn.prim, *vals, **eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out))
        else:
            env[eqn.outs[0]] = out
    return [_read(env, v) for v in program.outputs]


def _read(env, v):
    if v is None:
        return None
    if isinstance(v, Literal):
        return np.full(v.aval.shape, v.value, dtype=v.aval.dtype)
    return env[v]
