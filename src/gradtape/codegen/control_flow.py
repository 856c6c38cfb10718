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
after it: nothing is copied. A stack known another way is not written per iteration:
rows of an input sequence, or picked from an invariant by a counter, are a slice of it
after the loop (``rows_read``); a counter's values are a range (``count_rows``); a carry
stacked as it enters and as it leaves shares one buffer of ``n + 1`` rows; a stacked
ufunc result of a preallocated loop is computed into its row (``out=``).

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
import numpy as np

from ..ir.dce import eliminate_dead_code
from ..ir.nodes import Aval, Eqn, Literal, Program, Var
from ..ops.control_flow import count_rows, grow_rows, loop_p, recompute_p, row_buffer, rows_read
from ..ops.stacking import row_write_in_place, row_write_p
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
    if bounded:  # a Python int: the loop test and the row indices are int arithmetic
        n_name = w.locals.define(Var(n.aval, "n"), "n")
        statements.append(_assign(n_name, call("int", [w.expr(n)])))
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
    # Stacks the loop need not write: rows of an input sequence (a slice of it after
    # the loop), a counter's values, rows picked by a counter.
    derived = _derived_stacks(eqn, xs_names, known, w)
    body = _without_stacks(body, n_carry, derived)
    # A carry stacked as it enters and as it leaves: one buffer, row k + 1 written.
    shared = _shared_carries(body, n_carry, derived) if known and not params["reverse"] \
        else {}
    buffers = [None if id(v) in derived or id(v) in shared else
               w.locals.define(Var(v.aval, "rows"), "rows") for v in stacked]
    named = {id(v): b for v, b in zip(stacked, buffers)}
    buffers = [named[id(shared[id(v)])] if id(v) in shared else b
               for v, b in zip(stacked, buffers)]
    leaving = set(shared)
    entering = {id(u) for u in shared.values()}
    written = [(b, v) for b, v in zip(buffers, stacked) if b is not None and
               id(v) not in entering]
    capacity = name(n_name) if known else constant(max(int(params["length"]), 1))
    for b, v in zip(buffers, stacked):
        if b is None or id(v) in leaving:
            continue
        extra = [constant(1)] if id(v) in entering else []
        statements.append(_assign(b, call(_runtime_global(w, row_buffer),
                                          [capacity, _row_aval(v, w)] + extra)))
        if id(v) in entering:  # row 0: the carry as the loop starts
            statements.append(make(gast.Assign, targets=[make(
                gast.Subscript, value=name(b), slice=constant(0), ctx=STORE)],
                value=name(w.locals(v)), type_comment=None))
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
    read = {id(u) for e in body.eqns for u in e.inputs} | {id(u) for u in body.outputs}
    for v, xs in zip(body.inputs[n_carry + n_inv:], xs_names):
        if id(v) not in read:
            continue  # only stacked (a slice after the loop) or read by nothing
        target = w.locals.define(v, v.hint)
        inner.append(_assign(target, make(gast.Subscript, value=name(xs), slice=row,
                                          ctx=LOAD)))
    bw = _sub_writer(w, body)
    inner += bw.body_statements()
    statements += _write_buffers_in_place(inner, eqn, body, bw)
    if written and not known:
        grow = _runtime_global(w, grow_rows)
        full = _compare(name(count), gast.Eq(), call("len", [name(written[0][0])]))
        inner.append(make(gast.If, test=full, body=_assign_many(
            [b for b, _ in written], [call(grow, [name(b)]) for b, _ in written]),
            orelse=[]))
    for rows, v in written:  # before the carry moves on: this iteration's
        at = make(gast.BinOp, left=row, op=gast.Add(), right=constant(1)) \
            if id(v) in leaving else row
        if known and _computed_into(inner, v, make(gast.Subscript, value=name(rows), slice=at,
                                         ctx=LOAD), bw):
            continue
        target = make(gast.Subscript, value=name(rows), slice=at, ctx=STORE)
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
    for out, rows, v in zip(eqn.outs[n_carry + 1:], buffers, stacked):
        target = w.locals.define(out, out.hint)
        if id(v) in leaving:  # rows 1 .. k
            statements.append(_assign(target, make(gast.Subscript, value=name(rows),
                slice=make(gast.Slice, lower=constant(1), upper=make(
                    gast.BinOp, left=name(count), op=gast.Add(), right=constant(1)),
                    step=None), ctx=LOAD)))
        elif rows is not None:
            statements.append(_assign(target, _written_part(rows, count, n_name, known,
                                                            params["reverse"])))
        else:
            statements.append(_assign(target, derived[id(v)](count, n_name)))
    return statements


