"""``@gt.function``: trace a Python function once per signature, then run compiled code.

    @gt.function
    def train_step(x, y):
        with gt.GradientTape() as tape:
            loss = loss_fn(model(x), y)
        grads = tape.gradient(loss, model.variables)
        optimizer.apply_gradients(zip(grads, model.variables))
        return loss

The first call with a new signature traces the function (``functions/trace.py``) into a
forward Program and compiles it (``functions/call.py``); later calls with that signature
run the generated function on the arrays: no per-op dispatch, no recording.

The signature is what a trace depends on besides tensor values: the structure of the
arguments, the shape and dtype of each tensor (and NumPy array), the value of every other
argument (it must be hashable), the identity of each variable passed or captured. Python
control flow runs at trace time; where it read a tensor's value (``if x > 0``,
``float(t)``, ``t.numpy()``) the trace keeps a guard, and a call whose guards come out
differently traces again. Several traces per signature are kept, one per set of outcomes.
Integer tensors used as indices or labels are inputs of the ops, never guards; a boolean
mask guards on its count of True only. When calls keep tracing, the warning names the
argument or the read that made each trace (``functions/retrace.py``).

A function keeps at most ``max_traces`` traces (``gt.function(..., max_traces=n)``, else
``gt.config(max_traces=...)``, 128 by default), dropping the least recently used: a
function called with ever new shapes would otherwise keep every trace and its generated
source without end. A dropped trace's signature traces again if it comes back.
"""

from __future__ import annotations

import collections
import functools
import logging
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..codegen.naming import comment_text
from ..core import config as _config
from ..core import nest
from ..core.config import options
from ..core.state import state
from ..core.tensor import Tensor, _next_id
from ..core.variable import Variable
from . import recompute as _recompute  # noqa: F401 - installs recompute_grad's traced path
from . import signature
from .autograph import converted
from .call import ConcreteFunction
from .call_key import CaptureProbe, walk_call_key
from .checkpoints import last_failure
from .py_function import one_run_per_call, start_try
from .retrace import describe_arguments, guard_change, retracing_message, signature_change
from .shape_generic import ShapeGenericFunction, _has_open_spec, _specs_to_examples
from .spec import TensorSpec, conform_structure, is_spec_structure
from .trace import Untraceable, arg_hints, trace

__all__ = ["function"]

logger = logging.getLogger("gradtape")

# Retracing warns when every one of this many consecutive calls traced (as TF does).
RETRACE_WINDOW = 5
# Traces kept per signature (one per set of guard outcomes); the oldest goes first.
MAX_TRACES_PER_SIGNATURE = 8

# Called with (Function, ConcreteFunction) after every trace (``gradtape inspect``).
trace_listeners: list[Callable[[Any, ConcreteFunction], None]] = []


# --- the decorated function ---------------------------------------------------------------

# Every Function, so that a change of gt.config(dtype_promotion=) drops their traces: a
# trace keeps the dtype rule it was traced under (its ops were checked and converted then).
_functions: weakref.WeakSet = weakref.WeakSet()


def _drop_traces(mode: Any) -> None:
    for function in list(_functions):
        function._forget_traces()


_config.on_change.setdefault("dtype_promotion", []).append(_drop_traces)


