"""Public namespaces (``gt.nn``, ``gt.linalg``, ``gt.math``...): objects that hold only
the names the API documents, so ``dir()`` shows users nothing of the modules behind them.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any


def namespace(name: str, doc: str, members: Mapping[str, Any]) -> types.ModuleType:
    """A module object named ``name`` holding exactly ``members``."""
    ns = types.ModuleType(name, doc)
    for member, value in members.items():
        setattr(ns, member, value)
    ns.__all__ = sorted(members)
    return ns


def public_dir(module_globals: dict) -> Callable[[], list[str]]:
    """A module's ``__dir__`` (PEP 562) listing its ``__all__`` only: assign it as
    ``__dir__ = public_dir(globals())`` in a module users reach as a namespace."""
    names = sorted(module_globals["__all__"])
    return lambda: list(names)


def attribute_namespace(members: Mapping[str, Any]) -> types.SimpleNamespace:
    """A plain object holding ``members``, for a namespace that is not a module in TF's
    sense either (``gt.dtypes``: the dtype objects and ``as_dtype``)."""
    return types.SimpleNamespace(**members)