def _write_buffers_in_place(inner: list[gast.stmt], eqn: Eqn, body: Program,
                            bw: Any) -> list[gast.stmt]:
    """A carried buffer that the body only writes a row of (a TensorArray's ``write``)
    is copied once as the loop starts and written in place, not copied per write: no
    other reader can still hold it. The statements before the loop (the copies)."""
    if bw.globs.array_kind is not None:  # another library's arrays may not be writable
        return []
    n_carry, cond = eqn.params["n_carry"], eqn.params["cond"]
    counts: dict = {}
    for e in body.eqns:
        for u in e.inputs:
            counts[id(u)] = counts.get(id(u), 0) + 1
    for u in body.outputs:
        counts[id(u)] = counts.get(id(u), 0) + 1
    cond_reads = set() if cond is None else {id(u) for e in cond.eqns for u in e.inputs}
    copies = []
    for i in range(n_carry):
        buffer, written = body.inputs[i], body.outputs[i]
        write = _made_by(body, written)
        if write is None or write.prim is not row_write_p or write.inputs[0] is not buffer:
            continue
        if counts.get(id(buffer)) != 1 or counts.get(id(written)) != 1 or \
                (cond is not None and id(cond.inputs[i]) in cond_reads):
            continue
        if _call_instead(inner, bw.locals(written), row_write_p.impl,
                         _runtime_global(bw, row_write_in_place), bw.globs):
            local = bw.locals(buffer)
            copies.append(_assign(local, make(gast.Call, func=make(
                gast.Attribute, value=name(local), attr="copy", ctx=LOAD), args=[],
                keywords=[])))
    return copies


def _call_instead(statements: list[gast.stmt], target: str, was: Any, now: str,
                  globs: Any) -> bool:
    """Make the statement ``target = was(...)`` among ``statements`` call ``now``."""
    for stmt in statements:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == target:
            value = stmt.value
            if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
                    globs.objects.get(value.func.id) is was:
                value.func = name(now)
                return True
            return False
    return False


_BINARY_UFUNCS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply",
                  gast.Div: "true_divide"}


def _computed_into(statements: list[gast.stmt], v: Var, row: gast.expr, bw: Any) -> bool:
    """Make the statement computing ``v`` a ufunc writing into ``row`` (its stack's
    row, preallocated: ``v = tanh(a, out=rows[k])``), so no copy follows; ``False`` where ``v`` is
    not one ufunc's result of its row's shape and dtype (a 0-d row is no view)."""
    if not v.aval.shape or not isinstance(v, Var) or v in bw.inlined:
        return False
    target = bw.locals(v)
    for stmt in reversed(statements):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == target:
            break
    else:
        return False
    value = stmt.value
    if isinstance(value, gast.BinOp) and type(value.op) in _BINARY_UFUNCS:
        ufunc = numpy_global(bw.globs, _BINARY_UFUNCS[type(value.op)])
        value = stmt.value = call(ufunc, [value.left, value.right])
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and not value.keywords):
        return False
    ufunc = bw.globs.objects.get(value.func.id)
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or len(value.args) != ufunc.nin:
        return False
    value.keywords.append(make(gast.keyword, arg="out", value=row))
    return True


def _shared_carries(body: Program, n_carry: int, derived: dict) -> dict:
    """Each stacked value that a carry leaves an iteration as -> the carry's input,
    where both are stacked (h and the new h of an RNN): a stack of n + 1 rows holds
    both, shifted by one."""
    stacked = [v for v in body.outputs[n_carry:] if id(v) not in derived]
    ids = [id(v) for v in stacked]
    shared: dict = {}
    for v_in, v_out in zip(body.inputs[:n_carry], body.outputs[:n_carry]):
        if not isinstance(v_out, Var) or any(v_out is u for u in body.inputs):
            continue
        if ids.count(id(v_in)) == 1 and ids.count(id(v_out)) == 1 and \
                v_in.aval == v_out.aval and id(v_out) not in shared:
            shared[id(v_out)] = v_in
    return shared


