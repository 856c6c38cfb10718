"""The lookup ladder: from what a tape recorded to the backward that differentiates it.

Every ``gradient``/``jacobian`` call climbs the same rungs, cheapest first, and stops at
the first one that knows the answer (``find``):

1. **Persistent repeat.** A persistent tape asked for the gradient it gave last, nothing
   recorded since: ``RepeatedCall`` (kept on the tape, ``gradient_tape.py``) runs the
   same entry on the same arguments; ``TapeRepeat`` (here, per tape) reuses the pruned trace.
2. **Whole-tape key.** A tape whose signature (what it watched and recorded, by
   structure) was seen before: ``WholeTapeHit``, the entry with its arguments located
   in the tape's own records. A fresh tape per step ends here, without pruning.
3. **Trace key.** The pruned trace's structural key in the compile cache
   (``cache.backward_cache``, LRU).
4. **Build.** Lower and differentiate (``compiler/build.build_entry``), then file the result
   on rungs 3, 2 and 1.

Jacobians climb the same rungs for the unbatched entry, then find its batched backward
per number of rows (``batched_entry``), located on the whole-tape hit like the entry
(``LocatedBackward``). Nested gradients run an entry as a call op (``ad/nested.py``), whose
derived programs are kept per entry (``ad/nested.derived_programs``), like the batched
backwards (``compiler/cache.batched_entries``, beside the compile cache).

This module owns the tables that map a recording to its backward, holds no arrays in any
of them, and ``clear_cache()`` (``gt.clear_cache()``) empties them and those memos.
Their bounds: ``docs/memory.md``.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..ad.nested import derived_programs
from ..compiler.build import value_dtype
from ..compiler.cache import backward_cache, batched_entries
from ..core.config import options
from ..core.memos import MAX_DERIVED_PER_ENTRY, remember
from ..ir.lower import SEED, SOURCE, Feed, Trace, feed_tensor_id, gatherer, prune
from .site_references import forget_references, keep_reference, signature_key

# --- named results ------------------------------------------------------------------------


class TraceHit(NamedTuple):
    """Rungs 1, 3 and 4: a pruned trace and the entry built for its key."""

    trace: Trace
    entry: Any  # compiler.build.BackwardEntry


class TapeRepeat(NamedTuple):
    """Rung 1, per persistent tape: the trace of its last general-path call."""

    records: list
    signature: tuple  # record count, source and target ids, output gradient flags
    trace: Trace
    entry: Any


class RepeatedCall(NamedTuple):
    """Rung 1 on the tape (``tape._last``): a persistent tape's last gradient call."""

    key: tuple  # tape._repeat_key: target, sources, record count, unconnected mode
    entry: Any
    args: list  # the backward's arguments: the tape's recorded arrays, never changed
    mode: Any
    plain_from: Any  # the compiled function once its results proved to need no fitting


class LocatedBackward:
    """A built backward whose arguments are located in a tape's own records (no
    pruning needed to feed it): ``connected[k]`` says whether target ``k`` reaches it."""

    __slots__ = ("entry", "feeds", "connected", "reads_seeds", "gather", "call")

    def __init__(self, entry: Any, feeds: tuple[Feed, ...], connected: tuple[bool, ...]):
        self.entry = entry
        self.feeds = feeds
        self.connected = connected
        self.reads_seeds = any(f.kind == SEED for f in feeds)
        self.gather = gatherer(feeds)
        self.call = None  # nested.InnerBackward: the call op's param, made by its first call

    def arguments(self, records: list, sources: Sequence[Any], seeds: list) -> list:
        return self.gather(records, sources, seeds)

    def tensor_id(self, feed: Feed, records: list, sources: Sequence[Any]) -> int | None:
        """The id the argument of ``feed`` was recorded with (``None``: a raw constant)."""
        return feed_tensor_id(feed, records, sources)


class WholeTapeHit(LocatedBackward):
    """Rung 2: the entry of a known tape structure. ``trace_key`` names the structure in
    a nested call op (``call``, built by the first call under an outer tape);
    ``batched`` holds its jacobians' batched backwards by (rows, identity seeds)."""

    __slots__ = ("trace_key", "batched")

    def __init__(self, entry: Any, feeds: tuple[Feed, ...], connected: tuple[bool, ...],
                 trace_key: tuple):
        super().__init__(entry, feeds, connected)
        self.trace_key = trace_key
        self.batched: dict = {}


