"""The rules of how a primitive runs on another library's arrays: each op runs the
namespace's function of the same name (``np.power`` -> ``pow`` by the array API's
names), or a rule registered here (``namespace_rule``) by the modules beside it, or
refuses clearly. ``core/backends.py`` holds the kinds themselves (``ArrayKind``,
``kind_of``) and asks ``implementation`` for an op's implementation on one, once per
(kind, primitive).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ...core.backends import ArrayKind, install_implementations

_ndarray = np.ndarray

# NumPy functions whose array-API name differs (the standard's 2023 renames).
_ARRAY_API_NAMES = {
    "power": "pow", "arctan": "atan", "arcsin": "asin", "arccos": "acos",
    "arctanh": "atanh", "arcsinh": "asinh", "arccosh": "acosh", "arctan2": "atan2",
    "absolute": "abs", "invert": "bitwise_invert", "concatenate": "concat",
    "transpose": "permute_dims", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "conjugate": "conj",
}

# Namespace rules: primitive name -> (kind -> implementation), for ops whose NumPy
# implementation neither is a NumPy function of the same name nor runs through NumPy's
# protocols (``np.add.reduce`` does not on Dask). ``namespaces.py`` has them.
_RULES: dict[str, Callable[[ArrayKind], Callable[..., Any]]] = {}
# Rules for array-API kinds only (``array_api_strict``): on Dask and CuPy the NumPy
# implementation already runs through NumPy's protocols.
_ARRAY_API_RULES: dict[str, Callable[[ArrayKind], Callable[..., Any]]] = {}

# Rules for one library (namespace module name -> primitive name -> rule): CuPy's,
# where a NumPy implementation calls np.asarray (CuPy refuses to convert implicitly).
_LIBRARY_RULES: dict[str, dict[str, Callable[[ArrayKind], Callable[..., Any]]]] = {}


def namespace_rule(primitive_name: str, *, array_api_only: bool = False,
                   library: str | None = None):
    """Declare how primitive ``primitive_name`` runs on another library's arrays:
    ``@namespace_rule("sum") def _sum(kind): return lambda x, axis, keepdims: ...``.
    With ``array_api_only``, only on kinds outside NumPy's protocols; with ``library``,
    only on that library's arrays (``"cupy"``), before any other rule."""
    rules = (_LIBRARY_RULES.setdefault(library, {}) if library is not None
             else _ARRAY_API_RULES if array_api_only else _RULES)

    def register(make: Callable[[ArrayKind], Callable[..., Any]]):
        rules[primitive_name] = make
        return make
    return register


def has_library_rule(kind: ArrayKind, prim_name: str) -> bool:
    """Whether ``kind``'s library has a rule of its own for the primitive: generated code
    calls it rather than writing the primitive's NumPy template (Dask's ``matvec`` is its
    tensordot, not the ``@`` a template would write)."""
    return prim_name in _LIBRARY_RULES.get(kind.name, ())


def implementation(kind: ArrayKind, prim: Any) -> Callable[..., Any]:
    asarray = kind.namespace.asarray
    rule = _LIBRARY_RULES.get(kind.name, {}).get(prim.name) or _RULES.get(prim.name)
    if rule is None and not kind.protocols:
        rule = _ARRAY_API_RULES.get(prim.name)
    if rule is not None:
        return rule(kind) if kind.protocols else _namespace_arguments(rule(kind), asarray)
    if kind.protocols:  # NumPy's protocols route the NumPy implementation to the library
        return prim.impl
    function = _namespace_function(kind.namespace, prim.impl)
    if function is None:
        return _unsupported(prim.name, kind)
    return _namespace_arguments(function, asarray)


def namespace_name(impl: Any) -> str | None:
    """The array-API name of a NumPy function ``impl`` (``np.power`` -> ``pow``)."""
    attr = getattr(impl, "__name__", None)
    if not isinstance(attr, str) or getattr(np, attr, None) is not impl:
        return None
    return _ARRAY_API_NAMES.get(attr, attr)


def _namespace_function(namespace: ModuleType, impl: Any) -> Callable[..., Any] | None:
    attr = namespace_name(impl)
    return None if attr is None else getattr(namespace, attr, None)


def _namespace_arguments(function: Callable[..., Any], asarray: Callable[..., Any]
                         ) -> Callable[..., Any]:
    """``function`` taking a program's NumPy constants: the array API accepts only its
    own arrays and Python scalars, so NumPy scalars become Python scalars (which take
    the array's dtype, as gradtape's constants have the dtype of the array they meet)
    and NumPy arrays (constants the backward made, such as its ones seed) its arrays."""
    if getattr(function, "unsupported", False):
        return function  # it raises whatever it is given

    def call(*args: Any, **params: Any) -> Any:
        return function(*[a.item() if isinstance(a, np.generic) else
                          asarray(a) if isinstance(a, _ndarray) else a for a in args],
                        **params)
    call.__name__ = getattr(function, "__name__", "call")
    return call


def _unsupported(prim_name: str, kind: ArrayKind) -> Callable[..., Any]:
    def refuse(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"gradtape's {prim_name!r} op does not run on {kind.name} arrays yet: its "
            f"NumPy implementation has no {kind.name} equivalent. Convert the input with "
            "np.asarray first, or use an op that does (docs/scaling.md lists them).")
    return unsupported(refuse)


def unsupported(refuse: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``refuse`` as the implementation of an op a kind cannot run (it raises)."""
    refuse.unsupported = True  # type: ignore[attr-defined]
    return refuse



install_implementations(implementation)
