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


class AttributeNamespace(types.SimpleNamespace):
    """A ``SimpleNamespace`` whose missing attributes ask ``_explain_missing`` (a
    ``(namespace, name) -> AttributeError`` that ``api/missing_names.py`` installs) for
    their error, as modules' ``__getattr__``; it shows and prints as SimpleNamespace."""

    _explain_missing = None

    def __getattr__(self, name: str) -> Any:
        explain = AttributeNamespace._explain_missing
        if explain is not None and not name.startswith("__"):
            raise explain(self, name)
        raise AttributeError(f"'namespace' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return "namespace(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"


def attribute_namespace(members: Mapping[str, Any]) -> types.SimpleNamespace:
    """A plain object holding ``members``, for a namespace that is not a module in TF's
    sense either (``gt.dtypes``: the dtype objects and ``as_dtype``)."""
    return AttributeNamespace(**members)
