"""From a tape's records to gradients: prune, key, look up or build, run.

This is the path every ``gradient``/``jacobian`` call takes. The expensive part (lower
to a forward Program, differentiate it into a backward Program, optimize, compile) runs
once per structure; later calls only prune, compute the key and run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ir import interpreter
from .ir.autodiff import vjp_program
from .ir.lower import Trace, prune
from .ir.nodes import Aval, Literal, Program, Var
from .recording import state
from .tensor import Tensor


class BackwardEntry:
    """A built backward: its program and which trace slots feed its residual inputs."""

    __slots__ = ("forward", "program", "residual_slots", "cacheable", "run")

    def __init__(self, forward: Program, program: Program, residual_slots: list[int],
                 cacheable: bool):
        self.forward = forward
        self.program = program
        self.residual_slots = residual_slots
        self.cacheable = cacheable
        self.run = lambda args: interpreter.run(program, args)


def seed_for(target_aval: Aval, given: Any) -> Var | Literal:
    """The cotangent fed to a target: an input var for ``output_gradients``, else ones."""
    if given is not None:
        return Var(Aval(tuple(np.shape(given)), np.asarray(given).dtype), "seed")
    return Literal(target_aval.dtype.type(1), target_aval)


def build_entry(trace: Trace, output_grads: Sequence[Any]) -> BackwardEntry:
    forward, slot_vars = trace.to_program()
    wrt = [slot_vars[s] for s in trace.source_slots]
    seeds = []
    for out, given in zip(forward.outputs, output_grads):
        seeds.append(None if out is None else seed_for(out.aval, given))
    program, residuals = vjp_program(forward, wrt, seeds)
    slot_of = {v: s for s, v in enumerate(slot_vars)}
    residual_slots = [slot_of[v] for v in residuals]
    cacheable = all(rec[0].cacheable for rec in trace.records)
    return BackwardEntry(forward, program, residual_slots, cacheable)


_cache: dict[Any, BackwardEntry] = {}


def lookup(trace: Trace, output_grads: Sequence[Any]) -> BackwardEntry:
    try:
        entry = _cache.get(trace.key)
    except TypeError:  # an unhashable param: build, never cache
        return build_entry(trace, output_grads)
    if entry is None:
        entry = build_entry(trace, output_grads)
        if entry.cacheable:
            _cache[trace.key] = entry
    return entry


def gradients(records, sources: Sequence[Tensor], targets: Sequence[Tensor],
              output_grads: Sequence[Any]) -> list[Any]:
    """Cotangents of ``sources`` (a ``None`` where unconnected) for the given targets.

    Results are arrays, or tensors when a tape is recording (so it sees this gradient
    computation too, which is how nested tapes give higher-order derivatives).
    """
    target_ids = [t._id for t in targets]
    kept = prune(records, [s._id for s in sources], target_ids)
    flags = tuple(None if g is None else (np.shape(g), np.asarray(g).dtype)
                  for g in output_grads)
    trace = Trace(kept, sources, target_ids, flags)
    entry = lookup(trace, output_grads)
    seeds = [g for g, t in zip(output_grads, trace.target_slots)
             if g is not None and t is not None]
    if state.recording or state.accumulators:
        residuals = []
        for slot in entry.residual_slots:
            value, tensor_id = trace.value(slot, sources), trace.tensor_id(slot, sources)
            residuals.append(value if tensor_id is None else Tensor._alias(value, tensor_id))
        seeds = [g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g)) for g in seeds]
        return interpreter.run_recorded(entry.program, residuals + seeds)
    residuals = [trace.value(slot, sources) for slot in entry.residual_slots]
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g) for g in seeds]
    return entry.run(residuals + seeds)
