"""A backward Program as a gast module: an import header and one straight-line function.

The function takes the program's inputs (residuals, then output gradients) and returns
a tuple with one entry per output (``None`` for an unconnected source). Each statement
is one equation, or several when the fusion analysis inlined single-use elementwise
results; the buffer analysis turns some into ``out=`` calls and ``+=`` accumulations.
Before each block of statements coming from one forward op, a comment names that op
and the user's ``file:line`` (a marker name here, turned into a comment once printed).
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import gast

from ..ir.dtypes import size_or_inf
from ..ir.nodes import Eqn, Literal, Program, Var
from ..ops.control_flow import CONTROL_FLOW
from ..passes.buffers import MIN_OUT_SIZE, Reuse, elision, plan_reuse
from ..passes.fusion import inline_vars
from . import buffer_pool
from .control_flow import statements_of
from .indexing import scatter_add_statements, writes_out
from .literals import LOAD, STORE, USUB, call, constant, literal, make, name, numpy_global
from .liveness import release_dead_names
from .naming import GlobalNames, LocalNames, plain_identifier
from .primitives import render
from .user_source import statement_at, where

FUNCTION_NAME = "backward"
FEEDS = "feeds"  # the one parameter of a backward: the list of its inputs
COMMENT_MARKER = "__gradtape_comment_"  # the statement ``__gradtape_comment_<i>__``
RUNTIME_ALIAS = "_runtime"  # globals never start with "_": no clash possible
_ADD = gast.Add()


class Generated(NamedTuple):
    module: gast.Module
    globals: dict[str, Any]
    function_name: str
    comments: list[str]  # marker ``__gradtape_comment_<i>__`` stands for ``# comments[i]``


def _where(loc: Any) -> str:
    if loc is None or loc[0] is None:
        return ""
    return where(loc[0])


def describe(locs: list) -> str:
    """``logits = hidden @ w_out   (model.py:13)``: the statements the forward ops were
    called in and where (the file's basename only, so the text is the same on every
    machine); the ops' names where the statement cannot be read (``tanh, multiply
    (<stdin>:14)``). An op made by a Keras layer's call names the layer first
    (``dense_1 (Dense): predictions = model(images)   (train.py:12)``)."""
    groups: dict[tuple[str, str], list[str]] = {}
    statements: dict[tuple[str, str], str] = {}
    for loc in locs:
        group = (layer_of(loc), _where(loc))
        statement = None if loc is None else statement_at(loc[0])
        if statement is not None:
            statements.setdefault(group, statement.text)
        op_name = "output gradients" if loc is None else loc[1]
        ops = groups.setdefault(group, [])
        if op_name not in ops:
            ops.append(op_name)
    parts = []
    for (layer, place), ops in groups.items():
        text = statements.get((layer, place))
        if text is not None:
            text = f"{text}   ({place})"
        else:
            text = ", ".join(ops) + (f" ({place})" if place else "")
        parts.append(f"{layer}: {text}" if layer else text)
    return "; ".join(parts)


def layer_of(loc: Any) -> str:
    """The Keras layer an equation's ``(location, op)`` was made in (``""``: none)."""
    return "" if loc is None else getattr(loc[0], "layer", "")


def _block(loc: Any) -> tuple:
    """What starts a new block of statements: another op, line or layer (a ``Location``
    equals its bare ``(file, line)``, so the layer is compared on its own)."""
    return (loc, layer_of(loc))


def comment(texts: list[str], text: str) -> gast.stmt:
    """A marker statement for the comment ``# text``: one name, which every printer
    writes as it is on a line of its own."""
    texts.append(text)
    return make(gast.Expr, value=name(f"{COMMENT_MARKER}{len(texts) - 1}__"))


def to_gast(program: Program, fuse: bool = True, reuse: bool = True,
            title: str = "", kind: str = FUNCTION_NAME,
            globs: GlobalNames | None = None, pool: bool = False) -> Generated:
    """``kind`` names the function: ``"backward"``, or ``"forward"`` (@gt.function);
    ``globs`` binds its globals (another array library's: ``array_kinds.py``); ``pool``
    keeps the buffers of its large intermediates between calls (``buffer_pool.py``)."""
    return _Writer(program, fuse, reuse, kind, globs, pool).module(title)


