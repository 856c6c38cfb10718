"""``if``, ``while`` and ``for`` as calls of the runtime (``ag__.if_stmt``...), and
``and``/``or``/``not``/``x if c else y`` as ``ag__.and_``... (TF AutoGraph's
control-flow and logical-expression converters).

Each branch or loop body becomes a local function that declares the statement's
outputs (``Analysis.outputs``) ``nonlocal``; ``get_state``/``set_state`` read and write
them, so the runtime can run the statement as Python or as ``gt.cond``/``gt.while_loop``.
An output nothing assigned before gets ``ag__.Undefined('x')`` first (``nonlocal``
needs a binding). Runs after ``jumps.lower_jumps``.
"""

from __future__ import annotations

import collections

import gast

from .analysis import Analysis, assigned_names
from .jumps import EXTRA_TESTS, lower_jumps
from .templates import function_def, located, name, parse_expression, parse_statements

__all__ = ["convert_function"]


def _call(function: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=parse_expression(function), args=list(args), keywords=[])


def _lambda(body: gast.expr) -> gast.Lambda:
    args = gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                          kw_defaults=[], kwarg=None, defaults=[])
    return gast.Lambda(args=args, body=body)


def _has_walrus(node: gast.AST) -> bool:
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(node))


class _Expressions(gast.NodeTransformer):
    """``a and b`` → ``ag__.and_(lambda: a, lambda: b)``, ``not a`` → ``ag__.not_(a)``,
    ``a if c else b`` → ``ag__.if_exp(c, lambda: a, lambda: b)``; not inside nested
    functions (converted on their own)."""

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        return node

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.AST:
        self.generic_visit(node)
        if _has_walrus(node):
            return node  # a lambda cannot hold ``:=``
        helper = "ag__.and_" if isinstance(node.op, gast.And) else "ag__.or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(helper, _lambda(value), _lambda(result))
        return gast.copy_location(result, node)

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return gast.copy_location(_call("ag__.not_", node.operand), node)

    def visit_IfExp(self, node: gast.IfExp) -> gast.AST:
        self.generic_visit(node)
        if _has_walrus(node):
            return node
        return gast.copy_location(_call("ag__.if_exp", node.test, _lambda(node.body),
                                        _lambda(node.orelse)), node)


def _expression(node: gast.AST) -> gast.AST:
    return _Expressions().visit(node)


def _names_tuple(names: list[str]) -> gast.Tuple:
    return gast.Tuple(elts=[gast.Constant(value=n, kind=None) for n in names],
                      ctx=gast.Load())


