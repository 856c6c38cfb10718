"""Lowering: a tape's records -> the pruned trace, its cache key, and a forward Program.

A record is the tuple a tape appends when it watches an op's input (the tape's
recorder writes it), read by the field indices named here:

    (PRIM, IN_IDS, IN_VALUES, PARAMS, OUT_IDS, OUT_VALUES, LOCATION)

Ids are tensor ids (``None`` for a raw array or Python scalar). Lowering keeps the
records on a path from a source to a target, numbers every distinct tensor in order of
first appearance ("slots"), and writes down where each slot's value lives, so a cached
backward function can be fed without lowering again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..core.backends import dtype_of
from .dtypes import is_inexact
from .nodes import Aval, Eqn, Literal, Program, Var

# The fields of a record, a plain tuple (a named type cost 1.4 % of a scalar op's
# recording): read ``record[IN_IDS]``, never a bare position.
PRIM, IN_IDS, IN_VALUES, PARAMS, OUT_IDS, OUT_VALUES, LOCATION = range(7)

_PY_SCALARS = frozenset((bool, int, float, complex))

# --- where a backward's argument comes from -----------------------------------------------

SOURCE = 0  # sources[index]._value
RECORDED_INPUT = 1  # records[index][IN_VALUES][position]
RECORDED_OUTPUT = 2  # records[index][OUT_VALUES][position]
SEED = 3  # seeds[index]: an output gradient
# The record field each recorded kind reads.
_VALUES = {RECORDED_INPUT: IN_VALUES, RECORDED_OUTPUT: OUT_VALUES}


class Released:
    """What a record holds in place of an array its op's derivative rules never read
    (``Primitive.residuals``): its shape and dtype, which the trace's key and avals
    need, and no data, so the array dies when the user drops it."""

    __slots__ = ("shape", "dtype")

    def __init__(self, array: Any):
        self.shape = array.shape
        self.dtype = array.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Released(shape={self.shape}, dtype={self.dtype})"


def holds(record: Any, kind: int, position: int) -> bool:
    """Whether ``record`` keeps the value of its input (``RECORDED_INPUT``) or output at
    ``position`` by its primitive's declared residuals, whatever else it kept: what a
    backward's feed may point to for every later tape of the same structure."""
    prim = record[PRIM]
    if kind == RECORDED_OUTPUT:
        return prim.keeps_outputs
    kept = prim.kept_inputs
    return kept is None or position in kept


class Feed(NamedTuple):
    """Where one argument of a backward comes from: a source, a recorded input or output
    (``index`` counts records, ``position`` the op's inputs or outputs), or an output
    gradient. A trace's slots (``Trace.origins``), a built backward's inputs
    (``BackwardEntry.feeds``: records of its trace) and a whole-tape hit's (records of
    the tape) all say it with this one type."""

    kind: int
    index: int
    position: int = 0


# A Feed made without NamedTuple's Python-level __new__: lowering makes one per slot on
# every trace-rung gradient call.
_feed = tuple.__new__


def feed_value(feed: Feed, records: Sequence[Any], sources: Sequence[Any],
               seeds: Sequence[Any] = ()) -> Any:
    """The value ``feed`` names."""
    kind, index, position = feed  # one unpacking: cheaper than three field reads
    if kind == SOURCE:
        return sources[index]._value
    if kind == SEED:
        return seeds[index]
    return records[index][IN_VALUES if kind == RECORDED_INPUT else OUT_VALUES][position]


def feed_tensor_id(feed: Feed, records: Sequence[Any], sources: Sequence[Any]) -> int | None:
    """The id the value of ``feed`` was recorded with (``None``: a raw constant)."""
    kind, index, position = feed
    if kind == SOURCE:
        return sources[index]._id
    return records[index][IN_IDS if kind == RECORDED_INPUT else OUT_IDS][position]


Gatherer = Callable[[Sequence[Any], Sequence[Any], Sequence[Any]], list]


