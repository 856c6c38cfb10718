"""Tracing a Python function into a forward Program, for ``@gt.function``.

The function runs once, eagerly, with a ``Tracer`` installed as ``state.tracer``. The
dispatcher hands the tracer every op (differentiable or not, watched by a tape or not)
and it writes one equation per op, so the Program is exactly what ran. What the tracer
also sees:

- variable reads: a variable's value when first read is a program input, read from the
  variable at call time; ``assign*`` calls become outputs, applied after the call;
- Python reading a tensor's value (``bool(t)``, ``float(t)``, ``int(t)``, ``t.numpy()``,
  ``np.asarray(t)``): a guard, the value observed now, checked on every later call;
- NumPy converting a tensor (``np.asarray(t)``, ``np.r_[t, t]``, SciPy): a ``Drop``
  (``drops.py``), told on each call whose tapes watch what the tensor is computed from;
- tensors created before the trace and used inside it (captures): inputs whose value
  is fixed at trace time; tensors made inside it without an op (``gt.constant``):
  constants.

Outer tapes and accumulators are hidden while tracing: the call is recorded by them as
one op afterwards. Variables assigned while tracing get their old values back at the end,
and random streams drawn from their old states: the compiled function then runs the call
for real.
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..ad.nested import backward_call_p
from ..core import nest
from ..core.errors import OperatorNotAllowedInGraphError
from ..core.state import location_from, state, user_location
from ..core.tensor import Tensor, _next_id, constant, wrap
from ..core.variable import Variable
from ..ir.nodes import Aval, Eqn, Literal, Program, Var
from ..ir.walk import keep_literal, walk
from .checkpoints import GuardCheck, guard_check_p
from .drops import Drop, computed_from
from .naming import copy_var, name_by_statements, name_inputs
from .trace_runs import record_values
from .variable_reads import check_assignable, strip_reads, variable_read_p  # noqa: F401

_PY_SCALARS = frozenset((bool, int, float, complex))
PYTHON_CALLS = frozenset(("py_function", "numpy_function"))  # ops with Python effects

# How a guard turns the value Python read back into what Python saw.
READERS: dict[str, Callable[[Any], Any]] = {
    "bool": bool, "int": int, "float": float, "complex": complex,
}


class Untraceable(NotImplementedError):
    """The function calls an op that cannot be part of a trace (one that runs Python
    code on every call, as a ``custom_gradient`` function does): it runs eagerly."""


class Guard(NamedTuple):
    """Python read ``value`` with ``kind`` (``"bool"``, ``"int"``, ``"float"``,
    ``"complex"`` or ``"array"``) and saw ``expected``; ``note`` says where, for the
    retracing warning (``read_note``)."""

    value: Var
    kind: str
    expected: Any
    note: str = ""


# How the retracing warning names a read, by the gradtape function Python called.
_READ_NAMES = {
    "__bool__": "bool(t)", "__float__": "float(t)", "__int__": "int(t)",
    "__index__": "int(t)", "__complex__": "complex(t)", "__array__": "np.asarray(t)",
    "numpy": "t.numpy()", "item": "t.item()", "tolist": "t.tolist()",
    # AutoGraph's statements (functions/autograph/runtime.py), where a cond or loop reads
    "if_stmt": "an if on a tensor", "while_stmt": "a while loop on a tensor",
    "for_stmt": "a for loop over a tensor", "if_exp": "an `a if c else b` on a tensor",
}


def _read_site() -> tuple[str, str]:
    """(what read a tensor's value, the user's ``file:line``): the outermost gradtape
    frame below the user's code is the read (``float(t)``) or the op that needed the
    value as a Python value (``pad`` for its widths)."""
    frame = sys._getframe(2)
    inner = None
    while frame is not None and location_from(frame) != _here(frame):
        inner, frame = frame, frame.f_back
    name = inner.f_code.co_name if inner is not None else "?"
    what = _READ_NAMES.get(name, f"gt.{name}(...) reading a tensor argument's value")
    if frame is None:
        return what, "an unknown line"
    return what, f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _here(frame: Any) -> tuple[str, int]:
    return (frame.f_code.co_filename, frame.f_lineno)


def guard_holds(kind: str, expected: Any, got: Any) -> bool:
    """Whether reading ``got`` as ``kind`` gives what the trace saw."""
    if kind == "array":
        got = np.asarray(got)
        if got.shape != expected.shape or got.dtype != expected.dtype:
            return False
        return bool(np.array_equal(got, expected, equal_nan=got.dtype.kind in "fc"))
    seen = READERS[kind](got)
    return seen == expected or (seen != seen and expected != expected)  # NaN == NaN here


class Source(NamedTuple):
    """Where a program input's value comes from at call time: ``kind`` is ``"arg"``
    (``ref`` = index among the tensor arguments), ``"var"`` (a Variable, read at call
    time), ``"capture"`` (a tensor from outside, value fixed) or ``"const"`` (an array)."""

    kind: str
    ref: Any


class TracedFunction(NamedTuple):
    """What one trace produced: the Program and how to feed and read it."""

    program: Program  # inputs: args, variables, captures, constants
    sources: list[Source]  # one per program input
    structure: Any  # the returned structure, leaves replaced by None
    # per returned leaf: ("out", i), ("static", value) or ("const", array): a tensor anew
    leaves: list[tuple[str, Any]]
    assigned: list[tuple[Variable, int]]  # variable, index of the output with its value
    guards: list[tuple[int, str, Any]]  # output index, kind, expected
    prints: list[Any] = []  # gt.print calls (printing.PrintRecord), in order
    guard_notes: list[str] = []  # per guard, what read the value where (Guard.note)
    drops: list[Drop] = []  # NumPy's conversions of tensors, told per call (drops.py)
    trace_values: dict = {}  # loops' and inner gradients' values (trace_runs.py)


def _aval(value: Any) -> Aval:
    dtype = getattr(value, "dtype", None)
    if not isinstance(dtype, np.dtype):
        value = np.asarray(value)
        dtype = value.dtype
    return Aval(tuple(np.shape(value)), dtype)


class Tracer:
    """Writes the Program of one call while the function runs (see the module doc)."""

    def __init__(self, name: str, start_id: int, first_trace: bool):
        self.name = name
        self.start_id = start_id  # tensors with a smaller id existed before the trace
        self.first_trace = first_trace
        self.eqns: list[Eqn] = []
        self.env: dict[int, Var] = {}  # tensor id -> its value in the program
        self.var_env: dict[tuple[int, int], Var] = {}  # (variable id, id(array)) -> value
        self.variables: dict[int, Variable] = {}
        self.var_initial: dict[int, Any] = {}  # variable id -> its array when first seen
        self.saved: dict[int, tuple[Any, int]] = {}  # variable id -> (array, version)
        self.assigned: dict[int, Variable] = {}  # in order of first assignment
        self.inputs: dict[str, list[tuple[Var, Any]]] = {
            "arg": [], "var": [], "capture": [], "const": []}
        self.fixed: set[Var] = set()  # captures and constants: values that never change
        self.traced_arrays: dict[int, tuple[Any, Var]] = {}  # id(array) -> (array, value)
        self.guards: list[Guard] = []
        self.guarded: set[tuple[Var, str]] = set()
        self.read_objects: dict[int, Any] = {}  # what Python got from a value read
        self.pinned: list[Any] = []  # arrays whose ids are keys above: kept alive
        self.prints: list[Any] = []  # gt.print calls (PrintRecord), printed at each call
        self.kept: list[Var] = []  # results of ops run for their effects (py_function)
        # Random streams drawn from: id(generator) -> [it, the state it gets back at
        # the end, the number of the draw that state follows (-1: none)].
        self.streams: dict[int, list[Any]] = {}
        self.draws: dict[Var, tuple[Any, Any, int]] = {}  # (generator, state after, number)
        self.drops: list[Drop] = []
        self.from_draws: set[Var] = set()  # values computed from a stateful random draw
        self.initializing = 0  # > 0 while a Variable's initial value is read
        self.branch_read = False  # True while gt.cond/while_loop reads its predicate
        self.checked = 0  # guards a guard_check equation checks before a Python call
        self.copied: set[Var] = set()  # outputs of an inner backward's equations

    # --- inputs -------------------------------------------------------------------------
    def add_arg(self, tensor: Tensor, index: int, hint: str) -> None:
        var = Var(_aval(tensor._value), hint)
        self.env[tensor._id] = var
        self.inputs["arg"].append((var, index))
        self._remember_array(tensor._value, var)

    def _input(self, kind: str, value: Any, ref: Any, hint: str) -> Var:
        var = Var(_aval(value), hint)
        self.inputs[kind].append((var, ref))
        if kind in ("capture", "const"):
            self.fixed.add(var)
        else:
            self._remember_array(value, var)
        return var

    def _remember_array(self, array: Any, var: Var) -> None:
        self.traced_arrays[id(array)] = (array, var)

    def _register(self, variable: Variable) -> None:
        if variable._id >= self.start_id and not self.first_trace:
            raise ValueError(
                f"@gt.function {self.name!r} created the variable {variable.name!r} while "
                "retracing. Like tf.function, gt.function only supports variables created "
                "on the first call (optimizer slots, lazily built layers): create the "
                "gt.Variable once, outside the function, and read or assign it inside."
            )
        self.variables[variable._id] = variable
        self.var_initial[variable._id] = variable._value
        self.pinned.append(variable._value)

    def value_of(self, tensor: Tensor) -> Var | Literal:
        """The program value of ``tensor`` (creating an input the first time it is seen)."""
        tid = tensor._id
        if tid not in self.variables and isinstance(tensor, Variable):
            self._register(tensor)
        if tid in self.variables:
            array = tensor._value
            var = self.var_env.get((tid, id(array)))
            if var is not None:
                return var
            if array is self.var_initial[tid]:
                variable = self.variables[tid]
                var = self._input("var", array, variable, variable._name)
                self.var_env[(tid, id(array))] = var
                return var
            raise RuntimeError(
                f"@gt.function {self.name!r}: variable {self.variables[tid].name!r} holds a "
                "value that was set without Variable.assign*, so it cannot be traced. "
                "Change variables only with assign, assign_add or assign_sub."
            )
        var = self.env.get(tid)
        if var is None:
            value = tensor._value
            hit = self.traced_arrays.get(id(value))
            if tid < self.start_id:
                _check_not_leaked(tensor, self.name)
                var = self._input("capture", value, tensor, "captured")
            elif hit is not None and hit[0] is value:
                var = hit[1]  # a new tensor around a traced array (tape internals do this)
            else:
                var = self._constant(value)
            self.env[tid] = var
        return var

    def _constant(self, value: Any) -> Var | Literal:
        """A value fixed at trace time: numeric scalars are written into the code (where
        passes can fold and deduplicate them), arrays are inputs fed at call time."""
        if np.ndim(value) == 0 and getattr(value, "dtype", None) is not None \
                and value.dtype.kind in "biufc":
            return Literal(value[()] if isinstance(value, np.ndarray) else value)
        # The value as it is now, as TF captures a NumPy array into the graph: a caller
        # writing into the array later changes neither the results nor the gradients.
        value = np.array(value, copy=True)
        return self._input("const", value, value, "c")

    def _raw(self, value: Any, reader: str) -> Var | Literal:
        """A non-tensor op input (an array an op wrapper made): a constant of the trace.

        If it is a traced tensor's array (or a view of one), the wrapper read that
        tensor's value directly: guard on the whole value so it is never stale."""
        array = value if isinstance(value, (np.ndarray, np.generic)) else np.asarray(value)
        base = array
        while base is not None:
            hit = self.traced_arrays.get(id(base))
            if hit is not None and hit[0] is base:
                if hit[1] in self.from_draws and not self.initializing:
                    raise _drawn_value_read(self.name, hit[1], f"the op `{reader}`",
                                            _location_text(user_location()),
                                            self._made_at(hit[1]))
                note = self._note(hit[1], f"the op `{reader}` (it took the array, not "
                                  "the tensor)", _location_text(user_location()))
                self._guard(hit[1], "array", np.array(base, copy=True), note)
                break
            base = base.base if isinstance(base, np.ndarray) else None
        return self._constant(array)

    # --- the hooks: ops, value reads, assignments ----------------------------------------
    # The observer protocol (core.state.Observer).
    def sees(self, tensor: Tensor) -> bool:
        """Whether ``tensor`` is a value of the program being traced."""
        return tensor._id in self.env

    def on_variable_read(self, variable: Any) -> None:
        """Nothing: a variable an op reads becomes an input there (``value_of``)."""

    def on_op(self, prim: Any, args: tuple, values: list, params: dict, result: Any,
              out: Any, shared: Any = None) -> Any:
        """Write the op into the trace (the tracer shares nothing: ``shared`` goes back)."""
        if not prim.cacheable:
            raise Untraceable(
                f"@gt.function {self.name!r} calls {prim.name!r}, which runs Python code at "
                f"every call (a custom_gradient or recompute_grad function) at "
                f"{_location_text(user_location())}: it cannot be traced, so the function "
                "runs its Python code eagerly on every call."
            )
        ins = []
        for a, v in zip(args, values):
            if isinstance(a, Tensor):
                ins.append(self.value_of(a))
            elif a.__class__ in _PY_SCALARS:
                ins.append(Literal(a))
            else:
                ins.append(self._raw(v, prim.name))
        results = result if prim.multiple_results else (result,)
        if prim is backward_call_p:
            self._inline_backward(params["inner"], ins, results)
            return shared
        outs = []
        for t in results:
            var = Var(_aval(t._value), prim.name)
            self.env[t._id] = var
            self._remember_array(t._value, var)
            outs.append(var)
        if prim.name in PYTHON_CALLS:
            self._check_guards_before_call()
        elif self.from_draws and any(v in self.from_draws for v in ins):
            self.from_draws.update(outs)  # a Python call's results are its own (replayed)
        self.eqns.append(Eqn(prim, ins, outs, params, user_location()))
        return shared

    def _check_guards_before_call(self) -> None:
        """Before a Python call: a ``guard_check`` of the guards read since the last, so
        a run that is not this path stops before the call has its effects."""
        new = self.guards[self.checked:]
        self.checked = len(self.guards)
        if not new:
            return
        check = GuardCheck([(self.checked - len(new) + k, g.kind, g.expected)
                            for k, g in enumerate(new)])
        token = Var(Aval((), np.dtype(bool)), "checked")
        self.eqns.append(Eqn(guard_check_p, [g.value for g in new], [token],
                             {"check": check}, user_location()))
        self.kept.append(token)

    def _inline_backward(self, inner: Any, ins: list, results: tuple) -> None:
        """An inner ``tape.gradient`` recorded as one ``backward_call`` (ad/nested.py): write
        its backward Program's equations into the trace instead, so the traced function
        compiles to one generated function with its gradient inline."""
        program = inner.program
        where = user_location()

        def copy(eqn: Eqn, args: list) -> Any:
            outs = [copy_var(o) for o in eqn.outs]  # with the tape's names (d_logits)
            self.copied.update(outs)
            # A backward equation's location is (forward op's location, op name).
            loc = eqn.loc[0] if isinstance(eqn.loc, tuple) and eqn.loc[0] else where
            self.eqns.append(Eqn(eqn.prim, args, outs, eqn.params, loc))
            return outs if eqn.prim.multiple_results else outs[0]

        env = walk(program, ins, copy, keep_literal)
        for t, i in zip(results, inner.outputs):
            out = program.outputs[i]
            var = env[out] if isinstance(out, Var) else self._constant(np.asarray(t._value))
            self.env[t._id] = var
            self._remember_array(t._value, var)
        record_values(self, [self.env[t._id] for t in results], [t._value for t in results],
                      program.eqns)  # the call right after the trace reuses them

    def keep(self, values: list[Var]) -> None:
        """Compute ``values`` on every call even if nothing uses them (py_function)."""
        self.kept += [v for v in values if isinstance(v, Var)]

    def traced_draw(self, generator: Any, before: Any, drawn: Var | Literal) -> None:
        """``drawn`` was drawn from ``generator`` (a NumPy one), whose state was
        ``before``. Tracing moves no stream, the calls do: the generator gets its state
        back when the trace ends (but see ``_keep_draws_read``)."""
        self.streams.setdefault(id(generator), [generator, before, -1])
        if isinstance(drawn, Var):
            self.draws[drawn] = (generator, generator.bit_generator.state, len(self.draws))
            self.from_draws.add(drawn)

    def _keep_draws_read(self, var: Var) -> None:
        """Python read ``var``'s value while tracing (a lazily built layer's variable
        initialized from ``gt.random``): the draws it comes from are drawn now, once,
        as TF runs a variable's initializer once, so their streams stay moved past them."""
        producers = {out: eqn for eqn in self.eqns for out in eqn.outs}
        stack, seen = [var], set()
        while stack:
            v = stack.pop()
            if not isinstance(v, Var) or v in seen:
                continue
            seen.add(v)
            if v in self.draws:
                generator, after, number = self.draws[v]
                entry = self.streams[id(generator)]
                if number > entry[2]:
                    entry[1:] = [after, number]
            eqn = producers.get(v)
            if eqn is not None:
                stack.extend(eqn.inputs)

    def on_read(self, tensor: Tensor, kind: str, result: Any) -> None:
        """Python read ``tensor``'s value as ``kind`` and got ``result``: a guard."""
        if not isinstance(result, (bool, int)):  # small ints and bools are shared objects
            self.read_objects[id(result)] = result
        var = self.value_of(tensor)
        if var in self.from_draws and not self.branch_read:
            if not self.initializing:
                raise _drawn_value_read(self.name, var, *_read_site(), self._made_at(var))
            self._keep_draws_read(var)  # a variable's initial value: drawn once
        if kind == "array":
            expected = np.array(tensor._value, copy=True)
        else:
            expected = READERS[kind](tensor._value)
        if not (isinstance(var, Literal) or var in self.fixed or (var, kind) in self.guarded):
            self._guard(var, kind, expected, self._note(var, *_read_site()))

    def on_conversion(self, tensor: Tensor, report: Any, watched: bool) -> None:
        """NumPy converted ``tensor`` (``Tensor.__array__``); ``watched``: by a tape opened
        inside the function. Kept for the calls that watch it (``drops.tell_drops``)."""
        inputs = computed_from(self.value_of(tensor), self.eqns, self.inputs)
        if watched or inputs:
            self.drops.append(Drop(report, watched, inputs))

    def _note(self, var: Var | Literal, what: str, where: str) -> str:
        """A guard's description: the read, the tensor read, the user's line."""
        if any(var is v for v, _ in self.inputs["arg"]):
            tensor = f"argument `{var.hint}`"
        elif any(var is v for v, _ in self.inputs["var"]):
            tensor = f"variable `{var.hint}`"
        elif isinstance(var, Var):
            tensor = f"the result of `{var.hint}`{self._made_at(var)}"
        else:
            tensor = "a constant"
        return f"{what} at {where} read the value of {tensor}"

    def symbolic_name(self, tensor: Tensor) -> str | None:
        """How ``repr`` shows ``tensor`` while tracing: a name without a value (as TF
        shows a graph tensor), since its value may differ on the calls that reuse the
        trace; ``None`` for a tensor made before the trace, whose value is fixed."""
        if tensor._id < self.start_id and not isinstance(tensor, Variable):
            return None
        var = self.env.get(tensor._id)
        return var.hint if isinstance(var, Var) else "const"  # made inside, no op yet

    def printed_value(self, tensor: Tensor) -> Var | str:
        """What ``gt.print`` prints for ``tensor`` on each call: its program value, or
        its text if the value is written into the code."""
        var = self.value_of(tensor)
        if isinstance(var, Literal):
            from .printing import format_value

            return format_value(var.value)
        return var

    def _made_at(self, var: Var) -> str:
        """`` (made at file:line)`` for the op whose result is ``var``, if known."""
        for eqn in reversed(self.eqns):
            if any(out is var for out in eqn.outs):
                loc = eqn.loc[0] if isinstance(eqn.loc, tuple) and \
                    isinstance(eqn.loc[0], tuple) else eqn.loc
                return f" (made at {_location_text(loc)})" if loc else ""
        return ""

    def _guard(self, var: Var, kind: str, expected: Any, note: str = "") -> None:
        if isinstance(var, Literal) or var in self.fixed or (var, kind) in self.guarded:
            return  # a fixed value, or read before: the same var always has one value
        self.guarded.add((var, kind))
        self.guards.append(Guard(var, kind, expected, note))

    def assign(self, variable: Variable, kind: str, value: Any, read_value: bool) -> Any:
        """``variable.assign*(value)`` while tracing: computed with traced ops, so the new
        value is a program value, then set on the variable (restored after the trace)."""
        from ..ops import add, subtract

        if isinstance(value, Tensor):
            check_assignable(variable, value)
            new = value
        else:
            new = wrap(variable._new_value(value))  # TF's conversion and checks
        tid = variable._id
        if tid not in self.variables:
            self._register(variable)
        if kind != "assign":
            # Not recorded by tapes (an eager assign_add is not); still traced.
            saved, state.recording = state.recording, []
            try:
                new = (add if kind == "assign_add" else subtract)(variable, new)
            finally:
                state.recording = saved
        var = self.value_of(new)
        # Later reads are reads of the variable: their value is the one assigned, their
        # gradient goes to the variable (as eagerly, where assign is not recorded).
        read = Var(_aval(new._value), variable._name)
        if var in self.from_draws:  # the variable now holds a drawn value
            self.from_draws.add(read)
        self.eqns.append(Eqn(variable_read_p, [var, self._initial_value(variable)], [read],
                             {}, user_location()))
        self.saved.setdefault(tid, (variable._value, variable._version))
        variable._set(new._value)
        self._remember_array(variable._value, read)
        self.var_env[(tid, id(variable._value))] = read
        self.assigned.setdefault(tid, variable)
        return variable if read_value else None

    def _initial_value(self, variable: Variable) -> Var:
        """The input holding ``variable``'s value at call time."""
        tid = variable._id
        initial = self.var_initial[tid]
        var = self.var_env.get((tid, id(initial)))
        if var is None:
            var = self._input("var", initial, variable, variable._name)
            self.var_env[(tid, id(initial))] = var
        return var

    def restore_variables(self) -> None:
        """Give assigned variables back the values they had before the trace, and random
        streams drawn from the states they had."""
        for tid, (array, version) in self.saved.items():
            variable = self.variables[tid]
            variable._value = array
            variable._version = version
        for generator, stream_state, _ in self.streams.values():
            generator.bit_generator.state = stream_state

    # --- the result ----------------------------------------------------------------------
    def finish(self, returned: Any) -> TracedFunction:
        outputs: list[Var] = []
        leaves: list[tuple[str, Any]] = []
        for leaf in nest.flatten(returned):
            if isinstance(leaf, Tensor):
                leaves.append(("out", len(outputs)))
                outputs.append(self.value_of(leaf))
            else:
                leaves.append(self._returned_constant(leaf))
        assigned = []
        for variable in self.assigned.values():
            assigned.append((variable, len(outputs)))
            outputs.append(self.value_of(variable))
        guards = []
        for g in self.guards:
            guards.append((len(outputs), g.kind, g.expected))
            outputs.append(g.value)
        for record in self.prints:  # printed on every call: outputs, never dead code
            record.indices = list(range(len(outputs), len(outputs) + len(record.values())))
            outputs += record.values()
        outputs += self.kept  # computed on every call even if unused: never dead code
        inputs, sources = [], []
        for kind in ("arg", "var", "capture", "const"):
            for var, ref in self.inputs[kind]:
                inputs.append(var)
                sources.append(Source(kind, ref))
        name_inputs(self.inputs)
        name_by_statements(self.eqns, self.copied)
        program = Program(inputs, self.eqns, outputs)
        structure = nest.map_structure(lambda _: None, returned)
        return TracedFunction(program, sources, structure, leaves, assigned, guards,
                              self.prints, [g.note for g in self.guards], self.drops,
                              self.__dict__.get("trace_values", {}))

    def _returned_constant(self, leaf: Any) -> tuple[str, Any]:
        """A returned leaf that is not a tensor, as TF's ``tf.function`` returns it:
        ``None`` and strings as they are, numbers and NumPy values as tensors (TF's
        dtypes: ``3`` is int32), anything else refused."""
        if leaf is None or isinstance(leaf, (str, bytes)):
            return ("static", leaf)
        if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
            self._check_static(leaf)
            return ("const", constant(leaf)._value)
        if inspect.isgenerator(leaf) or inspect.isasyncgen(leaf) or inspect.iscoroutine(leaf):
            _close(leaf)
            raise TypeError(
                f"@gt.function {self.name!r} returned a {type(leaf).__name__}: generator "
                "and async functions are not supported, since their body runs only when "
                "iterated or awaited, after the call. Return tensors instead (e.g. "
                "gt.stack of the values), or loop over the generator outside and decorate "
                "the computation done per item."
            )
        raise TypeError(
            f"@gt.function {self.name!r} returned a {type(leaf).__name__} ({leaf!r}). A "
            "traced function returns tensors, Python numbers (returned as tensors), "
            "strings or None, in lists, tuples and dicts: anything else would be the object "
            "made while tracing, returned again by every later call. Return its tensors."
        )

    def _check_static(self, leaf: Any) -> None:
        """A returned non-tensor must not come from a tensor's value."""
        derived = id(leaf) in self.read_objects and self.read_objects[id(leaf)] is leaf
        base = leaf
        while not derived and isinstance(base, np.ndarray):
            hit = self.traced_arrays.get(id(base)) or self.read_objects.get(id(base))
            derived = hit is not None
            base = base.base
        if derived:
            raise TypeError(
                f"@gt.function {self.name!r} returned a {type(leaf).__name__} computed from "
                f"a tensor's value ({leaf!r}). A traced function returns what its trace "
                "computed, so return the tensor itself (e.g. `return loss`, not "
                "`float(loss)` or `loss.numpy()`) and convert it after the call."
            )