class _Converter:
    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self._counters: collections.Counter[str] = collections.Counter()

    def fresh(self, base: str) -> str:
        """``base``, then ``base_1``, ``base_2``... (the helper functions' names)."""
        n = self._counters[base]
        self._counters[base] += 1
        return base if n == 0 else f"{base}_{n}"

    # --- blocks ------------------------------------------------------------------------
    def block(self, stmts: list, bound: set[str]) -> list:
        """``stmts`` converted in one Python scope whose bound names are ``bound``."""
        out: list = []
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                out.extend(located(self.if_statement(stmt, bound), stmt))
            elif isinstance(stmt, gast.While):
                out.extend(located(self.while_statement(stmt, bound), stmt))
            elif isinstance(stmt, gast.For) and not stmt.orelse:
                out.extend(located(self.for_statement(stmt, bound), stmt))
            elif isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
                out.append(convert_function(stmt))
                bound.add(stmt.name)
            elif isinstance(stmt, gast.ClassDef):
                out.append(stmt)
                bound.add(stmt.name)
            else:
                out.append(self.simple(stmt, bound))
        return out

    def simple(self, stmt: gast.stmt, bound: set[str]) -> gast.stmt:
        """A statement that stays: its expressions converted, its blocks (``with``,
        ``try``) in the same scope."""
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if block:
                setattr(stmt, field, self.block(block, bound))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self.block(handler.body, bound)
        for field, value in gast.iter_fields(stmt):
            if isinstance(value, gast.expr):
                setattr(stmt, field, _expression(value))
            elif field == "items":  # with statements' context expressions
                for item in value:
                    item.context_expr = _expression(item.context_expr)
            elif field == "targets":
                setattr(stmt, field, [_expression(t) for t in value])
        bound.update(assigned_names(stmt))
        return stmt

    # --- the shared parts --------------------------------------------------------------
    def state_functions(self, outputs: list[str]) -> tuple[list, str, str]:
        get, put = self.fresh("get_state"), self.fresh("set_state")
        values = ", ".join(outputs) + ("," if len(outputs) == 1 else "")
        if outputs:
            # A list target, which every Python version writes back the same way (a
            # 1-tuple target comes out as `x, =` or `(x,) =`).
            text = (f"def {get}():\n    return ({values})\n"
                    f"def {put}(vars_):\n    nonlocal {', '.join(outputs)}\n"
                    f"    [{', '.join(outputs)}] = vars_\n")
        else:
            text = f"def {get}():\n    return ()\ndef {put}(vars_):\n    pass\n"
        return parse_statements(text), get, put

    @staticmethod
    def undefined_first(outputs: list[str], bound: set[str]) -> list:
        """``x = ag__.Undefined('x')`` for each output this scope has not bound."""
        return [stmt for n in outputs if n not in bound
                for stmt in parse_statements(f"{n} = ag__.Undefined({n!r})")]

    def body_function(self, base: str, params: list[str], outputs: list[str],
                      stmts: list, bound_inside: set[str]) -> tuple[gast.FunctionDef, str]:
        fn_name = self.fresh(base)
        body = self.block(stmts, set(outputs) | bound_inside)
        assigned_globals = sorted(self.analysis.declared_global &
                                  {n for s in stmts for n in assigned_names(s)})
        if assigned_globals:  # Python's global statement holds in the branch too
            body = [gast.Global(names=assigned_globals), *body]
        return function_def(fn_name, params, outputs, body), fn_name

    # --- statements ----------------------------------------------------------------------
    def if_statement(self, stmt: gast.If, bound: set[str]) -> list:
        outputs = self.analysis.outputs(stmt)
        main, main_name = self.body_function("if_body", [], outputs, stmt.body, set())
        other, other_name = self.body_function("else_body", [], outputs, stmt.orelse, set())
        state, get, put = self.state_functions(outputs)
        call = gast.Expr(value=_call("ag__.if_stmt", _expression(stmt.test), name(main_name),
                                     name(other_name), name(get), name(put),
                                     _names_tuple(outputs)))
        first = self.undefined_first(outputs, bound)
        bound.update(outputs)
        return [main, other, *state, *first, call]

    def while_statement(self, stmt: gast.While, bound: set[str]) -> list:
        outputs = self.analysis.outputs(stmt)
        test_name = self.fresh("loop_test")
        test = function_def(test_name, [], [], [gast.Return(value=_expression(stmt.test))])
        body, body_name = self.body_function("loop_body", [], outputs, stmt.body, set())
        state, get, put = self.state_functions(outputs)
        call = gast.Expr(value=_call("ag__.while_stmt", name(test_name), name(body_name),
                                     name(get), name(put), _names_tuple(outputs)))
        first = self.undefined_first(outputs, bound)
        bound.update(outputs)
        return [test, body, *state, *first, call]

    def for_statement(self, stmt: gast.For, bound: set[str]) -> list:
        outputs = self.analysis.outputs(stmt)
        target = gast.Assign(targets=[stmt.target], value=name("itr"), type_comment=None)
        body, body_name = self.body_function("loop_body", ["itr"], outputs,
                                             [target, *stmt.body], set())
        extra, extra_name = self.extra_test(getattr(stmt, EXTRA_TESTS, []))
        state, get, put = self.state_functions(outputs)
        call = gast.Expr(value=_call("ag__.for_stmt", self.iterable(stmt.iter),
                                     name(extra_name) if extra else gast.Constant(
                                         value=None, kind=None),
                                     name(body_name), name(get), name(put),
                                     _names_tuple(outputs)))
        first = self.undefined_first(outputs, bound)
        bound.update(outputs)
        return [body, *extra, *state, *first, call]

    def extra_test(self, flags: list[str]) -> tuple[list, str]:
        if not flags:
            return [], ""
        fn_name = self.fresh("extra_test")
        test = " and ".join(f"not {flag}" for flag in flags)
        body = [gast.Return(value=_expression(parse_expression(test)))]
        return [function_def(fn_name, [], [], body)], fn_name

    @staticmethod
    def iterable(node: gast.expr) -> gast.expr:
        """``range(...)`` and ``<module>.range(...)`` through ``ag__.for_range``: a range
        over tensors loops on a tensor index."""
        node = _expression(node)
        func = node.func if isinstance(node, gast.Call) else None
        is_range = (isinstance(func, gast.Name) and func.id == "range") or \
            (isinstance(func, gast.Attribute) and func.attr == "range")
        if not is_range:
            return node
        return gast.Call(func=parse_expression("ag__.for_range"),
                         args=[func, *node.args], keywords=node.keywords)


class _ReturnsChecked(gast.NodeTransformer):
    """``return x`` → ``return ag__.retval(x)``: returning a variable no path assigned
    raises, as Python does (not in nested functions: converted on their own)."""

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        return node

    def visit_Return(self, node: gast.Return) -> gast.Return:
        value = node.value
        is_checked = isinstance(value, gast.Call) and \
            gast.dump(value.func) == gast.dump(parse_expression("ag__.retval"))
        if value is not None and not is_checked:
            node.value = gast.copy_location(_call("ag__.retval", value), value)
        return node


def convert_function(function: gast.FunctionDef) -> gast.FunctionDef:
    """``function`` (already through ``lower_jumps``) with its control flow converted."""
    function = lower_jumps(function)
    analysis = Analysis(function)
    converter = _Converter(analysis)
    function.body = [_ReturnsChecked().visit(stmt)
                     for stmt in converter.block(function.body, set(analysis.params))]
    function.args = _expression(function.args)  # defaults may hold ``a and b``
    return function