def gatherer(feeds: Sequence[Feed]) -> Gatherer:
    """``gather(records, sources, seeds)``: every feed's value in one call (built once
    per backward, run on every call)."""
    recorded = tuple((f.index, _VALUES[f.kind], f.position) for f in feeds if f.kind in _VALUES)
    if len(recorded) == len(feeds):  # the usual case: every argument was recorded
        # A comprehension of subscripts: half the instructions of three maps over
        # records.__getitem__ and operator.getitem (whose calls build argument tuples),
        # 480 a value against 900 (callgrind; a scalar step feeds about 40 values).
        def gather_recorded(records: Sequence[Any], sources: Sequence[Any],
                            seeds: Sequence[Any]) -> list:
            return [records[i][field][j] for i, field, j in recorded]
        return gather_recorded
    from_sources = tuple(f.index for f in feeds if f.kind == SOURCE)
    from_seeds = tuple(f.index for f in feeds if f.kind == SEED)
    # Values come recorded, then sources, then seeds: ``order`` puts them back in feed order.
    start = {RECORDED_INPUT: 0, SOURCE: len(recorded), SEED: len(recorded) + len(from_sources)}
    order = []
    for f in feeds:
        group = RECORDED_INPUT if f.kind in _VALUES else f.kind
        order.append(start[group])
        start[group] += 1
    order_t = tuple(order)

    def gather(records: Sequence[Any], sources: Sequence[Any], seeds: Sequence[Any]) -> list:
        values = [records[i][field][j] for i, field, j in recorded]
        values += [sources[k]._value for k in from_sources]
        values += [seeds[k] for k in from_seeds]
        return [values[p] for p in order_t]
    return gather


def prune(records: Sequence[Any], source_ids: Sequence[int], target_ids: Sequence[int]):
    """The records on some path from a source to a target, in recording order."""
    needed = set(target_ids)
    relevant = []
    for rec in reversed(records):
        for out_id in rec[OUT_IDS]:
            if out_id in needed:
                relevant.append(rec)
                needed.update(rec[IN_IDS])
                break
    relevant.reverse()
    reached = set(source_ids)
    kept = []
    for rec in relevant:
        for in_id in rec[IN_IDS]:
            if in_id in reached:
                kept.append(rec)
                reached.update(rec[OUT_IDS])
                break
    return kept


