"""How a tape records an op: the record it keeps, the functions that write it, and how
records of a variable read at several values are told apart for ``gradient``.

``ops.registry.bind`` hands every op to whoever observes it (``core.state.Observer``); a
``GradientTape`` observes through ``record_alone`` below when it is the only observer
(bind's fast branch, ``GradientTape.on_op_alone``), through ``record_nested`` when only
tapes observe, nested (``GradientTape.on_op_nested``), and through ``record_op``
otherwise (``GradientTape.on_op``).
Only this module and ``tape/gradient_tape.py`` write a tape's recording state: ``_records``,
``_tracked``, ``_signature``, ``_constants``, ``_var_versions`` and ``_reread``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..core.backends import NUMPY_CLASSES, dtype_of
from ..core.promotion_warning import FLOAT32
from ..core.promotion_warning import check as check_promotion
from ..core.state import _is_internal, in_layer, location_from, state
from ..core.tensor import Tensor, _next_id
from ..ir.lower import IN_IDS, IN_VALUES, OUT_IDS, OUT_VALUES, Released

# A record is a plain tuple, read by the field indices of ``recording`` (PRIM, IN_IDS,
# IN_VALUES, PARAMS, OUT_IDS, OUT_VALUES, LOCATION): ids are tensor ids (``None`` for a raw
# array or Python scalar), LOCATION is the user's (file, line) or ``None``. Not a named
# tuple: making one (a second tuple), freeing it and reading its fields cost 1.4 % of a
# recorded scalar step (callgrind instruction counts).
Record = tuple


def record_op(tape, prim, args: tuple, values: list, params: dict, result: Any, out: Any,
              shared: Record | None) -> Record | None:
    """Record one op on ``tape`` if it sees an input; return the op's record (``shared``
    when another tape recorded the same op already: nested tapes keep one record).

    ``values`` are the raw operands the op ran on (kept as ``_recorded_values`` makes
    them), ``out`` its raw result (a tuple of them for several results)."""
    reads = None  # the op's arguments when one is a variable
    if shared is None:
        in_ids = []
        for a in args:
            if isinstance(a, Tensor):
                in_ids.append(a._id)
                if a._watch_on_read:
                    reads = args
            else:
                in_ids.append(None)
        if prim.multiple_results:
            out_ids, out_values = tuple(r._id for r in result), tuple(out)
        else:
            out_ids, out_values = (result._id,), (out,)
    else:  # the ids and values as the other tape recorded them
        in_ids, out_ids, out_values = shared[IN_IDS], shared[OUT_IDS], shared[OUT_VALUES]
        for a in args:
            if isinstance(a, Tensor) and a._watch_on_read:
                reads = args
                break
    tracked = tape._tracked
    if reads is not None:
        note_variable_reads(tape, reads)
    # One pass finds whether the tape sees this op and, if so, how it is wired.
    slots = tuple(map(tracked.get, in_ids))
    if slots.count(None) == len(slots):
        return shared
    if shared is not None:
        values = shared[IN_VALUES]
    else:
        released = prim.released_inputs
        if released is not None and released[0] < len(values):
            values = _released_inputs(values, released, reads)
        if not prim.keeps_outputs:
            out_values = tuple(map(_released, out_values))
        if None in in_ids:
            values = _recorded_values(values, in_ids)
    where = _UNKNOWN
    if tape._signature is not None:
        if None in slots:
            slots = _wiring(tape, slots, in_ids, values)
        where = _follow(tape, (prim, tuple(params.items()) if params else (), slots))
    record = shared
    if record is None:
        if where is _UNKNOWN:
            where = _user_location(4)  # 1 is this function, then bind and the op wrapper
        record = (prim, tuple(in_ids), tuple(values), params, out_ids, out_values, where)
    tape._records.append(record)
    if len(out_ids) == 1:  # the usual op: no loop
        tracked[out_ids[0]] = len(tracked)
    else:
        n = len(tracked)
        for o in out_ids:
            tracked[o] = n
            n += 1
    return record


def record_alone(tape, prim, in_ids: list, values: list, params: dict, result: Tensor,
                 out: Any, reads: Any, raw_arrays: bool) -> Record | None:
    """``record_op`` for bind's fast branch: ``tape`` is the op's only observer (or the
    first of nested tapes to see it, from ``record_nested``) and the op has one result,
    so no record is shared, and the output's tuples are made only when the tape sees the
    op; returns the record (``None``: the tape does not see the op). ``raw_arrays``: a
    raw operand is an array or array-like, which ``_recorded_values`` copies or converts
    (Python scalars are kept as they are)."""
    tracked = tape._tracked
    if reads is not None:
        note_variable_reads(tape, reads)
    # A list, not tuple(map(...)): a tuple of unknown length is grown by resizing, which
    # cost 3 % of a scalar step; the signature item below makes the tuple.
    slots = list(map(tracked.get, in_ids))
    if slots.count(None) == len(slots):
        return None
    # Keep only what the derivative rules read, of arrays large enough to matter: one
    # tuple check for an op that releases nothing at its arity (x * y reads both), and
    # one attribute for an op on scalars (``releases_at_scalar_output``: sum, not sin).
    if out.__class__ is _ndarray:
        if prim.releases:  # else it keeps it all (matmul): nothing to check
            released = prim.released_inputs
            if released is not None and released[0] < len(values):
                values = _released_inputs(values, released, reads)
            if not prim.keeps_outputs and (
                    out.size >= MIN_RELEASE_SIZE or out.base is not None):
                out = Released(out)
    elif prim.releases_at_scalar_output and prim.released_inputs[0] < len(values):
        values = _released_inputs(values, prim.released_inputs, reads)
    if raw_arrays:
        values = _recorded_values(values, in_ids)
    if tape._signature is not None:
        if None in slots:
            slots = _wiring(tape, slots, in_ids, values)
        item = (prim, tuple(params.items()) if params else (), tuple(slots))
        # _follow's usual answer, inlined (a call per op costs about 1 % of the step):
        # the item is the reference's next one, and so is its location.
        reference = tape._reference
        where = _UNKNOWN
        if reference is not None:
            i = tape._followed
            earlier = reference[0].items
            try:
                if i < len(earlier) and earlier[i] == item:
                    tape._followed = i + 1
                    where = reference[1][i]
            except (TypeError, ValueError):  # params that don't compare: _follow says so
                pass
        if where is _UNKNOWN:
            where = _follow(tape, item)
            if where is _UNKNOWN:
                # 1 is this function, then bind and the op wrapper (record_nested is
                # one frame more: the walk goes on past gradtape's frames)
                where = _user_location(4)
    else:
        where = _user_location(4)
    out_id = result._id
    record = (prim, tuple(in_ids), tuple(values), params, (out_id,), (out,), where)
    tape._records.append(record)
    tracked[out_id] = len(tracked)
    return record


def record_nested(tape, prim, args: tuple, in_ids: list, values: list, params: dict,
                  result: Tensor, out: Any, reads: Any, raw_arrays: bool,
                  shared: Record | None) -> Record | None:
    """``record_alone`` for one of several tapes on the stack (nested tapes; bind's fast
    branch hands the op to each, outermost first): the first that sees the op makes the
    record, and each after it appends that same record (``shared``), as ``record_op``
    does, following its own signature. Returns the record, or ``None`` while no tape
    has seen the op."""
    if shared is None:
        return record_alone(tape, prim, in_ids, values, params, result, out, reads,
                            raw_arrays)
    tracked = tape._tracked
    if reads is not None:
        note_variable_reads(tape, reads)
    slots = list(map(tracked.get, in_ids))
    if slots.count(None) == len(slots):
        return shared
    if tape._signature is not None:
        if None in slots:
            slots = _wiring(tape, slots, in_ids, shared[IN_VALUES])
        _follow(tape, (prim, tuple(params.items()) if params else (), tuple(slots)))
    tape._records.append(shared)
    tracked[result._id] = len(tracked)
    return shared


def note_variable_reads(tape, args) -> None:
    """What a tape must know of the variables an op reads: a trainable one read inside
    the tape is watched (TF's watch_accessed_variables), and one read at a version other
    than the one the tape first saw is noted, so ``gradient`` tells its reads apart (a
    read is a value of its own: ``x * v; v.assign(10.0); x * v``)."""
    versions = tape._var_versions
    for a in args:
        if isinstance(a, Tensor) and a._watch_on_read:
            if a._value.dtype is FLOAT32:  # promoted by a float64 array? (warned once)
                check_promotion(a, args)
            seen = versions.get(a._id)
            if seen is None:
                if tape._watch_accessed_variables and a.trainable:
                    tape._watch_id(a._id, a)
                versions.setdefault(a._id, a._version)
            elif seen != a._version:
                tape._reread.add(a._id)


def _recorded_values(values: list, in_ids: list) -> list:
    """What a record keeps of raw operands (``in_ids[p] is None``): lists and other
    array-likes as the arrays NumPy made of them, and a private copy of a NumPy array,
    which the caller may write into before the gradient is taken (a tensor is a value,
    as in TF). A tensor's array is never written into: it is kept as it is."""
    return [v if i is not None or v.__class__ in _SCALARS
            else v.copy() if isinstance(v, np.ndarray)
            else v if hasattr(v, "shape") else np.asarray(v)
            for v, i in zip(values, in_ids)]


def _released_inputs(values: list, released: tuple[int, ...], args: Any) -> list:
    """``values`` with each NumPy array of ``MIN_RELEASE_SIZE`` elements or more at a
    ``released`` position (the inputs no derivative rule of the op reads) replaced by a
    ``Released``, its shape and dtype: an intermediate no rule reads dies with the
    user's reference, and a raw operand no rule reads is not copied
    (``_recorded_values`` copies arrays only). A variable's value stays (``args``: the
    op's arguments when one is a variable): its reads are told apart by their arrays
    (``split_reads``), and the variable holds the array anyway. Smaller arrays and
    scalars stay: releasing them costs more than keeping them; but not a small view,
    which would keep its base, maybe large, alive (``t[1:90, ::2]``)."""
    n = len(values)
    for p in released:
        if p >= n:
            break
        v = values[p]
        if v.__class__ is _ndarray and (v.size >= MIN_RELEASE_SIZE or v.base is not None) and not (
                args is not None and getattr(args[p], "_watch_on_read", False)):
            if values.__class__ is not list:
                values = list(values)
            values[p] = Released(v)
    return values


def _released(value: Any) -> Any:
    """An output no rule reads: its shape and dtype if it is a NumPy array of
    ``MIN_RELEASE_SIZE`` elements or more, or a view (which holds its base)."""
    if value.__class__ is _ndarray and (value.size >= MIN_RELEASE_SIZE or value.base is not None):
        return Released(value)
    return value


def _follow(tape, item: tuple) -> Any:
    """Add ``item`` to ``tape``'s signature. While the tape records what its site's
    reference did, the signature is that reference's prefix (nothing is appended) and
    the answer is the location the reference recorded here; else ``_UNKNOWN``."""
    reference = tape._reference
    if reference is not None:
        i = tape._followed
        earlier = reference[0].items
        try:
            same = i < len(earlier) and earlier[i] == item
        except (TypeError, ValueError):  # params that don't compare as values
            same = False
        if same:
            tape._followed = i + 1
            return reference[1][i]
        tape._diverge()
    tape._signature.append(item)
    return _UNKNOWN


_SCALARS = frozenset((bool, int, float, complex))
# Arrays smaller than this (elements) are kept even where no rule reads them, unless
# they are views (a view holds its base): the ``Released`` standing in for one and the
# check cost more than the memory (the same size as the buffer pass's MIN_OUT_SIZE).
MIN_RELEASE_SIZE = 4096
# Only NumPy arrays are released (another library's arrays stay: their kind decides
# where a backward runs).
_ndarray = np.ndarray
_getframe = sys._getframe
_UNKNOWN = object()


def _user_location(depth: int) -> tuple[str, int] | None:
    """Where the user called the op: ``depth`` frames up is the op wrapper's caller when
    the wrapper called ``bind`` itself and bind handed the op to ``record_op`` (0 is
    this function, then ``record_op``, bind and the wrapper); the walk goes on from
    there while it is gradtape's (from bind's observer loop, one frame further)."""
    try:
        frame = _getframe(depth)
    except ValueError:  # bind called from the bottom of the stack
        frame = _getframe(1)
    code = frame.f_code
    where = (code.co_filename, frame.f_lineno) if _is_internal.get(code) is False \
        else location_from(frame)
    return in_layer(where) if state.layers else where  # inside a Keras layer's call


def _wiring(tape, slots, in_ids, values) -> tuple:
    """How a record's inputs look to ``tape``, by structure: a slot for tracked tensors
    (``slots`` has those already), the first-use number and aval for other tensors (the
    same constant twice is one value), the aval for raw arrays, the value (and the sign
    of a zero) for scalars."""
    out = []
    for slot, i, v in zip(slots, in_ids, values):
        if slot is not None:
            out.append(slot)
        elif v.__class__ in _SCALARS:
            out.append((v.__class__, v, repr(v)) if v == 0 else (v.__class__, v))
        elif i is None:
            out.append((None, v.shape, v.dtype if type(v) in NUMPY_CLASSES else dtype_of(v)))
        else:
            constants = tape._constants
            described = constants.get(i)
            if described is None:
                dtype = v.dtype if type(v) in NUMPY_CLASSES else dtype_of(v)
                described = constants[i] = (len(constants), v.shape, dtype)
            out.append(described)
    return tuple(out)


# --- a variable read at several values -------------------------------------------------

def split_reads(records: list[Record], var_id: int) -> list[Record]:
    """``records`` with each value the variable ``var_id`` was read with under an id of
    its own, when there is more than one: a variable that is not a source is then a
    constant per value read (``x * v; v.assign(10.0); x * v`` reads 2.0, then 10.0)."""
    values = _values_read(records, var_id)
    if len(values) <= 1:
        return records
    return _renumber_reads(records, var_id, {key: _next_id() for key in values})


def variable_versions(records: list[Record], var: Any) -> tuple[list[Tensor], list]:
    """A variable assigned since the tape first saw it: one source per value it was read
    with (the gradient sums over them, as TF's gradient sums over all reads).

    Returns the sources and the records, rewritten so that each value read has an id of
    its own when there is more than one."""
    values = _values_read(records, var._id)
    if len(values) <= 1:
        # Read with one value (maybe an older one): differentiate at that value.
        value = next(iter(values.values()), var._value)
        return [Tensor._alias(value, var._id)], records
    new_id = {key: _next_id() for key in values}
    rewritten = _renumber_reads(records, var._id, new_id)
    return [Tensor._alias(values[key], new_id[key]) for key in values], rewritten


def _values_read(records: list[Record], var_id: int) -> dict[int, Any]:
    """id(array) -> array for each value ``var_id`` was read with, in order of first read."""
    values: dict[int, Any] = {}
    for rec in records:
        for tensor_id, value in zip(rec[IN_IDS], rec[IN_VALUES]):
            if tensor_id == var_id:
                values.setdefault(id(value), value)
    return values


def _renumber_reads(records: list[Record], var_id: int, new_id: dict[int, int]) -> list:
    """``records`` with each read of ``var_id`` renamed by its value (``new_id`` maps
    ``id(value)`` to the read's new tensor id)."""
    rewritten = []
    for rec in records:
        if var_id in rec[IN_IDS]:
            ids = tuple(new_id[id(v)] if i == var_id else i
                        for i, v in zip(rec[IN_IDS], rec[IN_VALUES]))
            rec = rec[:IN_IDS] + (ids,) + rec[IN_IDS + 1:]
        rewritten.append(rec)
    return rewritten
