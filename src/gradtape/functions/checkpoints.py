"""Guard checks placed before a traced ``py_function``/``numpy_function`` call.

A trace's guards are checked after its compiled code ran, which is right for pure
code: a run whose guards fail is dropped and nothing of it is seen. A ``py_function``
has effects that cannot be dropped (it steps an environment, appends to a log), so a
run must stop before the first Python call the traced path would not have made: the
tracer writes a ``guard_check`` equation, on the guards read so far, before each such
call. A failing check raises :class:`GuardFailed`; the caller then tries another trace
or traces again, replaying the Python calls already made in this call
(``py_function.one_run_per_call``), so each runs once per call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.nodes import Aval
from ..ops.registry import Primitive


class GuardFailed(Exception):
    """A guard read before a Python call came out differently: this trace is not the
    call's path. Never reaches the user (the call tries another trace)."""


class GuardCheck:
    """The param of a ``guard_check`` equation: per input, (position of the guard in
    the trace's guards, kind, expected value)."""

    def __init__(self, guards: Sequence[tuple[int, str, Any]]):
        self.__name__ = "guards"  # the IR printer shows params by name
        self.guards = tuple(guards)

    def __repr__(self) -> str:
        return f"<guards {[g[0] for g in self.guards]}>"


class _LastFailure(threading.local):
    value: tuple[int, Any] | None = None  # (guard position, value it had)


last_failure = _LastFailure()


def _check(*values: Any, check: GuardCheck) -> Any:
    from .trace import guard_holds  # trace.py writes these equations

    for (position, kind, expected), got in zip(check.guards, values):
        if not guard_holds(kind, expected, got):
            last_failure.value = (position, got)
            raise GuardFailed(position)
    return np.True_


def _batch_check(size: int, args: Sequence[Any], batched: Sequence[bool], *,
                 check: GuardCheck) -> Any:
    """Batched (a jacobian's rows): every row must take the traced path."""
    from ..ops.batch_rules import batch_by_loop

    return batch_by_loop(guard_check_p, size, args, batched, check=check)


guard_check_p = Primitive(
    "guard_check", _check, shape_rule=lambda *values, check: Aval((), np.dtype(bool)),
    batch=_batch_check, differentiable=False, pure=False,
    kind_neutral=True,  # plain Python over the guarded values, on any array kind
)
