"""Site references: a tape opened where an earlier tape was (the same ``with``) takes
that tape's op locations while it records the same structure, instead of walking the
stack for each op; and a tape's signature as a dictionary key.
"""

from __future__ import annotations

from ..ir.lower import LOCATION

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
