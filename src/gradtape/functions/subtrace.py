"""Tracing a loop body or a branch into a sub-program, inside a ``@gt.function`` trace.

While a scope is open the tracer writes the ops into a list of its own, and the tensors
made in it into an environment of its own in front of the outer one: a value made
outside and read inside (a weight, an argument, a captured tensor) is an outer value
the sub-program reads, which becomes an explicit operand of the loop or switch (an
invariant). The scope starts from placeholders: fresh tensors holding the values the
body is first run on, each a sub-program input.

What a sub-program cannot hold makes the scope fail (``NotCompilable``), and the caller
runs its Python control flow as before: a Python read of a tensor's value (a guard: it
could differ per iteration), a variable assigned, a ``py_function`` (which gives the scope
up before it runs: its Python runs once per iteration of Python's loop, never once more).
A ``gt.print`` becomes an op of the sub-program (``functions/printing.py``).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..ir.nodes import Eqn, Literal, Program, Var
from ..ir.walk import free_vars
from .trace import PYTHON_CALLS, variable_read_p


class NotCompilable(Exception):
    """The body did something a sub-program cannot hold: run Python control flow."""


class Traced(NamedTuple):
    """One function traced in a scope: its equations, placeholders and outputs (outer
    values among them), and the outer values it reads with the tensors holding them."""

    eqns: list[Eqn]
    placeholders: list[Var]
    outputs: list[Var | Literal]
    returned: Any  # what the function returned (tensors of the scope)
    reads: dict[Var, Tensor]


_scopes: list = []  # the tracers with a scope open, innermost last


def stop_before_python_call() -> None:
    """Called by ``py_function``/``numpy_function`` before they run anything: inside a
    scope the body cannot hold them, so the scope fails *before* the user's Python runs
    (it must run once per iteration of Python's loop, not once more for a body that was
    given up)."""
    if _scopes and _scopes[-1] is state.tracer:
        raise NotCompilable


def in_scope(tracer: Any) -> bool:
    """Whether ``tracer`` is tracing a loop body or a branch now."""
    return bool(_scopes) and _scopes[-1] is tracer


_printed: list = []  # set when a print op was traced in the open scopes


def note_loop_print() -> None:
    """A ``gt.print`` became an op of the open scope: when the outermost scope closes,
    the trace's prints get a ``FlushRecord`` there, so its lines print in order."""
    _printed.append(True)


def tracing() -> Any:
    """The active ``@gt.function`` tracer, or ``None`` (eager: Python control flow)."""
    return state.tracer


def trace_in_scope(fn: Callable[..., Any], values: Sequence[Tensor],
                   call: Callable[[Callable[..., Any], list[Tensor]], Any]) -> Traced:
    """``call(fn, placeholders)`` traced into a scope of the active tracer; ``values``
    are the tensors the placeholders start from. ``call`` returns a list of tensors
    (or Python numbers) in a fixed order."""
    tracer = state.tracer
    counts = _counts(tracer)
    streams = {key: entry[0].bit_generator.state for key, entry in tracer.streams.items()}
    saved = (tracer.env, tracer.eqns, tracer.traced_arrays, tracer.__dict__.get("value_of"))
    env: dict = {}
    reads: dict[Var, Tensor] = {}
    placeholders, tensors = [], []
    for value in values:
        tensor = wrap(value._value)
        var = Var(_aval(tensor), "loop_var")
        env[tensor._id] = var
        placeholders.append(var)
        tensors.append(tensor)
    outer_value_of = tracer.value_of

    def value_of(tensor: Tensor) -> Var | Literal:
        var = outer_value_of(tensor)
        if isinstance(var, Var):  # kept for the outer ones (free vars, found later)
            reads[var] = tensor
        return var

    tracer.env = collections.ChainMap(env, saved[0])
    tracer.eqns = []
    tracer.traced_arrays = collections.ChainMap({}, saved[2])
    tracer.value_of = value_of
    # Tapes and accumulators opened inside the function see the loop, not its body.
    hidden = state.recording, state.accumulators
    state.recording, state.accumulators = [], []
    failed = False
    outermost = not _scopes
    if outermost:
        _printed.clear()
    _scopes.append(tracer)
    try:
        returned = call(fn, tensors)
        outputs = [tracer.value_of(t) if isinstance(t, Tensor) else Literal(t)
                   for t in returned]
        eqns = tracer.eqns
    except NotCompilable:  # the body's result cannot be carried: Python's loop runs
        failed = True
    finally:
        _scopes.pop()
        state.recording, state.accumulators = hidden
        tracer.env, tracer.eqns, tracer.traced_arrays = saved[0], saved[1], saved[2]
        if saved[3] is None:
            del tracer.value_of
        else:
            tracer.value_of = saved[3]
    # A draw's result is kept so every call draws it; in a body, every iteration does.
    del tracer.kept[counts[2]:]
    if failed or _counts(tracer) != counts or any(
            e.prim.name in PYTHON_CALLS or e.prim is variable_read_p for e in eqns):
        _undo(tracer, counts, streams)
        raise NotCompilable
    if outermost and _printed:
        from .printing import FlushRecord

        _printed.clear()
        tracer.prints.append(FlushRecord())
    return Traced(eqns, placeholders, outputs, returned, reads)


