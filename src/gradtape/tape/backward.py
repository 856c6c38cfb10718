"""From a tape's records to gradients: look up (``tape/lookup.py``) or build, then run.

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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ad import nested
from ..ad.reverse import vjp_program
from ..compiler.cache import backward_cache
from ..compiler.runner import CompiledRunner
from ..core.config import options
from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..ir.lower import PRIM, Trace
from ..ir.nodes import Aval, Literal, Program, Var
from . import lookup
from .lookup import SEED, LocatedBackward, WholeTapeHit, dtype_of
from .value_names import name_values

# Called with every CompiledBackward right after it is compiled (``gradtape inspect``).
compile_listeners: list[Callable[[Any], None]] = []

# entry -> its optimized program, run on the call before the one that compiles it
# (BackwardEntry._maybe_compile) and taken by _compile.
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class BackwardEntry(CompiledRunner):
    """A built backward: its program, how to feed it, and (once compiled) the generated
    function. Holds no arrays: values are read from the trace at call time.

    ``feeds[i]`` says where input ``i`` comes from: a trace slot (``>= 0``) or output
    gradient ``k`` (``~k``). ``program`` is what autodiff emitted (dead code removed):
    the first call of a structure interprets it as it is; the optimization passes run on
    the call before the one that compiles (they keep the inputs, so the feeds stay
    valid) and their result waits in ``_prepared``. ``optimized=True`` says ``program``
    went through them already. Running, compiling and falling back: ``CompiledRunner``.
    """

    __slots__ = ("feeds", "residual_slots", "cacheable", "compilable", "calls",
                 "optimized", "_lock")

    what = "a backward function"
    listeners = compile_listeners

    def __init__(self, program: Program, feeds: list[int], cacheable: bool,
                 compilable: bool, optimized: bool = False):
        super().__init__(program)
        self.optimized = optimized
        self.feeds = feeds
        self.residual_slots = [f for f in feeds if f >= 0]
        self.cacheable = cacheable
        self.compilable = compilable
        self.calls = 0
        self._lock = threading.Lock()

    def arguments(self, trace: Trace, sources: Sequence[Tensor], seeds: Sequence[Any]) -> list:
        value = trace.value
        return [value(f, sources) if f >= 0 else seeds[~f] for f in self.feeds]

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
        start = time.perf_counter()
        # self.program stays as built: nested call ops inline it, and what they inline
        # must not depend on whether this entry was compiled yet.
        program = self.program if self.optimized else _prepared.pop(self, None)
        if program is None:
            program = _optimize_keeping_inputs(self.program)
        if self.compile(program) is not None:
            backward_cache.record_compile(time.perf_counter() - start)


def seed_for(target_aval: Aval, given: Any, target_name: str | None = None) -> Var | Literal:
    """The cotangent fed to a target: an input var for ``output_gradients`` (named
    ``d_<target>``), else ones."""
    if given is not None:
        seed = Var(Aval(tuple(np.shape(given)), dtype_of(given)), "seed")
        seed.name = f"d_{target_name}" if target_name else None
        return seed
    return Literal(target_aval.dtype.type(1), target_aval)


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
    from ..passes.pipeline import optimize_backward

    selection = _passes_or_none(optimize_backward, program)
    if selection is None:
        return program, tuple(range(len(program.inputs)))
    return selection.program, tuple(selection.kept)


def _optimize_keeping_inputs(program: Program) -> Program:
    """The optimized program with the same inputs (callers' feeds stay valid)."""
    from ..passes.pipeline import optimize

    optimized = _passes_or_none(optimize, program)
    return program if optimized is None else optimized


# From this many elements in one value, a structure's first call runs the passes too:
# an equation they remove costs more than running them.
_LARGE = 1 << 16


def _works_on_large_arrays(program: Program) -> bool:
    return any(math.prod(out.aval.shape) >= _LARGE for eqn in program.eqns for out in eqn.outs)


def build_backward(trace: Trace, output_grads: Sequence[Any], sources: Sequence[Any] = (),
                   records: list | None = None):
    """``(forward, backward, feeds)`` for a trace: lowering and autodiff, no passes.
    The backward reads exactly the residuals its rules read (autodiff's free vars).
    Values get the user's names (``value_names.py``: ``sources`` are the source
    tensors, ``records`` the tape's records before pruning)."""
    forward, slot_vars = trace.to_program()
    name_values(trace, slot_vars, sources, records)
    wrt = [slot_vars[s] for s in trace.source_slots]
    seeds = []
    for out, given in zip(forward.outputs, output_grads):
        seeds.append(None if out is None else seed_for(out.aval, given, out.name))
    program, _ = vjp_program(forward, wrt, seeds)
    slot_of = {v: s for s, v in enumerate(slot_vars)}
    seed_index = {v: k for k, v in enumerate(s for s in seeds if isinstance(s, Var))}
    feeds = [slot_of[v] if v in slot_of else ~seed_index[v] for v in program.inputs]
    return forward, program, feeds


def build_program(trace: Trace, output_grads: Sequence[Any], sources: Sequence[Any] = (),
                  records: list | None = None):
    """``(forward, backward, optimized, feeds)`` for a trace: the whole front end, with
    residual selection after the passes (what ``tape.inspect`` shows)."""
    forward, program, feeds = build_backward(trace, output_grads, sources, records)
    optimized, kept = _optimize(program)
    return forward, program, optimized, [feeds[i] for i in kept]


def build_entry(trace: Trace, output_grads: Sequence[Any], hashable: bool = True,
                sources: Sequence[Any] = (), records: list | None = None) -> BackwardEntry:
    start = time.perf_counter()
    _, program, feeds = build_backward(trace, output_grads, sources, records)
    cacheable = hashable and all(rec[PRIM].cacheable for rec in trace.records)
    compilable = cacheable and all(e.prim.cacheable for e in program.eqns)
    optimized = _works_on_large_arrays(program)
    if optimized:  # the passes cost less than one needless pass over the data
        program = _optimize_keeping_inputs(program)
    entry = BackwardEntry(program, feeds, cacheable, compilable, optimized)
    backward_cache.record_build(time.perf_counter() - start)
    return entry


def run_located(located: LocatedBackward, records: list, sources: Sequence[Tensor],
                output_grads: Sequence[Any], ran: list | None = None) -> list[Any]:
    """Run a backward located in a tape's records (``lookup.WholeTapeHit``) on arrays."""
    backward_cache.count_hit()
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g)
             for g, c in zip(output_grads, located.connected) if g is not None and c]
    args = located.gather(records, sources, seeds)
    if ran is not None:
        ran.append((located.entry, args))
    return list(located.entry.run(args))


