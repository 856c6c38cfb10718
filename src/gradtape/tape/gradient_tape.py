"""GradientTape: TensorFlow's tape API with TensorFlow's semantics.

Inside ``with GradientTape() as tape:``, every op on a watched tensor (or on a result
computed from one) is recorded. ``tape.gradient`` lowers the records to IR, builds the
backward program once per structure, and runs it.

The tape's life follows TF's: entering it starts a recording; a non-persistent tape is
used up by its one ``gradient``/``jacobian`` call (entering it again starts afresh);
``stop_recording`` and ``reset`` need a tape that is recording.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..compiler.cache import backward_cache
from ..core import nest
from ..core.backends import NUMPY_CLASSES, dtype_of
from ..core.dtypes import as_dtype
from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..core.unconnected import UnconnectedGradients, unconnected_mode
from ..core.variable import Variable
from . import backward, lookup
from .arguments import (
    as_gradient,
    as_target,
    check_source,
    fit_output_gradient,
    flat_output_gradients,
    is_float,
    zeros_gradient,
)
from .recording import (
    Record,
    record_alone,
    record_nested,
    record_op,
    split_reads,
    variable_versions,
)
from .site_references import reference_for, site_of

logger = logging.getLogger("gradtape")



# TF logs these warnings through its logger a limited number of times per process.
_warning_counts: dict[str, int] = {}


def _warn_limited(key: str, limit: int, message: str, *args: Any) -> None:
    count = _warning_counts.get(key, 0)
    if count < limit:
        _warning_counts[key] = count + 1
        logger.warning(message, *args)


_USED_UP = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or "
    "jacobians). Create the tape with GradientTape(persistent=True) to call gradient or "
    "jacobian more than once, or record again in a new `with tape:` block."
)
_NEVER_ENTERED = (
    "This GradientTape has not recorded anything: compute the target inside a "
    "`with tape:` block (watching the sources) before asking for its {}."
)

_REENTERED = (
    "This GradientTape is computing a gradient already: {} was called on it while its "
    "backward runs (from a custom_gradient grad_fn, say), which would recurse forever. "
    "Inside grad_fn, differentiate with a separate GradientTape opened there (or an outer "
    "tape, for higher-order derivatives), not with the tape differentiating through it."
)


class GradientTape:
    """Record operations for automatic differentiation (``tf.GradientTape``).

    Args:
        persistent: allow more than one ``gradient``/``jacobian`` call.
        watch_accessed_variables: watch every trainable ``Variable`` read while
            recording, without an explicit ``watch``.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        # The @gt.function trace this tape was made in (None outside any): watching from
        # inside a trace only works on the trace's own tapes (see watch).
        self._tracer = state.tracer
        self._records: list[Record] = []
        # ids watched, or computed from watched ids -> their slot number on this tape
        self._tracked: dict[int, int] = {}
        # What was watched and recorded, in order, by structure only (no arrays, no ids):
        # with the slots above it keys the compiled backward of the whole tape, so a
        # fresh tape per step finds its backward without pruning (lookup.py). None
        # once something unkeyable happened.
        self._signature: list | None = []
        # untracked tensor id -> (first-use number, shape, dtype): how the signature shows it
        self._constants: dict[int, tuple] = {}
        self._watched: dict[int, Tensor] = {}  # explicitly watched or accessed tensors
        self._var_versions: dict[int, int] = {}  # variable id -> its version when first seen
        self._reread: set[int] = set()  # variables read at more than one version
        self._dtype_warned: set[int] = set()  # non-float ids already warned about
        self._recording = False
        self._live = False  # TF's "has a tape": entered, and not used up since
        self._used_up = False
        # What was watched when the tape was used up: watched_variables() still answers.
        self._watched_when_used: dict[int, Tensor] = {}
        # A persistent tape's last gradient call, so the same call again only runs the
        # backward (the lookup ladder's first rung; see _repeat_key).
        self._last: lookup.RepeatedCall | None = None
        self._site: tuple | None = None  # where its `with` is (set on entering)
        self._reference: tuple | None = None  # (signature, locations) of an earlier tape
        # While the tape records what its reference did, its signature is the first
        # _followed items of the reference's, and _signature stays empty (_diverge).
        self._followed = 0
        # True while gradient/jacobian runs this tape's backward: a custom_gradient
        # grad_fn asking this same tape for a gradient then would recurse forever.
        self._computing = False

    # --- the observer protocol (core.state.Observer) ----------------------------
    # How bind hands this tape an op: among other observers, or (its fast branch) alone
    # or among nested tapes.
    on_op = record_op
    on_op_alone = record_alone
    on_op_nested = record_nested

    def sees(self, tensor: Tensor) -> bool:
        """Whether this tape would differentiate ``tensor``: it is tracked, or it is a
        trainable variable the tape watches on its first read."""
        return tensor._id in self._tracked or (
            tensor._watch_on_read and tensor.trainable and self._watch_accessed_variables)

    def on_variable_read(self, variable: Variable) -> None:
        """A variable was read or assigned while recording: watch it if trainable (TF's
        ``watch_accessed_variables``)."""
        if self._watch_accessed_variables and variable.trainable:
            self._watch_id(variable._id, variable)

    # --- context ------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._push()
        # Where this tape is opened: its records take their (file, line) from the last
        # tape built there while they record the same structure (site_references.py).
        self._site = site_of(sys._getframe(1))
        self._reference = reference_for(self._site)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        if self._recording:
            raise ValueError(
                "Tape is still recording, This can happen if you try to re-enter an "
                "already-active tape. Use a second GradientTape for a nested recording."
            )
        self._live = True
        state.recording.append(self)
        self._recording = True

    def _pop(self) -> None:
        if not self._recording:
            raise ValueError(
                "Tape is not recording. stop_recording() and reset() can only be used "
                "inside the tape's `with` block, while it records."
            )
        state.recording.remove(self)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stop recording: ops inside are not differentiable by this tape."""
        if not self._live:
            raise RuntimeError(
                "Trying to stop recording a tape which is not recording. Use "
                "stop_recording() inside the tape's `with` block (and, for a "
                "non-persistent tape, before its gradient is computed)."
            )
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Forget everything recorded and watched; keep recording (TF's ``reset``)."""
        self._pop()
        self._clear()
        if self._site is not None:  # recording starts over: follow the site's reference
            self._reference = reference_for(self._site)
        self._push()

    def _clear(self) -> None:
        self._last = None
        self._reference = None
        self._records = []
        self._tracked = {}
        self._signature = []
        self._followed = 0
        self._constants = {}
        self._watched = {}
        self._var_versions = {}
        self._reread = set()
        self._dtype_warned = set()

    # --- watching -----------------------------------------------------------------
    def watch(self, tensor: Any) -> None:
        """Track ``tensor`` (a Tensor, Variable, or nested structure of them)."""
        if state.tracer is not None and self._tracer is not state.tracer:
            raise RuntimeError(
                "This GradientTape was opened outside the @gt.function being traced, so a "
                "watch inside it would happen only once, while tracing. Open the tape "
                "inside the function, or watch the tensors before calling it."
            )
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not a gradtape "
                    "Tensor or Variable. Convert it with gt.constant (or make it a "
                    "gt.Variable) and watch that."
                )
            if not is_float(t.dtype):
                self._dtype_warned.add(t._id)
                _warn_limited(
                    "watch-dtype", 5,
                    "The dtype of the watched tensor must be floating (e.g. float32), got "
                    "%s: its gradient will be None. Cast it with gt.cast(x, 'float32') and "
                    "watch the float tensor.", as_dtype(t.dtype).name,
                )
            self._watch_id(t._id, t)

    def _watch_id(self, tensor_id: int, tensor: Tensor | None = None) -> None:
        """Track ``tensor_id``. The dispatcher calls this for every variable a recording
        tape sees read, so the check for "already watched" comes first."""
        tracked = self._tracked
        if tensor_id not in tracked:
            tracked[tensor_id] = len(tracked)
            if self._signature is not None:
                if tensor is None:
                    self._signature = None
                else:
                    value = tensor._value
                    item = ("watch", value.shape, dtype_of(value))
                    reference = self._reference
                    if reference is not None:  # still what the site's reference did?
                        earlier = reference[0].items
                        i = self._followed
                        if i < len(earlier) and earlier[i] == item:
                            self._followed = i + 1
                            item = None
                        else:
                            self._diverge()
                    if item is not None:
                        self._signature.append(item)
        if tensor is not None and tensor_id not in self._watched:
            self._watched[tensor_id] = tensor
            if isinstance(tensor, Variable):
                self._var_versions[tensor_id] = tensor._version

    def _diverge(self) -> None:
        """Stop following the reference: the signature so far becomes this tape's own."""
        self._signature = list(self._reference[0].items[:self._followed])
        self._reference = None

    def watched_variables(self) -> tuple[Variable, ...]:
        """The variables this tape watches, in creation order."""
        watched = self._watched if self._live else self._watched_when_used
        found = [t for t in watched.values() if isinstance(t, Variable)]
        return tuple(sorted(found, key=lambda v: v._id))

    # --- gradients ------------------------------------------------------------------
    def _begin_gradient(self, what: str = "gradient") -> None:
        """TF's checks and tape handling at the start of gradient/jacobian."""
        self._check_live(what)
        if self._computing:
            raise RuntimeError(_REENTERED.format(what))
        if self._recording:
            if not self._persistent:
                self._pop()
            else:
                _warn_limited(
                    "persistent-context", 1,
                    "Calling GradientTape.gradient on a persistent tape inside its context "
                    "is significantly less efficient than calling it outside the context "
                    "(it causes the gradient ops to be recorded on the tape, leading to "
                    "increased CPU and memory usage). Only call GradientTape.gradient "
                    "inside the context if you actually want to trace the gradient in "
                    "order to compute higher order derivatives.",
                )

    def _check_live(self, what: str) -> None:
        """The error gradient, jacobian and inspect raise on a tape that holds no
        recording: never entered, or a non-persistent tape already used."""
        if not self._live:
            raise RuntimeError(_USED_UP if self._used_up else _NEVER_ENTERED.format(what))

    def _end_gradient(self) -> None:
        if not self._persistent:
            self._watched_when_used = self._watched  # sorted only if someone asks
            self._clear()
            self._live = False
            self._used_up = True

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """Gradient of ``target`` (summed over a structure of targets) with respect to
        ``sources``, returned in the structure of ``sources``.

        ``output_gradients`` (one per target tensor, ``None`` meaning ones) weights each
        target: the result is a vector-Jacobian product. Unconnected sources give
        ``None``, or zeros with ``unconnected_gradients='zero'``. Gradients have their
        source's dtype; integer sources give ``None``.
        """
        repeat_key = None
        if self._persistent and output_gradients is None and not self._recording \
                and not (state.recording or state.accumulators or state.tracer is not None):
            repeat_key = _repeat_key(self, target, sources, unconnected_gradients)
            if repeat_key is not None and self._last is not None and \
                    self._last.key == repeat_key:
                return _repeat(self, sources)
        elif output_gradients is None:
            found = _known_gradient(self, target, sources, unconnected_gradients)
            if found is not _UNKNOWN:
                return found
        self._begin_gradient()
        if target is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors or "
                "Variables to be differentiated, but received None."
            )
        flat_targets = [as_target(t) for t in nest.flatten(target)]
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            check_source(s)
        flat_grads = flat_output_gradients(output_gradients, flat_targets)
        mode = unconnected_mode(unconnected_gradients)
        ran: list | None = [] if repeat_key is not None else None
        self._computing = True
        recorded = len(self._records)
        try:
            grads = self._gradients(flat_targets, flat_sources, flat_grads, mode, ran,
                                    release=not self._persistent)
        except BaseException:
            _used_up_if_released(self, recorded)
            raise
        finally:
            self._computing = False
        if ran is not None and len(ran) == 1 and ran[0][0] is not None:
            self._last = lookup.RepeatedCall(repeat_key, ran[0][0], ran[0][1], mode, None)
        self._end_gradient()
        return nest.pack_sequence_as(sources, grads)

    def _gradients(self, targets, sources, output_grads, mode, ran=None,
                   release: bool = False, seeds_given_up: bool = False) -> list[Any]:
        """One gradient (tensor or None) per source: the work behind gradient/jacobian.
        ``ran`` (a list) receives the backward entry and its arguments when they can be
        run again as they are for the same call (``gradient``'s repeat shortcut);
        ``release``: this call uses the tape up, its records go as the backward reads
        them (``backward.gradients``), and with ``seeds_given_up`` the list
        ``output_grads`` too."""
        records, expanded, owner = self._expand_sources(targets, sources)
        held = None
        if release:
            held = [self._records, output_grads] if seeds_given_up else [self._records]
        raw = backward.gradients(records, expanded, targets, output_grads,
                                 tape=self if self._persistent else None, owner=self,
                                 ran=ran, release=held)
        if len(expanded) == len(sources) and all(e is s for e, s in zip(expanded, sources)):
            summed = raw  # one backward source per source: nothing to sum
        else:
            if ran is not None:
                ran.append((None, None))  # not one-to-one: no repeat shortcut
            summed = [None] * len(sources)
            for k, g in zip(owner, raw):
                if g is not None:
                    summed[k] = g if summed[k] is None else summed[k] + g
        out = []
        for s, g in zip(sources, summed):
            if g is None:
                if mode is UnconnectedGradients.ZERO:
                    out.append(zeros_gradient(s))
                else:
                    out.append(None)
                continue
            out.append(as_gradient(g, s))
        return out

    def _gradient_of_seeds(self, targets: list[Tensor], sources: list[Tensor],
                           seeds: list[Tensor]) -> list[Tensor]:
        """``gradient(targets, sources, output_gradients=seeds,
        unconnected_gradients="zero")`` for gradtape's own use of a non-persistent tape
        (``recompute_grad``'s inner tape): ``seeds`` (one tensor per target, nothing
        else holding the list) is emptied as the backward reads it, so each seed dies at
        its last use in the backward instead of outliving it in the caller's frames."""
        self._begin_gradient()
        seeds[:] = [fit_output_gradient(g, t) for g, t in zip(seeds, targets)]
        self._computing = True
        recorded = len(self._records)
        try:
            grads = self._gradients(targets, sources, seeds, UnconnectedGradients.ZERO,
                                    release=not self._persistent, seeds_given_up=True)
        except BaseException:
            _used_up_if_released(self, recorded)
            raise
        finally:
            self._computing = False
        self._end_gradient()
        return grads

    def _expand_sources(self, targets, sources) -> tuple[list, list[Tensor], list[int]]:
        """``(records, expanded, owner)``: the sources as the backward sees them (a
        variable assigned since it was read is one source per value read, with records
        rewritten to match), ``owner[i]`` the index in ``sources`` of ``expanded[i]``.
        Unwatched and integer sources are left out (their gradient is None)."""
        records = self._records_for(sources)
        tracked = self._tracked
        target_ids = None
        expanded: list[Tensor] = []  # sources as the backward sees them
        owner: list[int] = []  # index into ``sources`` of each expanded source
        for k, s in enumerate(sources):
            if s._id not in tracked:
                if target_ids is None:
                    target_ids = {t._id for t in targets}
                if s._id not in target_ids:
                    continue  # TF: a tensor the tape never watched has no gradient
            if dtype_of(s._value).kind not in "fc":  # not a float: no gradient
                if s._id not in self._dtype_warned:
                    self._dtype_warned.add(s._id)  # once per tape, not per jacobian row
                    logger.warning(
                        "The dtype of the source tensor must be floating (e.g. float32) "
                        "when calling GradientTape.gradient, got %s: its gradient is None. "
                        "Differentiate with respect to a float tensor instead.",
                        as_dtype(s.dtype).name,
                    )
                continue
            if s._watch_on_read and self._var_versions.get(s._id, s._version) != s._version:
                versions, records = variable_versions(records, s)
            else:
                versions = [s]
            expanded += versions
            owner += [k] * len(versions)
        return records, expanded, owner

    def _records_for(self, sources) -> list[Record]:
        """The records, with each value of a variable read at several values (and not
        among ``sources``, which ``_expand_sources`` splits) under an id of its own."""
        records = self._records
        if self._reread:
            source_ids = {s._id for s in sources}
            for var_id in self._reread:
                if var_id not in source_ids:
                    records = split_reads(records, var_id)
        return records

    def inspect(self, target: Any, sources: Any, output_gradients: Any = None) -> Any:
        """What ``gradient(target, sources)`` compiles: an ``Inspection`` with
        ``.forward_ir``, ``.backward_ir``, ``.optimized_ir`` and ``.source``. It does not
        use up a non-persistent tape. A tape ``gradient`` would refuse (never entered, or
        used up) raises the same ``RuntimeError``."""
        from .inspection import inspect_gradient

        self._check_live("gradient")
        return inspect_gradient(self, target, sources, output_gradients)

    # jacobian and batch_jacobian live in jacobians.py to keep this module small.
    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Jacobian of ``target`` with respect to each source: shape
        ``target.shape + source.shape``, in the structure of ``sources``."""
        return _jacobians.jacobian(self, target, sources, unconnected_gradients,
                                   parallel_iterations, experimental_use_pfor)

    def batch_jacobian(
        self,
        target: Any,
        source: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Per-example Jacobian: ``target[i]`` with respect to ``source[i]``, shape
        ``[batch] + target.shape[1:] + source.shape[1:]``."""
        return _jacobians.batch_jacobian(self, target, source, unconnected_gradients,
                                         parallel_iterations, experimental_use_pfor)


