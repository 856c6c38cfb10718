"""The user's names for the values of a trace, given to its forward Program's vars.

Generated code speaks them (``def backward(labels, hidden, w_out, x)``, ``d_hidden``).
A value's name, first found first:

1. a source that is a ``Variable`` with a name of its own: that name (``w_out:0`` ->
   ``w_out``; a Keras variable's layer and name, ``hidden/kernel``);
2. a value an op made: the target of the statement that made it (``logits`` for
   ``logits = hidden @ w_out``), read from the recorded ``file:line``
   (``codegen/user_source.py``), when the target is bound to it: the statement's last
   op made it, and neither the statement's form (``h = [f(x), g(x)]``,
   ``h = f(x)[0]``) nor the caller's frame (``h`` holding a list, or another op's
   tensor) says otherwise;
3. a tensor the code calling ``gradient`` holds: the local (or global) name it holds it
   under (``x``, ``labels``);
4. a source otherwise: ``source_<k>``, in the order of the sources.

Names are cosmetic and built once per structure: the cache key never sees them, and
two programs differing only in names share one compiled backward (showing the first's).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ..codegen.user_source import Statement, statement_at, statements_at
from ..core.state import user_frame
from ..core.tensor import Tensor
from ..core.variable import Variable
from ..ir.lower import LOCATION, OUT_IDS, SOURCE, Trace
from ..ir.nodes import Var

_DEFAULT_VARIABLE_NAME = "Variable"


def name_values(trace: Trace, slot_vars: list[Var], sources: Sequence[Any],
                records: list | None = None) -> None:
    """Set ``var.name`` of the trace's slot vars to the user's names for them
    (``records``: the tape's records before pruning, ``trace.records`` if not given)."""
    names: dict[int, str] = {}
    for slot, source in zip(trace.source_slots, sources):
        own = variable_name(source)
        if own:
            names.setdefault(slot, own)
    recorded = trace.records if records is None else records
    # Each record's statement, looked up once per build (the locations' answers are
    # kept across builds by user_source).
    recorded_statements = statements_at([rec[LOCATION] for rec in recorded])
    caller = _Caller(sys._getframe(1))
    told = any(recorded_statements)  # else no source text to read (python -c, <stdin>)
    if told:
        position = {id(rec): i for i, rec in enumerate(recorded)}
        statements = recorded_statements if trace.records is recorded else [
            recorded_statements[position[id(rec)]] if id(rec) in position
            else statement_at(rec[LOCATION]) for rec in trace.records]
        _assigned_names(trace, recorded, recorded_statements, statements, position, names,
                        caller)
    _held_names(trace, slot_vars, sources, names, caller)
    if told:
        _operand_names(trace, names, sources, statements)
    for k, slot in enumerate(trace.source_slots):
        names.setdefault(slot, f"source_{k + 1}")
    for slot, name in names.items():
        slot_vars[slot].name = name


class _Caller:
    """The code calling into gradtape, looked at only when a name needs it: its frame
    (found on first use) and its scopes (locals, then globals; read once per build)."""

    def __init__(self, start: Any) -> None:
        self._start = start
        self._found = False
        self._frame: Any = None
        self._scopes: list[dict] | None = None

    @property
    def frame(self) -> Any:
        if not self._found:
            self._frame, self._found = user_frame(self._start), True
            self._start = None
        return self._frame

    @property
    def scopes(self) -> list[dict]:
        if self._scopes is None:
            frame = self.frame
            self._scopes = [] if frame is None else [frame.f_locals]
            if frame is not None and frame.f_globals is not self._scopes[0]:
                self._scopes.append(frame.f_globals)
        return self._scopes


def variable_name(source: Any) -> str | None:
    """A Variable's own name without TF's ``:0`` (a Keras variable's layer and name:
    ``hidden/kernel``, so two layers' kernels read apart); ``None`` for the default."""
    if not isinstance(source, Variable):
        return None
    path = getattr(source, "path", None)
    name = "/".join(path.split("/")[-2:]) if isinstance(path, str) and path else source._name
    if not isinstance(name, str) or name == _DEFAULT_VARIABLE_NAME:
        return None
    return name.split(":")[0]


def _assigned_names(trace: Trace, recorded: list, recorded_statements: list,
                    statements: list, position: dict[int, int], names: dict[int, str],
                    caller: _Caller) -> None:
    """Each statement's targets for the outputs of its last op (the op that made the
    statement's value), found in ``recorded``, the records before pruning: pruning may
    drop a statement's last op and keep one before it (a nested tape's gradient reads
    ``tanh(x)`` of ``y = reduce_sum(tanh(x) * x)``, not ``y``). Only where that output
    is what the targets are bound to (``_binds_last_op``). ``statements`` are the trace
    records', ``recorded_statements`` those of ``recorded``, ``position`` a record's
    index in ``recorded`` by id."""
    verdicts: dict[int, bool] = {}
    bound = None
    last = len(recorded) - 1
    for rec, outs, statement in zip(trace.records, trace.out_slots, statements):
        if statement is None or not statement.targets or len(statement.targets) != len(outs):
            continue
        i = position.get(id(rec))
        if i is None:
            continue  # rewritten (a variable read at several values): not told
        if i < last and recorded_statements[i + 1] is statement:
            continue  # not the statement's last op
        verdict = verdicts.get(id(statement))
        if verdict is None:
            if bound is None:
                bound = _bound_in_caller(recorded, recorded_statements, caller.frame)
            verdict = verdicts[id(statement)] = _binds_last_op(statement, rec, bound)
        if verdict:
            for slot, target in zip(outs, statement.targets):
                names.setdefault(slot, target)


class _Bound:
    """What the code calling ``gradient`` holds, for the statements of that code: per
    statement (by identity), its targets' values and its ops' outputs (ids)."""

    def __init__(self) -> None:
        self.held: dict[int, tuple[Any, ...]] = {}
        self.last_outs: dict[int, set[int]] = {}  # outputs of the statement's last ops
        self.other_outs: dict[int, set[int]] = {}  # outputs of its other ops


def _bound_in_caller(recorded: list, statements: list, frame: Any) -> _Bound:
    bound = _Bound()
    if frame is None:
        return bound
    code = frame.f_code
    filename, lines = code.co_filename, _code_lines(code)
    scope = frame.f_locals
    last = len(recorded) - 1
    for i, rec in enumerate(recorded):
        location = rec[LOCATION]
        if location is None or location[0] != filename or location[1] not in lines:
            continue
        statement = statements[i]
        if statement is None or not statement.targets:
            continue
        key = id(statement)
        if key not in bound.held:
            if not all(t in scope for t in statement.targets):
                continue
            bound.held[key] = tuple(scope[t] for t in statement.targets)
        outs = bound.last_outs if i == last or statements[i + 1] is not statement \
            else bound.other_outs
        outs.setdefault(key, set()).update(rec[OUT_IDS])
    return bound


_code_line_sets: dict[Any, frozenset] = {}
_MAX_CODES = 256


def _code_lines(code: Any) -> frozenset:
    """The lines ``code`` runs, kept per code object: a module's or a long function's
    line table is walked once, not on every build."""
    lines = _code_line_sets.get(code)
    if lines is None:
        if len(_code_line_sets) >= _MAX_CODES:
            _code_line_sets.clear()
        lines = _code_line_sets[code] = frozenset(
            line for *_, line in code.co_lines() if line is not None)
    return lines


def _binds_last_op(statement: Statement, rec: tuple, bound: _Bound) -> bool:
    """Whether the statement's targets hold its last op's outputs. Seen in the calling
    frame where the statement is its code and the targets are still bound there: a
    target holding one of those outputs (in any pass of a loop) says yes; one holding a
    list or tuple of the statement's tensors (``h = [f(x), g(x)]``), or a tensor made by
    an op before the last (``h = f(x)[0]``), says no. Otherwise the statement's form
    decides (``Statement.direct``)."""
    held = bound.held.get(id(statement))
    if held is not None:
        last = bound.last_outs.get(id(statement), set())
        other = bound.other_outs.get(id(statement), set())
        for value in held:
            if isinstance(value, Tensor):
                if value._id in last:
                    return True
                if value._id in other:
                    return False
            elif isinstance(value, (list, tuple, dict)):
                return False
    return statement.direct


def _operand_names(trace: Trace, names: dict[int, str], sources: Sequence[Any],
                   statements: list) -> None:
    """A statement's one unnamed input (not made by its own ops) gets the one name its
    text reads that no other value of it has (``labels`` in ``f(labels, logits)``). A raw
    0-d value is not counted: that is a constant the op's own code made (``1 / n`` of a
    mean), never one the statement names. ``statements``: the trace records'."""
    wiring, out_slots = trace.wiring, trace.out_slots
    count = len(statements)
    start = 0
    for end in range(1, count + 1):
        statement = statements[start]
        if end < count and statements[end] is statement:
            continue
        if statement is not None and statement.operands:
            made = {s for outs in out_slots[start:end] for s in outs}
            read = {s for ins in wiring[start:end] for s in ins if type(s) is int}
            known = {names[s] for s in read | made if s in names}
            candidates = [n for n in statement.operands if n not in known]
            if len(candidates) == 1:  # then the unnamed inputs (each asks the trace)
                unnamed = [s for s in read - made if s not in names
                           and not _library_scalar(trace, s, sources)]
                if len(unnamed) == 1:
                    names[unnamed[0]] = candidates[0]
        start = end


def _library_scalar(trace: Trace, slot: int, sources: Sequence[Any]) -> bool:
    return trace.tensor_id(slot, sources) is None and \
        getattr(trace.value(slot, sources), "ndim", None) == 0


def _held_names(trace: Trace, slot_vars: list[Var], sources: Sequence[Any],
                names: dict[int, str], caller: _Caller) -> None:
    """Name each slot still unnamed after the name the code calling into gradtape holds
    its tensor under (a raw array: a tensor holding that array), the first in that
    code's locals, then its globals."""
    by_id: dict[int, list[int]] = {}  # tensor id -> its unnamed slots
    by_array: dict[int, list[int]] = {}  # id of a raw array -> its unnamed slots
    for slot, tensor_id in enumerate(trace.tensor_ids(sources)[:len(slot_vars)]):
        if slot in names:
            continue
        if tensor_id is not None:
            by_id.setdefault(tensor_id, []).append(slot)
        elif trace.origins[slot].kind != SOURCE:  # a raw array: a held tensor's, maybe
            by_array.setdefault(id(trace.value(slot, sources)), []).append(slot)
    if not (by_id or by_array):
        return
    found: dict[int, str] = {}
    found_arrays: dict[int, str] = {}
    for scope in caller.scopes:
        for name, value in list(scope.items()):
            if isinstance(value, Tensor) and isinstance(name, str) and \
                    not name.startswith("_"):
                found.setdefault(value._id, name)
                if by_array:
                    found_arrays.setdefault(id(value._value), name)
    for wanted, held in ((by_id, found), (by_array, found_arrays)):
        for key, slots in wanted.items():
            name = held.get(key)
            if name is not None:
                for slot in slots:
                    names[slot] = name
