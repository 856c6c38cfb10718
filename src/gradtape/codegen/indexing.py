"""Indexing written out as NumPy: ``x[1:11]``, and its transpose as a zeros array.

``getitem`` and ``scatter_add`` carry their index as a template (``ops/index.py``): ints,
``None``, ``Ellipsis``, ``("slice", start, stop, step)`` and ``("array", k)`` for the
k-th index array input. Generated code spells them the way one writes them by hand:

    getitem_2 = x_1[0, ::2]
    d_x_3 = zeros((6, 4), float32)
    d_x_3[0, ::2] = g_4                       # basic: no element is selected twice
    add.at(d_x_3, (c_5, slice(1, 3)), g_6)   # index arrays: repeats accumulate

exactly what the implementations compute. The index arrays an implementation builds
from static shapes are written as one writes them: ``("arange", n, shape)`` as
``arange(n)[:, None]``, ``("const", ints)`` as a list (``[0, 2, 1]``, up to
``MAX_CONST`` entries; longer ones keep the implementation call). So a sparse softmax
cross-entropy's backward picks the labels' logits as a person would:

    add.at(d_log_softmax_out, (arange(32)[:, None], labels), g)
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from ..ir.nodes import Eqn, Var
from .literals import LOAD, STORE, call, constant, literal, make, name, numpy_global
from .naming import GlobalNames

MAX_CONST = 16  # a longer const index keeps the implementation call: a line stays short

_IMPLS = {"getitem": "gradtape.ops.index._getitem_impl",
          "scatter_add": "gradtape.ops.index._scatter_add_impl"}


def writes_out(eqn: Eqn) -> bool:
    """Whether ``eqn`` is indexing this module can write as NumPy."""
    expected = _IMPLS.get(eqn.prim.name)
    impl = eqn.prim.impl
    if expected is None or f"{impl.__module__}.{impl.__qualname__}" != expected:
        return False
    if not all(_plain_entry(e) for e in eqn.params["index"]):
        return False
    if eqn.prim.name == "scatter_add":
        # The zeros' dtype is the cotangent's: written only for an array cotangent.
        return isinstance(eqn.inputs[0], Var) and _numpy_type_name(eqn.outs[0].dtype) is not None
    return True


def _plain_entry(entry: Any) -> bool:
    if type(entry) is tuple:
        return entry[0] in ("slice", "array", "arange") or (
            entry[0] == "const" and len(entry[1]) <= MAX_CONST)
    return entry is None or entry is Ellipsis or type(entry) is int


def _numpy_type_name(dtype: np.dtype) -> str | None:
    """The NumPy name of ``dtype``'s scalar type (``float32``), if NumPy exports it."""
    attr = dtype.type.__name__
    return attr if getattr(np, attr, None) is dtype.type and np.dtype(attr) == dtype else None


def _has_arrays(index: tuple) -> bool:
    return any(type(e) is tuple and e[0] in ("array", "arange", "const") for e in index)


def _arange(n: int, shape: tuple, globs: GlobalNames) -> gast.expr:
    """``np.arange(n).reshape(shape)`` as written by hand: ``arange(n)[:, None]`` (the
    reshape where ``shape`` is not ``n`` among ones)."""
    values = call(numpy_global(globs, "arange"), [literal(n, globs)])
    shape = tuple(shape)
    if shape == (n,):
        return values
    if n not in shape or any(d != 1 for i, d in enumerate(shape) if i != shape.index(n)):
        reshape = make(gast.Attribute, value=values, attr="reshape", ctx=LOAD)
        return make(gast.Call, func=reshape, args=[literal(shape, globs)], keywords=[])
    axis = shape.index(n)
    entries = [make(gast.Slice, lower=None, upper=None, step=None) if i == axis
               else constant(None) for i in range(len(shape))]
    return make(gast.Subscript, value=values, slice=_key(entries), ctx=LOAD)


def _subscript_entry(entry: Any, arrays: list, globs: GlobalNames) -> gast.expr:
    """One index entry as written between brackets (``1:11``, ``None``, ``...``)."""
    if type(entry) is tuple:
        if entry[0] == "array":
            return arrays[entry[1]]
        if entry[0] == "arange":
            return _arange(entry[1], entry[2], globs)
        if entry[0] == "const":  # a list of ints indexes as an intp array
            return make(gast.List, elts=[constant(int(i)) for i in entry[1]], ctx=LOAD)
        start, stop, step = entry[1:]
        return make(gast.Slice, lower=_bound(start, globs), upper=_bound(stop, globs),
                    step=_bound(step, globs))
    return literal(entry, globs)


def _bound(value: Any, globs: GlobalNames) -> gast.expr | None:
    return None if value is None else literal(value, globs)


def _argument_entry(entry: Any, arrays: list, globs: GlobalNames) -> gast.expr:
    """One index entry as a value passed to a function (``slice(1, 3)``)."""
    if type(entry) is tuple and entry[0] == "slice":
        return literal(slice(*entry[1:]), globs)
    return _subscript_entry(entry, arrays, globs)


def _key(entries: list) -> gast.expr:
    """One entry as it is; several (or none: ``()``) as a tuple."""
    return entries[0] if len(entries) == 1 else make(gast.Tuple, elts=entries, ctx=LOAD)


def subscript(value: gast.expr, index: tuple, arrays: list, globs: GlobalNames,
              store: bool = False) -> gast.Subscript:
    """``value[index]``, a tuple index written as the bracket's comma list."""
    key = _key([_subscript_entry(e, arrays, globs) for e in index])
    return make(gast.Subscript, value=value, slice=key, ctx=STORE if store else LOAD)


def getitem_expression(eqn: Eqn, args: list, globs: GlobalNames) -> gast.expr:
    """``x[index]`` for a ``getitem`` equation (``writes_out(eqn)``)."""
    return subscript(args[0], eqn.params["index"], args[1:], globs)


def scatter_add_statements(eqn: Eqn, args: list, target: str,
                           globs: GlobalNames) -> list[gast.stmt]:
    """``target = zeros(shape, dtype)`` then the update into it, for a ``scatter_add``
    equation (``writes_out(eqn)``)."""
    index, shape = eqn.params["index"], eqn.params["shape"]
    dtype = eqn.outs[0].dtype
    scalar_type = _numpy_type_name(dtype)
    dtype_name = globs.bind(dtype.type, scalar_type, ("from", "numpy", scalar_type))
    zeros = call(numpy_global(globs, "zeros"), [literal(tuple(shape), globs),
                                                  name(dtype_name)])
    statements: list[gast.stmt] = [
        make(gast.Assign, targets=[name(target, store=True)], value=zeros,
             type_comment=None)]
    updates, arrays = args[0], args[1:]
    if _has_arrays(index):
        # Repeated indices must accumulate: ``add.at``, as the implementation does.
        key = _key([_argument_entry(e, arrays, globs) for e in index])
        add_at = make(gast.Attribute, value=name(numpy_global(globs, "add")), attr="at",
                      ctx=LOAD)
        update = make(gast.Call, func=add_at, args=[name(target), key, updates], keywords=[])
        statements.append(make(gast.Expr, value=update))
    else:
        # Basic indexing never selects an element twice: a plain assignment into zeros.
        statements.append(make(gast.Assign,
                               targets=[subscript(name(target), index, arrays, globs, True)],
                               value=updates, type_comment=None))
    return statements