def _repeat_key(tape: GradientTape, target: Any, sources: Any, mode: Any) -> tuple | None:
    """What makes a persistent tape's gradient call the same as its last one: the same
    target and sources (variables at the same version), nothing recorded since, the
    same unconnected mode. ``None`` for structures this shortcut doesn't cover."""
    flat = _flat_sources(sources)
    if flat is None or not isinstance(target, Tensor):
        return None
    ids = []
    for s in flat:
        if not isinstance(s, Tensor):
            return None
        ids.append((s._id, s._version) if s._watch_on_read else s._id)
    return (target._id, len(tape._records), sources.__class__, tuple(ids), mode)


_UNKNOWN = object()  # "take the general path"


def _known_gradient(tape: GradientTape, target: Any, sources: Any, mode: Any) -> Any:
    """The usual call of a fresh tape per step, kept short: one target, a tensor or a
    flat list or tuple of sources, the tape's own recording over, a structure seen
    before (the lookup ladder's whole-tape rung). Under outer tapes the backward runs as
    their call op, as on the general path. ``_UNKNOWN``: take the general path (which
    also files what this one finds)."""
    if (tape._persistent or tape._recording or not tape._live or state.tracer is not None
            or tape._signature is None or tape._reread or not isinstance(target, Tensor)):
        return _UNKNOWN
    flat = _flat_sources(sources)
    if flat is None:
        return _UNKNOWN
    tracked, versions = tape._tracked, tape._var_versions
    slots, watched = [], []  # the backward's sources: those the tape watched
    for s in flat:
        if not isinstance(s, Tensor) or s is target:
            return _UNKNOWN
        slot = tracked.get(s._id)
        if slot is None:
            continue  # never watched: its gradient is None (TF)
        if (s._value.dtype if type(s._value) in NUMPY_CLASSES else dtype_of(s._value)).kind \
                not in "fc" or (
                s._watch_on_read and versions.get(s._id, s._version) != s._version):
            return _UNKNOWN  # not a float, or assigned since it was read
        slots.append(slot)
        watched.append(s)
    _, hit = lookup.whole_tape(tape, tuple(slots), (tracked.get(target._id),), lookup.ONES)
    if hit is None:
        return _UNKNOWN
    if mode.__class__ is not UnconnectedGradients:  # the default needs no call
        mode = unconnected_mode(mode)
    if state.recording or state.accumulators:  # an outer tape sees one call op
        raw = backward.call_located(hit, tape._records, watched, [None])
    else:
        recorded = len(tape._records)
        try:
            raw = backward.run_located(hit, tape._records, watched, [None], release=())
        except BaseException:
            _used_up_if_released(tape, recorded)
            raise
    if len(watched) != len(flat):  # unwatched sources in between: None for them
        found = dict(zip(map(id, watched), raw))
        raw = [found.get(id(s)) for s in flat]
    out = _gradient_tensors(flat, raw, mode)
    tape._end_gradient()
    return _packed(sources, out)


