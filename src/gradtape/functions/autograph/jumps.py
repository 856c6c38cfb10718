"""``break``, ``continue`` and ``return`` as flags, TF AutoGraph's way, so a loop or
``if`` that becomes a graph op has no jump out of it.

``break`` sets ``break_`` and the loop runs while ``not break_``; ``continue`` sets
``continue_`` (cleared at the top of each iteration); ``return x`` sets ``do_return``
and ``retval_``, loops stop on ``do_return``, and the function returns ``retval_`` at
its end. In each block, the statements after one that may jump run under
``if not <flag>:``. A function whose only ``return`` is its last statement is left as
it is.
"""

from __future__ import annotations

import collections

import gast

from .templates import assign, parse_expression, parse_statements

__all__ = ["lower_jumps", "EXTRA_TESTS"]

_NESTED_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_LOOPS = (gast.For, gast.While)
EXTRA_TESTS = "ag_extra_tests"  # a For node's flags that stop it (its while test)


def _contains(node: gast.AST, kind: type, through_loops: bool) -> bool:
    if isinstance(node, kind):
        return True
    if isinstance(node, _NESTED_SCOPES) or (isinstance(node, _LOOPS) and not through_loops):
        return False
    return any(_contains(child, kind, through_loops)
               for child in gast.iter_child_nodes(node))


class _Lowering:
    def __init__(self) -> None:
        self._counters: collections.Counter[str] = collections.Counter()

    def fresh(self, base: str) -> str:
        n = self._counters[base]
        self._counters[base] += 1
        return base if n == 0 else f"{base}{n}"

    # --- guarding blocks ---------------------------------------------------------------
    def guard(self, stmts: list, kind: type, flag: str, jump) -> list:
        """``stmts`` with each ``kind`` jump replaced by ``jump(node)`` and what follows
        a statement that may jump under ``if not flag:``."""
        out: list = []
        through = kind is gast.Return
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, kind):
                out.extend(jump(stmt))
                return out  # the rest of the block never runs
            jumps = _contains(stmt, kind, through)
            out.append(self.descend(stmt, kind, flag, jump) if jumps else stmt)
            rest = stmts[i + 1:]
            if jumps and rest:
                out.append(gast.If(test=parse_expression(f"not {flag}"),
                                   body=self.guard(rest, kind, flag, jump), orelse=[]))
                return out
        return out

    def descend(self, stmt: gast.stmt, kind: type, flag: str, jump) -> gast.stmt:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if block:
                setattr(stmt, field, self.guard(block, kind, flag, jump))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self.guard(handler.body, kind, flag, jump)
        if isinstance(stmt, _LOOPS):  # a return inside a loop also ends the loop
            self.stop_loop_on(stmt, flag)
        return stmt

    @staticmethod
    def stop_loop_on(loop: gast.stmt, flag: str) -> None:
        if isinstance(loop, gast.While):
            loop.test = gast.BoolOp(op=gast.And(),
                                    values=[loop.test, parse_expression(f"not {flag}")])
        else:
            setattr(loop, EXTRA_TESTS, [*getattr(loop, EXTRA_TESTS, []), flag])

    # --- loops -------------------------------------------------------------------------
    def block(self, stmts: list) -> list:
        out: list = []
        for stmt in stmts:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt: gast.stmt) -> list:
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return [stmt]  # its own jumps: lowered when it is converted
        for field in ("body", "orelse", "finalbody"):
            if getattr(stmt, field, None):
                setattr(stmt, field, self.block(getattr(stmt, field)))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self.block(handler.body)
        return self.loop(stmt) if isinstance(stmt, _LOOPS) else [stmt]

    def loop(self, loop: gast.stmt) -> list:
        before: list = []
        after = loop.orelse
        loop.orelse = []
        if _contains_in_body(loop, gast.Continue):
            flag = self.fresh("continue_")
            loop.body = [assign(flag, parse_expression("False")),
                         *self.guard(loop.body, gast.Continue, flag,
                                     lambda _: [assign(flag, parse_expression("True"))])]
        if _contains_in_body(loop, gast.Break):
            flag = self.fresh("break_")
            loop.body = self.guard(loop.body, gast.Break, flag,
                                   lambda _: [assign(flag, parse_expression("True"))])
            self.stop_loop_on(loop, flag)
            before.append(assign(flag, parse_expression("False")))
            if after:  # the else clause runs when no break did
                after = [gast.If(test=parse_expression(f"not {flag}"), body=after,
                                 orelse=[])]
        return [*before, loop, *after]


def _contains_in_body(loop: gast.stmt, kind: type) -> bool:
    return any(_contains(stmt, kind, False) for stmt in loop.body)


def _returns_early(body: list) -> bool:
    """A ``return`` anywhere but as the function's last top-level statement."""
    last = body[-1] if body else None
    return any(_contains(stmt, gast.Return, True) and
               not (stmt is last and isinstance(stmt, gast.Return)) for stmt in body)


def _always_returns(stmts: list) -> bool:
    last = stmts[-1] if stmts else None
    return isinstance(last, gast.Return) or (
        isinstance(last, gast.If) and _always_returns(last.body)
        and _always_returns(last.orelse))


def _rest_into_else(stmts: list) -> list:
    """``if c: ...return`` followed by more statements: the rest becomes the ``else``
    (the same in Python), so both branches of a tensor ``if`` return (TF's rule)."""
    out: list = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            out.append(stmt)
            continue
        for field in ("body", "orelse", "finalbody"):
            if getattr(stmt, field, None):
                setattr(stmt, field, _rest_into_else(getattr(stmt, field)))
        rest = stmts[i + 1:]
        if isinstance(stmt, gast.If) and rest:
            if _always_returns(stmt.body):
                stmt.orelse = _rest_into_else(stmt.orelse + rest)
                return [*out, stmt]
            if _always_returns(stmt.orelse):
                stmt.body = _rest_into_else(stmt.body + rest)
                return [*out, stmt]
        out.append(stmt)
    return out


def lower_jumps(function: gast.FunctionDef) -> gast.FunctionDef:
    """``function`` with its loops' ``break``/``continue`` and, if it returns early,
    its ``return`` statements as flags."""
    lowering = _Lowering()
    body = lowering.block(function.body)
    if _returns_early(body):
        body = _rest_into_else(body)

        def returning(stmt: gast.Return) -> list:
            value = stmt.value if stmt.value is not None else parse_expression("None")
            return [assign("do_return", parse_expression("True")),
                    assign("retval_", value)]
        body = [*parse_statements("do_return = False\n"
                                  "retval_ = ag__.UndefinedReturnValue()"),
                *lowering.guard(body, gast.Return, "do_return", returning),
                gast.Return(value=parse_expression("ag__.retval(retval_)"))]
    function.body = body
    return function

