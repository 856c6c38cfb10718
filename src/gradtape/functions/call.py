"""One trace of a ``@gt.function``: its compiled forward code, and the op a tape records.

A ``ConcreteFunction`` runs its Program as one generated function on arrays: inputs are
the tensor arguments, the variables it reads (their values at call time), captured
tensors and constants; outputs are the returned tensors, the new values of assigned
variables, then the guarded values. The caller checks the guards, then applies the
assignments.

Under a recording tape or forward accumulator the call is recorded as ONE
``function_call`` op. Its forward also returns the intermediates the backward needs
(residuals); its VJP rule emits the optimized backward Program of the function, equation
by equation, onto the rule's inputs, so the tape's backward compiles with it inlined and
can be differentiated again. Its JVP rule pushes tangents through the Program with a
``ForwardAccumulator``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ad import nested
from ..compiler.build import differentiate, run_passes
from ..compiler.runner import CompiledRunner
from ..core import nest
from ..core.config import options
from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, constant, wrap
from ..core.variable import Variable
from ..ir import builder, interpreter
from ..ir.lower import RECORDED_INPUT, RECORDED_OUTPUT, SEED, Feed
from ..ir.nodes import Eqn, Literal, Program, Var
from ..ir.printer import format_program
from ..ir.walk import keep_literal, walk
from ..ops import random
from ..ops.registry import Primitive, bind
from . import signature
from .drops import tell_drops
from .printing import discard_waiting_lines, hold_lines
from .py_function import one_run_per_call, start_try
from .spec import TensorSpec
from .trace import PYTHON_CALLS, TracedFunction, guard_holds, strip_reads
from .trace_runs import runs_anew, without_traced_values

# Called with every compiled forward (``gradtape inspect`` collects them).
compile_listeners: list[Callable[[Any], None]] = []


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


def _for_codegen(program: Program) -> Program:
    """Equation locations as the code generator reads them: ``((file, line), op)``."""
    eqns = [Eqn(e.prim, e.inputs, e.outs, e.params, (e.loc, e.prim.name))
            for e in program.eqns]
    return Program(program.inputs, eqns, program.outputs)


class _Compiled(CompiledRunner):
    """A traced Program and the generated function that runs it (the interpreter if
    there is none, when compilation is off or failed). Compiled at once, or on the first
    call with compilation on if traced while it was off."""

    __slots__ = ("title",)

    what = "a traced function"
    kind = "forward"
    listeners = compile_listeners

    def __init__(self, program: Program, title: str):
        super().__init__(program)
        self.title = title
        if options.compile:
            self._maybe_compile()

    def _maybe_compile(self) -> Any:
        if self.failed:
            return None
        return self.compile(_for_codegen(self.program), self.title)

    __call__ = CompiledRunner.run  # the per-call hot path: no extra call

    def try_run(self, args: Sequence[Any]) -> Sequence[Any] | None:
        """``run``, but ``None`` where it raises, without falling back to the interpreter
        (which would take the generated code for wrong): the caller tries another trace."""
        compiled = self.compiled
        if options.compile and compiled is None:
            compiled = self._maybe_compile()
        try:
            if compiled is not None and options.compile:
                return compiled.function(*args)
            return interpreter.run(self.program, args)
        except Exception:  # the caller traces again, raising it if real
            return None

    @property
    def source(self) -> str:
        if self.compiled is not None:
            return self.compiled.source
        from ..codegen import generate_source

        return generate_source(_for_codegen(self.program), kind="forward", title=self.title)[0]


class _Gradient:
    """The call op's derivative: the forward with residual outputs, and optimized
    backward Programs (one per set of outputs a cotangent reaches), each with, per
    input, where its value comes from."""

    def __init__(self, concrete: ConcreteFunction):
        forward = concrete.program
        self.name = concrete.__name__
        self.inputs = forward.inputs
        self.in_index = {v: i for i, v in enumerate(forward.inputs)}
        self.wrt = [i for i, (v, s) in enumerate(zip(forward.inputs, concrete.sources))
                    if s.kind != "const" and _is_float(v.dtype)]
        extras: list[Var] = []
        # Residuals are returned by the forward. Their own cotangents (second order)
        # may need more of them: repeat until the backward reads nothing else.
        for _ in range(len(forward.eqns) + 1):
            self.full = Program(forward.inputs, forward.eqns, list(forward.outputs) + extras)
            self.differentiable = tuple(j for j, o in enumerate(self.full.outputs)
                                        if isinstance(o, Var) and _is_float(o.dtype))
            built = self._build(self.differentiable)
            if isinstance(built, list):
                extras += built
                continue
            break
        self.backwards: dict[tuple[int, ...], tuple[Program, list]] = {
            self.differentiable: built}
        self.residual_forward = _Compiled(
            strip_reads(self.full),
            f"@gt.function {self.name!r}, also returning what its backward reads.")
        self.avals = [o.aval for o in self.full.outputs]

    @property
    def program(self) -> Program:
        """The backward for cotangents on every output."""
        return self.backwards[self.differentiable][0]

    def _build(self, connected: tuple[int, ...]) -> tuple[Program, list] | list[Var]:
        """The optimized backward for cotangents on the outputs ``connected`` and its
        feeds; or the forward values it reads that are neither inputs nor outputs."""
        full = self.full
        seeds: list[Var | None] = [None] * len(full.outputs)
        for j in connected:
            seeds[j] = Var(full.outputs[j].aval, "seed")
        optimized = differentiate(full, [self.inputs[i] for i in self.wrt], seeds)
        out_index: dict[Var, int] = {}
        for j, o in enumerate(full.outputs):
            if isinstance(o, Var):
                out_index.setdefault(o, j)
        seed_index = {v: j for j, v in enumerate(seeds) if v is not None}
        # Feeds of the one call op: its input or output at ``position``, or a cotangent.
        feeds: list[Feed] = []
        missing = []
        for v in optimized.inputs:
            if v in seed_index:
                feeds.append(Feed(SEED, seed_index[v]))
            elif v in self.in_index:
                feeds.append(Feed(RECORDED_INPUT, 0, self.in_index[v]))
            elif v in out_index:
                feeds.append(Feed(RECORDED_OUTPUT, 0, out_index[v]))
            else:
                missing.append(v)
        return missing if missing else (optimized, feeds)

    def backward(self, connected: tuple[int, ...]) -> tuple[Program, list]:
        found = self.backwards.get(connected)
        if found is None:
            built = self._build(connected)
            # Residuals were chosen for cotangents on every output; a backward that reads
            # others (not seen so far) takes the one for every output, zeros included.
            found = self.backwards[self.differentiable] if isinstance(built, list) else built
            self.backwards[connected] = found
        return found

    def vjp(self, g: tuple, y: tuple, inputs: tuple) -> tuple:
        """Emit the backward onto ``inputs``/``y``/``g`` (IR values): one cotangent or
        ``None`` per input of the call (``None`` where no cotangent reaches it, as TF)."""
        b = builder._builders.stack[-1]
        # Autodiff fills the outputs no cotangent reached with zeros_like, emitted just
        # before this rule runs: leave them out of the backward.
        zeros = {e.outs[0] for e in b.eqns[max(0, len(b.eqns) - len(g)):]
                 if e.prim.name == "zeros_like"}
        connected = tuple(j for j in self.differentiable if g[j] not in zeros)
        if not connected:
            return (None,) * len(inputs)
        program, feeds = self.backward(connected)
        args = [g[f.index] if f.kind == SEED else
                inputs[f.position] if f.kind == RECORDED_INPUT else y[f.position]
                for f in feeds]
        saved_loc = b.loc

        def emit(eqn: Eqn, ins: list) -> Any:
            # The traced function's own lines, as the tape's generated code shows them.
            b.loc = eqn.loc if eqn.loc is not None else saved_loc
            return builder.emit(eqn.prim, ins, eqn.params)

        try:
            env = walk(program, args, emit, keep_literal)
        finally:
            b.loc = saved_loc
        grads: list[Any] = [None] * len(inputs)
        for i, out in zip(self.wrt, program.outputs):
            if isinstance(out, Literal):
                from ..ops.shape import broadcast_to

                out = broadcast_to(Literal(out.value), inputs[i].aval.shape)
            elif out is not None:
                out = env[out]
            grads[i] = out
        return tuple(grads)


class ConcreteFunction:
    """One trace of a ``@gt.function`` for one signature and one set of guard outcomes.

    Attributes:
        forward_ir: the traced Program (after the optimization passes), as text.
        source: the generated forward function.
        backward_ir / backward_source: the function's backward, which a tape's gradient
            through a call inlines (built on first use).
    """

    def __init__(self, name: str, traced: TracedFunction):
        self.__name__ = name
        self.traced_program = traced.program
        self.program = run_passes(traced.program, "a traced function")
        self.sources = traced.sources
        self.variables = [s.ref for s in traced.sources if s.kind == "var"]
        captures = [s.ref for s in traced.sources if s.kind == "capture"]
        constants = [s.ref for s in traced.sources if s.kind == "const"]
        self.fixed_values = [t._value for t in captures] + constants
        self.fixed_inputs = captures + constants  # what a recorded call gets: tapes see these
        self._args_only = not self.variables and not self.fixed_values
        self.streams = random.streams_of(self.program.eqns)  # what its random ops draw from
        self.structure = traced.structure
        self.leaves = traced.leaves
        self.assigned = traced.assigned
        self.guards = traced.guards
        self.guard_notes = traced.guard_notes
        # It calls Python (py_function): each call's Python calls run once (api.py).
        self.calls_python = any(e.prim.name in PYTHON_CALLS for e in self.program.eqns)
        self.signature: tuple[Any, dict[str, str]] = ((), {})  # set by the Function
        self.prints = traced.prints
        self.drops = traced.drops  # NumPy's conversions: told by each call that watches
        self._pack = _packer(traced.structure, traced.leaves)
        self.forward = _Compiled(strip_reads(self.program), f"@gt.function {name!r}.")
        # Nothing to do around the run but wrap its outputs (``run_plain``): no guards to
        # check, no lines to print, no drops to tell, no variables to assign.
        self.plain = not (self.guards or self.prints or self.drops or self.assigned)
        self._gradient: _Gradient | None = None
        self._lock = threading.Lock()
        # The values of the loops tracing ran, for the call right after it (``run_after_trace``).
        self._trace_runs = traced.trace_values or None
        # Called with the argument tensors when a direct call cannot run this trace (its
        # guards fail, or another function is tracing): the Function's own call.
        self.fallback: Callable[..., Any] | None = None
        # The traced call as TF describes it (set by the Function with describe_call).
        self.parameters: list[Any] = []
        self.structured_input_signature: tuple[tuple, dict] = ((), {})
        self.serial = 0  # order of tracing, for pretty_printed_concrete_signatures

    def __repr__(self) -> str:
        return (f"<ConcreteFunction {self.__name__}: {len(self.program.inputs)} inputs, "
                f"{len(self.program.eqns)} equations, {len(self.guards)} guards>")

    def __str__(self) -> str:
        return "ConcreteFunction " + self.pretty_printed_signature()

    # --- the signature, as TF describes it ------------------------------------------------
    def describe_call(self, parameters: list[Any], args: tuple, kwargs: dict) -> None:
        """Remember the traced call's parameters and arguments (TF's signature)."""
        self.parameters = parameters
        bound = signature.bind_arguments(parameters, args, kwargs)
        self.structured_input_signature = signature.structured_input_signature(
            parameters, *bound)

    @property
    def structured_outputs(self) -> Any:
        """The returned structure, symbolic tensors at its tensors (TF's)."""
        avals = [o.aval for o in self.program.outputs]
        return signature.symbolic_outputs(self.structure, self.leaves, avals)

    @property
    def inputs(self) -> list[signature.SymbolicTensor]:
        """The graph's inputs: the tensor arguments, then variables and captures."""
        return [signature.SymbolicTensor(f"{v.hint}:0", v.aval.shape, v.aval.dtype)
                for v in self.program.inputs]

    @property
    def outputs(self) -> list[signature.SymbolicTensor]:
        """The returned tensors, flattened."""
        return [o for o in nest.flatten(self.structured_outputs)
                if isinstance(o, signature.SymbolicTensor)]

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """TF's text: input parameters, output type, captures."""
        del verbose
        avals = [v.aval for v in self.program.inputs]
        captures = signature.capture_lines(self.sources, avals)
        return signature.pretty_signature(self.parameters, self.structured_input_signature,
                                          self.structured_outputs, captures)

    def release(self) -> None:
        """Called when its ``Function`` drops this trace: forget the generated sources
        in ``linecache`` now, even if a tape or the compile cache still holds the trace
        (it still runs; tracebacks then show no source lines)."""
        self.forward.release()
        if self._gradient is not None:
            self._gradient.residual_forward.release()

    # --- calling it directly (TF's ``ConcreteFunction.__call__``) ---------------------
    @property
    def arg_avals(self) -> list[Any]:
        """Shape and dtype of each tensor argument, in the order a call takes them."""
        refs = sorted((s.ref, v.aval) for v, s in zip(self.program.inputs, self.sources)
                      if s.kind == "arg")
        return [aval for _, aval in refs]

    def __call__(self, *tensors: Any, **keywords: Any) -> Any:
        """Run this trace on the tensor arguments (positional, in the order of the
        traced call, or by parameter name; other arguments are fixed by the trace).
        Raises ``TypeError`` for a wrong number of tensors, a shape other than traced or
        a Python argument other than traced; ``InvalidArgumentError`` for another dtype.
        Nested arguments (as the traced call's, e.g. a dict of tensors) are flattened
        first; variables the trace was made with may be passed again (TF's calls do)."""
        if keywords:
            tensors = self._bind_keywords(tensors, keywords)
        if any(isinstance(t, Variable) for t in tensors) and \
                len(tensors) != len(self.arg_avals):
            tensors = tuple(t for t in tensors if not isinstance(t, Variable))
        if any(isinstance(t, (list, tuple, dict)) for t in tensors):
            flat = nest.flatten(tensors)
            if len(flat) == len(self.arg_avals):
                tensors = tuple(flat)
        values = self._call_values(tensors)
        if state.tracer is not None:
            return self._fall_back(tensors)
        taping = bool(state.recording or state.accumulators)
        if not self.guards:
            return self.finish(self.execute(values, taping), list(tensors), values, taping)
        with one_run_per_call():  # the fall back replays this run's Python calls
            outs = self.try_execute(values, taping)  # gives back its draws if not its call
            if outs is not None and self.guards_hold(outs):
                return self.finish(outs, list(tensors), values, taping)
            start_try()
            return self._fall_back(tensors)

    def _fall_back(self, tensors: tuple) -> Any:
        if self.fallback is None:
            raise RuntimeError(
                f"ConcreteFunction {self.__name__!r} cannot run here (a value its Python "
                "code branched on differs, or another function is tracing): call the "
                "gt.function itself.")
        return self.fallback(tensors)

    def _bind_keywords(self, tensors: tuple, keywords: dict) -> tuple:
        """Keyword arguments placed by parameter name; a Python argument must have its
        traced value (TF raises ``TypeError``)."""
        args, _ = self.structured_input_signature
        names = [p.name for p in self.parameters]
        bound = list(tensors)
        for i in range(len(tensors), len(args)):
            name = names[i] if i < len(names) else None
            if name in keywords:
                bound.append(keywords.pop(name))
            elif not isinstance(args[i], TensorSpec):
                bound.append(args[i])
        for name, value in keywords.items():
            raise TypeError(
                f"ConcreteFunction {self.__name__}{tuple(names)} got the argument "
                f"{name}={value!r}, which it was not traced with: a concrete function "
                "takes the tensors it was traced with; call the gt.function itself to "
                "trace for other Python values.")
        for i, value in enumerate(bound):
            traced = args[i] if i < len(args) else None
            if not isinstance(traced, TensorSpec) and not isinstance(value, Variable) \
                    and value is not traced and value != traced:
                raise TypeError(
                    f"ConcreteFunction {self.__name__!r} was traced with {traced!r} for "
                    f"{names[i] if i < len(names) else i}, but was called with "
                    f"{value!r}: call the gt.function itself to trace for it.")
        return tuple(v for v, t in zip(bound, args) if isinstance(t, TensorSpec))

    def _call_values(self, tensors: tuple) -> list[Any]:
        avals = self.arg_avals
        if len(tensors) != len(avals):
            raise TypeError(
                f"ConcreteFunction {self.__name__!r} takes {len(avals)} positional tensor "
                f"argument(s) (the tensors it was traced with), got {len(tensors)}.")
        values = []
        for i, (x, aval) in enumerate(zip(tensors, avals)):
            if isinstance(x, Tensor):
                value = x._value
            elif isinstance(x, (np.ndarray, np.generic)):
                value = np.array(x)
            else:
                value = constant(x, dtype=aval.dtype)._value
            if value.dtype != aval.dtype:  # TF's kernel check: InvalidArgumentError
                raise InvalidArgumentError(
                    f"cannot compute ConcreteFunction {self.__name__!r}: input #{i} "
                    f"(zero-based) was expected to be a {aval.dtype.name} tensor but is a "
                    f"{value.dtype.name} tensor. Cast it (gt.cast) or call the gt.function "
                    "itself (it traces new dtypes).")
            if value.shape != aval.shape:
                raise TypeError(
                    f"ConcreteFunction {self.__name__!r}: argument {i} has shape "
                    f"{tuple(value.shape)} and dtype {value.dtype.name}, but it was traced "
                    f"for shape {tuple(aval.shape)} and dtype {aval.dtype.name}. Pass a "
                    "tensor like the traced one, or call the gt.function itself (it traces "
                    "new shapes).")
            values.append(value)
        return values

    # --- running ------------------------------------------------------------------------
    def gradient(self) -> _Gradient:
        if self._gradient is None:
            with self._lock:
                if self._gradient is None:
                    self._gradient = _Gradient(self)
        return self._gradient

    def execute(self, values: list[Any], taping: bool) -> Sequence[Any]:
        """Run on the argument arrays; with ``taping``, residuals come out too."""
        if self._args_only:
            arrays = values
        else:
            arrays = values + [v._value for v in self.variables] + self.fixed_values
        try:  # free until it raises
            if taping:
                return self.gradient().residual_forward(arrays)
            return self.forward(arrays)
        except Exception:
            if self.prints:
                discard_waiting_lines()
            raise

    def run_plain(self, values: list[Any]) -> Any:
        """``finish(execute(values, False), ...)`` of a ``plain`` trace, off the tapes: the
        warm call's path (the runner's method called directly, not through ``__call__``)."""
        arrays = values if self._args_only else \
            values + [v._value for v in self.variables] + self.fixed_values
        return self._pack(self.forward.run(arrays), wrap)

    def try_execute(self, values: list[Any], taping: bool,
                    probe: bool = False) -> Sequence[Any] | None:
        """``execute``, or ``None`` if the trace raised on these values. For a trace with
        guards: a guarded count (a boolean mask's) fixed shapes that may no longer fit.
        A run that is not the call (its guards fail, or ``probe``: only to find the
        trace) gives its random streams back the states they had."""
        if self._args_only:
            arrays = values
        else:
            arrays = values + [v._value for v in self.variables] + self.fixed_values
        runner = self.gradient().residual_forward if taping else self.forward
        if self.prints:  # its loops' lines wait until the run is known to be the call
            hold_lines(True)
        try:
            if not self.streams:
                outs = runner.try_run(arrays)
            else:
                before = random.stream_states(self.streams)
                outs = runner.try_run(arrays)
                if probe or outs is None or not self.guards_hold(outs):
                    random.rewind(before)
        finally:
            if self.prints:
                hold_lines(False)
        if self.prints and (probe or outs is None or not self.guards_hold(outs)):
            discard_waiting_lines()  # not the call: none of its lines print
        return outs

    def run_after_trace(self, values: list[Any], taping: bool) -> Sequence[Any] | None:
        """The call right after tracing, taking the values of the loops (and inner
        gradients) the trace ran instead of running them again (``trace_runs.py``);
        ``None`` (run as usual) when it ran none, or this run could differ from the
        trace's: a random draw or a Python call in the function. Only once: the arrays
        are let go."""
        runs, self._trace_runs = self._trace_runs, None
        if runs is None or self.calls_python:
            return None
        runner = self.gradient().residual_forward if taping else self.forward
        if runs_anew(runner.program.eqns):  # a draw or a print runs each call: run as usual
            return None
        reduced = without_traced_values(runner.program, runs)
        if reduced is None:
            return None
        program, traced = reduced
        arrays = values if self._args_only else \
            values + [v._value for v in self.variables] + self.fixed_values
        try:
            return interpreter.run(program, arrays + traced)
        except Exception:  # the usual run raises it, as every call would
            return None

    def forget_trace_runs(self) -> None:
        """Let go of the loops' arrays when the trace is not run now."""
        self._trace_runs = None

    def guards_hold(self, outs: Sequence[Any]) -> bool:
        for index, kind, expected in self.guards:
            if not guard_holds(kind, expected, outs[index]):
                return False
        return True

    def finish(self, outs: Sequence[Any], leaves: list[Any], values: list[Any],
               taping: bool) -> Any:
        """The call's result from the outputs: record the call on the tapes (if
        ``taping``), apply the assignments, rebuild the returned structure. ``leaves``
        are the tensor arguments, ``values`` their arrays."""
        if self.drops:  # as eagerly: warn or raise where NumPy dropped a watched gradient
            tell_drops(self.drops, leaves)
        if self.prints:  # gt.print inside: on every call
            for record in self.prints:
                record.emit(outs)
        if taping:
            # The tapes see the caller's tensors; arrays enter as the copies made of them.
            inputs = [x if isinstance(x, Tensor) else v for x, v in zip(leaves, values)]
            inputs += self.variables + self.fixed_inputs
            _pending.value = (self, outs)
            try:
                outs = bind(function_call_p, *inputs, fn=self)
            finally:
                _pending.value = None
            for variable, index in self.assigned:
                variable._set(outs[index]._value)
            return self._pack(outs, _same)
        if self.assigned:
            if state.recording:
                for variable, index in self.assigned:
                    variable._set(outs[index])
            else:  # Variable._set without the tapes to tell: the step's hot path
                for variable, index in self.assigned:
                    value = outs[index]
                    variable._value = value if value.__class__ is np.ndarray \
                        else np.asarray(value)
                    variable._version += 1
        return self._pack(outs, wrap)

    # --- inspection ---------------------------------------------------------------------
    @property
    def forward_ir(self) -> str:
        return format_program(self.program)

    @property
    def source(self) -> str:
        return self.forward.source

    @property
    def backward_ir(self) -> str:
        return format_program(self.gradient().program)

    @property
    def backward_source(self) -> str:
        from ..codegen import generate_source

        return generate_source(self.gradient().program)[0]


def _same(x: Any) -> Any:
    return x


def _packer(structure: Any, leaves: list[tuple[str, Any]]) -> Callable[..., Any]:
    """``pack(outs, make)``: the returned structure, ``make(outs[i])`` at tensor leaves,
    a new tensor at each returned constant (a number). The common shapes (one tensor,
    a flat tuple of tensors) skip ``nest``."""
    if structure is None and leaves[0][0] == "out":
        index = leaves[0][1]
        return lambda outs, make: make(outs[index])
    if type(structure) is tuple and all(kind == "out" for kind, _ in leaves) and \
            len(leaves) == len(structure) and all(s is None for s in structure):
        indices = [ref for _, ref in leaves]
        return lambda outs, make: tuple([make(outs[i]) for i in indices])

    def pack(outs: Sequence[Any], make: Callable[[Any], Any]) -> Any:
        flat = [make(outs[ref]) if kind == "out" else wrap(ref) if kind == "const" else ref
                for kind, ref in leaves]
        return nest.pack_sequence_as(structure, flat)

    return pack


# --- the op a tape records --------------------------------------------------------------

class _Pending(threading.local):
    value: Any = None


# The outputs of the call being recorded, computed (and guard-checked) before ``bind``.
_pending = _Pending()


def _call_impl(*arrays: Any, fn: ConcreteFunction) -> Sequence[Any]:
    pending = _pending.value
    if pending is not None and pending[0] is fn:
        _pending.value = None
        return pending[1]
    return fn.gradient().residual_forward(list(arrays))


def _call_vjp(g: tuple, y: tuple, *inputs: Any, fn: ConcreteFunction) -> tuple:
    return fn.gradient().vjp(g, y, inputs)


def _call_jvp(tangents: tuple, y: tuple, *inputs: Any, fn: ConcreteFunction) -> tuple:
    """Tangents of every output: the Program rerun op by op under a ForwardAccumulator
    (outer tapes record it, so forward-over-reverse works too)."""
    from ..ad.forward_mode import ForwardAccumulator
    from ..ops import identity

    if any(not isinstance(x, (Tensor, np.ndarray, np.generic)) for x in inputs):
        raise NotImplementedError(
            f"The JVP of @gt.function {fn.__name__!r} runs on tensors; it cannot be traced "
            "into a program."
        )
    program, drawn = _draws_as_inputs(fn.gradient().full)
    inputs = inputs + tuple(y[j] for j in drawn)
    tangents = tangents + (None,) * len(drawn)
    args, primals, tangent_list = [], [], []
    for x, t in zip(inputs, tangents):
        if not isinstance(x, Tensor):
            x = wrap(np.asarray(x))
        if t is not None:
            x = identity(x)  # a primal of its own, even if the same tensor is passed twice
            primals.append(x)
            tangent_list.append(t)
        args.append(x)
    with ForwardAccumulator(primals, tangent_list) as acc:
        outs = nested.run_recorded(program, args)
    return tuple(acc.jvp(o) if isinstance(o, Tensor) else None for o in outs)


def _draws_as_inputs(program: Program) -> tuple[Program, list[int]]:
    """``program`` with its random draws turned into inputs (after the others), and the
    index of the output holding each: rerun on the call's outputs, it uses the values
    the call drew instead of drawing others. A draw is always an output (the tracer
    keeps it), and constant (no tangent)."""
    position = {o: j for j, o in reversed(list(enumerate(program.outputs)))
                if isinstance(o, Var)}
    eqns, draws = [], []
    for eqn in program.eqns:
        if eqn.prim is random.random_draw_p and eqn.outs[0] in position:
            draws.append(eqn.outs[0])
        else:
            eqns.append(eqn)
    if not draws:
        return program, []
    replayed = Program(list(program.inputs) + draws, eqns, program.outputs)
    return replayed, [position[v] for v in draws]


function_call_p = Primitive(
    "function_call", _call_impl, vjp=_call_vjp, jvp=_call_jvp,
    kind_neutral=True,
    shape_rule=lambda *inputs, fn: list(fn.gradient().avals),
    multiple_results=True,
)
