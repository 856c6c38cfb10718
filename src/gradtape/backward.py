"""From a tape's records to gradients: prune, key, look up or build, run.

This is the path every ``gradient``/``jacobian`` call takes. The expensive part (lower
to a forward Program, differentiate it into a backward Program, optimize, compile) runs
once per structure; later calls only prune, compute the key and run the generated
function. A structure's first call runs the reference interpreter: generating and
compiling code costs milliseconds, which pays off only for a structure that repeats
(``gt.config(compile_after=...)``).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import nested
from .cache import backward_cache
from .config import options
from .ir import interpreter
from .ir.autodiff import vjp_program
from .ir.lower import Trace, prune
from .ir.nodes import Aval, Literal, Program, Var
from .recording import forget_references, keep_reference, signature_key, state
from .tensor import Tensor, wrap

# Called with every CompiledBackward right after it is compiled (``gradtape inspect``).
compile_listeners: list[Callable[[Any], None]] = []

# entry -> its optimized program, run on the call before the one that compiles it
# (BackwardEntry._maybe_compile) and taken by _compile.
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class BackwardEntry:
    """A built backward: its program, how to feed it, and (once compiled) the generated
    function. Holds no arrays: values are read from the trace at call time.

    ``feeds[i]`` says where input ``i`` comes from: a trace slot (``>= 0``) or output
    gradient ``k`` (``~k``). ``program`` is what autodiff emitted (dead code removed):
    the first call of a structure interprets it as it is; the optimization passes run on
    the call before the one that compiles (they keep the inputs, so the feeds stay
    valid) and their result waits in ``_prepared``. ``optimized=True`` says ``program``
    went through them already.
    """

    __slots__ = ("program", "feeds", "residual_slots", "cacheable", "compilable", "calls",
                 "compiled", "failed", "optimized", "_lock", "__weakref__")

    def __init__(self, program: Program, feeds: list[int], cacheable: bool,
                 compilable: bool, optimized: bool = False):
        self.program = program
        self.optimized = optimized
        self.feeds = feeds
        self.residual_slots = [f for f in feeds if f >= 0]
        self.cacheable = cacheable
        self.compilable = compilable
        self.calls = 0
        self.compiled = None  # a CompiledBackward once generated
        self.failed = False
        self._lock = threading.Lock()

    def arguments(self, trace: Trace, sources: Sequence[Tensor], seeds: Sequence[Any]) -> list:
        value = trace.value
        return [value(f, sources) if f >= 0 else seeds[~f] for f in self.feeds]

    def run(self, args: list) -> Sequence[Any]:
        """Run on arrays: compiled code if enabled and built, else the interpreter."""
        if not options.compile:
            return interpreter.run(self.program, args)
        compiled = self.compiled
        if compiled is None:
            compiled = self._maybe_compile()
            if compiled is None:
                return interpreter.run(self.program, args)
        try:
            return compiled.function(*args)
        except Exception as error:
            # If the interpreter raises too, the error is the user's: show it in the
            # generated lines. Otherwise the generated code is wrong: stop using it.
            try:
                result = interpreter.run(self.program, args)
            except Exception:
                raise error from None
            self._disable(compiled)
            return result

    def _maybe_compile(self):
        if not self.compilable or self.failed:
            return None
        self.calls += 1
        threshold = 1 if options.dump_dir else options.compile_after
        if self.calls < threshold:
            if self.calls == threshold - 1 and not self.optimized:
                # The call before the one that compiles runs the passes: neither call
                # then carries the whole cost of a new structure (issue 3's cold calls).
                start = time.perf_counter()
                _prepared[self] = _optimize_keeping_inputs(self.program)
                backward_cache.record_build(time.perf_counter() - start)
            return None
        with self._lock:
            if self.compiled is None and not self.failed:
                self._compile()
        return self.compiled

    def _compile(self) -> None:
        from .codegen import compile_program
        from .codegen.load import dump_or_warn

        start = time.perf_counter()
        # self.program stays as built: nested call ops inline it, and what they inline
        # must not depend on whether this entry was compiled yet.
        program = self.program if self.optimized else _prepared.pop(self, None)
        if program is None:
            program = _optimize_keeping_inputs(self.program)
        try:
            compiled = compile_program(program)
        except Exception as exc:  # never a wrong gradient: interpret this structure
            self.failed = True
            warnings.warn(
                f"gradtape could not generate code for a backward function "
                f"({type(exc).__name__}: {exc}); it runs in the interpreter instead. "
                "Please report this with the script that triggers it.",
                RuntimeWarning, stacklevel=5,
            )
            return
        backward_cache.record_compile(time.perf_counter() - start)
        if options.dump_dir:
            dump_or_warn(compiled.source, options.dump_dir)
        self.compiled = compiled
        for listener in list(compile_listeners):
            listener(compiled)

    def _disable(self, compiled) -> None:
        from .codegen.load import release

        self.failed = True
        self.compiled = None
        release(compiled.filename)
        warnings.warn(
            f"gradtape's generated backward {compiled.filename} raised where the "
            "interpreter does not; this structure runs in the interpreter from now on. "
            "Please report this.", RuntimeWarning, stacklevel=4,
        )

    def release(self) -> None:
        """Called when the cache evicts this entry: drop its source from linecache."""
        compiled = self.compiled
        if compiled is not None:
            from .codegen.load import release

            release(compiled.filename)


def seed_for(target_aval: Aval, given: Any) -> Var | Literal:
    """The cotangent fed to a target: an input var for ``output_gradients``, else ones."""
    if given is not None:
        return Var(Aval(tuple(np.shape(given)), _dtype_of(given)), "seed")
    return Literal(target_aval.dtype.type(1), target_aval)


def _dtype_of(value: Any) -> np.dtype:
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(value).dtype


def _passes_or_none(run_passes: Callable[[Program], Any], program: Program) -> Any:
    """``run_passes(program)``, or ``None`` with a warning if a pass fails: a pass bug
    must not cost a gradient, the program then runs unoptimized."""
    try:
        return run_passes(program)
    except Exception as exc:
        warnings.warn(
            f"gradtape's optimizer failed on a backward program ({type(exc).__name__}: "
            f"{exc}); it runs unoptimized. Please report this.", RuntimeWarning, stacklevel=5,
        )
        return None


def _optimize(program: Program) -> tuple[Program, tuple[int, ...]]:
    """The optimized program and which of the original inputs it still reads."""
    from .passes.pipeline import optimize_backward

    selection = _passes_or_none(optimize_backward, program)
    if selection is None:
        return program, tuple(range(len(program.inputs)))
    return selection.program, tuple(selection.kept)


def _optimize_keeping_inputs(program: Program) -> Program:
    """The optimized program with the same inputs (callers' feeds stay valid)."""
    from .passes.pipeline import optimize

    optimized = _passes_or_none(optimize, program)
    return program if optimized is None else optimized


# From this many elements in one value, a structure's first call runs the passes too:
# an equation they remove costs more than running them.
_LARGE = 1 << 16


def _works_on_large_arrays(program: Program) -> bool:
    return any(math.prod(out.aval.shape) >= _LARGE for eqn in program.eqns for out in eqn.outs)


def build_backward(trace: Trace, output_grads: Sequence[Any]):
    """``(forward, backward, feeds)`` for a trace: lowering and autodiff, no passes.
    The backward reads exactly the residuals its rules read (autodiff's free vars)."""
    forward, slot_vars = trace.to_program()
    wrt = [slot_vars[s] for s in trace.source_slots]
    seeds = []
    for out, given in zip(forward.outputs, output_grads):
        seeds.append(None if out is None else seed_for(out.aval, given))
    program, _ = vjp_program(forward, wrt, seeds)
    slot_of = {v: s for s, v in enumerate(slot_vars)}
    seed_index = {v: k for k, v in enumerate(s for s in seeds if isinstance(s, Var))}
    feeds = [slot_of[v] if v in slot_of else ~seed_index[v] for v in program.inputs]
    return forward, program, feeds


def build_program(trace: Trace, output_grads: Sequence[Any]):
    """``(forward, backward, optimized, feeds)`` for a trace: the whole front end, with
    residual selection after the passes (what ``tape.inspect`` shows)."""
    forward, program, feeds = build_backward(trace, output_grads)
    optimized, kept = _optimize(program)
    return forward, program, optimized, [feeds[i] for i in kept]


def build_entry(trace: Trace, output_grads: Sequence[Any], hashable: bool = True
                ) -> BackwardEntry:
    start = time.perf_counter()
    _, program, feeds = build_backward(trace, output_grads)
    cacheable = hashable and all(rec[0].cacheable for rec in trace.records)
    compilable = cacheable and all(e.prim.cacheable for e in program.eqns)
    optimized = _works_on_large_arrays(program)
    if optimized:  # the passes cost less than one needless pass over the data
        program = _optimize_keeping_inputs(program)
    entry = BackwardEntry(program, feeds, cacheable, compilable, optimized)
    backward_cache.record_build(time.perf_counter() - start)
    return entry


# Kept under its old name: tests look at its size.
_cache = backward_cache


def lookup(trace: Trace, output_grads: Sequence[Any]) -> BackwardEntry:
    try:
        entry = backward_cache.get(trace.key)
    except TypeError:  # an unhashable param: build, never cache
        return build_entry(trace, output_grads, hashable=False)
    if entry is None:
        entry = build_entry(trace, output_grads)
        if entry.cacheable:
            entry = backward_cache.put(trace.key, entry)
    return entry


# A persistent tape asked for the same gradient again: its trace, kept per tape (weakly,
# so it goes with the tape) to skip pruning and keying. Values are read at call time.
_repeat: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _forget_repeats() -> None:
    _repeat.clear()


backward_cache.on_clear.append(_forget_repeats)


def _trace_and_entry(records, sources, targets, output_grads, tape):
    flags = tuple(None if g is None else (np.shape(g), _dtype_of(g)) for g in output_grads)
    if tape is not None:
        signature = (len(records), tuple(s._id for s in sources),
                     tuple(t._id for t in targets), flags)
        known = _repeat.get(tape)
        if known is not None and known[0] is records and known[1] == signature:
            backward_cache.count_hit()
            return known[2], known[3]
    target_ids = [t._id for t in targets]
    kept = prune(records, [s._id for s in sources], target_ids)
    trace = Trace(kept, sources, target_ids, flags)
    entry = lookup(trace, output_grads)
    if tape is not None and entry.cacheable:
        _repeat[tape] = (records, signature, trace, entry)
    return trace, entry


# The whole-tape shortcut: a tape's signature (what it watched and recorded, by
# structure, kept up to date by the dispatcher) plus the sources' and targets' slots key
# the entry directly, with its inputs located in the tape's own record list. A fresh
# tape per step in a loop then skips pruning and keying (ir/lower.py) altogether.
_WholeTapeKey = tuple
# key -> (entry, feeds, connected targets, trace key, derived), where derived holds what
# later calls build from the entry: {(rows, identity): located batched backward} for
# jacobians, {"call": InnerBackward} for the call op of a nested gradient.
_whole_tape: OrderedDict = OrderedDict()
_whole_tape_lock = threading.Lock()


def _forget_whole_tapes() -> None:
    with _whole_tape_lock:
        _whole_tape.clear()


backward_cache.on_clear.append(_forget_whole_tapes)
backward_cache.on_clear.append(forget_references)  # they hold call ops' inner entries


def _whole_tape_key(owner, sources, targets, flags) -> _WholeTapeKey | None:
    signature = signature_key(owner)
    if signature is None:
        return None
    tracked = owner._tracked
    return (signature, tuple([tracked.get(s._id) for s in sources]),
            tuple([tracked.get(t._id) for t in targets]), flags)


def _remember_whole_tape(key, records, trace: Trace, entry: BackwardEntry) -> None:
    """File ``entry`` under a whole-tape key, its inputs located in ``records``."""
    position = {id(rec): j for j, rec in enumerate(records)}
    in_tape = [position[id(rec)] for rec in trace.records]
    feeds = []
    for f in entry.feeds:
        if f < 0:
            feeds.append((3, ~f, 0))  # an output gradient
            continue
        kind, a, b = (*trace.origins[f], 0)[:3]
        if kind == "source":
            feeds.append((0, a, 0))
        else:
            feeds.append((1 if kind == "in" else 2, in_tape[a], b))
    connected = tuple(t is not None for t in trace.target_slots)
    with _whole_tape_lock:
        # trace.key names the structure in a nested call op (nested.py), holds no arrays.
        _whole_tape[key] = (entry, tuple(feeds), connected, trace.key, {})
        while len(_whole_tape) > max(options.cache_size, 1):
            _whole_tape.popitem(last=False)


def _run_whole_tape(hit, records, sources, output_grads, ran: list | None = None) -> list[Any]:
    entry, feeds, connected = hit[:3]
    backward_cache.count_hit()
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g)
             for g, c in zip(output_grads, connected) if g is not None and c]
    derived = hit[4]
    gather = derived.get("gather")
    if gather is None:
        gather = derived["gather"] = _gatherer(feeds)
    args = gather(records, sources, seeds)
    if ran is not None:
        ran.append((entry, args))
    return list(entry.run(args))