class _Writer:
    def __init__(self, program: Program, fuse: bool, reuse: bool,
                 kind: str = FUNCTION_NAME, globs: GlobalNames | None = None,
                 pool: bool = False):
        self.program = program
        self.kind = kind
        self.inlined = inline_vars(program) if fuse else set()
        self.plan: dict[int, Reuse] = plan_reuse(program, self.inlined) if reuse else {}
        self.defining = {out: eqn for eqn in program.eqns for out in eqn.outs}
        self.globs = GlobalNames() if globs is None else globs
        self.locals = LocalNames(self.globs)
        self.pooling = buffer_pool.plan(program, self.inlined, self.plan, self.globs,
                                        self.locals) if pool and reuse else None
        self.escaping = self._escaping_vars()
        self.comments: list[str] = []
        self.accumulated = self._accumulated_names()

    def _accumulated_names(self) -> dict[Var, str]:
        """A buffer that ``+=`` turns into a named cotangent is named after it from the
        start (``d_x = ...; d_x += ...``), so the function reads as it accumulates."""
        names: dict[Var, str] = {}
        for index, reuse in sorted(self.plan.items(), reverse=True):
            out = self.program.eqns[index].outs[0]
            name = names.get(out, out.name)
            if reuse.kind == "iadd" and name is not None and reuse.buffer.name is None:
                names[reuse.buffer] = name
        return names

    def _escaping_vars(self) -> set[Var]:
        """Vars read outside the block of the forward op that made them, or returned."""
        escaping = {v for v in self.program.outputs if isinstance(v, Var)}
        for eqn in self.program.eqns:
            for v in eqn.inputs:
                producer = self.defining.get(v) if isinstance(v, Var) else None
                if producer is not None and producer.loc != eqn.loc:
                    escaping.add(v)
        return escaping

    def _hint(self, eqn: Eqn, var: Var) -> str:
        """The name of an unnamed var (``var.name`` comes first): its primitive's."""
        return eqn.prim.name

    def expr(self, value: Any) -> gast.expr:
        if isinstance(value, Literal):
            return literal(value.value, self.globs)
        if value in self.inlined:
            eqn = self.defining[value]
            out = None if self.pooling is None else self.pooling.scratch.get(value)
            return self._render(eqn, out)
        return name(self.locals(value))

    def _render(self, eqn: Eqn, out: str | None) -> gast.expr:
        args = [self.expr(v) for v in eqn.inputs]
        how = None if out is not None or self.globs.array_kind is not None else elision(
            eqn, self.inlined, self.defining)
        if how is None:
            return render(eqn, args, self.globs, out=out)
        # Written so that NumPy computes the result in its temporary operand's memory
        # (passes/buffers.py: elision): float32(1.0) for 1.0, -square(y) + c for c - ...
        if how.typed is not None:
            value = eqn.inputs[how.typed].value
            args[how.typed] = literal(eqn.outs[0].aval.dtype.type(value), self.globs)
        if how.negate:
            negated = make(gast.UnaryOp, op=USUB, operand=args[1])
            return make(gast.BinOp, left=negated, op=_ADD, right=args[0])
        return render(eqn, args[::-1] if how.swap else args, self.globs, out=out)

    def _fused_locs(self, eqn: Eqn) -> list[Any]:
        """Blocks of the equations written in ``eqn``'s statement, producers first."""
        locs = []
        for v in eqn.inputs:
            if isinstance(v, Var) and v in self.inlined:
                locs.extend(self._fused_locs(self.defining[v]))
        locs.append(eqn.loc)
        return locs

    def statements(self, index: int, eqn: Eqn) -> list[gast.stmt]:
        """The statements computing ``eqn``: one, or an array and its filling."""
        # Another library's arrays (Dask) cannot be written into: there scatter_add
        # calls its implementation on them (ops/backends/dask.py), writing no buffer.
        if eqn.prim in CONTROL_FLOW:
            return statements_of(self, eqn)
        if eqn.prim.name == "scatter_add" and self.globs.array_kind is None and \
                writes_out(eqn):
            out = eqn.outs[0]
            target = self.locals.define(out, self._hint(eqn, out), self.accumulated.get(out))
            return scatter_add_statements(eqn, [self.expr(v) for v in eqn.inputs], target,
                                          self.globs)
        return [self.statement(index, eqn)]

    def statement(self, index: int, eqn: Eqn) -> gast.stmt:
        reuse = self.plan.get(index)
        if reuse is not None and reuse.kind == "iadd":
            other = eqn.inputs[1 - reuse.position]
            buffer = self.locals(reuse.buffer)
            self.locals.share(eqn.outs[0], reuse.buffer)
            return make(gast.AugAssign, target=name(buffer, store=True), op=_ADD,
                        value=self.expr(other))
        if reuse is not None:
            out = self.locals(reuse.buffer)
        else:
            out = self.pooling.out_names.get(index) if self.pooling is not None else None
        value = self._render(eqn, out)
        targets = [name(self.locals.define(o, self._hint(eqn, o), self.accumulated.get(o)),
                        store=True) for o in eqn.outs]
        if eqn.prim.multiple_results:
            target = make(gast.Tuple, elts=targets, ctx=STORE)
        else:
            target = targets[0]
        return make(gast.Assign, targets=[target], value=value, type_comment=None)

    def _output(self, value: Any) -> gast.expr:
        if value is None:
            return constant(None)
        if isinstance(value, Literal):
            # What the interpreter returns for a constant output: a full array.
            full = numpy_global(self.globs, "full")
            return call(full, [literal(tuple(value.aval.shape), self.globs),
                               literal(value.value, self.globs)],
                        {"dtype": constant(value.aval.dtype.name)})
        return self.expr(value)

    def function(self) -> gast.FunctionDef:
        # A backward takes its inputs in one list and empties it: the caller then holds
        # none of them, and each dies after its last use (liveness.py's ``del`` lines).
        feeds = self.locals.reserve(FEEDS) if self.kind == FUNCTION_NAME else None
        inputs = [self.locals.define(v, v.hint) for v in self.program.inputs]
        args = [name(n) for n in ([feeds] if feeds is not None else inputs)]
        for a in args:
            a.ctx = gast.Param()
        body = self.body_statements()
        outputs = [self._output(v) for v in self.program.outputs]
        body.append(make(gast.Return, value=make(gast.Tuple, elts=outputs, ctx=LOAD)))
        if feeds is not None and inputs:
            body = self._take_feeds(feeds, inputs) + body
        body = release_dead_names(body, self._small_names())
        if self.pooling is not None:
            body = buffer_pool.wrap(self.pooling, body)
        arguments = gast.arguments(args=args, posonlyargs=[], vararg=None, kwonlyargs=[],
                                   kw_defaults=[], kwarg=None, defaults=[])
        return gast.FunctionDef(name=self.kind, args=arguments, body=body,
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])

    def _small_names(self) -> frozenset[str]:
        """Names that only ever hold small values of this program (a loop's buffers and
        counters are not among its vars: they are never taken for small)."""
        small, large = set(), set()
        values = list(self.program.inputs) + [o for e in self.program.eqns for o in e.outs]
        for v in values:
            named = self.locals.get(v)
            if named is not None:
                (small if size_or_inf(v.aval.shape) < MIN_OUT_SIZE else large).add(named)
        return frozenset(small - large)

    def _take_feeds(self, feeds: str, inputs: list[str]) -> list[gast.stmt]:
        """``[x, w, d_y] = feeds`` and ``feeds.clear()``, after a comment saying why."""
        targets = make(gast.List, elts=[name(n, store=True) for n in inputs], ctx=STORE)
        clear = make(gast.Attribute, value=name(feeds), attr="clear", ctx=LOAD)
        return [comment(self.comments, "The inputs, taken from the caller's list: each "
                                       "is freed after its last use."),
                make(gast.Assign, targets=[targets], value=name(feeds), type_comment=None),
                make(gast.Expr, value=make(gast.Call, func=clear, args=[], keywords=[]))]

    def body_statements(self) -> list[gast.stmt]:
        """The statements of every equation, with a comment before each op's block
        (a loop's or branch's body is written with these too)."""
        body: list[gast.stmt] = []
        current = object()
        described: set = set()
        last_text = None
        for index, eqn in enumerate(self.program.eqns):
            if len(eqn.outs) == 1 and eqn.outs[0] in self.inlined:
                continue
            if _block(eqn.loc) != current:
                current = _block(eqn.loc)
                # This block's op, then ops fused in from blocks not described yet.
                locs = [loc for loc in self._fused_locs(eqn)[::-1]
                        if _block(loc) == current or _block(loc) not in described]
                described.update(map(_block, locs))
                text = describe(locs)
                if text != last_text:  # two ops of one statement: one comment
                    body.append(comment(self.comments, text))
                    last_text = text
            body.extend(self.statements(index, eqn))
        return body

    def module(self, title: str) -> Generated:
        function = self.function()
        header = [comment(self.comments, line) for line in _title_lines(title, self.kind)]
        body = header + import_statements(self.globs) + [function]
        return Generated(gast.Module(body=body, type_ignores=[]), dict(self.globs.objects),
                         self.kind, self.comments)


