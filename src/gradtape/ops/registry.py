"""The one dispatch point every op goes through.

``Primitive`` itself lives in ``ir/primitive.py`` (the IR knows what a primitive is
without knowing any op); it is re-exported here, where ops import it from.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..ir import builder
from ..ir.nodes import IRValue
from ..ir.primitive import ArrayShorthand as ArrayShorthand
from ..ir.primitive import Primitive as Primitive
from ..ir.primitive import per_primitive as per_primitive
from ..recording import _is_internal, location_from, state
from ..tensor import Tensor, _new_object, _next_id, wrap


def operand(x: Any) -> Any:
    """``x`` as something with a shape: tensors and IR values as they are, anything else
    converted with TF's rules (``gt.sin(3.0)`` is float32, like ``tf.sin(3.0)``)."""
    if isinstance(x, (Tensor, IRValue)):
        return x
    if isinstance(x, (list, tuple)) and holds_tensor(x):
        from .stacking import stack  # TF packs a list holding tensors: differentiable

        return stack(x)
    from ..tensor import constant

    return constant(x)


def unchanged(x: Any) -> Any:
    """What an op that leaves its input as it is returns (``reshape`` to the same shape,
    ``v[:]``, a sum over no axes): the input itself, except a Variable, whose snapshot
    must not follow later assigns. TF returns a read of it, and so does this."""
    if getattr(x, "_watch_on_read", False):
        return x.read_value()
    return x