# How each kind of feed reads, as Python text: a recorded input (1) or output (2), a
# source's value (0) or an output gradient (3; the seed index is the feed's ``a``).
_FEED_TEXT = {1: "records[{0}][2][{1}]", 2: "records[{0}][5][{1}]",
              0: "sources[{0}]._value", 3: "seeds[{0}]"}


def _gatherer(feeds: tuple) -> Callable[[list, Sequence[Tensor], list], list]:
    """Every feed's argument, as one expression (built once per cache entry): a fresh
    tape per step gathers its backward's arguments with a single call instead of a loop
    over the feeds."""
    items = ", ".join(_FEED_TEXT[kind].format(a, b) for kind, a, b in feeds)
    return eval(f"lambda records, sources, seeds: [{items}]")  # noqa: S307 - our own text


def _call_whole_tape(hit, records, sources, output_grads) -> list[Any]:
    """The whole-tape shortcut while tapes record: the inputs as tensors under the ids
    they were recorded with, and the backward as one call op (nested.py)."""
    entry, feeds, connected, trace_key, derived = hit
    backward_cache.count_hit()
    seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g))
             for g, c in zip(output_grads, connected) if g is not None and c]
    args = []
    for kind, a, b in feeds:
        if kind == 1 or kind == 2:
            record = records[a]
            value, tensor_id = (record[2][b], record[1][b]) if kind == 1 else (
                record[5][b], record[4][b])
            args.append(value if tensor_id is None else Tensor._alias(value, tensor_id))
        elif kind == 0:
            args.append(Tensor._alias(sources[a]._value, sources[a]._id))
        else:
            args.append(seeds[a])
    inner = derived.get("call")
    if inner is None:  # built once: its hash covers the whole inner key
        inner = derived["call"] = nested.InnerBackward(trace_key, entry)
    return nested.call_backward(trace_key, entry, args, inner)