# --- keys ---------------------------------------------------------------------------------

ONES = (None,)  # the flags of one target seeded with ones


def output_flags(output_grads: Sequence[Any]) -> tuple:
    """The output gradients by structure: ``None`` for ones, else (shape, dtype)."""
    return tuple(None if g is None else (np.shape(g), value_dtype(g)) for g in output_grads)


def tape_slots(tape: Any, tensors: Sequence[Any]) -> tuple:
    """The tape's numbers for ``tensors`` (what it watched or computed; ``None``: neither)."""
    tracked = tape._tracked
    return tuple([tracked.get(t._id) for t in tensors])


# --- the tables ---------------------------------------------------------------------------

# Rung 1: persistent tape -> TapeRepeat (weakly: it goes with the tape).
_repeats: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Rung 2: whole-tape key -> WholeTapeHit, ``options.cache_size`` at most, oldest out first.
_whole_tapes: OrderedDict = OrderedDict()
_whole_tapes_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every cached backward function and reset the statistics."""
    with _whole_tapes_lock:
        _whole_tapes.clear()
    _repeats.clear()
    batched_entries.clear()
    derived_programs.clear()
    forget_references()  # their signatures key whole-tape hits
    backward_cache.clear()
    from ..codegen.runtime import clear_buffer_pools  # only once a function compiled

    clear_buffer_pools()  # the @gt.function buffers: made anew by the next call


# --- the rungs ----------------------------------------------------------------------------

def find(records: list, sources: Sequence[Any], targets: Sequence[Any],
         output_grads: Sequence[Any], tape: Any, owner: Any,
         build: Callable[..., Any]) -> WholeTapeHit | TraceHit:
    """Climb the ladder for a gradient of ``targets`` by ``sources`` over ``records``.

    ``tape``: a persistent tape (rung 1), or ``None``. ``owner``: the tape whose own
    record list ``records`` may be (rung 2). ``build(trace, output_grads, hashable)``:
    rung 4. A new entry is filed on the rungs above it.
    """
    flags = output_flags(output_grads) if any(g is not None for g in output_grads) \
        else (None,) * len(output_grads)  # the usual case: ones
    repeat = _repeated_trace(tape, records, sources, targets, flags)
    if repeat is not None:
        return repeat
    key = None
    if owner is not None and records is owner._records:
        key, hit = whole_tape(owner, tape_slots(owner, sources), tape_slots(owner, targets),
                              flags)
        if hit is not None:
            return hit
    found = entry_for_trace(_pruned(records, sources, targets, flags), output_grads, build,
                            sources, records)
    remember_repeat(tape, records, sources, targets, flags, found)
    if key is not None:
        remember_whole_tape(key, owner, records, found)
    return found


def _repeat_signature(records: list, sources: Sequence[Any], targets: Sequence[Any],
                      flags: tuple) -> tuple:
    return (len(records), tuple(s._id for s in sources), tuple(t._id for t in targets), flags)


def _repeated_trace(tape: Any, records: list, sources: Sequence[Any],
                    targets: Sequence[Any], flags: tuple) -> TraceHit | None:
    """Rung 1: the persistent ``tape``'s trace for the same call on the same records."""
    if tape is None:
        return None
    known = _repeats.get(tape)
    if known is None or known.records is not records or \
            known.signature != _repeat_signature(records, sources, targets, flags):
        return None
    backward_cache.count_hit()
    return TraceHit(known.trace, known.entry)


def remember_repeat(tape: Any, records: list, sources: Sequence[Any],
                    targets: Sequence[Any], flags: tuple, found: TraceHit) -> None:
    if tape is not None and found.entry.cacheable:
        signature = _repeat_signature(records, sources, targets, flags)
        _repeats[tape] = TapeRepeat(records, signature, found.trace, found.entry)


def whole_tape(tape: Any, source_slots: tuple, target_slots: tuple, flags: tuple
               ) -> tuple[tuple | None, WholeTapeHit | None]:
    """Rung 2, the one whole-tape lookup: ``(key, hit)`` for a gradient over ``tape``'s
    own records. The key is ``(signature, source slots, target slots, flags)``, the
    slots the tape's numbers (``tape_slots``); ``(None, None)`` if the tape has no
    signature (something unkeyable was recorded); the hit is ``None`` for a structure
    not seen yet (counted as a cache hit by what runs it: ``backward.run_located``)."""
    signature = signature_key(tape)
    if signature is None:
        return None, None
    # Every key hashes: its signature was hashed when made (site_references.signature_key).
    key = (signature, source_slots, target_slots, flags)
    return key, _whole_tapes.get(key)


