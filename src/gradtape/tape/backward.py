"""From a tape's records to gradients: look up (``tape/lookup.py``) or build, then run.

This is the path every ``gradient``/``jacobian`` call takes. The expensive part (lower
to a forward Program, differentiate it into a backward Program, optimize, compile: the
recipe of ``compiler/build.py``) runs once per structure; later calls only prune,
compute the key and run the generated function. A structure's first call runs the
reference interpreter: generating and compiling code costs milliseconds, which pays off
only for a structure that repeats (``gt.config(compile_after=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ad import nested
from ..compiler.build import build_entry
from ..compiler.cache import backward_cache
from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..ir.lower import SEED
from . import lookup
from .lookup import LocatedBackward, WholeTapeHit


def run_located(located: LocatedBackward, records: list, sources: Sequence[Tensor],
                output_grads: Sequence[Any], ran: list | None = None,
                release: Sequence[list] | None = None) -> list[Any]:
    """Run a backward located in a tape's records (``lookup.WholeTapeHit``) on arrays.
    ``release`` (given when the call uses the tape up): ``records`` and these lists are
    emptied once the backward's arguments are read, so each residual dies at its last
    use in the backward."""
    backward_cache.count_hit()
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g)
             for g, c in zip(output_grads, located.connected) if g is not None and c]
    args = located.gather(records, sources, seeds)
    if release is not None:
        del seeds  # the arguments hold them: each dies at its last use (with release)
        for held in (records, *release):
            held.clear()
        return list(located.entry.run(args, located.entry.consumes))
    if ran is not None:
        ran.append((located.entry, args))
    return list(located.entry.run(args))


def call_located(hit: WholeTapeHit, records: list, sources: Sequence[Tensor],
                 output_grads: Sequence[Any]) -> list[Any]:
    """A whole-tape hit while tapes record: the inputs as tensors under the ids they
    were recorded with, and the backward as one call op (ad/nested.py)."""
    seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g))
             for g, c in zip(output_grads, hit.connected) if g is not None and c]
    return call_located_as(hit, hit.trace_key, records, sources, seeds)


def call_located_as(located: LocatedBackward, key: tuple, records: list,
                    sources: Sequence[Tensor], seeds: list) -> list[Any]:
    """``located``'s backward run while tapes record, as one call op named by ``key`` (the
    structural key the general path gives it: ``lookup.batched_entry``'s for a batched
    backward), on its arguments as tensors under the ids they were recorded with."""
    backward_cache.count_hit()
    values = located.gather(records, sources, seeds)
    args = []
    for feed, value in zip(located.feeds, values):
        if feed.kind == SEED:
            args.append(value)
            continue
        tensor_id = located.tensor_id(feed, records, sources)
        args.append(value if tensor_id is None else Tensor._alias(value, tensor_id))
    if located.call is None:  # built once: its hash covers the whole inner key
        located.call = nested.InnerBackward(key, located.entry)
    return nested.call_backward(key, located.entry, args, located.call)


def gradients(records, sources: Sequence[Tensor], targets: Sequence[Tensor],
              output_grads: Sequence[Any], tape: Any = None, owner: Any = None,
              ran: list | None = None, release: list | None = None) -> list[Any]:
    """Cotangents of ``sources`` (a ``None`` where unconnected) for the given targets.

    Results are arrays, or tensors when a tape is recording (so it sees this gradient
    computation too, which is how nested tapes give higher-order derivatives). A
    persistent ``tape`` passed in lets a repeated call skip pruning and keying; ``owner``
    is the tape the records are from (its whole-tape key); ``ran``, if given, receives
    the ``(entry, arguments)`` that computed arrays. ``release``: the record lists of a
    tape this call uses up (and ``output_grads`` if the caller gives it up), emptied
    (with ``records``) once the backward's arguments are read, so each residual dies
    at its last use in the backward; not while tapes record (they keep what they read
    themselves).
    """
    found = lookup.find(records, sources, targets, output_grads, tape, owner, build_entry)
    if found.__class__ is WholeTapeHit:
        if state.active:
            return call_located(found, records, sources, output_grads)
        return run_located(found, records, sources, output_grads, ran, release)
    trace, entry = found
    seeds = [g for g, t in zip(output_grads, trace.target_slots)
             if g is not None and t is not None]
    if state.active:
        # Run op by op through the dispatcher so the outer tapes (or a @gt.function's
        # tracer) record this gradient.
        seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g)) for g in seeds]
        # Nested tapes: the compiled backward, recorded as one call op (see ad/nested.py).
        called = nested.nested_gradients(trace, entry, sources, seeds)
        if called is not None:
            return called
        args = nested.residual_arguments(trace, entry, sources, seeds)
        return nested.run_recorded(entry.program, args)
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g) for g in seeds]
    args = entry.arguments(trace, sources, seeds)
    if release is not None:
        del found, trace, seeds  # the pruned records and seeds: the arguments hold them
        for held in (records, *release):
            held.clear()
        return list(entry.run(args, entry.consumes))
    if ran is not None:
        ran.append((entry, args))
    return list(entry.run(args))
