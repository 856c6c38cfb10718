"""Python values (literal inputs, params) as gast expressions that evaluate back to them.

Python scalars print as literals. NumPy scalars keep their dtype (``float32(1.0)``, the
constructor bound as a global), since NumPy's promotion treats them differently from
Python scalars. Anything without a faithful literal form is bound as a global constant.
"""

from __future__ import annotations

import math
from typing import Any

import gast
import numpy as np

from .naming import GlobalNames, plain_identifier

_new = gast.AST.__new__

# Contexts carry no data: every name shares one (as CPython's own parser does).
LOAD = gast.Load()
STORE = gast.Store()
USUB = gast.USub()


def make(cls: type, **fields: Any) -> Any:
    """``cls(**fields)`` for a gast node class, all fields given. gast's constructor
    checks and copies its arguments in Python; generated trees take thousands of nodes."""
    node = _new(cls)
    node.__dict__.update(fields)
    return node


def name(id_: str, store: bool = False) -> gast.Name:
    return make(gast.Name, id=id_, ctx=STORE if store else LOAD, annotation=None,
                type_comment=None)


def constant(value: Any) -> gast.Constant:
    return make(gast.Constant, value=value, kind=None)


def call(func: str, args: list, keywords: dict | None = None) -> gast.Call:
    if not keywords:
        kws = []
    elif all(plain_identifier(k) for k in keywords):
        kws = [make(gast.keyword, arg=k, value=v) for k, v in keywords.items()]
    else:  # a param named like a keyword (``lambda``): pass them as ``**{...}``
        mapping = make(gast.Dict, keys=[constant(k) for k in keywords],
                       values=list(keywords.values()))
        kws = [make(gast.keyword, arg=None, value=mapping)]
    return make(gast.Call, func=name(func), args=list(args), keywords=kws)


def numpy_global(globs: GlobalNames, attr: str) -> str:
    return globs.bind(getattr(np, attr), attr, ("from", "numpy", attr))


def _float(value: float, globs: GlobalNames) -> gast.expr:
    if math.isnan(value):
        return name(numpy_global(globs, "nan"))
    if math.isinf(value):
        node = name(numpy_global(globs, "inf"))
    else:
        node = constant(math.fabs(value))
    # A sign is an operator in Python's grammar: write it as one, so no printer has to
    # decide about parentheses (-0.0 keeps its sign this way too).
    return make(gast.UnaryOp, op=USUB, operand=node) if math.copysign(1, value) < 0 else node


def literal(value: Any, globs: GlobalNames) -> gast.expr:
    """A gast expression that evaluates to ``value`` (equal type, dtype and sign)."""
    if value is None or value is Ellipsis or isinstance(value, (bool, str, bytes)):
        return constant(value)
    if _plain_numpy_scalar(value):
        return name(_typed_constant(value, globs))
    if isinstance(value, int):
        node = constant(abs(value))
        return make(gast.UnaryOp, op=USUB, operand=node) if value < 0 else node
    if isinstance(value, float):
        return _float(value, globs)
    if isinstance(value, complex):
        return call("complex", [_float(value.real, globs), _float(value.imag, globs)])
    if isinstance(value, tuple):
        return make(gast.Tuple, elts=[literal(v, globs) for v in value], ctx=LOAD)
    if isinstance(value, list):
        return make(gast.List, elts=[literal(v, globs) for v in value], ctx=LOAD)
    if isinstance(value, slice):  # as a person writes it: slice(1, 3), slice(3)
        parts = [value.start, value.stop] + ([] if value.step is None else [value.step])
        if len(parts) == 2 and parts[0] is None:
            parts = parts[1:]
        return call("slice", [literal(v, globs) for v in parts])
    if isinstance(value, np.dtype) and _named_dtype(value):
        return call(numpy_global(globs, "dtype"), [constant(value.name)])
    return name(globs.bind(value, f"const_{type(value).__name__}",
                           ("unavailable", f"a constant {type(value).__name__}")))


def _typed_constant(value: Any, globs: GlobalNames) -> str:
    """The module-level name of a NumPy scalar (``float32_0p25 = float32(0.25)``)."""
    ctor_name = type(value).__name__
    ctor = globs.bind(type(value), ctor_name, ("from", "numpy", ctor_name))
    definition = call(ctor, [literal(value.item(), globs)])
    return globs.constant(value, f"{ctor_name}_{_value_token(value)}", definition)


def _value_token(value: Any) -> str:
    """A value as name characters: ``0p25``, ``neg1em05``, ``n3`` (an int: a name must
    not end in ``_<digits>``, the form of locals), ``nan``, ``True``."""
    text = str(value)
    sign = "neg" if text.startswith("-") else ""
    token = text.lstrip("-").replace("e+", "e").replace("e-", "em").replace(".", "p")
    if token.isdigit():
        token = "n" + token
    return sign + token


def _plain_numpy_scalar(value: Any) -> bool:
    """A NumPy number or bool that round-trips through a Python scalar."""
    return isinstance(value, (np.number, np.bool_)) and isinstance(
        value.item(), (bool, int, float, complex))


def _named_dtype(dtype: np.dtype) -> bool:
    """``dtype('<name>')`` gives this dtype back (not structured, native byte order)."""
    try:
        return dtype.kind != "O" and np.dtype(dtype.name) == dtype
    except TypeError:
        return False
