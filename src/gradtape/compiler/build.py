"""The build recipe: lower → vjp → passes → residual selection → entry, in one place.

Every backward gradtape runs is made here, and nowhere else:

- ``build_entry``: a tape's backward (``tape/lookup.py``'s fourth rung). Lowering, the
  user's names, reverse mode. A structure's first call interprets that program; the
  passes run on the call before the one that compiles (``BackwardEntry``), keeping the
  inputs, because the lookup tables have located them by then. A program over large
  arrays runs the passes and residual selection at once, before anyone holds its feeds.
- ``build_batched``: a jacobian's backward, the entry's program batched over its seeds
  (``ad/batching.py``), then the passes and residual selection.
- ``differentiate``: a ``@gt.function``'s backward (``functions/call.py``): reverse
  mode, the passes and residual selection.
- ``build_inspected``: what ``tape.inspect`` shows, made by ``build_entry``'s own steps
  and ``BackwardEntry.program_to_compile``: the source it shows is the one ``gradient``
  compiles.
- ``run_passes`` / ``run_passes_selecting_residuals``: the passes (also of a
  ``@gt.function``'s forward), or the program as it is with a warning if a pass fails
  (a pass bug must not cost a result).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..ad.batching import batch_program, specialize_identity
from ..ad.reverse import vjp_program
from ..core.config import options
from ..core.tensor import Tensor
from ..ir.lower import PRIM, SEED, Feed, Trace, gatherer
from ..ir.nodes import Aval, Literal, Program, Var
from ..passes import pipeline
from ..passes.canonical import canonicalize
from ..passes.control_flow import has_control_flow
from .cache import backward_cache
from .runner import CompiledRunner
from .value_names import name_values

# Called with every compiled backward right after it is compiled (``gradtape inspect``).
compile_listeners: list[Callable[[Any], None]] = []

# entry -> its optimized program, run on the call before the one that compiles it
# (BackwardEntry._maybe_compile) and taken by _compile.
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# --- the passes ---------------------------------------------------------------------------

def _passes_or_none(run: Callable[[Program], Any], program: Program, what: str,
                    stacklevel: int) -> Any:
    try:
        return run(program)
    except Exception as exc:
        warnings.warn(
            f"gradtape's optimizer failed on {what} ({type(exc).__name__}: {exc}); it runs "
            "unoptimized. Please report this.", RuntimeWarning, stacklevel=stacklevel)
        return None


def run_passes(program: Program, what: str = "a backward program",
               stacklevel: int = 5) -> Program:
    """``program`` after the passes, its inputs kept (the callers' feeds stay valid);
    ``program`` itself, with a warning naming ``what``, if a pass fails."""
    optimized = _passes_or_none(pipeline.optimize, program, what, stacklevel)
    return program if optimized is None else optimized


def canonical_forward(forward: Program, stacklevel: int = 5,
                      available: Callable[[Var], bool] | None = None) -> Program:
    """The forward to differentiate: ``forward`` in canonical forms (``matvec`` for a
    product with a column, ``softplus`` for ``log1p(exp)``), its vars kept; only forms
    whose rules read ``available`` values (all, when ``None``)."""
    canonical = _passes_or_none(lambda p: canonicalize(p, available), forward,
                                "a forward program", stacklevel)
    return forward if canonical is None else canonical


def run_passes_selecting_residuals(program: Program, what: str = "a backward program",
                                   stacklevel: int = 5) -> tuple[Program, tuple[int, ...]]:
    """The passes, then residual selection: the program and which of the original
    inputs it still reads (all of them, with a warning, if a pass fails)."""
    selection = _passes_or_none(pipeline.optimize_backward, program, what, stacklevel)
    if selection is None:
        return program, tuple(range(len(program.inputs)))
    return selection.program, tuple(selection.kept)


# --- the entry ----------------------------------------------------------------------------

class BackwardEntry(CompiledRunner):
    """A built backward: its program, how to feed it, and (once compiled) the generated
    function. Holds no arrays: values are read from the trace at call time.

    ``feeds[i]`` is the ``Feed`` of input ``i``: a source, an input or output of one of
    the trace's records, or an output gradient (read by ``gather``, built once).
    ``program`` is what autodiff emitted (dead code removed): the first call of a
    structure interprets it as it is; the optimization passes run on
    the call before the one that compiles (they keep the inputs, so the feeds stay
    valid) and their result waits in ``_prepared``. ``optimized=True`` says ``program``
    went through them already. Running, compiling and falling back: ``CompiledRunner``.
    """

    __slots__ = ("feeds", "gather", "cacheable", "compilable", "calls", "optimized",
                 "_lock")

    what = "a backward function"
    listeners = compile_listeners

    def __init__(self, program: Program, feeds: list[Feed], cacheable: bool,
                 compilable: bool, optimized: bool = False):
        super().__init__(program)
        self.optimized = optimized
        self.feeds = feeds
        self.gather = gatherer(feeds)
        self.cacheable = cacheable
        self.compilable = compilable
        self.calls = 0
        self._lock = threading.Lock()

    def arguments(self, trace: Trace, sources: Sequence[Tensor], seeds: Sequence[Any]) -> list:
        return self.gather(trace.records, sources, seeds)

    def _maybe_compile(self):
        if not self.compilable or self.failed:
            return None
        self.calls += 1
        threshold = 1 if options.dump_dir else options.compile_after
        # Interpreting a loop costs per iteration: a backward with one compiles at once.
        if self.calls < threshold and not has_control_flow(self.program):
            if self.calls == threshold - 1 and not self.optimized:
                # The call before the one that compiles runs the passes: neither call
                # then carries the whole cost of a new structure (issue 3's cold calls).
                start = time.perf_counter()
                _prepared[self] = run_passes(self.program)
                backward_cache.record_build(time.perf_counter() - start)
            return None
        with self._lock:
            if self.compiled is None and not self.failed:
                self._compile()
        return self.compiled

    def program_for_other_kinds(self) -> Program:
        # On a lazy library's arrays (Dask) every equation the passes would remove is a
        # layer of tasks a chunk (a broadcast ones seed: a NumPy array in the graph,
        # rechunked), and the graph costs more than the passes: interpret their result
        # (kept for the compile that follows).
        if self.optimized:
            return self.program
        prepared = _prepared.get(self)
        if prepared is None:
            prepared = _prepared[self] = run_passes(self.program)
        return prepared

    def program_to_compile(self) -> Program:
        """The program code is generated from: ``program`` after the passes, inputs kept
        (``tape.inspect`` shows its source)."""
        if self.optimized:
            return self.program
        prepared = _prepared.get(self)
        return run_passes(self.program) if prepared is None else prepared

    def _compile(self) -> None:
        start = time.perf_counter()
        # self.program stays as built: nested call ops inline it, and what they inline
        # must not depend on whether this entry was compiled yet.
        program = self.program_to_compile()
        _prepared.pop(self, None)
        if self.compile(program) is not None:
            backward_cache.record_compile(time.perf_counter() - start)


# --- a tape's backward --------------------------------------------------------------------

def seed_for(target_aval: Aval, given: Any, target_name: str | None = None) -> Var | Literal:
    """The cotangent fed to a target: an input var for ``output_gradients`` (named
    ``d_<target>``), else ones."""
    if given is not None:
        seed = Var(Aval(tuple(np.shape(given)), value_dtype(given)), "seed")
        seed.name = f"d_{target_name}" if target_name else None
        return seed
    return Literal(target_aval.dtype.type(1), target_aval)


def value_dtype(value: Any) -> np.dtype:
    """The dtype of an output gradient as given: an array, a tensor or a Python number."""
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(value).dtype


class Differentiated(NamedTuple):
    """A trace lowered and differentiated: ``feeds[i]`` is where the backward's input
    ``i`` comes from (a slot's origin in the trace, or an output gradient)."""

    forward: Program
    backward: Program
    feeds: list[Feed]


def lower_and_differentiate(trace: Trace, output_grads: Sequence[Any],
                            sources: Sequence[Any] = (), records: list | None = None
                            ) -> Differentiated:
    """Lowering, the user's names (``value_names.py``: ``sources`` are the source tensors,
    ``records`` the tape's records before pruning) and reverse mode; no passes. The
    backward reads exactly the residuals its rules read (autodiff's free vars)."""
    forward, slot_vars = trace.to_program()
    name_values(trace, slot_vars, sources, records)
    wrt = [slot_vars[s] for s in trace.source_slots]
    seeds = []
    for out, given in zip(forward.outputs, output_grads):
        seeds.append(None if out is None else seed_for(out.aval, given, out.name))
    # A slot's value is read where a record keeps it (a record may hold only its shape).
    origin = {v: s for s, v in enumerate(slot_vars)}

    def held(v: Var) -> bool:
        return v not in origin or trace.holder(origin[v]) is not None

    program, _ = vjp_program(canonical_forward(forward, available=held), wrt, seeds)
    seed_index = {v: k for k, v in enumerate(s for s in seeds if isinstance(s, Var))}
    feeds = [trace.held_feed(origin[v]) if v in origin else Feed(SEED, seed_index[v])
             for v in program.inputs]
    return Differentiated(forward, program, feeds)


# From this many elements in one value, a structure's first call runs the passes too:
# an equation they remove costs more than running them.
_LARGE = 1 << 16


def _works_on_large_arrays(program: Program) -> bool:
    return any(math.prod(out.aval.shape) >= _LARGE for eqn in program.eqns for out in eqn.outs)


def _new_entry(trace: Trace, built: Differentiated, hashable: bool) -> BackwardEntry:
    program, feeds = built.backward, built.feeds
    cacheable = hashable and all(rec[PRIM].cacheable for rec in trace.records)
    compilable = cacheable and all(e.prim.cacheable for e in program.eqns)
    optimized = _works_on_large_arrays(program)
    if optimized:  # the passes cost less than one needless pass over the data
        program, kept = run_passes_selecting_residuals(program)
        feeds = [feeds[i] for i in kept]  # nobody holds the feeds yet
    return BackwardEntry(program, feeds, cacheable, compilable, optimized)


def build_entry(trace: Trace, output_grads: Sequence[Any], hashable: bool = True,
                sources: Sequence[Any] = (), records: list | None = None) -> BackwardEntry:
    """The backward of ``trace`` (the lookup ladder's build rung), its build time counted."""
    start = time.perf_counter()
    entry = _new_entry(trace, lower_and_differentiate(trace, output_grads, sources, records),
                       hashable)
    backward_cache.record_build(time.perf_counter() - start)
    return entry


class Inspected(NamedTuple):
    """What ``build_entry`` makes of a trace: the forward, the backward as autodiff
    emits it, the program code is generated from, and that program's feeds."""

    forward: Program
    backward: Program
    optimized: Program
    feeds: list[Feed]


def build_inspected(trace: Trace, output_grads: Sequence[Any], sources: Sequence[Any] = (),
                    records: list | None = None) -> Inspected:
    """``build_entry``'s steps, kept apart from the cache and its statistics."""
    built = lower_and_differentiate(trace, output_grads, sources, records)
    entry = _new_entry(trace, built, hashable=False)
    return Inspected(built.forward, built.backward, entry.program_to_compile(), entry.feeds)


# --- a jacobian's backward ----------------------------------------------------------------

def build_batched(entry: BackwardEntry, rows: int, identity: bool) -> BackwardEntry:
    """``entry``'s program vectorized over ``rows`` seeds, optimized. With ``identity``,
    the seeds are known to be ``eye(rows)`` (a whole jacobian of a vector target)."""
    start = time.perf_counter()
    flags = [f.kind == SEED for f in entry.feeds]  # the seed inputs carry the batch axis
    program = batch_program(entry.program, flags, rows)
    optimized, kept = run_passes_selecting_residuals(program)
    if identity and flags.count(True) == 1:
        # On the optimized program, where reshapes and transposes are folded away.
        seed = program.inputs[flags.index(True)]
        if any(v is seed for v in optimized.inputs):
            optimized, again = run_passes_selecting_residuals(
                specialize_identity(optimized, seed))
            kept = tuple(kept[i] for i in again)
    feeds = [entry.feeds[i] for i in kept]
    compilable = entry.compilable and all(e.prim.cacheable for e in optimized.eqns)
    batched = BackwardEntry(optimized, feeds, entry.cacheable, compilable, optimized=True)
    backward_cache.record_build(time.perf_counter() - start)
    return batched


# --- a @gt.function's backward ------------------------------------------------------------

def differentiate(forward: Program, wrt: Sequence[Var], seeds: Sequence[Var | None]
                  ) -> Program:
    """Reverse mode of ``forward`` by ``wrt`` for ``seeds``, then the passes and residual
    selection: the backward, whose inputs are the forward values and seeds it reads."""
    backward, _ = vjp_program(canonical_forward(forward), list(wrt), list(seeds))
    return run_passes_selecting_residuals(backward)[0]