class Trace:
    """The pruned records in numbered form: what the key is made of and what a Program
    is built from. ``origins[slot]`` is the ``Feed`` of that slot's value: a source, or
    an input or output of one of ``records``."""

    __slots__ = ("records", "key", "origins", "wiring", "out_slots", "source_slots",
                 "target_slots", "slot_avals")

    def __init__(self, records, sources, target_ids, flags: tuple = ()):
        # This runs on every gradient call, cache hit or not: keep it to plain tuples,
        # dict lookups and appends. Output avals are not in the key: they follow from
        # the primitive, its params and the input avals, which are.
        self.records = records
        slot_of: dict[int, int] = {}
        origins: list[Feed] = []
        avals: list[tuple] = []
        key: list[Any] = [flags]
        source_slots = []
        for k, src in enumerate(sources):
            slot = slot_of.get(src._id)
            if slot is None:
                slot = slot_of[src._id] = len(origins)
                origins.append(_feed(Feed, (SOURCE, k, 0)))
                value = src._value
                avals.append((value.shape, dtype_of(value)))
            source_slots.append(slot)
        key.append(tuple(source_slots))
        key.append(tuple(avals))

        wiring, out_slots = [], []
        for r, rec in enumerate(records):
            ins = []
            p = 0
            for i, v in zip(rec[IN_IDS], rec[IN_VALUES]):
                slot = slot_of.get(i)
                if slot is not None:
                    if origins[slot][0] == SOURCE:  # its kind, by position: per input
                        # Read a source's value where it was recorded: a Variable may
                        # have been assigned a new array since.
                        origins[slot] = _feed(Feed, (RECORDED_INPUT, r, p))
                    ins.append(slot)
                elif v.__class__ in _PY_SCALARS:
                    if v == 0:  # 0.0 == -0.0, yet x / 0.0 != x / -0.0: key the sign too
                        ins.append(("literal", v.__class__, v, repr(v)))
                    else:
                        ins.append(("literal", v.__class__, v))
                else:
                    slot = len(origins)
                    if i is not None:
                        slot_of[i] = slot
                    origins.append(_feed(Feed, (RECORDED_INPUT, r, p)))
                    aval = (v.shape, dtype_of(v))
                    avals.append(aval)
                    ins.append(slot)
                    key.append(aval)
                p += 1
            outs = []
            for p, o in enumerate(rec[OUT_IDS]):
                slot = slot_of.get(o)
                if slot is None:
                    slot = slot_of[o] = len(origins)
                    origins.append(_feed(Feed, (RECORDED_OUTPUT, r, p)))
                    avals.append(None)  # filled in by to_program, only on a cache miss
                else:
                    # A source computed by a recorded op keeps its slot: its gradient is
                    # the cotangent reaching it, and the op still passes gradient upstream.
                    origins[slot] = _feed(Feed, (RECORDED_OUTPUT, r, p))
                outs.append(slot)
            ins_t, outs_t = tuple(ins), tuple(outs)
            wiring.append(ins_t)
            out_slots.append(outs_t)
            key.append((rec[PRIM], tuple(rec[PARAMS].items()), ins_t, outs_t))
        self.target_slots = tuple(slot_of.get(t) for t in target_ids)
        key.append(self.target_slots)
        self.key = tuple(key)
        self.origins = origins
        self.wiring = wiring
        self.out_slots = out_slots
        self.source_slots = source_slots
        self.slot_avals = avals

    def value(self, slot: int, sources) -> Any:
        """The recorded value of ``slot``: from a record that keeps it if one does, else
        its ``Released`` (shape and dtype)."""
        value = feed_value(self.origins[slot], self.records, sources)
        if value.__class__ is Released:
            feed = self.holder(slot)
            if feed is not None:
                return feed_value(feed, self.records, sources)
        return value

    def tensor_id(self, slot: int, sources) -> int | None:
        """The id of the tensor in ``slot`` (``None`` for a raw constant)."""
        return feed_tensor_id(self.origins[slot], self.records, sources)

    def tensor_ids(self, sources) -> list[int | None]:
        """``tensor_id`` of every slot in one call (naming asks about all of them);
        ``None`` also for a source's slot when ``sources`` is empty."""
        records = self.records
        return [(sources[index]._id if sources else None) if kind == SOURCE
                else records[index][IN_IDS if kind == RECORDED_INPUT else OUT_IDS][position]
                for kind, index, position in self.origins]

    def held_feed(self, slot: int) -> Feed:
        """The origin of ``slot``, moved to a record that keeps the value when the
        record it was first seen in holds only its shape (built once per backward)."""
        feed = self.holder(slot)
        if feed is not None:
            return feed
        prim = self.records[self.origins[slot].index][PRIM]
        raise RuntimeError(
            f"gradtape bug: a backward reads a value no record keeps (first seen by "
            f"'{prim.name}'): a primitive's residuals= leave out what its rules read. "
            f"Please report it.")

    def holder(self, slot: int) -> Feed | None:
        """A feed of ``slot`` whose record keeps the value by its declared residuals
        (the origin if it does), or the source it is; ``None``: no record keeps it."""
        feed = self.origins[slot]
        if feed.kind not in _VALUES or holds(self.records[feed.index], feed.kind, feed.position):
            return feed
        for r, (rec, ins, outs) in enumerate(zip(self.records, self.wiring, self.out_slots)):
            for kind, slots in ((RECORDED_INPUT, ins), (RECORDED_OUTPUT, outs)):
                for p, s in enumerate(slots):
                    if s == slot and holds(rec, kind, p):
                        return _feed(Feed, (kind, r, p))
        if slot in self.source_slots:
            return _feed(Feed, (SOURCE, self.source_slots.index(slot), 0))
        return None

    def to_program(self) -> tuple[Program, list[Var]]:
        """The forward Program (inputs: sources, then constants) and a Var per slot."""
        slot_vars = []
        for slot, aval in enumerate(self.slot_avals):
            if aval is None:
                value = self.value(slot, None)
                aval = (value.shape, dtype_of(value))
            slot_vars.append(Var(Aval(tuple(aval[0]), aval[1]), "x"))
        defined_by_eqn = set()
        eqns = []
        for rec, ins, outs in zip(self.records, self.wiring, self.out_slots):
            prim, params, loc = rec[PRIM], rec[PARAMS], rec[LOCATION]
            inputs = [Literal(s[2]) if isinstance(s, tuple) else slot_vars[s] for s in ins]
            for s in outs:
                slot_vars[s].hint = prim.name
                defined_by_eqn.add(s)
            eqns.append(Eqn(prim, inputs, [slot_vars[s] for s in outs], params, loc))
        # A source's value may be read from a record, yet it is a source.
        sources = dict.fromkeys(self.source_slots)
        constants = [s for s, o in enumerate(self.origins)
                     if o.kind == RECORDED_INPUT and s not in sources]
        for s in constants:
            slot_vars[s].hint = "c"
        inputs = [slot_vars[s] for s in sources if s not in defined_by_eqn]
        inputs += [slot_vars[s] for s in constants]
        outputs = [None if s is None else slot_vars[s] for s in self.target_slots]
        return Program(inputs, eqns, outputs), slot_vars


def is_differentiable_dtype(dtype: np.dtype) -> bool:
    return is_inexact(dtype)
