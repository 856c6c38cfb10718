"""The public runtime of generated code: the only gradtape module it imports.

A generated module imports NumPy (or, generated for another array library, that
library's namespace) and this module, nothing else. gradtape's own
implementations are private, so the import header finds each one through the primitive
that owns it: ``cumsum_impl = _runtime.primitive_impl("gradtape.ops.reduce", "cumsum")``
(so do implementations that cannot be imported by name: a lambda, a closure).
"""

from __future__ import annotations

import importlib
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np


def primitive_impl(module: str, primitive_name: str) -> Callable[..., Any]:
    """The implementation of the primitive ``primitive_name`` defined in ``module``."""
    from ..ir.primitive import Primitive

    mod = importlib.import_module(module)
    for value in vars(mod).values():
        prim = value if isinstance(value, Primitive) else getattr(value, "primitive", None)
        if isinstance(prim, Primitive) and prim.name == primitive_name:
            return prim.impl
    lazy = getattr(mod, "lazy_primitive", None)  # a family that builds its primitives late
    prim = lazy(primitive_name) if callable(lazy) else None
    if isinstance(prim, Primitive):
        return prim.impl
    raise ImportError(
        f"No primitive {primitive_name!r} found in {module}: this generated module was "
        "written by another version of the code; regenerate it."
    )


def namespace_impl(namespace: str, primitive_name: str) -> Callable[..., Any]:
    """The implementation of the primitive ``primitive_name`` on the arrays of the
    library whose namespace module is ``namespace`` (``"dask.array"``)."""
    import gradtape.ops  # noqa: F401 - registers every primitive and its namespace rules

    from ..core.backends import kind_named
    from ..ir.primitive import Primitive

    for module_name, mod in list(sys.modules.items()):
        if not module_name.startswith("gradtape.ops"):
            continue
        for value in list(vars(mod).values()):
            prim = value if isinstance(value, Primitive) else getattr(value, "primitive", None)
            if isinstance(prim, Primitive) and prim.name == primitive_name:
                return kind_named(namespace).impl(prim)
    raise ImportError(
        f"No primitive {primitive_name!r} found in gradtape.ops: this generated module was "
        "written by another version of the code; regenerate it."
    )


def unavailable(what: str) -> Any:
    raise ImportError(
        f"This generated backward uses {what}, which exists only in the process that "
        "compiled it; it cannot be imported standalone."
    )


class BufferPool(list):
    """The free work-buffer sets of one generated function (``codegen/buffer_pool.py``).

    A call pops a set (or makes one when none is free: the first call, or a call while
    another thread or a recursive call holds the others) and appends it back when it
    returns or raises, so two calls running at once never share a set. The pool holds
    one set per call that ran at once; ``gt.clear_cache()`` and
    ``gt.config(pool_buffers=False)`` empty every pool (``clear_buffer_pools``).
    """

    def __init__(self, *avals: tuple[tuple[int, ...], str]) -> None:
        super().__init__()
        self.avals = avals
        _pools.add(self)

    def new(self) -> tuple:
        """A fresh set of buffers, one per slot (their contents are never read)."""
        return tuple(np.empty(shape, dtype) for shape, dtype in self.avals)

    __hash__ = object.__hash__  # a list is unhashable: the pools are kept by identity

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def nbytes(self) -> int:
        """The bytes the free sets hold now."""
        one = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in self.avals)
        return one * len(self)


_pools: weakref.WeakSet = weakref.WeakSet()


def clear_buffer_pools() -> None:
    """Drop every generated function's free buffer sets (a call running now returns its
    set when it ends); the next call of each makes a new set."""
    for pool in list(_pools):
        pool.clear()
