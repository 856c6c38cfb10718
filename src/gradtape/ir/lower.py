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

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.backends import dtype_of
from .dtypes import is_inexact
from .nodes import Aval, Eqn, Literal, Program, Var

# The fields of a record, a plain tuple (a named type cost 1.4 % of a scalar op's
# recording): read ``record[IN_IDS]``, never a bare position.
PRIM, IN_IDS, IN_VALUES, PARAMS, OUT_IDS, OUT_VALUES, LOCATION = range(7)

_PY_SCALARS = frozenset((bool, int, float, complex))


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
    is built from. ``origins[slot]`` says where that slot's value is found:
    ``("source", k)``, ``("in", record, position)`` or ``("out", record, position)``."""

    __slots__ = ("records", "key", "origins", "wiring", "out_slots", "source_slots",
                 "target_slots", "slot_avals")

    def __init__(self, records, sources, target_ids, flags: tuple = ()):
        # This runs on every gradient call, cache hit or not: keep it to plain tuples,
        # dict lookups and appends. Output avals are not in the key: they follow from
        # the primitive, its params and the input avals, which are.
        self.records = records
        slot_of: dict[int, int] = {}
        origins: list[tuple] = []
        avals: list[tuple] = []
        key: list[Any] = [flags]
        source_slots = []
        for k, src in enumerate(sources):
            slot = slot_of.get(src._id)
            if slot is None:
                slot = slot_of[src._id] = len(origins)
                origins.append(("source", k))
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
                    if origins[slot][0] == "source":
                        # Read a source's value where it was recorded: a Variable may
                        # have been assigned a new array since.
                        origins[slot] = ("in", r, p)
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
                    origins.append(("in", r, p))
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
                    origins.append(("out", r, p))
                    avals.append(None)  # filled in by to_program, only on a cache miss
                else:
                    # A source computed by a recorded op keeps its slot: its gradient is
                    # the cotangent reaching it, and the op still passes gradient upstream.
                    origins[slot] = ("out", r, p)
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
        """The recorded value of ``slot``."""
        origin = self.origins[slot]
        if origin[0] == "source":
            return sources[origin[1]]._value
        record = self.records[origin[1]]
        values = record[IN_VALUES] if origin[0] == "in" else record[OUT_VALUES]
        return values[origin[2]]

    def tensor_id(self, slot: int, sources) -> int | None:
        """The id of the tensor in ``slot`` (``None`` for a raw constant)."""
        origin = self.origins[slot]
        if origin[0] == "source":
            return sources[origin[1]]._id
        record = self.records[origin[1]]
        ids = record[IN_IDS] if origin[0] == "in" else record[OUT_IDS]
        return ids[origin[2]]

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
        # A source's value may be read from a record ("in"), yet it is a source.
        sources = dict.fromkeys(self.source_slots)
        constants = [s for s, o in enumerate(self.origins) if o[0] == "in" and s not in sources]
        for s in constants:
            slot_vars[s].hint = "c"
        inputs = [slot_vars[s] for s in sources if s not in defined_by_eqn]
        inputs += [slot_vars[s] for s in constants]
        outputs = [None if s is None else slot_vars[s] for s in self.target_slots]
        return Program(inputs, eqns, outputs), slot_vars


def is_differentiable_dtype(dtype: np.dtype) -> bool:
    return is_inexact(dtype)
