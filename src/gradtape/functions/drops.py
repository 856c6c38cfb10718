"""Gradients NumPy drops inside a ``@gt.function``, told on every call as eagerly.

Eagerly, ``Tensor.__array__`` warns (or raises) when NumPy converts a tensor that a
recording tape or forward accumulator watches (``core/gradient_drops.py``). While a
function traces, the outer tapes are hidden and later calls run no Python at all, so the
tracer keeps each conversion as a ``Drop``: the report, and the function's inputs the
converted tensor is computed from. Each call then tells the reports whose inputs the
call's tapes and accumulators watch, before its result is returned, so a trace made
without a tape tells them under one, and the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..core.gradient_drops import DropReport, is_watched, tell
from ..core.state import state
from ..core.tensor import Tensor
from ..ir.nodes import Eqn, Var


class Drop(NamedTuple):
    """NumPy converted a traced tensor. ``always``: a tape opened inside the function
    watched it (every call tells it); else ``inputs`` are the function's inputs it is
    computed from through differentiable ops, as ``(kind, ref)``: ``("arg", i)`` the
    i-th tensor argument, ``("var", variable)``, ``("capture", tensor)``."""

    report: DropReport
    always: bool
    inputs: tuple[tuple[str, Any], ...]


def computed_from(value: Any, eqns: Sequence[Eqn],
                  traced_inputs: dict[str, list[tuple[Var, Any]]]
                  ) -> tuple[tuple[str, Any], ...]:
    """The inputs (``Tracer.inputs``: per kind, ``(var, ref)``) that ``value`` depends on
    through differentiable ops: the ones a tape would track it from (non-differentiable
    ops are not recorded). Constants are never watched."""
    inputs = {var: (kind, ref) for kind in ("arg", "var", "capture")
              for var, ref in traced_inputs[kind]}
    producers = {out: eqn for eqn in eqns if eqn.prim.differentiable for out in eqn.outs}
    found: dict[int, tuple[str, Any]] = {}
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if not isinstance(v, Var) or v in seen:
            continue
        seen.add(v)
        if v in inputs:
            found[id(v)] = inputs[v]
        eqn = producers.get(v)
        if eqn is not None:
            stack.extend(eqn.inputs)
    return tuple(found.values())


def tell_drops(drops: Sequence[Drop], args: Sequence[Any]) -> None:
    """Warn or raise, as eagerly, for each drop this call's tapes or accumulators watch
    (``args``: the call's tensor arguments, in the order the trace numbered them)."""
    observed = bool(state.recording or state.accumulators)
    for drop in drops:
        if drop.always or (observed and any(_watched(kind, ref, args)
                                            for kind, ref in drop.inputs)):
            tell(drop.report)


def _watched(kind: str, ref: Any, args: Sequence[Any]) -> bool:
    tensor = args[ref] if kind == "arg" else ref
    return isinstance(tensor, Tensor) and is_watched(tensor)
