"""Names in generated code: deterministic, readable, and never clashing.

User text reaches generated source in two ways only, each through one function here:
``identifier`` (local and global names from hints, op names, qualnames) and
``comment_text`` (``# op (file:line)`` comments and header lines). Neither lets a line
break, control character or look-alike through: a file named ``a\rimport os`` must not
become code in every backward.

Locals are ``<hint>_<n>`` (``tanh_1``, ``multiply_4``), or ``d_<forward op>_<n>`` for a
cotangent that leaves the block of its forward op (``d_tanh_7``), numbered in order of
first appearance. Globals (NumPy functions, primitive implementations, constants) never
end in ``_<digits>``, so the two kinds cannot collide.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from typing import Any

from ..ir.nodes import Var

# Names the generated code uses for Python builtins: never bound as globals.
BUILTINS = frozenset({"slice", "complex", "None", "True", "False"})

_LOCAL_SUFFIX = re.compile(r"_\d+$")


_identifiers: dict[tuple[str, str], str] = {}
_MAX_IDENTIFIERS = 4096  # hints are op and parameter names: a few dozen in practice
_NOT_ASCII_WORD = re.compile(r"[^0-9A-Za-z_]")


def identifier(text: str, default: str = "v") -> str:
    """``text`` made a valid, non-keyword identifier that Python reads back unchanged."""
    name = _identifiers.get((text, default))
    if name is None:
        name = _word_chars(str(text)).strip("_") or default
        if keyword.iskeyword(name) or name[0].isdigit():
            name = "v_" + name
        if len(_identifiers) < _MAX_IDENTIFIERS:
            _identifiers[text, default] = name
    return name


def _word_chars(text: str) -> str:
    """``text`` with every character that cannot stay in a name replaced by ``_``.

    Python NFKC-normalizes identifiers when it parses them, so a name that is not in
    NFKC form (``\ufb01`` reads as ``fi``) could collide with another: such names
    keep only their ASCII letters and digits."""
    if text.isascii():
        return _NOT_ASCII_WORD.sub("_", text)
    kept = "".join(c if ("_" + c).isidentifier() else "_" for c in text)
    if unicodedata.normalize("NFKC", kept) != kept:
        return _NOT_ASCII_WORD.sub("_", text)
    return kept


def plain_identifier(text: str) -> bool:
    """Whether ``text`` can be written as it is as a name (a keyword argument, an
    imported attribute): an identifier Python reads back unchanged, not a keyword."""
    return (text.isidentifier() and not keyword.iskeyword(text)
            and (text.isascii() or unicodedata.normalize("NFKC", text) == text))


def comment_text(text: str) -> str:
    """``text`` safe on one comment line: every character that is not printable (line
    breaks of every kind, ``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``, ``\x85``,
    ``\u2028``, ``\u2029``, NUL, other control and format characters, such as
    bidirectional overrides) is written as its ``repr`` escape (``\r``, ``\x85``)."""
    text = str(text)
    if text.isprintable():  # the common case: one C-level scan
        return text
    # repr escapes exactly the characters str.isprintable rejects.
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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

    # The array library the function is generated for: None is NumPy (array_kinds.py).
    array_kind: Any = None

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}
        self.imports: dict[str, tuple] = {}
        self._by_id: dict[int, str] = {}
        self._by_value: dict[tuple, str] = {}

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

    def constant(self, value: Any, preferred: str, definition: Any) -> str:
        """The global name of a typed constant (a NumPy scalar), one per distinct value:
        bound once at module level instead of built on every call. ``definition`` is
        the expression the import header assigns it from."""
        key = (type(value), value.tobytes())
        name = self._by_value.get(key)
        if name is None:
            name = self._by_value[key] = self.bind(value, preferred, ("value", definition))
        return name
