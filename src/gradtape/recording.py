"""The thread-local stack of tapes that are recording right now.

Kept apart from ``tape.py`` so the dispatch hot path (``ops.registry.bind``) can read it
without importing the tape machinery.
"""

from __future__ import annotations

import os
import sys
import threading


class _State(threading.local):
    def __init__(self) -> None:
        # Tapes whose context is open and not paused by stop_recording(), innermost last.
        self.recording: list = []
        # Forward accumulators that are active, innermost last.
        self.accumulators: list = []
        # The @gt.function tracer that sees every op while a function traces, or None.
        self.tracer = None

    @property
    def active(self) -> bool:
        """Whether any tape, accumulator or tracer would see an op now (``bind`` spells
        this out inline)."""
        return bool(self.recording or self.accumulators or self.tracer is not None)


state = _State()

# The fields of a tape's record of one op, a plain tuple (``tape_recording`` writes it):
# read ``record[IN_IDS]``, never a bare position.
PRIM, IN_IDS, IN_VALUES, PARAMS, OUT_IDS, OUT_VALUES, LOCATION = range(7)

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# Modules of the package that play the user (``python -m gradtape``'s demo model).
_USER_CODE_FILES = frozenset({"demo.py", "__main__.py"})

# Code objects seen so far -> whether they belong to gradtape (saves a string test per frame).
# Emptied when full: code made at run time (exec, lambdas in a loop) would pile up.
_is_internal: dict = {}
MAX_CODE_OBJECTS = 4096


def user_location() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside gradtape: where the user called the op."""
    # 0 is this function, 1 the dispatcher's _record, 2 bind and 3 the op wrapper that
    # called it: all gradtape's own, so the walk starts above them.
    try:
        frame = sys._getframe(4)
    except ValueError:
        frame = sys._getframe(1)
    return location_from(frame)


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


# Where each op was recorded, taken from an earlier tape of the same structure: a tape
# opened at a site (the code and instruction of its ``with``) compares what it records
# with the last tape from that site whose backward was built, and while they agree it
# takes that tape's (file, line) for each op instead of walking the stack (the walk
# costs about a microsecond per op).
# (code id, instruction) -> (Signature, location per signature item, code).
_references: dict = {}
_MAX_REFERENCES = 64


def site_of(frame) -> tuple:
    """The site a tape is opened at: its code object and instruction. The key of
    ``_references`` is the code's id (hashing a code object hashes its constants every
    time); the entry keeps the code itself, so the id is not reused while it is there."""
    return (id(frame.f_code), frame.f_lasti, frame.f_code)


def forget_references() -> None:
    _references.clear()


def reference_for(site: tuple) -> tuple | None:
    found = _references.get(site[:2])
    return found if found is not None and found[2] is site[2] else None


def keep_reference(site: tuple | None, signature: Signature | None, records: list) -> None:
    """Remember ``signature`` and its records' locations for tapes opened at ``site``
    (called when a backward is built from them, so rarely)."""
    if site is None or signature is None:
        return
    locations, found = [], iter(records)
    for item in signature.items:  # a record per item that is not a watch
        record = None if item[0] == "watch" else next(found, None)
        locations.append(None if record is None else record[LOCATION])
    key = site[:2]
    if len(_references) >= _MAX_REFERENCES and key not in _references:
        _references.pop(next(iter(_references)))
    _references[key] = (signature, tuple(locations), site[2])


class Signature:
    """A tape's signature as part of a dictionary key: hashed once. A tape that recorded
    exactly what its site's reference did uses the reference's object, so the lookup
    compares by identity instead of item by item."""

    __slots__ = ("items", "_hash")

    def __init__(self, items: tuple):
        self.items = items
        self._hash = hash(items)  # TypeError for an unhashable param: no key

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (other.__class__ is Signature and self._hash == other._hash
                                 and self.items == other.items)

    def __len__(self) -> int:
        return len(self.items)


def signature_key(tape) -> Signature | None:
    """``tape``'s signature as a key, or ``None`` if it has none or cannot be hashed."""
    signature = tape._signature
    if signature is None:
        return None
    reference = tape._reference
    if reference is not None:  # every item so far was compared equal while recording
        items = reference[0].items
        if tape._followed == len(items):
            return reference[0]
        signature = items[:tape._followed]
    try:
        return Signature(tuple(signature))
    except TypeError:
        return None
