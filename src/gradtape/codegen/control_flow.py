"""A ``loop`` as a Python ``while`` over its body's lines, a ``switch`` as ``if``/``else``,
a ``recompute`` (a ``gt.recompute_grad`` block) as a local function and its call.

The body is written by a writer of its own (the same local and global names, the same
comments: each block still names the user's line), inside the loop statement:

    rows = row_buffer(n, ((1, 8), dtype('float64')))   # a stack, preallocated
    k = 0                      # the trip count, an output of the loop
    while k < n:               # or ``while True`` with the cond's lines and a ``break``
        row = xs[k]            # a row of each input read per iteration
        ...the body's lines...
        rows[k] = tanh_3       # a value the backward reads, stacked
        h = tanh_3             # the new carry
        k += 1
    tanh_stack = rows[:k]

A loop that runs while a condition holds grows its stacks instead (``grow_rows``,
doubling from the trace's trip count). The carry's names are the loop outputs' names
after it: nothing is copied.

A ``recompute`` block is a function of its own, so its intermediates go when it
returns; the backward's ``recompute`` (``<name>_grad``) runs the block's lines again:

    def block(x, w):           # the block: only its operands live on after it
        ...the block's lines...
        return (tanh_2,)
    (tanh_3,) = block(x, w)
"""

from __future__ import annotations

from typing import Any

import gast

from ..ir.nodes import Aval, Eqn, Literal, Program, Var
from ..ops.control_flow import grow_rows, loop_p, recompute_p, row_buffer
from .literals import LOAD, STORE, call, constant, literal, make, name, numpy_global


def _runtime_global(w: Any, function: Any) -> str:
    return w.globs.bind(function, function.__name__,
                        ("from", "gradtape.ops.control_flow", function.__name__))


def _row_aval(v: Any, w: Any) -> gast.expr:
    return literal(Aval(tuple(v.aval.shape), v.aval.dtype), w.globs)


def _assign(target: str, value: gast.expr) -> gast.stmt:
    return make(gast.Assign, targets=[name(target, store=True)], value=value,
                type_comment=None)


def _assign_many(targets: list[str], values: list[gast.expr]) -> list[gast.stmt]:
    if not targets:
        return []
    if len(targets) == 1:
        return [_assign(targets[0], values[0])]
    return [make(gast.Assign, targets=[make(gast.Tuple, elts=[name(t, store=True)
                                                              for t in targets], ctx=STORE)],
                 value=make(gast.Tuple, elts=values, ctx=LOAD), type_comment=None)]


def _compare(left: gast.expr, op: gast.cmpop, right: gast.expr) -> gast.expr:
    return make(gast.Compare, left=left, ops=[op], comparators=[right])


def _with_user_locations(program: Program) -> Program:
    """Equation locations as the writer reads them, ``(location, op)``: a traced
    body's are the user's ``(file, line)`` alone."""
    eqns = [Eqn(e.prim, e.inputs, e.outs, e.params, (e.loc, e.prim.name))
            if e.loc is not None and isinstance(e.loc[0], str) else e for e in program.eqns]
    return Program(program.inputs, eqns, program.outputs)


def _bind_inputs(w: Any, program: Program, operands: list[Any],
                 fresh: int = 0) -> list[gast.stmt]:
    """Name ``program``'s inputs after ``operands`` (the first ``fresh`` get names of
    their own: the loop reassigns them)."""
    statements = []
    for k, (v, op) in enumerate(zip(program.inputs, operands)):
        if k >= fresh and isinstance(op, Var) and op not in w.inlined:
            w.locals.share(v, op)
        else:
            target = w.locals.define(v, v.hint)
            statements.append(_assign(target, w.expr(op)))
    return statements


def _sub_writer(w: Any, program: Program, reuse: bool = False) -> Any:
    """A writer of ``program``'s lines inside ``w``'s function; ``reuse``: into its own
    dead buffers (a block's function: its inputs, the caller's arrays, are never
    written, as a generated function's are not)."""
    sub = type(w)(_with_user_locations(program), True, reuse, w.kind, w.globs)
    sub.locals, sub.comments = w.locals, w.comments
    return sub