def _close(returned: Any) -> None:
    """Close an unused generator or coroutine (no "never awaited" warning)."""
    close = getattr(returned, "close", None)
    if close is not None and not inspect.isasyncgen(returned):
        close()


def _drawn_value_read(name: str, var: Var, what: str, where: str, made: str) -> Exception:
    """Python read a value computed from a random draw while tracing: it differs on
    every call, so no trace (and no guard) can stand for it."""
    return OperatorNotAllowedInGraphError(
        f"@gt.function {name!r}: {what} at {where} reads the value of `{var.hint}`{made}, "
        "which is computed from a random draw (gt.random, a Generator, dropout): its value "
        "is new on every call, while Python runs only when the function traces. Keep it a "
        "tensor: branch with gt.cond(pred, true_fn, false_fn) or loop with "
        "gt.while_loop(cond, body, loop_vars) (or gt.where for values), and return tensors "
        "rather than Python numbers made from it.")


def _location_text(location: tuple[str, int] | None) -> str:
    return "an unknown line" if location is None else f"{location[0]}:{location[1]}"


def arg_hints(names: list[str], args: tuple, kwargs: dict) -> list[str]:
    """A readable name for each flattened leaf of ``(args, kwargs)``: the parameter's
    name, with ``_<i>`` for leaves of a nested structure."""
    hints = []
    tops = [(names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)]
    tops += [(k, kwargs[k]) for k in sorted(kwargs)]
    for name, value in tops:
        flat = nest.flatten(value)
        if len(flat) == 1 and flat[0] is value:
            hints.append(name)
        else:
            hints += [f"{name}_{j}" for j in range(len(flat))]
    return hints