def holds_tensor(items: list | tuple) -> bool:
    """Whether a (nested) list or tuple holds a tensor anywhere."""
    return any(isinstance(i, Tensor) or (isinstance(i, (list, tuple)) and holds_tensor(i))
               for i in items)


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim``: emit IR if an input is an IR value, else compute now and record.

    This is the hot path of every eager op: keep it to one pass over the arguments."""
    tapes = state.recording
    if tapes and len(tapes) == 1 and prim.differentiable and not prim.multiple_results \
            and state.tracer is None and not state.accumulators:
        return _bind_on_one(tapes[0], prim, args, params)
    run = prim.eager
    values = []
    for a in args:
        if isinstance(a, Tensor):
            values.append(a._value)
        elif isinstance(a, IRValue):
            return builder.emit(prim, args, params)
        else:
            values.append(a)
            if a.__class__ not in _SCALARS:
                run = prim.impl  # lists and other array-likes: only NumPy's rules
    out = run(*values, **params)
    if prim.multiple_results:
        result = tuple(wrap(o) for o in out)
    else:  # wrap(out), inline: this is most of what an op costs beyond NumPy's work
        result = _new_object(Tensor)
        result._value = out
        result._id = _next_id()
    # state.active, spelled out (the property costs more than the attribute reads); the
    # tapes did not change while NumPy ran.
    if tapes or state.accumulators or state.tracer is not None:
        _record(prim, args, values, params, result, out)
    return result


def _bind_on_one(tape, prim, args, params) -> Any:
    """``bind`` in the usual case, kept short: one tape records (nothing else sees ops)
    and the op has one result. One pass over the arguments gathers their values for
    the op and their ids for the record."""
    run = prim.eager
    values = []
    in_ids = []
    variables = False
    for a in args:
        if isinstance(a, Tensor):
            values.append(a._value)
            in_ids.append(a._id)
            if a._watch_on_read:
                variables = True
        elif isinstance(a, IRValue):
            return builder.emit(prim, args, params)
        else:
            values.append(a)
            in_ids.append(None)
            if a.__class__ not in _SCALARS:
                run = prim.impl  # lists and other array-likes: only NumPy's rules
    out = run(*values, **params)
    result = _new_object(Tensor)  # wrap(out), inline
    result._value = out
    result._id = _next_id()
    tracked = tape._tracked
    if variables:
        _note_variable_reads(tape, args)
    # One pass finds whether the tape sees this op and, if so, how it is wired.
    slots = list(map(tracked.get, in_ids))
    if slots.count(None) == len(slots):
        return result
    if None in in_ids:
        values = _recorded_values(values)
    where = _UNKNOWN
    if tape._signature is not None:
        if None in slots:
            slots = _wiring(tape, slots, in_ids, values)
        where = _follow(tape, (prim, tuple(params.items()) if params else (), tuple(slots)))
    if where is _UNKNOWN:
        where = _user_location(4)
    rid = result._id
    tape._records.append((prim, tuple(in_ids), tuple(values), params, (rid,), (out,), where))
    tracked[rid] = len(tracked)
    return result


def _record(prim, args, values, params, result, out) -> None:
    tracer = state.tracer
    if tracer is not None:  # @gt.function traces every op, differentiable or not
        tracer.on_op(prim, args, values, params, result, out)
    if not prim.differentiable:
        return
    if state.recording:
        _record_on_each(state.recording, prim, args, values, params, result, out)
    if state.accumulators:
        for acc in state.accumulators:
            acc._on_op(prim, args, params, result)


def _record_on_each(tapes, prim, args, values, params, result, out) -> None:
    """Every tape that sees the op gets the same record (nested tapes, ops with several
    results, ops a forward accumulator or a trace sees too)."""
    in_ids = []
    variables = None
    for a in args:
        if isinstance(a, Tensor):
            in_ids.append(a._id)
            if a._watch_on_read:
                variables = [a] if variables is None else variables + [a]
        else:
            in_ids.append(None)
    record = None
    where = _UNKNOWN
    for tape in tapes:
        tracked = tape._tracked
        if variables is not None:
            _note_variable_reads(tape, variables)
        slots = list(map(tracked.get, in_ids))
        if slots.count(None) == len(slots):
            continue
        if record is None:
            if None in in_ids:
                values = _recorded_values(values)
            if prim.multiple_results:
                out_ids = tuple(r._id for r in result)
                out_vals = tuple(out)
            else:
                out_ids = (result._id,)
                out_vals = (out,)
            params_key = tuple(params.items()) if params else ()
        if tape._signature is not None:
            if None in slots:
                slots = _wiring(tape, slots, in_ids, values)
            found = _follow(tape, (prim, params_key, tuple(slots)))
            if where is _UNKNOWN:
                where = found
        if record is None:
            if where is _UNKNOWN:
                where = _user_location(5)  # this function, _record, bind, the wrapper
            record = (prim, tuple(in_ids), tuple(values), params, out_ids, out_vals, where)
        tape._records.append(record)
        n = len(tracked)
        for o in out_ids:
            tracked[o] = n
            n += 1


def _note_variable_reads(tape, args) -> None:
    """What a tape must know of the variables an op reads: a trainable one read inside
    the tape is watched (TF's watch_accessed_variables), and one read at a version other
    than the one the tape first saw is noted, so ``gradient`` tells its reads apart (a
    read is a value of its own: ``x * v; v.assign(10.0); x * v``)."""
    versions = tape._var_versions
    for a in args:
        if isinstance(a, Tensor) and a._watch_on_read:
            seen = versions.get(a._id)
            if seen is None:
                if tape._watch_accessed_variables and a.trainable:
                    tape._watch_id(a._id, a)
                versions.setdefault(a._id, a._version)
            elif seen != a._version:
                tape._reread.add(a._id)


def _recorded_values(values: list) -> list:
    """What a record keeps of raw operands: lists and other array-likes as the arrays
    NumPy made of them, and a private copy of a NumPy array, which the caller may write
    into before the gradient is taken (a tensor is a value, as in TF)."""
    return [v.copy() if isinstance(v, np.ndarray)
            else v if hasattr(v, "shape") or v.__class__ in _SCALARS else np.asarray(v)
            for v in values]


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
_getframe = sys._getframe
_UNKNOWN = object()


def _user_location(depth: int) -> tuple[str, int] | None:
    """Where the user called the op: ``depth`` frames up is the op wrapper's caller when
    the wrapper called ``bind`` itself (0 is this function, then the record functions,
    bind and the wrapper); the walk goes on from there while it is gradtape's."""
    try:
        frame = _getframe(depth)
    except ValueError:  # bind called from the bottom of the stack
        frame = _getframe(1)
    code = frame.f_code
    if _is_internal.get(code) is False:
        return (code.co_filename, frame.f_lineno)
    return location_from(frame)


def _wiring(tape, slots, in_ids, values) -> list:
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
            out.append((None, v.shape, v.dtype))
        else:
            constants = tape._constants
            described = constants.get(i)
            if described is None:
                described = constants[i] = (len(constants), v.shape, v.dtype)
            out.append(described)
    return out
