"""What a converted statement carries: the names it assigns, and which of them were
assigned before it or are read after it (in document order, or anywhere in a loop
around it, which runs again). A statement's outputs are the names it assigns that were
defined before it or are used after it; the others are its own temporaries."""

from __future__ import annotations

import collections

import gast

__all__ = ["Analysis", "assigned_names"]

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
           gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_LOOPS = (gast.For, gast.While)


def assigned_names(node: gast.AST) -> set[str]:
    """The names ``node`` assigns in its own scope (nested functions' names included,
    their bodies not)."""
    found: set[str] = set()

    def visit(n: gast.AST, top: bool) -> None:
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            found.add(n.name)
            if not top:
                return
        elif isinstance(n, _SCOPES) and not top:
            return
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            found.add(n.id)
        for child in gast.iter_child_nodes(n):
            visit(child, False)

    visit(node, isinstance(node, (gast.If, gast.For, gast.While)))
    return found


class Analysis:
    """Document-order positions of a function's name reads and writes and of its
    statements, to answer "defined before" and "used after" for a statement."""

    def __init__(self, function: gast.FunctionDef):
        self.loads: dict[str, list[int]] = collections.defaultdict(list)
        self.stores: dict[str, list[int]] = collections.defaultdict(list)
        self.spans: dict[int, tuple[int, int]] = {}
        self.enclosing_loops: dict[int, list[int]] = {}
        # Names bound when the body starts: parameters, and names declared nonlocal.
        self.params = {a.id for a in _parameters(function.args)}
        self.declared_global: set[str] = set()
        self._counter = 0
        for stmt in function.body:
            self._visit(stmt, [], in_scope=True)

    def _visit(self, node: gast.AST, loops: list[int], in_scope: bool) -> None:
        start = self._counter
        self._counter += 1
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load):
                self.loads[node.id].append(start)
            elif isinstance(node.ctx, gast.Store) and in_scope:
                self.stores[node.id].append(start)
        if isinstance(node, gast.Global):
            self.declared_global.update(node.names)
        elif isinstance(node, gast.Nonlocal) and in_scope:
            self.params.update(node.names)  # bound outside: defined before everything
        nested = isinstance(node, _SCOPES)
        if isinstance(node, (gast.FunctionDef, gast.ClassDef)) and in_scope:
            self.stores[node.name].append(start)
        inner = loops + [id(node)] if isinstance(node, _LOOPS) else loops
        for child in gast.iter_child_nodes(node):
            self._visit(child, inner, in_scope and not nested)
        if isinstance(node, gast.stmt):
            self.spans[id(node)] = (start, self._counter)
            self.enclosing_loops[id(node)] = loops

    def defined_before(self, name: str, stmt: gast.stmt) -> bool:
        start = self.spans[id(stmt)][0]
        return name in self.params or any(i < start for i in self.stores.get(name, ()))

    def used_after(self, name: str, stmt: gast.stmt) -> bool:
        end = self.spans[id(stmt)][1]
        loads = self.loads.get(name, ())
        if any(i >= end for i in loads):
            return True
        start = self.spans[id(stmt)][0]
        for loop in self.enclosing_loops[id(stmt)]:  # read on the next iteration
            lo, hi = self.spans[loop]
            if any(lo <= i < hi and not start <= i < end for i in loads):
                return True
        return False

    def outputs(self, stmt: gast.stmt) -> list[str]:
        """The names ``stmt`` assigns that live on past it, sorted."""
        names = assigned_names(stmt) - self.declared_global
        return sorted(n for n in names
                      if self.defined_before(n, stmt) or self.used_after(n, stmt))


def _parameters(args: gast.arguments) -> list[gast.Name]:
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    names += [a for a in (args.vararg, args.kwarg) if a is not None]
    return names