# Id ranges [first, end) of the tensors made by recent traces: such a tensor reaching a
# later trace was leaked out of its function (stored in a global or an attribute).
_FINISHED_TRACES: collections.deque = collections.deque(maxlen=256)
# Id ranges of the tensors made in ``init_scope`` blocks while tracing: eager tensors.
_EAGER_RANGES: collections.deque = collections.deque(maxlen=256)


def _in_ranges(tid: int, ranges: collections.deque) -> bool:
    return any(first <= tid < end for first, end in ranges)


def _check_not_leaked(tensor: Tensor, name: str) -> None:
    tid = tensor._id
    if _in_ranges(tid, _FINISHED_TRACES) and not _in_ranges(tid, _EAGER_RANGES):
        raise TypeError(
            f"{tensor!r} is out of scope and cannot be used here: it was made while "
            f"another gt.function traced, and @gt.function {name!r} captures it. Use "
            "the function's return values (or a gt.Variable it assigns) to get "
            "tensors out of a function, as in TF.")


@contextlib.contextmanager
def init_scope() -> Any:
    """TF's ``tf.init_scope()``: inside a ``@gt.function`` trace, run the block eagerly,
    once, at trace time (its ops are not part of the trace); tapes are paused."""
    saved = state.recording, state.accumulators, state.tracer
    state.recording, state.accumulators, state.tracer = [], [], None
    first = _next_id()
    try:
        yield
    finally:
        state.recording, state.accumulators, state.tracer = saved
        if saved[2] is not None:
            _EAGER_RANGES.append((first, _next_id()))