def loop_statements(w: Any, eqn: Eqn) -> list[gast.stmt]:
    params = eqn.params
    body, cond = params["body"], params["cond"]
    n_carry, n_inv = params["n_carry"], params["n_inv"]
    n, operands = eqn.inputs[0], list(eqn.inputs[1:])
    statements = _bind_inputs(w, body, operands[:n_carry + n_inv], fresh=n_carry)
    bounded = not (isinstance(n, Literal) and int(n.value) < 0)
    n_name = None
    if bounded:
        if isinstance(n, Var) and n not in w.inlined:
            n_name = w.locals(n)
        else:
            n_name = w.locals.define(Var(n.aval, "n"), "n")
            statements.append(_assign(n_name, w.expr(n)))
    xs_names = []
    for x in operands[n_carry + n_inv:]:
        if isinstance(x, Var) and x not in w.inlined:
            xs_names.append(w.locals(x))
        else:
            xs_names.append(w.locals.define(Var(x.aval, "xs"), "xs"))
            statements.append(_assign(xs_names[-1], w.expr(x)))
    count = w.locals.define(Var(eqn.outs[n_carry].aval, "k"), "k")
    statements.append(_assign(count, constant(0)))
    stacked = body.outputs[n_carry:]
    # Stacks are preallocated when the trip count is known as the loop starts (no
    # condition: the bound ``n``), else grown by doubling from the trace's count.
    known = bounded and cond is None
    buffers = [w.locals.define(Var(v.aval, "rows"), "rows") for v in stacked]
    make_buffer = _runtime_global(w, row_buffer) if stacked else None
    capacity = name(n_name) if known else constant(max(int(params["length"]), 1))
    statements += [_assign(b, call(make_buffer, [capacity, _row_aval(v, w)]))
                   for b, v in zip(buffers, stacked)]
    inner: list[gast.stmt] = []
    if cond is not None:
        for cv, bv in zip(cond.inputs, body.inputs):
            w.locals.share(cv, bv)
        cw = _sub_writer(w, cond)
        inner += cw.body_statements()
        holds = make(gast.UnaryOp, op=gast.Not(), operand=cw.expr(cond.outputs[0]))
        inner.append(make(gast.If, test=holds, body=[make(gast.Break)], orelse=[]))
    row = name(count)
    if params["reverse"]:
        row = make(gast.BinOp, left=make(gast.BinOp, left=name(n_name), op=gast.Sub(),
                                         right=constant(1)), op=gast.Sub(), right=name(count))
    for v, xs in zip(body.inputs[n_carry + n_inv:], xs_names):
        target = w.locals.define(v, v.hint)
        inner.append(_assign(target, make(gast.Subscript, value=name(xs), slice=row,
                                          ctx=LOAD)))
    bw = _sub_writer(w, body)
    inner += bw.body_statements()
    if stacked and not known:
        grow = _runtime_global(w, grow_rows)
        full = _compare(name(count), gast.Eq(), call("len", [name(buffers[0])]))
        inner.append(make(gast.If, test=full, body=_assign_many(
            buffers, [call(grow, [name(b)]) for b in buffers]), orelse=[]))
    for rows, v in zip(buffers, stacked):  # before the carry moves on: this iteration's
        target = make(gast.Subscript, value=name(rows), slice=row, ctx=STORE)
        inner.append(make(gast.Assign, targets=[target], value=bw.expr(v),
                          type_comment=None))
    inner += _assign_many([w.locals(v) for v in body.inputs[:n_carry]],
                          [bw.expr(o) for o in body.outputs[:n_carry]])
    inner.append(make(gast.AugAssign, target=name(count, store=True), op=gast.Add(),
                      value=constant(1)))
    test = _compare(name(count), gast.Lt(), name(n_name)) if bounded else constant(True)
    statements.append(make(gast.While, test=test, body=inner, orelse=[]))
    for out, v in zip(eqn.outs[:n_carry], body.inputs[:n_carry]):
        w.locals.share(out, v)
    trips = w.locals.define(eqn.outs[n_carry], "trips")  # an array, as the interpreter's
    statements.append(_assign(trips, call(numpy_global(w.globs, "int64"), [name(count)])))
    for out, rows in zip(eqn.outs[n_carry + 1:], buffers):
        target = w.locals.define(out, out.hint)
        if known and params["reverse"]:  # rows n - k .. n - 1 were written
            part = make(gast.Slice, lower=make(gast.BinOp, left=name(n_name), op=gast.Sub(),
                                               right=name(count)), upper=None, step=None)
        else:
            part = make(gast.Slice, lower=None, upper=name(count), step=None)
        statements.append(_assign(target, make(gast.Subscript, value=name(rows),
                                               slice=part, ctx=LOAD)))
    return statements


