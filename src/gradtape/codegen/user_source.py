"""The user's statement at a recorded ``(file, line)``: its text and what it assigns.

Generated code comments each block with the statement it came from
(``# logits = hidden @ w_out   (model.py:13)``), and a value a statement assigns is
named after its target (``logits``; its cotangent ``d_logits``). A file is read and
parsed with gast once, and each location's answer is kept: a training loop asks about
the same few lines on every structure it builds, and nothing here runs on a warm call.
Anything that cannot be read (no file, ``<stdin>``, a syntax error) is simply unknown.
"""

from __future__ import annotations

import linecache
import os
from collections.abc import Iterable
from typing import NamedTuple

import gast

# The longest statement text a comment shows; longer ones end in "...".
MAX_TEXT = 100
_MAX_FILES = 64  # parsed files kept (their line -> statement indexes)
_MAX_LOCATIONS = 4096


class Statement(NamedTuple):
    text: str  # the statement on one line, as written (whitespace runs made one space)
    targets: tuple[str, ...] | None  # the names it assigns, in order; None: no assignment
    operands: tuple[str, ...]  # the names its value reads as data (not ``gt`` of ``gt.f``)
    # Whether the value bound to the targets is surely the statement's last op's result:
    # ``h = gt.tanh(x @ w)``, ``h = x[0]``; not a display (``h = [f(x), g(x)]``,
    # ``a, b = f(x), g(x)``) nor an item of a call's result (``h = f(x)[0]``: maybe a
    # Python list's item, made by an op before the last).
    direct: bool = False


_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return)
_files: dict[str, dict[int, Statement]] = {}
_locations: dict[tuple[str, int], Statement | None] = {}


def statement_at(location: tuple[str, int] | None) -> Statement | None:
    """The simple statement (assignment, expression, return) covering ``location``."""
    if location is None:
        return None
    try:
        return _locations[location]
    except KeyError:
        pass
    except TypeError:  # an unhashable location: never ours
        return None
    filename, line = location
    found = _index(filename).get(line)
    if len(_locations) >= _MAX_LOCATIONS:
        _locations.clear()
    _locations[location] = found
    return found


def statements_at(locations: Iterable[tuple[str, int] | None]) -> list[Statement | None]:
    """``statement_at`` of each location, in one call: a build asks about every record,
    and most locations are known already."""
    known = _locations
    found = []
    for location in locations:
        try:
            found.append(known[location])
        except (KeyError, TypeError):
            found.append(statement_at(location))
    return found


def where(location: tuple[str, int]) -> str:
    """``model.py:13``: the file's basename only, the same text on every machine."""
    filename, line = location
    return f"{os.path.basename(filename)}:{line}"


def _index(filename: str) -> dict[int, Statement]:
    index = _files.get(filename)
    if index is None:
        if len(_files) >= _MAX_FILES:
            _files.clear()
        index = _files[filename] = _statements(filename)
    return index


def _statements(filename: str) -> dict[int, Statement]:
    """line -> the simple statement covering it, for every line of ``filename``."""
    if not isinstance(filename, str):
        return {}
    lines = linecache.getlines(filename)
    if not lines:
        return {}
    try:
        tree = gast.parse("".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    index: dict[int, Statement] = {}
    for node in gast.walk(tree):
        if isinstance(node, _SIMPLE):
            statement = Statement(_text(node, lines), _targets(node), _operands(node),
                                  _direct(node))
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                index.setdefault(line, statement)
    return index


def _text(node: gast.stmt, lines: list[str]) -> str:
    """The statement's own characters (offsets are UTF-8 bytes), on one line."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    chunk = [line.encode() for line in lines[first:last + 1]]
    end = node.end_col_offset
    if end is not None:
        chunk[-1] = chunk[-1][:end]
    chunk[0] = chunk[0][node.col_offset or 0:]
    text = " ".join(" ".join(part.decode(errors="replace").split()) for part in chunk)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "..."


def _targets(node: gast.stmt) -> tuple[str, ...] | None:
    if isinstance(node, gast.Assign):
        target = node.targets[0]
    elif isinstance(node, (gast.AugAssign, gast.AnnAssign)) and node.value is not None:
        target = node.target
    else:
        return None
    elements = target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]
    names = tuple(_target_name(e) for e in elements)
    return None if "" in names else names


_DISPLAYS = (gast.Tuple, gast.List, gast.Set, gast.Dict, gast.ListComp, gast.SetComp,
             gast.DictComp, gast.GeneratorExp, gast.Starred, gast.Lambda)


def _direct(node: gast.stmt) -> bool:
    """Whether the statement binds its value's last op's result (see ``Statement``)."""
    value = getattr(node, "value", None)
    if value is None or isinstance(value, _DISPLAYS):
        return False
    if any(isinstance(sub, gast.Lambda) for sub in gast.walk(value)):
        return False  # f = gt.function(lambda x: ...): the lambda's ops run later
    while isinstance(value, gast.Subscript):
        value = value.value
        if isinstance(value, gast.Call):
            return False  # f(x)[0]: the call may return a list
    return not isinstance(value, gast.IfExp) or (
        not isinstance(value.body, _DISPLAYS) and not isinstance(value.orelse, _DISPLAYS))


def _target_name(target: gast.expr) -> str:
    """``h`` for ``h``, ``kernel`` for ``self.kernel``; ``""`` for anything else."""
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Attribute):
        return target.attr
    return ""


def _operands(node: gast.stmt) -> tuple[str, ...]:
    """The distinct names the statement's value reads as data, in order: ``x`` and
    ``labels`` of ``gt.f(x, labels=labels)``, never a called or dotted-into name."""
    value = getattr(node, "value", None)
    if value is None:
        return ()
    not_data = set()
    for sub in gast.walk(value):
        if isinstance(sub, gast.Call):
            not_data.add(id(sub.func))
        elif isinstance(sub, gast.Attribute):
            not_data.add(id(sub.value))
    names: dict[str, None] = {}
    for sub in gast.walk(value):
        if isinstance(sub, gast.Name) and id(sub) not in not_data:
            names[sub.id] = None
    return tuple(names)