class Function:
    """A Python function traced and compiled per signature (``tf.function``'s
    ``Function``). Call it like the function; inspect what it compiled with
    ``get_forward_ir``, ``get_backward_ir``, ``get_source`` and ``get_concrete_function``.
    """

    def __init__(self, python_function: Callable[..., Any], name: str | None = None,
                 max_traces: int | None = None,
                 input_signature: Sequence[TensorSpec] | None = None,
                 reduce_retracing: bool = False, autograph: bool = True):
        if not callable(python_function):
            raise TypeError(f"gt.function needs a callable, got {python_function!r}.")
        self.max_traces = _check_max_traces(max_traces)
        self.input_signature = _check_input_signature(input_signature)
        self.reduce_retracing = bool(reduce_retracing)  # accepted; see docs/function.md
        self.python_function = python_function
        self.autograph = bool(autograph)
        # What tracing runs: python_function with its control flow converted (made on
        # the first trace; a method's Function converts the unbound function).
        self._convert = functools.partial(converted, python_function) if autograph \
            else (lambda: python_function)
        self._converted: Callable[..., Any] | None = None
        functools.update_wrapper(self, python_function, updated=())
        self.__name__ = name or getattr(python_function, "__name__", "function")
        self._parameters = signature.parameters(python_function)
        self._parameter_names = [p.name for p in self._parameters
                                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._probe = CaptureProbe(python_function)
        # signature -> its traces, newest first; least recently used signature first.
        self._cache: collections.OrderedDict[Any, list[ConcreteFunction]] = \
            collections.OrderedDict()
        self._kept = 0  # traces in self._cache
        self._lock = threading.Lock()
        self._tracing_count = 0
        self._recent: collections.deque = collections.deque(maxlen=RETRACE_WINDOW)
        self._bound: dict[int, Function] = {}
        # Why the function runs eagerly on every call (it cannot be traced), or None.
        self._eager_reason: str | None = None
        self._tracing = False  # True while its Python function runs to trace
        self._calls_python = False  # a trace has a py_function: see _call_once
        _functions.add(self)

    def _forget_traces(self) -> None:
        with self._lock:
            self._cache.clear()
            self._kept = 0

    def __repr__(self) -> str:
        return f"<gt.function {self.__name__}: {self._tracing_count} trace(s)>"

    # --- calling --------------------------------------------------------------------------
    def _signature(self, args: tuple, kwargs: dict) -> tuple[Any, list[Any], list[Any]]:
        """The call key, the tensor leaves, and their arrays (an array argument's a copy:
        a later change to it must not reach a call that already started)."""
        key: list[Any] = [len(args)]
        leaves: list[Any] = []
        values: list[Any] = []
        for a in args:
            if a.__class__ is Tensor:  # the common case, inlined
                array = a._value
                key.append((array.shape, array.dtype))
                leaves.append(a)
                values.append(array)
            else:
                walk_call_key(a, key, leaves, self.__name__)
                values += [_array_of(x) for x in leaves[len(values):]]
        if kwargs:
            walk_call_key(kwargs, key, leaves, self.__name__)
            values += [_array_of(x) for x in leaves[len(values):]]
        key.append(self._probe.key())
        return tuple(key), leaves, values

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs), {}
        if state.tracer is not None or self._eager_reason is not None \
                or options.functions_eagerly:
            # Called while another function traces: its ops join that trace. Or run
            # eagerly: tf.config.run_functions_eagerly(True), or it cannot be traced.
            if self._tracing and state.tracer is not None:
                _check_recursion(self.__name__, state.tracer)
            if state.tracer is not None and self._eager_reason is None:
                return self._traced_function()(*args, **kwargs)
            return self.python_function(*args, **kwargs)
        key, leaves, values = self._signature(args, kwargs)
        taping = bool(state.recording or state.accumulators)
        concretes = self._cache.get(key)
        if self._calls_python:  # py_function inside: once per call, whatever the tries
            return self._call_once(key, args, kwargs, concretes, leaves, values, taping)
        if concretes:
            fn = concretes[0]
            if fn.plain and not taping:  # the warm call's path: run, wrap the outputs
                result = fn.run_plain(values)
                self._recent.append(None)
                try:  # the most recently used signature (self._used, inlined)
                    self._cache.move_to_end(key)
                except KeyError:  # another thread dropped it just now
                    pass
                return result
            tried = None
            for fn in concretes:
                # A trace with guards may not fit these values (a guarded count fixed
                # shapes): None, then another trace; a real error raises when retracing.
                outs = fn.execute(values, taping) if not fn.guards \
                    else fn.try_execute(values, taping)
                if outs is not None and (not fn.guards or fn.guards_hold(outs)):
                    self._recent.append(None)
                    try:  # the most recently used signature (self._used, inlined)
                        self._cache.move_to_end(key)
                    except KeyError:  # another thread dropped it just now
                        pass
                    return fn.finish(outs, leaves, values, taping)
                if tried is None:  # the newest trace of this signature: its guards tell
                    tried = (fn, outs)
            reason = guard_change(*tried)
        else:
            reason = None  # a new signature: _trace compares it with the previous call's
        return self._trace_and_run(key, args, kwargs, leaves, values, taping, reason)

    def _call_once(self, key: Any, args: tuple, kwargs: dict, concretes: Any,
                   leaves: list, values: list, taping: bool) -> Any:
        """``__call__`` of a function whose traces call Python (``py_function``): a
        trace's guards are checked before each Python call, and each try (another
        trace, a new one) replays the Python calls made so far, so each runs once."""
        with one_run_per_call():
            tried = None
            for fn in concretes or ():
                start_try()
                last_failure.value = None
                outs = fn.execute(values, taping) if not fn.guards \
                    else fn.try_execute(values, taping)
                if outs is not None and fn.guards_hold(outs):
                    self._recent.append(None)
                    self._used(key)
                    return fn.finish(outs, leaves, values, taping)
                if tried is None:  # the newest trace: why it failed names the change
                    tried = (fn, outs, last_failure.value)
            reason = guard_change(*tried) if tried is not None else None
            return self._trace_and_run(key, args, kwargs, leaves, values, taping, reason)

    def _trace_and_run(self, key: Any, args: tuple, kwargs: dict, leaves: list,
                       values: list, taping: bool, reason: str | None) -> Any:
        """Trace, then run the new trace for this call's result. Tracing draws from the
        random streams and gives them back, and its Python calls are replayed, so the
        run takes the same draws and results: its guards hold, and the call returns the
        values of one draw (the ones its Python branched on)."""
        with one_run_per_call():
            start_try()
            fn = self._trace(key, args, kwargs, reason)
            if fn is None:  # it cannot be traced: from now on it runs eagerly
                return self.python_function(*args, **kwargs)
            if fn.calls_python:
                self._calls_python = True
            start_try()
            reused = fn.run_after_trace(values, taping)
            if reused is not None and fn.guards_hold(reused):
                return fn.finish(reused, leaves, values, taping)
            if not fn.guards:
                return fn.finish(fn.execute(values, taping), leaves, values, taping)
            outs = fn.try_execute(values, taping)
            if outs is None:  # the run raised: raise it (Python calls replayed)
                start_try()
                outs = fn.execute(values, taping)
            if not fn.guards_hold(outs):
                raise RuntimeError(_not_repeatable(self.__name__, guard_change(fn, outs)))
            return fn.finish(outs, leaves, values, taping)

    def _bind_signature(self, args: tuple, kwargs: dict) -> tuple:
        """The arguments as the ``input_signature`` takes them: positional, checked
        against their specs, Python values converted (TF raises ``TypeError``)."""
        specs = self.input_signature
        where = f"@gt.function {self.__name__!r} with input_signature"
        if len(args) > len(specs):
            raise TypeError(f"{where} takes {len(specs)} argument(s), got {len(args)}.")
        bound = list(args)
        names = self._parameter_names
        for name in names[len(args):len(specs)]:
            if name not in kwargs:
                break
            bound.append(kwargs[name])
        extra = set(kwargs) - set(names[len(args):len(bound)])
        if extra or len(bound) < len(specs):
            raise TypeError(
                f"{where} takes exactly {len(specs)} argument(s) ({specs}); got "
                f"{len(args)} positional and keywords {sorted(kwargs)}.")
        return tuple(conform_structure(spec, value, where, self._arg_name(i))
                     for i, (value, spec) in enumerate(zip(bound, specs)))

    def _arg_name(self, index: int) -> str:
        names = self._parameter_names
        return names[index] if index < len(names) else f"args[{index}]"

    def _trace(self, key: Any, args: tuple, kwargs: dict,
               reason: str | None) -> ConcreteFunction | None:
        """Trace for these arguments; ``reason`` says why (``None``: a new signature,
        described by comparing the arguments with those of the previous call). ``None``
        if the function cannot be traced: it is switched to running eagerly."""
        hints = arg_hints(self._parameter_names, args, kwargs)
        described = describe_arguments(self._parameter_names, args, kwargs)
        if reason is None:
            reason = self._signature_change(key, described)
        try:
            traced = self._run_trace(args, kwargs, hints)
        except Untraceable as exc:
            self._eager_reason = str(exc)
            logger.warning("%s", exc)  # once: later calls do not trace
            return None
        fn = ConcreteFunction(self.__name__, traced)
        fn.fallback = _fallback(self, args, kwargs)
        fn.signature = (key, described)
        fn.describe_call(self._parameters, args, kwargs)
        with self._lock:
            self._tracing_count += 1
            fn.serial = self._tracing_count
            self._keep(key, fn)
        logger.info("@gt.function %s traced (%s): %d equations, %d guards.", self.__name__,
                    reason, len(fn.program.eqns), len(fn.guards))
        self._recent.append(reason)
        if len(self._recent) == RETRACE_WINDOW and all(self._recent):
            reasons = list(self._recent)
            self._recent.clear()
            logger.warning(retracing_message(RETRACE_WINDOW, self.__name__, reasons,
                                             self._limit()))
        for listener in list(trace_listeners):
            listener(self, fn)
        return fn

    def _run_trace(self, args: tuple, kwargs: dict, hints: list[str]) -> Any:
        """Trace the Python function. A first trace that creates variables is made
        twice, as TF does: the second must create none (a function that makes a new
        variable on every call raises ``ValueError``) and is the one kept."""
        first = self._tracing_count == 0
        before = _next_id()
        self._tracing = True
        try:
            traced = trace(self._traced_function(), self.__name__, args, kwargs, hints,
                           first_trace=first)
            if first and _creates_variables(traced, before):
                start_try()  # the second trace replays the first's Python calls
                traced = trace(self._traced_function(), self.__name__, args, kwargs,
                               hints, first_trace=False)
        finally:
            self._tracing = False
        return traced

    def _signature_change(self, key: Any, described: dict[str, str]) -> str:
        """How this call's signature differs from the previous call's (the most recently
        used signature's trace)."""
        if not self._tracing_count:
            return "the first call"
        try:
            previous = self._cache[next(reversed(self._cache))][0]
        except (StopIteration, KeyError, IndexError, RuntimeError):  # dropped meanwhile
            return signature_change(None, described, False)
        old_key, old_described = previous.signature
        return signature_change(old_described, described, old_key[-1:] != key[-1:])

    def _traced_function(self) -> Callable[..., Any]:
        """The function tracing runs: converted by AutoGraph unless ``autograph=False``."""
        if self._converted is None:
            self._converted = self._convert()
        return self._converted

    # --- the traces kept ----------------------------------------------------------------
    def _limit(self) -> int:
        return self.max_traces if self.max_traces is not None else options.max_traces

    def _keep(self, key: Any, fn: ConcreteFunction) -> None:
        """File a new trace under ``key``; drop the least recently used traces beyond
        the limit (their generated source leaves ``linecache`` once nothing runs them).
        Called with the lock held."""
        concretes = self._cache.setdefault(key, [])
        self._cache.move_to_end(key)
        concretes.insert(0, fn)
        self._kept += 1
        while len(concretes) > MAX_TRACES_PER_SIGNATURE:
            concretes.pop().release()
            self._kept -= 1
        limit = self._limit()
        while self._kept > limit:
            oldest_key, oldest = self._least_recent()
            oldest.pop().release()
            self._kept -= 1
            if not oldest:
                del self._cache[oldest_key]

    def _least_recent(self) -> tuple[Any, list[ConcreteFunction]]:
        # A call marks its signature used without the lock: the iterator may see the
        # order change under it, then look again.
        while True:
            try:
                return next(iter(self._cache.items()))
            except RuntimeError:
                continue

    def _used(self, key: Any) -> None:
        """Mark ``key`` as the most recently used signature."""
        try:
            self._cache.move_to_end(key)
        except KeyError:  # another thread dropped it just now
            pass

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """As a method: one Function per instance, holding it weakly."""
        if instance is None:
            return self
        bound = self._bound.get(id(instance))
        if bound is None:
            bound = Function(_method(self.python_function, instance), self.__name__,
                             self.max_traces, self.input_signature, self.reduce_retracing,
                             self.autograph)
            bound._convert = lambda: _method(self._traced_function(), instance)
            bound._parameter_names = self._parameter_names[1:]  # without ``self``
            bound._parameters = self._parameters[1:]
            self._bound[id(instance)] = bound
            try:
                weakref.finalize(instance, self._bound.pop, id(instance), None)
            except TypeError:  # no weakrefs: keep the instance (its id stays unique)
                bound._instance = instance  # type: ignore[attr-defined]
        return bound

    # --- inspection -----------------------------------------------------------------------
    def experimental_get_tracing_count(self) -> int:
        """How many times the function was traced (TF's name)."""
        return self._tracing_count

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every kept trace's signature in TF's text, in the order traced, one
        paragraph each (``Input Parameters``, ``Output Type``, ``Captures``)."""
        traces = sorted((fn for fns in list(self._cache.values()) for fn in fns),
                        key=lambda fn: fn.serial)
        texts = list(dict.fromkeys(fn.pretty_printed_signature(verbose) for fn in traces))
        return "\n\n".join(texts)

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The trace these arguments run (traced now if there is none, without running
        the compiled call). With several traces for the signature, the one whose guards
        hold for these values. ``gt.TensorSpec`` arguments (or none, with an
        ``input_signature``) stand for zero tensors: their shapes must be fully defined.
        The result is callable with the tensor arguments: ``cf(x)``."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        if _has_open_spec(args, kwargs):
            return ShapeGenericFunction(self, args, kwargs)
        args, kwargs = _specs_to_examples(self.__name__, args, kwargs)
        if self.input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs), {}
        key, leaves, values = self._signature(args, kwargs)
        for fn in list(self._cache.get(key, ())):
            outs = fn.try_execute(values, taping=False, probe=True)
            if outs is not None and fn.guards_hold(outs):
                self._used(key)
                return fn
        fn = self._trace(key, args, kwargs, "get_concrete_function") \
            if self._eager_reason is None else None
        if fn is not None:
            fn.forget_trace_runs()  # traced, not run: the loops' arrays go
        if fn is None:
            raise NotImplementedError(
                f"{self._eager_reason} It has no concrete function: call the function "
                "itself.")
        return fn

    def get_forward_ir(self, *args: Any, **kwargs: Any) -> str:
        """The traced forward Program for these arguments, as text."""
        return self.get_concrete_function(*args, **kwargs).forward_ir

    def get_backward_ir(self, *args: Any, **kwargs: Any) -> str:
        """The backward Program a tape's gradient through this call inlines."""
        return self.get_concrete_function(*args, **kwargs).backward_ir

    def get_source(self, *args: Any, **kwargs: Any) -> str:
        """The generated Python source of the forward function for these arguments."""
        return self.get_concrete_function(*args, **kwargs).source

    def get_backward_source(self, *args: Any, **kwargs: Any) -> str:
        """The backward Program (``get_backward_ir``) as generated Python source."""
        return self.get_concrete_function(*args, **kwargs).backward_source


