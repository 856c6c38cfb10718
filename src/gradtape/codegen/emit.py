"""gast module -> Python source text. The only module that imports astor.

astor prints the source; ``ast.unparse`` serves where astor cannot (it is not installed,
fails to import, as on Python 3.14 which removed the AST classes its printer needs, or
fails on a tree). Both print the same tree, so they give functions that behave the same
(the tests check it). Comment markers become ``#`` comments after printing, since
neither printer keeps comments.
"""

from __future__ import annotations

import ast
import re
import warnings

import gast

from .naming import comment_text
from .to_gast import COMMENT_MARKER

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import astor
except Exception:  # any failure to import means: print with ast.unparse
    astor = None

PRINTERS = ("astor", "unparse")

_MARKER_LINE = re.compile(rf"^(\s*){COMMENT_MARKER}(\d+)__$")


def _astor_print(tree: ast.Module) -> str:
    if astor is None:
        raise ImportError("astor is not available")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # One line per statement, as ast.unparse prints it: astor's default line
        # splitting breaks expressions at odd places.
        return astor.to_source(tree, pretty_source="".join)


def _comments(source: str, texts: list[str]) -> tuple[str, int]:
    """Replace each marker line by the comment it stands for (same line count); also
    how many lines were replaced. Every comment goes through ``comment_text``: user
    text (file and op names) must never end the comment line."""
    lines = source.splitlines()
    replaced = 0
    for i, line in enumerate(lines):
        match = _MARKER_LINE.match(line)
        if match:
            lines[i] = f"{match.group(1)}# {comment_text(texts[int(match.group(2))])}"
            replaced += 1
    return "\n".join(lines) + "\n", replaced


def _convert(value):
    if isinstance(value, gast.AST):
        return to_ast(value)
    if isinstance(value, list):
        return [_convert(v) for v in value]
    return value


_new = ast.AST.__new__
# gast class -> (ast class, its fields, the one instance shared by every use if it has
# no fields: contexts and operators carry no data, as in CPython's own parser)
_CLASSES: dict[type, tuple[type, tuple[str, ...], ast.AST | None]] = {}


def _ast_class_of(cls: type) -> tuple[type, tuple[str, ...], ast.AST | None]:
    ast_class = getattr(ast, cls.__name__)
    fields = ast_class._fields
    hit = _CLASSES[cls] = (ast_class, fields, None if fields else ast_class())
    return hit


def to_ast(node: gast.AST) -> ast.AST:
    """The stdlib ``ast`` form of a gast tree the generator builds.

    A direct field-by-field copy, several times faster than ``gast.gast_to_ast``'s
    generic visitor (which serves as the fallback for anything unexpected).
    """
    cls = node.__class__
    ast_class, fields, shared = _CLASSES.get(cls) or _ast_class_of(cls)
    if shared is not None:
        return shared
    if cls is gast.Name and isinstance(node.ctx, gast.Param):
        return ast.arg(arg=node.id, annotation=None, type_comment=None)
    converted = _new(ast_class)
    values = converted.__dict__
    for f in fields:
        value = getattr(node, f, None)
        if isinstance(value, gast.AST):
            value = to_ast(value)
        elif value.__class__ is list:
            value = [to_ast(v) if isinstance(v, gast.AST) else _convert(v) for v in value]
        values[f] = value
    return converted


def _module_ast(module: gast.Module) -> ast.Module:
    try:
        return to_ast(module)
    except Exception:  # a node the fast copy does not know: use gast's
        return gast.gast_to_ast(module)


def _blank_line_before_def(source: str) -> str:
    return re.sub(r"\n+(def )", r"\n\n\n\1", source, count=1)


def to_source(module: gast.Module, comments: list[str],
              printer: str = "astor") -> tuple[str, str]:
    """``(source, printer used)``: astor unless it is unavailable or fails."""
    tree = _module_ast(module)
    source = None
    used = printer
    if printer == "astor":
        try:
            source = _astor_print(tree)
        except Exception:  # astor failing on a tree: use the stdlib printer
            used = "unparse"
    elif printer != "unparse":
        raise ValueError(f"Unknown printer {printer!r}; use one of {PRINTERS}.")
    if source is None:
        source = ast.unparse(ast.fix_missing_locations(tree))
    source, replaced = _comments(source.strip("\n"), comments)
    source = _blank_line_before_def(source)
    # A marker astor wrapped onto a line with other code, or a line of a string constant
    # astor printed across lines that looks like a marker: print with the stdlib, which
    # writes each marker on its own line and strings on one.
    if replaced != len(comments):
        if used == "unparse":
            raise ValueError("a comment marker survived printing")
        return to_source(module, comments, "unparse")
    return source, used