def gradients(records, sources: Sequence[Tensor], targets: Sequence[Tensor],
              output_grads: Sequence[Any], tape: Any = None, owner: Any = None,
              ran: list | None = None) -> list[Any]:
    """Cotangents of ``sources`` (a ``None`` where unconnected) for the given targets.

    Results are arrays, or tensors when a tape is recording (so it sees this gradient
    computation too, which is how nested tapes give higher-order derivatives). A
    persistent ``tape`` passed in lets a repeated call skip pruning and keying; ``ran``,
    if given, receives the ``(entry, arguments)`` that computed arrays.
    """
    key = None
    if owner is not None and records is owner._records:
        if all(g is None for g in output_grads):
            flags = (None,) * len(output_grads)  # the usual case: ones
        else:
            flags = tuple(None if g is None else (np.shape(g), _dtype_of(g))
                          for g in output_grads)
        key = _whole_tape_key(owner, sources, targets, flags)
        try:
            hit = _whole_tape.get(key) if key is not None else None
        except TypeError:  # an unhashable param somewhere: take the long way
            key = hit = None
        if hit is not None:
            if state.active:
                return _call_whole_tape(hit, records, sources, output_grads)
            return _run_whole_tape(hit, records, sources, output_grads, ran)
    trace, entry = _trace_and_entry(records, sources, targets, output_grads, tape)
    if key is not None and entry.cacheable:
        _remember_whole_tape(key, records, trace, entry)
        keep_reference(owner._site, key[0], records)
    seeds = [g for g, t in zip(output_grads, trace.target_slots)
             if g is not None and t is not None]
    if state.active:
        # Run op by op through the dispatcher so the outer tapes (or a @gt.function's
        # tracer) record this gradient.
        seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g)) for g in seeds]
        # Nested tapes: the compiled backward, recorded as one call op (see nested.py).
        called = nested.nested_gradients(trace, entry, sources, seeds)
        if called is not None:
            return called
        args = nested.residual_arguments(trace, entry, sources, seeds)
        return interpreter.run_recorded(entry.program, args)
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g) for g in seeds]
    args = entry.arguments(trace, sources, seeds)
    if ran is not None:
        ran.append((entry, args))
    return list(entry.run(args))