def remember_whole_tape(key: tuple, owner: Any, records: list, found: TraceHit) -> None:
    """File ``found.entry`` under a whole-tape key, its inputs located in ``records``
    (the owner's own list), and keep the owner's site's op locations (site_references.py)."""
    trace, entry = found
    if not entry.cacheable:
        return
    position = {id(rec): j for j, rec in enumerate(records)}
    in_tape = [position[id(rec)] for rec in trace.records]
    # The entry's feeds count the trace's records; the hit's count the tape's.
    feeds = [f if f.kind in (SOURCE, SEED) else Feed(f.kind, in_tape[f.index], f.position)
             for f in entry.feeds]
    connected = tuple(t is not None for t in trace.target_slots)
    # trace.key names the structure in a nested call op (ad/nested.py); it holds no arrays.
    hit = WholeTapeHit(entry, tuple(feeds), connected, trace.key)
    with _whole_tapes_lock:
        _whole_tapes[key] = hit
        while len(_whole_tapes) > max(options.cache_size, 1):
            _whole_tapes.popitem(last=False)
    keep_reference(owner._site, key[0], records)


def _pruned(records: list, sources: Sequence[Any], targets: Sequence[Any], flags: tuple
            ) -> Trace:
    target_ids = [t._id for t in targets]
    return Trace(prune(records, [s._id for s in sources], target_ids), sources, target_ids,
                 flags)


def entry_for_trace(trace: Trace, output_grads: Sequence[Any],
                    build: Callable[..., Any], sources: Sequence[Any] = (),
                    records: list | None = None) -> TraceHit:
    """Rungs 3 and 4: the compile cache's entry for ``trace.key``, built if missing
    (``sources`` and the unpruned ``records``: where the build finds the user's names
    for the generated code)."""
    try:
        entry = backward_cache.get(trace.key)
    except TypeError:  # an unhashable param: build, never cache
        return TraceHit(trace, build(trace, output_grads, False, sources, records))
    if entry is None:
        entry = build(trace, output_grads, True, sources, records)
        if entry.cacheable:
            entry = backward_cache.put(trace.key, entry)
    return TraceHit(trace, entry)


def batched_entry(trace_key: tuple, entry: Any, rows: int, identity: bool,
                  build: Callable[[Any, int, bool], Any]) -> tuple[tuple | None, Any]:
    """``(key, batched entry)`` of ``entry`` over ``rows`` seeds (``identity``: the seeds
    are ``eye(rows)``): per entry, then in the compile cache under
    ``("batched", rows, identity, trace_key)``, else ``build(entry, rows, identity)``."""
    if not entry.cacheable:
        return None, build(entry, rows, identity)
    key = batched_key(trace_key, rows, identity)
    found = batched_entries.get(entry, (rows, identity))
    if found is not None:
        backward_cache.count_hit()
        return key, found
    found = backward_cache.get(key)
    if found is None:
        found = backward_cache.put(key, build(entry, rows, identity))
    batched_entries.put(entry, (rows, identity), found)
    return key, found


def batched_key(trace_key: tuple, rows: int, identity: bool) -> tuple:
    """The compile cache's key of a batched backward, which also names it in a nested
    call op (the same key on either path, so an outer tape's signature stays the same)."""
    return ("batched", rows, identity, trace_key)


def located_batched(hit: WholeTapeHit, rows: int, identity: bool) -> LocatedBackward | None:
    """The batched backward of a whole-tape hit, located in the tape like the hit
    (``None`` until the general path built it for these rows)."""
    located = hit.batched.get((rows, identity))
    if located is None:
        batched = batched_entries.get(hit.entry, (rows, identity))
        if batched is None or not hit.connected[0]:
            return None
        position = {f: i for i, f in enumerate(hit.entry.feeds)}
        feeds = tuple(hit.feeds[position[f]] for f in batched.feeds)
        located = remember(hit.batched, (rows, identity),
                           LocatedBackward(batched, feeds, hit.connected),
                           MAX_DERIVED_PER_ENTRY)
    return located