def _aval(tensor: Tensor) -> Any:
    from ..ir.nodes import aval_of

    return aval_of(tensor._value)


def _counts(tracer: Any) -> tuple:
    return (len(tracer.guards), len(tracer.prints), len(tracer.kept), len(tracer.drops),
            len(tracer.saved), tracer.checked)


def _undo(tracer: Any, counts: tuple, streams: dict) -> None:
    """Forget what the failed scope left in the tracer; variables it assigned get their
    values back, random streams their states (Python's loop draws again)."""
    for key, entry in list(tracer.streams.items()):
        if key in streams:
            entry[0].bit_generator.state = streams[key]
        else:
            entry[0].bit_generator.state = entry[1]
            del tracer.streams[key]
    guards, prints, kept, drops, _, checked = counts
    del tracer.guards[guards:], tracer.prints[prints:], tracer.kept[kept:]
    del tracer.drops[drops:]
    tracer.checked = checked
    for tid in list(tracer.saved)[counts[4]:]:
        array, version = tracer.saved.pop(tid)
        variable = tracer.variables[tid]
        variable._value, variable._version = array, version
        tracer.assigned.pop(tid, None)


def outer_values(traced: Sequence[Traced]) -> list[Var]:
    """The outer values the traced functions read, in order of first use."""
    found: dict[Var, None] = {}
    for t in traced:
        program = Program(t.placeholders, t.eqns, t.outputs)
        for v in free_vars(program, exclude=set(t.placeholders)):
            found[v] = None
    return list(found)


def operand_tensors(outer: Sequence[Var], traced: Sequence[Traced]) -> list[Tensor]:
    """A tensor holding each outer value, to hand the loop or switch to ``bind``."""
    tracer = state.tracer
    reads: dict[Var, Tensor] = {}
    for t in traced:
        reads.update(t.reads)
    tensors = []
    for var in outer:
        tensor = reads.get(var)
        if tensor is None:  # a constant an op wrapper made inside (an array argument)
            tensor = _constant_tensor(tracer, var)
        tensors.append(tensor)
    return tensors


def _constant_tensor(tracer: Any, var: Var) -> Tensor:
    for kind in ("const", "capture", "var"):
        for v, ref in tracer.inputs[kind]:
            if v is var:
                tensor = ref if isinstance(ref, Tensor) else wrap(ref)
                tracer.env[tensor._id] = var
                return tensor
    raise NotCompilable


def close(t: Traced, outer: Sequence[Var]) -> Program:
    """The sub-program of ``t``: inputs its placeholders then one per outer value (in
    ``outer``'s order), every read of an outer value a read of its input."""
    inner = {v: Var(v.aval, v.hint) for v in outer}

    def sub(v: Any) -> Any:
        return inner.get(v, v) if isinstance(v, Var) else v

    eqns = [Eqn(e.prim, [sub(v) for v in e.inputs], e.outs, e.params, e.loc)
            for e in t.eqns]
    return Program(list(t.placeholders) + [inner[v] for v in outer], eqns,
                   [sub(v) for v in t.outputs])
