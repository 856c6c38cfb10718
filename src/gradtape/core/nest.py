"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt as TF does:
dicts in sorted key order, everything else in order; any other object is a leaf."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


_CONTAINERS = (list, tuple, dict)


def _is_flat_list(structure: Any) -> bool:
    if structure.__class__ is not list:
        return False
    for x in structure:
        if isinstance(x, _CONTAINERS):
            return False
    return True


def sorted_keys(mapping: Any) -> list[Any]:
    """A dict's keys in the order its values are flattened: sorted, as TF's nest does;
    keys that do not compare (``"a"`` and ``1``) raise TF's ``TypeError``."""
    try:
        return sorted(mapping)
    except TypeError:
        kinds = sorted({type(k).__name__ for k in mapping})
        raise TypeError(
            f"nest only supports dicts with sortable keys; got keys of types "
            f"{', '.join(kinds)}, which do not compare. Use keys of one type (e.g. all "
            "str)."
        ) from None


def flatten(structure: Any) -> list[Any]:
    if not isinstance(structure, _CONTAINERS):
        return [structure]  # a single tensor
    if _is_flat_list(structure):
        return list(structure)  # the common case: a flat list of tensors
    if isinstance(structure, dict):
        return [leaf for k in sorted_keys(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure`` with leaves taken from ``flat`` in order."""
    if not isinstance(structure, _CONTAINERS) and len(flat) == 1:
        return flat[0]  # a single tensor
    if _is_flat_list(structure) and len(structure) == len(flat):
        return list(flat)  # the common case: a flat list
    leaves = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted_keys(s)}
            if type(s) is dict:
                return {k: built[k] for k in s}  # the caller's key order
            if isinstance(s, defaultdict):
                out = type(s)(s.default_factory)
                out.update((k, built[k]) for k in s)
                return out
            return type(s)((k, built[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*[build(x) for x in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("Fewer values than leaves in the structure to pack them into.")
        return leaf

    result = build(structure)
    if next(leaves, _END) is not _END:
        raise ValueError("More values than leaves in the structure to pack them into.")
    return result


_END = object()


def map_structure(fn, structure: Any) -> Any:
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
