"""How one equation is written as a Python expression.

In order of preference:

1. a template, declared with the primitive (``Primitive(..., template=...,
   array_template=..., array_shorthands=...)``): ``{0}``, ``{1}`` are the inputs,
   ``{name}`` the params; other names are NumPy attributes, bound as globals. The array
   template, ndarray methods (cheaper than NumPy's Python-level wrappers that call
   them), serves when input 0 is an array of rank >= 1: a NumPy function returns those
   as ndarrays, never as Python or NumPy scalars;
2. a NumPy ufunc or function implementation: called under its NumPy name;
3. anything else: its implementation bound as a global ``<primitive>_impl``, called with
   the params as keyword literals: exactly what the interpreter does.

Every template must use every param: an implementation that grows a param falls back to
the generic call instead of silently dropping it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import gast
import numpy as np

from ..ir.nodes import Eqn, Var
from ..ops.backends.rules import has_library_rule
from .indexing import getitem_expression, writes_out
from .literals import call, literal, make, name, numpy_global
from .naming import GlobalNames

# Templates built from Python operators: on two Python scalars an operator gives a Python
# scalar where the ufunc gives a NumPy one, so they need at least one array input.
_OPERATOR_TEMPLATE = re.compile(r"^[-{}0-9 +*/%@]+$")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def numpy_name(impl: Any) -> str | None:
    """The name under which ``numpy`` exports ``impl``, if it does."""
    attr = getattr(impl, "__name__", None)
    if isinstance(attr, str) and getattr(np, attr, None) is impl:
        return attr
    return None


def _scipy_special_name(impl: Any) -> str | None:
    """The name under which ``scipy.special`` (if imported) exports ``impl``."""
    special = sys.modules.get("scipy.special")
    attr = getattr(impl, "__name__", None)
    if special is not None and isinstance(attr, str) and getattr(special, attr, None) is impl:
        return attr
    return None


# Builds a template's expression: (input expressions, params, globals) -> gast.expr.
Build = Callable[[list, dict, GlobalNames], Any]


class _Parsed(NamedTuple):
    build: Build
    positional: frozenset  # the input numbers it reads
    params: frozenset  # the params it writes
    inputs: int  # how many inputs it takes, if its numbers are 0..n-1 (else -1)
    operators_only: bool  # Python operators: needs an array input (_OPERATOR_TEMPLATE)


_parsed: dict[str, _Parsed] = {}


def _parse(template: str) -> _Parsed:
    """The template compiled into a builder, and what it reads."""
    hit = _parsed.get(template)
    if hit is None:
        found = _PLACEHOLDER.findall(template)
        positional = frozenset(int(f) for f in found if f.isdigit())
        params = frozenset(f for f in found if not f.isdigit())
        source = _PLACEHOLDER.sub(lambda m: f"__slot_{m.group(1)}__", template)
        tree = expression_tree(source)
        build = _compile(tree) or (lambda args, params, globs: tree)
        inputs = len(positional) if positional == frozenset(range(len(positional))) else -1
        hit = _Parsed(build, positional, params, inputs,
                      bool(_OPERATOR_TEMPLATE.match(template)))
        if len(_parsed) < 4096:  # templates of primitives: a few dozen
            _parsed[template] = hit
    return hit


def expression_tree(source: str) -> gast.expr:
    """``gast.parse(source).body[0].value`` for a template's plain expression: the
    stdlib parser, then a direct copy (gast's generic converter costs 60 us a template,
    paid on the first use of each by a new structure)."""
    return _as_gast(ast.parse(source, mode="eval").body)


def _as_gast(node: Any) -> Any:
    if isinstance(node, list):
        return [_as_gast(n) for n in node]
    if not isinstance(node, ast.AST):
        return node
    cls = getattr(gast, node.__class__.__name__)
    return make(cls, **{f: _as_gast(getattr(node, f, None)) for f in cls._fields})


def _compile(node: Any) -> Build | None:
    """A builder of a fresh copy of the template tree ``node`` with its placeholders
    filled in, or ``None`` if ``node`` has none (it is then shared, never mutated)."""
    if isinstance(node, gast.Name):
        ident = node.id
        if ident.startswith("__slot_"):
            slot = ident[len("__slot_"):-2]
            if slot.isdigit():
                index = int(slot)
                return lambda args, params, globs: args[index]
            return lambda args, params, globs: literal(params[slot], globs)
        return lambda args, params, globs: name(numpy_global(globs, ident))
    if isinstance(node, list):
        items = [(n, _compile(n)) for n in node]
        if all(b is None for _, b in items):
            return lambda args, params, globs: list(node)
        return lambda args, params, globs: [n if b is None else b(args, params, globs)
                                            for n, b in items]
    if not isinstance(node, gast.AST):
        return None  # a plain value: a str, a number, None
    parts = [(f, _compile(getattr(node, f))) for f in node._fields]
    filled = [(f, b) for f, b in parts if b is not None]
    if not filled:
        return None
    cls = node.__class__
    shared = {f: getattr(node, f) for f, b in parts if b is None}

    def build(args: list, params: dict, globs: GlobalNames) -> Any:
        fields = dict(shared)
        for f, b in filled:
            fields[f] = b(args, params, globs)
        return make(cls, **fields)

    return build


_NOTHING_IMPLIED: frozenset = frozenset()


def _template_of(eqn: Eqn) -> _Parsed | None:
    """The template ``eqn`` is written with, or ``None`` for a call."""
    prim = eqn.prim
    templates = prim.templates
    if not templates:
        return None
    template = templates[0]
    implied = _NOTHING_IMPLIED
    inputs = eqn.inputs
    if len(templates) > 1 and inputs and isinstance(inputs[0], Var) and (
            inputs[0].aval.shape != ()):
        template = templates[1]
        for shorthand in prim.array_shorthands:
            if shorthand.applies(eqn.params):
                template, implied = shorthand.template, shorthand.implied
                break
    parsed = _parse(template)
    if parsed.operators_only:
        for v in inputs:
            if isinstance(v, Var):
                break
        else:
            return None
    if parsed.inputs != len(inputs) or eqn.params.keys() != (
            parsed.params | implied if implied else parsed.params):
        return None
    return parsed


def impl_global(eqn: Eqn, globs: GlobalNames) -> str:
    """The global name the implementation of ``eqn``'s primitive is bound to."""
    impl = eqn.prim.impl
    if globs.array_kind is not None:  # Dask, array-API namespaces: their functions
        return globs.bind_primitive(eqn.prim, numpy_name(impl) or f"{eqn.prim.name}_impl")
    np_name = numpy_name(impl)
    if np_name is not None:
        return globs.bind(impl, np_name, ("from", "numpy", np_name))
    scipy_name = _scipy_special_name(impl)
    if scipy_name is not None:
        return globs.bind(impl, scipy_name, ("from", "scipy.special", scipy_name))
    spec = ("impl", getattr(impl, "__module__", None), getattr(impl, "__qualname__", None),
            eqn.prim.name)
    return globs.bind(impl, f"{eqn.prim.name}_impl", spec)


def render(eqn: Eqn, args: list, globs: GlobalNames, out: str | None = None) -> gast.expr:
    """The expression computing ``eqn`` from the input expressions ``args``.

    With ``out``, the result is written into that local (``eqn`` must be a ufunc).
    """
    kind = globs.array_kind
    if out is None and (kind is None or kind.protocols and  # else: no methods, no operators
                        not has_library_rule(kind, eqn.prim.name)):
        if eqn.prim.name == "getitem" and writes_out(eqn) and (
                kind is None or len(eqn.inputs) == 1):  # Dask: its rule takes index arrays
            return getitem_expression(eqn, args, globs)
        template = _template_of(eqn)
        if template is not None:
            return template.build(args, eqn.params, globs)
    func = impl_global(eqn, globs)
    params = {k: literal(v, globs) for k, v in eqn.params.items()}
    if out is not None:
        params["out"] = name(out)
    return call(func, args, params)