def _not_repeatable(name: str, change: str) -> str:
    return (f"@gt.function {name!r}: run right after tracing, its trace did not take the "
            f"path Python took while tracing ({change}). Something it reads changed "
            "between the two without going through the trace (a py_function that assigns "
            "a variable the function reads?): pass such values as arguments or results.")


def _creates_variables(traced: Any, first_id: int) -> bool:
    return any(s.kind == "var" and s.ref._id >= first_id for s in traced.sources)


def _check_recursion(name: str, tracer: Any) -> None:
    """A function calling itself while tracing, after Python branched on a tensor's
    value: TF's AutoGraph turns that branch into ``tf.cond``, which traces both sides,
    so the recursion never ends there. Raise as TF does, rather than trace one path."""
    if tracer.guards:
        raise RecursionError(
            f"@gt.function {name!r} calls itself after branching on a tensor's value "
            f"({tracer.guards[-1].note or 'a value read'}): as in TF, recursion that ends "
            "on a tensor condition is not supported. Write it as a loop (a Python loop "
            "over tf.range, or gt.while_loop), or end it on a Python value.")


def _array_of(leaf: Any) -> Any:
    return leaf._value if isinstance(leaf, Tensor) else np.array(leaf)


def _check_input_signature(signature: Any) -> tuple[Any, ...] | None:
    if signature is None:
        return None
    if not isinstance(signature, (list, tuple)) or \
            not all(is_spec_structure(spec) for spec in signature):
        raise TypeError(
            f"gt.function: input_signature must be a list or tuple of gt.TensorSpec (or of "
            f"lists, tuples and dicts of them), got {signature!r}.")
    return tuple(signature)


