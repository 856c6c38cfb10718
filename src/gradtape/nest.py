"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt as TF does:
dicts in sorted key order, everything else in order; any other object is a leaf."""

from __future__ import annotations

from typing import Any


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def flatten(structure: Any) -> list[Any]:
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure`` with leaves taken from ``flat`` in order."""
    leaves = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s) if type(s) is not dict else {
                k: built[k] for k in s
            }
        if _is_namedtuple(s):
            return type(s)(*[build(x) for x in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        return next(leaves)

    return build(structure)


def map_structure(fn, structure: Any) -> Any:
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