def switch_statements(w: Any, eqn: Eqn) -> list[gast.stmt]:
    branches = eqn.params["branches"]
    index, operands = eqn.inputs[0], list(eqn.inputs[1:])
    statements: list[gast.stmt] = []
    index_expr = w.expr(index)
    if len(branches) > 2 and not (isinstance(index, Var) and index not in w.inlined):
        index_name = w.locals.define(Var(index.aval, "index"), "index")
        statements.append(_assign(index_name, index_expr))
        index_expr = name(index_name)
    targets = [w.locals.define(o, o.hint) for o in eqn.outs]

    def branch(program: Program) -> list[gast.stmt]:
        lines = _bind_inputs(w, program, operands)
        bw = _sub_writer(w, program)
        lines += bw.body_statements()
        lines += _assign_many(targets, [bw.expr(o) for o in program.outputs])
        return lines or [make(gast.Pass)]

    chain = branch(branches[-1])
    if len(branches) == 2:
        return statements + [make(gast.If, test=index_expr, body=chain,
                                  orelse=branch(branches[0]))]
    for k in range(len(branches) - 2, -1, -1):
        test = _compare(index_expr, gast.Eq(), constant(k))
        chain = [make(gast.If, test=test, body=branch(branches[k]), orelse=chain)]
    return statements + chain


def _parameter(w: Any, v: Var, operand: Any, taken: set) -> gast.expr:
    """A parameter of a block's function, named as its operand where that is a name
    (once: an operand passed twice names one parameter)."""
    if isinstance(operand, Var) and operand not in w.inlined and operand not in taken:
        taken.add(operand)
        arg = name(w.locals.share(v, operand), store=False)
    else:
        arg = name(w.locals.define(v, v.hint), store=False)
    arg.ctx = gast.Param()
    return arg


_RECOMPUTE_COMMENTS = {
    False: "gt.recompute_grad block: only its inputs outlive the call",
    True: "the block computed again, then its gradient (gt.recompute_grad)",
}


def recompute_statements(w: Any, eqn: Eqn) -> list[gast.stmt]:
    """The block as a local function, then its call: nothing the block computes
    outlives the call but its results."""
    from .to_gast import comment  # to_gast writes every statement through this module

    block, block_name = eqn.params["block"], eqn.params["name"]
    function = w.locals.define(Var(eqn.outs[0].aval, None), block_name)
    taken: set = set()
    args = [_parameter(w, v, op, taken) for v, op in zip(block.inputs, eqn.inputs)]
    bw = _sub_writer(w, block, reuse=True)
    text = _RECOMPUTE_COMMENTS[block_name.endswith("_grad")]
    body = [comment(w.comments, text), *bw.body_statements()]
    body.append(make(gast.Return, value=make(
        gast.Tuple, elts=[bw.expr(o) for o in block.outputs], ctx=LOAD)))
    arguments = gast.arguments(args=args, posonlyargs=[], vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=None, defaults=[])
    definition = gast.FunctionDef(name=function, args=arguments, body=body,
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[])
    targets = [name(w.locals.define(o, o.hint), store=True) for o in eqn.outs]
    result = make(gast.Tuple, elts=targets, ctx=STORE)
    value = call(function, [w.expr(v) for v in eqn.inputs])
    return [definition, make(gast.Assign, targets=[result], value=value, type_comment=None)]


def statements_of(w: Any, eqn: Eqn) -> list[gast.stmt]:
    if eqn.prim is recompute_p:
        return recompute_statements(w, eqn)
    return loop_statements(w, eqn) if eqn.prim is loop_p else switch_statements(w, eqn)