def _fallback(function: Function, args: tuple, kwargs: dict) -> Callable[[tuple], Any]:
    """Call ``function`` with ``(args, kwargs)``'s tensor arguments replaced by new
    ones: how a ConcreteFunction runs when its own trace does not apply."""
    flat = nest.flatten((args, kwargs))
    slots = [i for i, leaf in enumerate(flat) if not isinstance(leaf, Variable)
             and isinstance(leaf, (Tensor, np.ndarray, np.generic))]
    for i in slots:  # hold no tensor of the trace
        flat[i] = None
    structure = nest.pack_sequence_as((args, kwargs), flat)
    ref = weakref.ref(function)

    def call(tensors: tuple) -> Any:
        target = ref()
        if target is None:
            raise RuntimeError(f"The gt.function {function.__name__!r} of this "
                               "ConcreteFunction no longer exists.")
        filled = nest.flatten(structure)
        for i, tensor in zip(slots, tensors):
            filled[i] = tensor
        new_args, new_kwargs = nest.pack_sequence_as(structure, filled)
        return target(*new_args, **new_kwargs)

    return call


def _method(function: Callable[..., Any], instance: Any) -> Callable[..., Any]:
    ref = weakref.ref(instance) if _weakrefable(instance) else (lambda: instance)

    @functools.wraps(function)
    def method(*args: Any, **kwargs: Any) -> Any:
        return function(ref(), *args, **kwargs)

    return method


