"""Helpers the import header of a dumped backward module calls.

A primitive implementation that cannot be imported by name (a lambda, a closure) is
found through the primitive that owns it: ``primitive_impl("gradtape.ops.nn", "relu")``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def primitive_impl(module: str, primitive_name: str) -> Callable[..., Any]:
    """The implementation of the primitive ``primitive_name`` defined in ``module``."""
    from ..ir.primitive import Primitive

    mod = importlib.import_module(module)
    for value in vars(mod).values():
        prim = value if isinstance(value, Primitive) else getattr(value, "primitive", None)
        if isinstance(prim, Primitive) and prim.name == primitive_name:
            return prim.impl
    raise ImportError(
        f"No primitive {primitive_name!r} found in {module}: this generated module was "
        "written by another version of the code; regenerate it."
    )


def unavailable(what: str) -> Any:
    raise ImportError(
        f"This generated backward uses {what}, which exists only in the process that "
        "compiled it; it cannot be imported standalone."
    )