def _used_up_if_released(tape: GradientTape, recorded: int) -> None:
    """A gradient call that raised after its backward took the records (the backward
    itself raised): the tape is used up, as if it had returned. Its records are gone,
    and a second call must not differentiate an empty tape."""
    if recorded and not tape._records:
        tape._end_gradient()


def _repeat(tape: GradientTape, sources: Any) -> Any:
    """The last gradient call of a persistent tape again: run its backward on the same
    recorded arrays (tapes never change them) and wrap the results."""
    last = tape._last
    backward_cache.count_hit()
    compiled = last.entry.compiled
    raw = last.entry.run(last.args)
    if last.plain_from is not None and last.plain_from is compiled:
        # The same generated function on the same arrays: its results have the dtypes
        # and shapes they had last time, which were the sources' own.
        return _packed(sources, list(map(wrap, raw)))
    flat = _flat_sources(sources)
    if compiled is not None and all(
            g.__class__ is np.ndarray and g.dtype is s._value.dtype and g.shape == s.shape
            for s, g in zip(flat, raw)):
        tape._last = last._replace(plain_from=compiled)
    return _packed(sources, _gradient_tensors(flat, raw, last.mode))


def _flat_sources(sources: Any) -> Any:
    """``sources`` as a sequence if it is one tensor or a flat list or tuple (what the
    short paths serve), else ``None``."""
    if isinstance(sources, Tensor):
        return (sources,)
    if sources.__class__ is list or sources.__class__ is tuple:
        return sources
    return None


def _gradient_tensors(flat: Any, raw: Any, mode: UnconnectedGradients) -> list:
    """The backward's arrays as gradients of ``flat``: tensors of each source's dtype and
    shape, and ``None`` (or zeros) where unconnected."""
    out = []
    for s, g in zip(flat, raw):
        value = s._value
        if g.__class__ is np.ndarray and g.dtype is value.dtype and g.shape == value.shape \
                and value.__class__ is np.ndarray:
            out.append(wrap(g))  # already the source's dtype and shape: the usual case
        elif g is not None:
            out.append(as_gradient(g, s))
        elif mode is UnconnectedGradients.ZERO:
            out.append(zeros_gradient(s))
        else:
            out.append(None)
    return out


def _packed(sources: Any, out: list) -> Any:
    """``out`` in the structure of ``sources`` (a tensor, list or tuple)."""
    if isinstance(sources, Tensor):
        return out[0]
    return out if sources.__class__ is list else tuple(out)


# Last: jacobians.py imports this module's names (a call-time import cost a microsecond).
from . import jacobians as _jacobians  # noqa: E402
