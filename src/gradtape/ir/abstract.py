"""Output avals of an equation, remembered per (primitive, input avals, params).

Autodiff and the simplification passes ask a primitive's shape rule about every
equation they emit. The default rule runs NumPy on arrays of ones, and even the
elementwise shortcut broadcasts shapes in Python; a backward program asks the same
question many times (a chain of identical steps, a rule rewriting a pattern it met
before). The answer depends only on the inputs' avals, the literals' types and values
and the params, so it is kept under exactly those: a key never matches an equation
whose output could differ. Anything the key cannot capture faithfully (array literals,
NaN, params that are objects, primitives that hold callables) is not remembered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .nodes import Aval, Literal, Var

if TYPE_CHECKING:
    from .primitive import Primitive

# Enough for every shape question of many structures; dropped whole when full (a
# process that keeps meeting new shapes recomputes, it never grows without bound).
MAX_ENTRIES = 8192

_memo: dict[tuple, tuple[Aval, ...]] = {}
_SCALARS = frozenset((bool, int, float, complex))


def clear() -> None:
    _memo.clear()


def _param_key(value: Any) -> Any:
    """``value`` with the type of every scalar in it (``1``, ``1.0`` and ``True`` are
    equal keys in a dict, yet NumPy may type a result differently for each). Only plain
    values: an object param (a nested backward, a traced function) is not kept alive."""
    cls = value.__class__
    if cls is tuple:
        return (tuple, tuple([_param_key(v) for v in value]))
    if cls is str or value is None:
        return value
    if cls in _SCALARS or isinstance(value, np.generic):
        if value != value:
            raise TypeError("NaN never equals itself: not a key")
        return (cls, value)
    raise TypeError("not a param the memo keeps")


def _input_key(v: Any) -> Any:
    if v.__class__ is Var:
        return v.aval
    if v.__class__ is Literal:
        value = v.value
        cls = value.__class__
        if (cls in _SCALARS or isinstance(value, np.generic)) and value == value:
            return (cls, value, v.aval)
    raise TypeError("not an input the memo can key")


def _key(prim: Primitive, inputs: tuple, params: dict) -> tuple | None:
    if not prim.cacheable:
        return None
    try:
        ins = tuple([v.aval if v.__class__ is Var else _input_key(v) for v in inputs])
        if params:
            return (prim, ins, tuple([(k, _param_key(v)) for k, v in params.items()]))
        return (prim, ins)
    except (TypeError, ValueError):
        return None


def abstract_eval(prim: Primitive, inputs: tuple, params: dict) -> tuple[Aval, ...]:
    """``prim.abstract_eval(inputs, params)`` as a tuple, remembered when it is safe.
    Raises whatever the shape rule raises (never remembered)."""
    key = _key(prim, inputs, params)
    if key is not None:
        try:
            avals = _memo.get(key)
        except TypeError:  # something unhashable inside (a list for a shape): not kept
            key = avals = None
        if avals is not None:
            return avals
    avals = tuple(prim.abstract_eval(inputs, params))
    if key is not None:
        if len(_memo) >= MAX_ENTRIES:
            _memo.clear()
        _memo[key] = avals
    return avals
