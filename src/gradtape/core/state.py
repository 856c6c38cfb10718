"""Who observes ops right now (the thread-local stack of recording tapes, the active
forward accumulators, the ``@gt.function`` tracer), the one protocol they observe by
(``Observer``), and where in the user's code an op was called.

Kept apart from the tape so that tensors and the dispatch hot path
(``ops.registry.bind``) can read it without importing the tape machinery.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Observer(Protocol):
    """How everything that observes ops is told of them: a recording ``GradientTape``,
    a ``ForwardAccumulator``, the ``@gt.function`` tracer and ``custom_gradient``'s
    variable watcher. Nobody reads another observer's fields: they ask it."""

    def on_op(self, prim: Any, args: tuple, values: list, params: dict, result: Any,
              out: Any, shared: Any) -> Any:
        """``ops.registry.bind`` ran ``prim`` on ``args`` (``values``: their raw arrays)
        and made ``result`` (``out``: its raw array or arrays). ``shared`` is what the
        observer before it of the same kind returned (nested tapes share one record);
        return it, or what the next should share."""
        ...

    def sees(self, tensor: Any) -> bool:
        """Whether ``tensor`` is one this observer follows (a tape: it would
        differentiate it; an accumulator: it carries a tangent; the tracer: it is a
        value of the program being traced)."""
        ...

    def on_variable_read(self, variable: Any) -> None:
        """``variable`` was read or assigned while this observer observes (TF's
        "variable accessed": a tape watches a trainable one)."""
        ...


@runtime_checkable
class RecordingObserver(Observer, Protocol):
    """An observer that stands on the tape stack (``state.recording``): a tape, or the
    variable watcher. Bind's fast branch may hand it an op alone or among nested tapes
    (the arguments' ids gathered, one result, no tracer or accumulator observing)."""

    def on_op_alone(self, prim: Any, in_ids: list, values: list, params: dict,
                    result: Any, out: Any, reads: Any, raw_arrays: bool) -> None:
        """``on_op`` when this is the only observer and the op has one result: bind
        gathered the input ids on its one pass over the arguments; ``reads`` is the
        arguments if one is a variable, else ``None``; ``raw_arrays`` whether a raw
        argument (id ``None``) is more than a Python scalar: an array or array-like."""
        ...

    def on_op_nested(self, prim: Any, args: tuple, in_ids: list, values: list,
                     params: dict, result: Any, out: Any, reads: Any, raw_arrays: bool,
                     shared: Any) -> Any:
        """``on_op_alone`` when only recording observers observe but there are several
        (nested tapes, a watcher beside them): each is handed the op in turn, outermost
        first, with ``shared`` and ``args`` as ``on_op`` has them."""
        ...


# The attributes that say who observes ops: assigning one refreshes ``only_tapes``.
_OBSERVERS = frozenset(("recording", "accumulators", "tracer"))


class _State(threading.local):
    def __init__(self) -> None:
        # Tapes whose context is open and not paused by stop_recording(), innermost last.
        self.recording: list[RecordingObserver] = []
        # Forward accumulators that are active, innermost last: a tuple (assign a new
        # one; a list assigned is made one), so no change can bypass ``only_tapes``.
        self.accumulators: tuple[Observer, ...] = ()
        # The @gt.function tracer that sees every op while a function traces, or None.
        self.tracer: Observer | None = None
        # ``recording`` (the same list) while no accumulator or tracer observes besides
        # the tapes, else None: bind reads this one attribute instead of three (a
        # thread-local read costs about 450 instructions, a tenth of a recorded
        # scalar op's dispatch). Kept by ``__setattr__``.
        self.only_tapes: list[RecordingObserver] | None = self.recording
        # The Keras layer scopes open, innermost last, as (name, id of the layer, class
        # name): Keras's variable paths, and the layer comments of generated code name
        # (see Location).
        self.layers: list[tuple[str, int, str]] = []
        # Effects the user sees that ran in this thread (a gt.print op's line, a
        # py_function's Python): the compiled runner does not run a program again in
        # the interpreter after its generated code ran one (compiler/runner.py).
        self.effects_run = 0

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OBSERVERS:
            if name == "accumulators":
                value = tuple(value)
            super().__setattr__(name, value)
            # During __init__ the later observer attributes are not set yet.
            if "tracer" in self.__dict__:
                super().__setattr__("only_tapes", self.recording if self.tracer is None
                                    and not self.accumulators else None)
            return
        super().__setattr__(name, value)

    @property
    def active(self) -> bool:
        """Whether any tape, accumulator or tracer would see an op now (``bind`` asks
        ``only_tapes``)."""
        return bool(self.recording or self.accumulators or self.tracer is not None)


state = _State()

# The gradtape package (this module is in gradtape/core/).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Modules of the package that play the user (``python -m gradtape``'s demo model).
_USER_CODE_FILES = frozenset({"demo.py", "__main__.py"})

# Code objects seen so far -> whether they belong to gradtape (saves a string test per frame).
# Emptied when full: code made at run time (exec, lambdas in a loop) would pile up.
_is_internal: dict = {}
MAX_CODE_OBJECTS = 4096


class Location(tuple):
    """A ``(file, line)`` that also names the Keras layer whose call made the op
    (``location.layer``: ``"dense_1 (Dense)"``). It equals and hashes as the bare pair:
    the layer is cosmetic, for comments only, so statement lookup and every structural
    key ignore it (models differing only in layer names share compiled code)."""

    layer: str

    def __new__(cls, pair: tuple[str, int], layer: str = "") -> Location:
        self = super().__new__(cls, pair)
        self.layer = layer
        return self


def in_layer(location: tuple[str, int] | None) -> tuple[str, int] | None:
    """``location`` with the innermost Keras layer being called, if one is (build time
    and first recordings only: a warm tape reuses its reference's locations)."""
    layers = state.layers
    if layers and location is not None:
        name, _, class_name = layers[-1]
        return Location(location, f"{name} ({class_name})")
    return location


def user_location() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside gradtape: where the user called the op
    (a ``Location`` naming the Keras layer, inside one)."""
    # 0 is this function, 1 the dispatcher's _record, 2 bind and 3 the op wrapper that
    # called it: all gradtape's own, so the walk starts above them.
    try:
        frame = sys._getframe(4)
    except ValueError:
        frame = sys._getframe(1)
    return in_layer(location_from(frame))


def location_from(frame) -> tuple[str, int] | None:
    """(file, line) of ``frame`` or the first frame above it outside gradtape."""
    while frame is not None:
        code = frame.f_code
        internal = _is_internal.get(code)
        if internal is None:
            if len(_is_internal) >= MAX_CODE_OBJECTS:
                _is_internal.clear()
            internal = _is_internal[code] = (
                code.co_filename.startswith(_PACKAGE_DIR)
                and os.path.basename(code.co_filename) not in _USER_CODE_FILES
            )
        if not internal:
            return (code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def user_frame(frame):
    """``frame`` or the first frame above it outside gradtape (``None``: none is); the
    frame ``location_from`` reports. Build time only: ``location_from`` stays one loop on
    the recording path. One walk up, each code object classified once (``_is_internal``)."""
    while frame is not None:
        internal = _is_internal.get(frame.f_code)
        if internal is None:  # not classified yet: location_from classifies it
            internal = location_from(frame) != (frame.f_code.co_filename, frame.f_lineno)
        if not internal:
            return frame
        frame = frame.f_back
    return None
