"""Names in generated code: deterministic, readable, and never clashing.

Locals are ``<hint>_<n>`` (``tanh_1``, ``multiply_4``), or ``d_<forward op>_<n>`` for a
cotangent that leaves the block of its forward op (``d_tanh_7``), numbered in order of
first appearance. Globals (NumPy functions, primitive implementations, constants) never
end in ``_<digits>``, so the two kinds cannot collide.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from ..ir.nodes import Var

# Names the generated code uses for Python builtins: never bound as globals.
BUILTINS = frozenset({"slice", "complex", "None", "True", "False"})

_LOCAL_SUFFIX = re.compile(r"_\d+$")


_identifiers: dict[tuple[str, str], str] = {}


def identifier(text: str, default: str = "v") -> str:
    """``text`` made a valid, non-keyword identifier."""
    name = _identifiers.get((text, default))
    if name is None:
        name = re.sub(r"\W", "_", text).strip("_") or default
        if keyword.iskeyword(name) or name[0].isdigit():
            name = "v_" + name
        if len(_identifiers) < 4096:  # hints are op names: a few dozen in practice
            _identifiers[text, default] = name
    return name


class LocalNames:
    def __init__(self) -> None:
        self._names: dict[Var, str] = {}
        self._count = 0

    def __call__(self, var: Var) -> str:
        return self._names[var]

    def define(self, var: Var, hint: str) -> str:
        self._count += 1
        name = self._names[var] = f"{identifier(hint)}_{self._count}"
        return name

    def share(self, var: Var, other: Var) -> str:
        """``var`` lives in ``other``'s buffer (in-place accumulation): same name."""
        name = self._names[var] = self._names[other]
        return name


class GlobalNames:
    """Module globals of one generated function: name -> (object, how to import it)."""

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}
        self.imports: dict[str, tuple] = {}
        self._by_id: dict[int, str] = {}

    def bind(self, obj: Any, preferred: str, spec: tuple) -> str:
        """The global name of ``obj``, binding it under ``preferred`` if still free.

        ``spec`` says how a standalone module imports it: ``("from", module, attr)``,
        ``("primitive", module, name)`` or ``("unavailable", reason)``.
        """
        name = self._by_id.get(id(obj))
        if name is not None:
            return name
        base = identifier(preferred, "fn")
        if _LOCAL_SUFFIX.search(base):
            base += "_fn"
        name = base
        while name in self.objects or name in BUILTINS or name == "backward":
            name += "_"
        self.objects[name] = obj
        self.imports[name] = spec
        self._by_id[id(obj)] = name
        return name
