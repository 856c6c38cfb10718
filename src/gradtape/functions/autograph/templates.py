"""Small gast builders for the statements the converters write."""

from __future__ import annotations

from collections.abc import Sequence

import gast

__all__ = ["parse_statements", "parse_expression", "name", "assign", "function_def",
           "located", "inherit_lines"]


def _unlocated(node: gast.AST) -> gast.AST:
    """A template's nodes without the template's own lines (``located`` gives them the
    user's)."""
    for sub in gast.walk(node):
        for attribute in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
            if hasattr(sub, attribute):
                setattr(sub, attribute, None)
    return node


def parse_statements(source: str) -> list[gast.stmt]:
    return [_unlocated(s) for s in gast.parse(source).body]


def parse_expression(source: str) -> gast.expr:
    return _unlocated(gast.parse(source, mode="eval").body)


def name(identifier: str, store: bool = False) -> gast.Name:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=identifier, ctx=ctx, annotation=None, type_comment=None)


def assign(target: str, value: gast.expr) -> gast.Assign:
    return gast.Assign(targets=[name(target, store=True)], value=value, type_comment=None)


def function_def(fn_name: str, params: Sequence[str], nonlocals: Sequence[str],
                 body: list[gast.stmt]) -> gast.FunctionDef:
    """``def fn_name(*params): nonlocal ...; body``."""
    statements: list[gast.stmt] = [gast.Nonlocal(names=list(nonlocals))] if nonlocals else []
    statements += body or [gast.Pass()]
    args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for p in params],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    return gast.FunctionDef(name=fn_name, args=args, body=statements, decorator_list=[],
                            returns=None, type_comment=None, type_params=[])


def located(nodes: list[gast.AST], origin: gast.AST) -> list[gast.AST]:
    """``nodes`` (and everything in them without a line) at ``origin``'s line: an error
    in converted code points at the user's statement."""
    line = getattr(origin, "lineno", None)
    if line is None:
        return nodes
    for node in nodes:
        for sub in gast.walk(node):
            if "lineno" in getattr(sub, "_attributes", ()) and \
                    getattr(sub, "lineno", None) is None:
                sub.lineno, sub.col_offset = line, getattr(origin, "col_offset", 0)
                sub.end_lineno = getattr(origin, "end_lineno", line)
                sub.end_col_offset = getattr(origin, "end_col_offset", 0)
    return nodes


def inherit_lines(node: gast.AST, line: int = 1) -> None:
    """Every node without a line gets its parent's (the statement it was made for)."""
    if "lineno" in getattr(node, "_attributes", ()):
        if getattr(node, "lineno", None) is None:
            node.lineno, node.end_lineno = line, line
            node.col_offset, node.end_col_offset = 0, 0
        line = node.lineno
    for child in gast.iter_child_nodes(node):
        inherit_lines(child, line)