def call_located(hit: WholeTapeHit, records: list, sources: Sequence[Tensor],
                 output_grads: Sequence[Any]) -> list[Any]:
    """A whole-tape hit while tapes record: the inputs as tensors under the ids they
    were recorded with, and the backward as one call op (ad/nested.py)."""
    backward_cache.count_hit()
    seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g))
             for g, c in zip(output_grads, hit.connected) if g is not None and c]
    values = hit.gather(records, sources, seeds)
    args = []
    for feed, value in zip(hit.feeds, values):
        if feed.kind == SEED:
            args.append(value)
            continue
        tensor_id = hit.tensor_id(feed, records, sources)
        args.append(value if tensor_id is None else Tensor._alias(value, tensor_id))
    if hit.call is None:  # built once: its hash covers the whole inner key
        hit.call = nested.InnerBackward(hit.trace_key, hit.entry)
    return nested.call_backward(hit.trace_key, hit.entry, args, hit.call)


def gradients(records, sources: Sequence[Tensor], targets: Sequence[Tensor],
              output_grads: Sequence[Any], tape: Any = None, owner: Any = None,
              ran: list | None = None) -> list[Any]:
    """Cotangents of ``sources`` (a ``None`` where unconnected) for the given targets.

    Results are arrays, or tensors when a tape is recording (so it sees this gradient
    computation too, which is how nested tapes give higher-order derivatives). A
    persistent ``tape`` passed in lets a repeated call skip pruning and keying; ``owner``
    is the tape the records are from (its whole-tape key); ``ran``, if given, receives
    the ``(entry, arguments)`` that computed arrays.
    """
    found = lookup.find(records, sources, targets, output_grads, tape, owner, build_entry)
    if found.__class__ is WholeTapeHit:
        if state.active:
            return call_located(found, records, sources, output_grads)
        return run_located(found, records, sources, output_grads, ran)
    trace, entry = found
    seeds = [g for g, t in zip(output_grads, trace.target_slots)
             if g is not None and t is not None]
    if state.active:
        # Run op by op through the dispatcher so the outer tapes (or a @gt.function's
        # tracer) record this gradient.
        seeds = [g if isinstance(g, Tensor) else wrap(np.asarray(g)) for g in seeds]
        # Nested tapes: the compiled backward, recorded as one call op (see ad/nested.py).
        called = nested.nested_gradients(trace, entry, sources, seeds)
        if called is not None:
            return called
        args = nested.residual_arguments(trace, entry, sources, seeds)
        return nested.run_recorded(entry.program, args)
    seeds = [g._value if isinstance(g, Tensor) else np.asarray(g) for g in seeds]
    args = entry.arguments(trace, sources, seeds)
    if ran is not None:
        ran.append((entry, args))
    return list(entry.run(args))