def trace(function: Callable[..., Any], name: str, args: tuple, kwargs: dict,
          hints: list[str], first_trace: bool) -> TracedFunction:
    """Run ``function(*args, **kwargs)`` once under a tracer; its Program and how to use
    it. Tensor and array arguments enter as fresh tensors (program inputs), variables as
    themselves, anything else as is."""
    start_id = _next_id()
    tracer = Tracer(name, start_id, first_trace)
    flat = nest.flatten((args, kwargs))
    fresh = []
    index = 0
    for leaf, hint in zip(flat, hints):
        if isinstance(leaf, Variable):
            fresh.append(leaf)
        elif isinstance(leaf, (Tensor, np.ndarray, np.generic)):
            value = leaf._value if isinstance(leaf, Tensor) else np.array(leaf)
            tensor = wrap(value)
            tracer.add_arg(tensor, index, hint)
            index += 1
            fresh.append(tensor)
        else:
            fresh.append(leaf)
    new_args, new_kwargs = nest.pack_sequence_as((args, kwargs), fresh)
    saved = state.recording, state.accumulators, state.tracer
    state.recording, state.accumulators, state.tracer = [], [], tracer
    try:
        returned = function(*new_args, **new_kwargs)
        return tracer.finish(returned)
    finally:
        state.recording, state.accumulators, state.tracer = saved
        tracer.restore_variables()
        _FINISHED_TRACES.append((start_id, _next_id()))