def _written_part(rows: str, count: str, n_name: str | None, known: bool,
                  reverse: bool) -> gast.expr:
    if known and reverse:  # rows n - k .. n - 1 were written
        part = make(gast.Slice, lower=make(gast.BinOp, left=name(n_name), op=gast.Sub(),
                                           right=name(count)), upper=None, step=None)
    else:
        part = make(gast.Slice, lower=None, upper=name(count), step=None)
    return make(gast.Subscript, value=name(rows), slice=part, ctx=LOAD)


def _is_counter(eqn: Eqn, i: int) -> bool:
    """Carry ``i`` starts at 0 and adds 1 per iteration: at iteration ``k`` it is ``k``."""
    body = eqn.params["body"]
    start, step = eqn.inputs[1 + i], _made_by(body, body.outputs[i])
    if not isinstance(start, Literal) or start.aval.shape != () or \
            start.aval.dtype.kind not in "iu" or int(start.value) != 0:
        return False
    if step is None or step.prim.name != "add":
        return False
    one = [v for v in step.inputs if v is not body.inputs[i]]
    return len(one) == 1 and len(step.inputs) == 2 and isinstance(one[0], Literal) and \
        np.shape(one[0].value) == () and one[0].value == 1


def _made_by(program: Program, v: Any) -> Eqn | None:
    for e in program.eqns:
        if any(o is v for o in e.outs):
            return e
    return None


def _derived_stacks(eqn: Eqn, xs_names: list[str], known: bool, w: Any) -> dict:
    """Each stacked body value the loop need not write -> how to write its stack after
    the loop, ``(count name, n name) -> expression``. Only in a pure body: a row read
    dropped from an iteration raises its ``IndexError`` after the loop instead."""
    params = eqn.params
    body, n_carry, n_inv = params["body"], params["n_carry"], params["n_inv"]
    if params["reverse"] and not known or not all(e.prim.pure for e in body.eqns):
        return {}
    def read_rows() -> str:  # bound when a stack needs it
        return _runtime_global(w, rows_read)
    derived: dict = {}
    for v, xs in zip(body.inputs[n_carry + n_inv:], xs_names):
        def slice_of(count, n_name, xs=xs):
            if params["reverse"]:  # rows n - k .. n - 1 were read
                lower = make(gast.BinOp, left=name(n_name), op=gast.Sub(), right=name(count))
                return call(read_rows(), [name(xs), lower, name(n_name)])
            return call(read_rows(), [name(xs), constant(0), name(count)])
        derived[id(v)] = slice_of
    if params["reverse"]:
        return derived
    counters = [body.inputs[i] for i in range(n_carry) if _is_counter(eqn, i)]
    invariants = body.inputs[n_carry:n_carry + n_inv]
    for v in body.outputs[n_carry:]:
        if any(v is c for c in counters):
            derived[id(v)] = lambda count, n_name, v=v: call(
                _runtime_global(w, count_rows), [name(count), literal(v.aval.dtype, w.globs)])
            continue
        pick = _made_by(body, v)
        if pick is None or pick.prim.name != "getitem" or \
                pick.params.get("index") != (("array", 0),):
            continue
        x, t = pick.inputs
        if any(t is c for c in counters) and any(x is u for u in invariants):
            derived[id(v)] = lambda count, n_name, x=x: call(
                read_rows(), [name(w.locals(x)), constant(0), name(count)])
    return derived


def _without_stacks(body: Program, n_carry: int, derived: dict) -> Program:
    if not derived:
        return body
    kept = [v for v in body.outputs[n_carry:] if id(v) not in derived]
    return eliminate_dead_code(Program(body.inputs, body.eqns,
                                       list(body.outputs[:n_carry]) + kept))


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
    from .liveness import release_dead_names
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
    # Each recomputed value dies after its last use, as in the function around it: the
    # recomputation then replaces what it differentiates instead of adding to it.
    body = release_dead_names(body, bw._small_names())
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