def _title_lines(title: str, kind: str = FUNCTION_NAME) -> list[str]:
    what = "a recorded" if kind == FUNCTION_NAME else "a traced"
    lines = [f"Generated by gradtape: the {kind} function of {what} computation."]
    if title:
        lines.append(title)
    return lines


def _internal(module: str | None) -> bool:
    return isinstance(module, str) and (module == "gradtape" or module.startswith("gradtape."))


def _resolve(module: str | None, qualname: str | None, obj: Any) -> bool:
    """Whether ``from module import qualname`` gives ``obj`` back."""
    if not isinstance(module, str) or not isinstance(qualname, str) or not _importable(
            module, qualname):
        return False
    return getattr(sys.modules.get(module), qualname, None) is obj


def _importable(module: str, attr: str) -> bool:
    """Whether ``from module import attr`` can be written with these names as they are
    (both come from objects' ``__module__`` and ``__qualname__``: any text at all)."""
    return all(plain_identifier(part) for part in module.split(".")) and plain_identifier(
        attr)


def import_statements(globs: GlobalNames) -> list[gast.stmt]:
    """The header that binds every global, so the source works as a standalone module."""
    from_imports: dict[str, list[tuple[str, str]]] = {}
    assignments: list[tuple[str, str, list]] = []
    constants: list[tuple[str, gast.expr]] = []
    for gname in sorted(globs.objects):
        spec = globs.imports[gname]
        if spec[0] == "value":  # a typed constant, defined after the imports
            constants.append((gname, spec[1]))
            continue
        if spec[0] == "impl":
            _, module, qualname, prim_name = spec
            # gradtape's own implementations are private: found through their primitive.
            if not _internal(module) and _resolve(module, qualname, globs.objects[gname]):
                spec = ("from", module, qualname)
            else:
                spec = ("primitive", module or "?", prim_name)
        if spec[0] == "from" and not _importable(spec[1], spec[2]):
            spec = ("unavailable", f"{spec[1]}.{spec[2]}")
        if spec[0] == "from":
            from_imports.setdefault(spec[1], []).append((spec[2], gname))
        elif spec[0] == "primitive":
            assignments.append((gname, "primitive_impl", [spec[1], spec[2]]))
        elif spec[0] == "runtime":  # made by a runtime helper: a BufferPool
            assignments.append((gname, spec[1], spec[2]))
        elif spec[0] == "namespace":  # a primitive's implementation on another library
            assignments.append((gname, "namespace_impl", [spec[1], spec[2]]))
        else:
            assignments.append((gname, "unavailable", [spec[1]]))
    statements: list[gast.stmt] = []
    for module in sorted(from_imports, key=lambda m: (m != "numpy", m)):
        aliases = [gast.alias(name=attr, asname=None if attr == gname else gname)
                   for attr, gname in sorted(from_imports[module])]
        statements.append(gast.ImportFrom(module=module, names=aliases, level=0))
    if assignments:
        statements.append(gast.ImportFrom(
            module="gradtape.codegen", names=[gast.alias(name="runtime", asname=RUNTIME_ALIAS)],
            level=0))
    for gname, helper, args in assignments:
        func = gast.Attribute(value=name(RUNTIME_ALIAS), attr=helper, ctx=gast.Load())
        value = gast.Call(func=func, args=[a if isinstance(a, gast.AST) else constant(a)
                                           for a in args], keywords=[])
        statements.append(gast.Assign(targets=[name(gname, store=True)], value=value,
                                      type_comment=None))
    for gname, definition in constants:
        statements.append(gast.Assign(targets=[name(gname, store=True)], value=definition,
                                      type_comment=None))
    return statements
