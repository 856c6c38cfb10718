"""Names in generated code: deterministic, readable, and never clashing.

User text reaches generated source in two ways only, each through one function here:
``identifier`` (local and global names from hints, op names, qualnames) and
``comment_text`` (``# op (file:line)`` comments and header lines). Neither lets a line
break, control character or look-alike through: a file named ``a\rimport os`` must not
become code in every backward.

A local is the user's name for its value when it has one (``Var.name``: ``hidden``,
``w_out``, ``d_logits``), else ``<hint>_<n>`` (``transpose_1``, ``multiply_4``), numbered
in order of first appearance. A user's name that is taken already (by another local, a
keyword, a builtin, the function itself) gets the first free ``_<n>`` suffix
(``h``, ``h_2``). Globals (NumPy functions, primitive implementations, constants) never
end in ``_<digits>``, and one that a local took already gets a trailing ``_``: the
kinds never collide.
"""

from __future__ import annotations

import builtins
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


# Never a local: Python's builtins (a local ``sum`` would hide the one the code may
# call), and the names the generated module defines besides its globals.
_NOT_LOCALS = frozenset(dir(builtins)) | {"backward", "forward", "np", "numpy", "gradtape"}


class LocalNames:
    def __init__(self, globs: GlobalNames | None = None) -> None:
        self._names: dict[Var, str] = {}
        self._count = 0
        self._taken: set[str] = set() if globs is None else globs.locals
        self._globs = globs

    def __call__(self, var: Var) -> str:
        return self._names[var]

    def get(self, var: Var) -> str | None:
        """``var``'s name, ``None`` if it has none (yet)."""
        return self._names.get(var)

    def define(self, var: Var, hint: str, user_name: str | None = None) -> str:
        """Name ``var``: the user's name (``user_name``, else ``var.name``) or the hint's."""
        user_name = user_name or var.name
        if user_name is not None:
            name = self._free(identifier(user_name))
        else:
            self._count += 1
            name = self._free(f"{identifier(hint)}_{self._count}")
        self._names[var] = name
        self._taken.add(name)
        return name

    def reserve(self, base: str) -> str:
        """A local name of the code generator's own, bound to no var (``feeds``: the list a
        backward takes; a buffer pool's slots): ``base``, or ``base_<n>`` if taken."""
        name = self._free(base)
        self._taken.add(name)
        return name

    def _free(self, base: str) -> str:
        """``base``, or ``base_<n>`` with the first ``n`` that is free."""
        name, n = base, 1
        while name in self._taken or name in _NOT_LOCALS or (
                self._globs is not None and name in self._globs.objects):
            n += 1
            name = f"{base}_{n}"
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
        self.locals: set[str] = set()  # the function's local names: a global yields

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
        while name in self.objects or name in BUILTINS or name == "backward" or \
                name in self.locals:
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