def _weakrefable(value: Any) -> bool:
    try:
        weakref.ref(value)
    except TypeError:
        return False
    return True


def describe(concrete: ConcreteFunction) -> str:
    """A trace as ``gradtape inspect`` prints it: forward IR, generated forward source,
    and the backward IR a tape's gradient through the call inlines."""
    parts = ["# forward IR\n" + concrete.forward_ir, concrete.source.rstrip("\n")]
    try:
        parts.append("# backward IR\n" + concrete.backward_ir)
    except Exception as exc:  # show the rest even if the backward fails
        reason = comment_text(f"{type(exc).__name__}: {exc}")
        parts.append(f"# backward IR: not available ({reason})")
    return "\n\n".join(parts)


def function(func: Callable[..., Any] | None = None,
             input_signature: Sequence[TensorSpec] | None = None,
             autograph: bool = True, jit_compile: bool | None = None,
             reduce_retracing: bool = False, experimental_implements: str | None = None,
             experimental_autograph_options: Any = None,
             experimental_attributes: dict[str, Any] | None = None,
             experimental_relax_shapes: bool | None = None,
             experimental_compile: bool | None = None,
             experimental_follow_type_hints: bool | None = None, *,
             name: str | None = None, max_traces: int | None = None) -> Any:
    """Compile ``func`` per input signature (``tf.function``, with TF 2.21's arguments);
    usable as ``@gt.function``, ``@gt.function(jit_compile=True)`` or ``gt.function(f)``.

    TF's flags that mean nothing here are accepted and change nothing: ``jit_compile``
    (every trace is compiled, to NumPy code), ``experimental_autograph_options``,
    ``experimental_implements``, ``experimental_attributes`` and
    ``experimental_follow_type_hints``. The deprecated ``experimental_relax_shapes`` and
    ``experimental_compile`` stand for ``reduce_retracing`` and ``jit_compile``, with a
    ``DeprecationWarning`` as TF's. ``name`` and ``max_traces`` are gradtape's.

    ``autograph=True`` (TF's default) converts ``func``'s Python control flow once:
    ``if``, ``while`` and ``for`` on tensors become ``gt.cond`` and ``gt.while_loop``
    (``gt.autograph.to_code(func)`` shows the result; docs/function.md, AutoGraph);
    ``autograph=False`` traces ``func`` as written.

    ``max_traces`` bounds the traces kept (default ``gt.config().max_traces``, 128): the
    least recently used one is dropped first, and traced again if its signature comes
    back. TensorFlow keeps every trace; this keeps a long run with changing shapes from
    growing without bound.

    The first call with a new signature runs ``func`` once to trace it (Python side
    effects such as ``print`` or appending to a list happen then, not on later calls),
    compiles the trace to one generated Python function, and later calls run that.
    Variables read inside are read at each call; ``assign*`` calls inside are applied
    after each call. Under a ``GradientTape`` the call is recorded as one op whose
    gradient is the compiled backward of the trace.

    Python numbers and NumPy values it returns come back as tensors (TF's dtypes);
    ``None`` and strings as they are. While tracing, a tensor's ``repr`` shows no
    value (as TF's graph tensors): ``print(x)`` inside shows its name, shape, dtype.

    ``input_signature`` (a list of ``gt.TensorSpec``, or of lists, tuples and dicts of
    them) fixes the arguments: every call must pass tensors matching the specs in the
    same structure (``None`` dimensions take any size, ``TensorSpec(None)`` any shape),
    else ``TypeError``; Python values are converted to the spec's dtype. Traces are still
    made per concrete shape. ``reduce_retracing`` is accepted and changes nothing (see
    docs/function.md).

    Raises:
        TypeError: ``input_signature`` is not a list of ``gt.TensorSpec``, or a call's
            arguments do not match it; an argument that is not a tensor or array is not
            hashable; the function returns a value computed from a tensor's value, an object that is
            not a tensor, number, string or None, or is a generator (``yield``).
        NotImplementedError: ``get_concrete_function`` of a function that runs
            eagerly because it calls something that cannot be traced (a
            ``custom_gradient`` function; calling such a function works: it runs its
            Python code on every call, logging why once).
        ValueError: the function creates a variable on a call that is not its first;
            ``max_traces`` is not a positive int.
    """
    del experimental_implements, experimental_autograph_options  # no-ops
    del experimental_attributes, experimental_follow_type_hints
    if experimental_relax_shapes is not None:
        reduce_retracing = experimental_relax_shapes
        _deprecated("experimental_relax_shapes", "reduce_retracing")
    if experimental_compile is not None:
        _deprecated("experimental_compile", "jit_compile")
    del jit_compile  # gradtape compiles every trace
    if func is None:
        _check_max_traces(max_traces)
        _check_input_signature(input_signature)
        return functools.partial(function, name=name, max_traces=max_traces,
                                 input_signature=input_signature,
                                 reduce_retracing=reduce_retracing, autograph=autograph)
    return Function(func, name, max_traces, input_signature, reduce_retracing, autograph)


def _deprecated(argument: str, replacement: str) -> None:
    warnings.warn(f"gt.function: `{argument}` is deprecated, as in TF; use "
                  f"`{replacement}` instead.", DeprecationWarning, stacklevel=3)


def _check_max_traces(value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 1):
        raise ValueError(f"gt.function: max_traces must be a positive int or None (use "
                         f"gt.config().max_traces), got {value!r}.")
    return value
