"""Map-like work out of loops, as a compiler moves it: before code generation only.

Four rewrites of a ``loop`` equation, each exact (the same values, computed in fewer
Python statements per iteration):

- ``count_to_bound``: ``while t < n`` with ``t`` counting from 0 is a loop of ``n``
  iterations (no comparison per iteration, stacks preallocated).
- ``drop_unread_rows``: an input sequence whose row the body and condition never read
  (the reversed loop gets the forward's counter stack, which no derivative reads) is not
  indexed per iteration.
- ``hoist_row_products``: ``x[t] @ w`` (or ``w @ x[t]``) in a body, with ``x`` and
  ``w`` loop-invariant and ``x[t]`` a row of ``x`` picked by any index, is
  ``(x @ w)[t]``: one product over all rows before the loop, and a row read inside it;
  ``hoist_sequence_products`` does the same for a row of an input sequence (``scan``,
  Keras' recurrent layers): ``xs @ w`` is a new input sequence; and
  ``hoist_sequence_maps`` for elementwise work on rows alone (``1 - tanh_t ** 2`` in a
  reversed loop is one ``1 - square(tanh_stack)``). Elementwise ops cannot raise.
  The product runs even when the loop stops early, or runs no iteration: a matmul of
  operands of valid shapes cannot raise, it only does work no row is read from.
- ``contract_accumulators``: in a loop with a fixed trip count (no condition: the
  reversed loop of a gradient), a carried ``acc + r.T @ d`` that nothing else reads (an
  invariant weight's cotangent, ``r`` a row of an input sequence) becomes two stacks,
  ``r``'s and ``d``'s, and one contraction after the loop,
  ``acc0 + r_rows.reshape(-1, i).T @ d_rows.reshape(-1, j)``: T small matmuls and T
  additions become one BLAS call. A stacked row of an input sequence is a slice of it (the code
  generator writes no copy: ``codegen/control_flow.py``).

Every rewrite needs pure primitives only (matmul, getitem, transpose, add): a random
draw or a Python call in a body is never moved or reordered.

Imports: ``ir``, ``ops``.
"""

from __future__ import annotations

import numpy as np

from ..ir.dce import eliminate_dead_code
from ..ir.nodes import Aval, Eqn, Literal, Program, Var
from ..ops.control_flow import CONTROL_FLOW, loop_p
from ..ops.shape import reshape_p
from .control_flow import has_control_flow

__all__ = ["move_loop_work"]


def move_loop_work(program: Program) -> Program:
    """``program`` with every loop (at every depth) rewritten as the module says."""
    if not has_control_flow(program):
        return program
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        if eqn.prim in CONTROL_FLOW:
            eqn = _inside(eqn)
        if eqn.prim is loop_p:
            eqn = drop_unread_rows(count_to_bound(eqn))
            before, eqn = hoist_row_products(eqn)
            more, eqn = hoist_sequence_products(eqn)
            maps, eqn = hoist_sequence_maps(eqn)
            eqn, after = contract_accumulators(eqn)
            eqns += before + more + maps + [eqn] + after
        else:
            eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs)


def _inside(eqn: Eqn) -> Eqn:
    params = {}
    for key, value in eqn.params.items():
        if isinstance(value, Program):
            value = move_loop_work(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Program):
            value = tuple(move_loop_work(p) for p in value)
        params[key] = value
    return Eqn(eqn.prim, eqn.inputs, eqn.outs, params, eqn.loc)


def _readers(program: Program) -> dict:
    """Each value -> how many equations and outputs read it (by identity: IR values
    compare with ``==`` by building an equation)."""
    count: dict = {}
    for e in program.eqns:
        for v in e.inputs:
            if isinstance(v, Var):
                count[id(v)] = count.get(id(v), 0) + 1
    for v in program.outputs:
        if isinstance(v, Var):
            count[id(v)] = count.get(id(v), 0) + 1
    return count


# --- input sequences nobody reads ------------------------------------------------------


def drop_unread_rows(eqn: Eqn) -> Eqn:
    params = eqn.params
    body = params["body"]
    first = params["n_carry"] + params["n_inv"]
    read = _readers(body)  # the condition reads the carry and the invariants only
    unread = [j for j, v in enumerate(body.inputs[first:]) if id(v) not in read]
    if not unread:
        return eqn
    keep = [j for j in range(len(body.inputs) - first) if j not in unread]
    new_body = Program(body.inputs[:first] + [body.inputs[first + j] for j in keep],
                       body.eqns, body.outputs)
    inputs = eqn.inputs[:1 + first] + tuple(eqn.inputs[1 + first + j] for j in keep)
    return Eqn(eqn.prim, inputs, eqn.outs, dict(params, body=new_body), eqn.loc)


# --- while t < n: a counted loop -------------------------------------------------------


def _counter_step(eqn: Eqn, i: int) -> bool:
    """Carry ``i`` starts at the integer 0 and adds the literal 1 per iteration."""
    body = eqn.params["body"]
    start = eqn.inputs[1 + i]
    if not isinstance(start, Literal) or start.aval.shape != () or \
            start.aval.dtype.kind not in "iu" or int(start.value) != 0:
        return False
    step = next((e for e in body.eqns if e.outs and e.outs[0] is body.outputs[i]), None)
    if step is None or step.prim.name != "add" or len(step.inputs) != 2:
        return False
    one = [v for v in step.inputs if v is not body.inputs[i]]
    return len(one) == 1 and isinstance(one[0], Literal) and \
        np.shape(one[0].value) == () and one[0].value == 1


def count_to_bound(eqn: Eqn) -> Eqn:
    """A loop without a bound whose condition is ``t < n`` alone, ``t`` a counter from
    0 by 1 and ``n`` invariant, runs ``n`` iterations (none if ``n <= 0``): the loop with
    the bound ``n`` and no condition, whose stacks are preallocated and whose iterations
    call no comparison. ``n`` may be negative at run time only where code generation
    reads the loop (its ``while k < n`` runs no iteration), so this runs there alone."""
    params = eqn.params
    cond, n_carry, n_inv = params["cond"], params["n_carry"], params["n_inv"]
    n = eqn.inputs[0]
    if cond is None or params["reverse"] or not (isinstance(n, Literal) and int(n.value) < 0):
        return eqn
    if len(cond.eqns) != 1 or cond.eqns[0].prim.name != "less" or \
            cond.outputs[0] is not cond.eqns[0].outs[0]:
        return eqn
    t, bound = cond.eqns[0].inputs
    places = {id(v): k for k, v in enumerate(cond.inputs)}
    i = places.get(id(t), -1)
    if not 0 <= i < n_carry or not _counter_step(eqn, i):
        return eqn
    if isinstance(bound, Literal):
        if np.shape(bound.value) != () or np.asarray(bound.value).dtype.kind not in "iu":
            return eqn
        bound = Literal(max(int(bound.value), 0))
    elif n_carry <= places.get(id(bound), -1) < n_carry + n_inv:
        bound = eqn.inputs[1 + places[id(bound)]]
    else:
        return eqn
    if not isinstance(bound, Literal) and (bound.aval.shape != () or
                                           bound.aval.dtype.kind not in "iu"):
        return eqn
    return Eqn(eqn.prim, (bound,) + eqn.inputs[1:], eqn.outs, dict(params, cond=None),
               eqn.loc)


# --- x[t] @ w -> (x @ w)[t] -------------------------------------------------------------


def _row_product(e: Eqn, made_by: dict, invariant: set) -> tuple | None:
    """``(x, w, getitem equation, w first)`` when ``e`` is ``x[t] @ w`` or ``w @ x[t]``
    of invariants ``x`` and ``w`` (a 2-d matrix), else ``None``."""
    if e.prim.name != "matmul" or len(e.inputs) != 2:
        return None
    for side in (0, 1):
        row, w = e.inputs[side], e.inputs[1 - side]
        pick = made_by.get(id(row))
        if pick is None or id(w) not in invariant or len(w.aval.shape) != 2:
            continue
        if pick.prim.name != "getitem" or pick.params.get("index") != (("array", 0),):
            continue
        x, t = pick.inputs
        if id(x) not in invariant or len(t.aval.shape) != 0:
            continue
        # w @ x[t] broadcasts as w @ x only when x[t] is a matrix (or a stack of them).
        if len(x.aval.shape) < (3 if side == 1 else 2):
            continue
        if x.aval.dtype != w.aval.dtype:
            continue
        return x, w, pick, side == 1
    return None


def hoist_row_products(eqn: Eqn) -> tuple[list[Eqn], Eqn]:
    params = eqn.params
    n_carry, n_inv, body = params["n_carry"], params["n_inv"], params["body"]
    invariants = body.inputs[n_carry:n_carry + n_inv]
    outer = {id(v): op for v, op in zip(invariants, eqn.inputs[1 + n_carry:])}
    made_by = {id(o): e for e in body.eqns for o in e.outs}
    before: list[Eqn] = []
    new_inputs: list[Var] = []
    products: dict = {}  # (id x, id w, w first) -> the new invariant
    eqns = []
    for e in body.eqns:
        found = _row_product(e, made_by, set(outer))
        if found is None:
            eqns.append(e)
            continue
        x, w, pick, w_first = found
        key = (id(x), id(w), w_first)
        if key not in products:
            xo, wo = outer[id(x)], outer[id(w)]
            shape = (tuple(xo.aval.shape[:-2]) + (wo.aval.shape[0], xo.aval.shape[-1])
                     if w_first else tuple(xo.aval.shape[:-1]) + (wo.aval.shape[1],))
            aval = Aval(shape, e.outs[0].aval.dtype)
            stacked = Var(aval, e.outs[0].hint)
            before.append(Eqn(e.prim, (wo, xo) if w_first else (xo, wo), (stacked,),
                              e.params, _outer_loc(e.loc)))
            products[key] = Var(aval, e.outs[0].hint)
            new_inputs.append(stacked)
        eqns.append(Eqn(pick.prim, (products[key], pick.inputs[1]), e.outs, pick.params,
                        e.loc))
    if not before:
        return [], eqn
    k = n_carry + n_inv
    new_body = eliminate_dead_code(Program(
        body.inputs[:k] + list(products.values()) + body.inputs[k:], eqns, body.outputs))
    cond = params["cond"]
    if cond is not None:
        fresh = [Var(v.aval, v.hint) for v in products.values()]
        cond = Program(cond.inputs[:k] + fresh + cond.inputs[k:], cond.eqns, cond.outputs)
    inputs = eqn.inputs[:1 + k] + tuple(new_inputs) + eqn.inputs[1 + k:]
    return before, Eqn(eqn.prim, inputs, eqn.outs,
                       dict(params, body=new_body, cond=cond, n_inv=n_inv + len(new_inputs)),
                       eqn.loc)


def _row_loop_parts(eqn: Eqn) -> tuple[Program, set, dict, set]:
    """A loop's body, the ids of its invariants, each body input's outer operand (by
    id) and the ids of its rows of input sequences."""
    params = eqn.params
    n_carry, n_inv, body = params["n_carry"], params["n_inv"], params["body"]
    first = n_carry + n_inv
    invariant = {id(v) for v in body.inputs[n_carry:first]}
    outer = {id(v): op for v, op in zip(body.inputs, eqn.inputs[1:])}
    return body, invariant, outer, {id(v) for v in body.inputs[first:]}


def _with_new_rows(eqn: Eqn, body: Program, eqns: list[Eqn], new_rows: list) -> Eqn:
    """The loop whose body is ``eqns``, each ``(sequence, row)`` of ``new_rows`` a new
    input sequence the body reads a row of."""
    new_body = eliminate_dead_code(Program(body.inputs + [o for _, o in new_rows], eqns,
                                           body.outputs))
    return Eqn(eqn.prim, eqn.inputs + tuple(p for p, _ in new_rows), eqn.outs,
               dict(eqn.params, body=new_body), eqn.loc)


def hoist_sequence_products(eqn: Eqn) -> tuple[list[Eqn], Eqn]:
    """A row of an input sequence times an invariant matrix (``x_t @ w`` of a ``scan``
    or a Keras RNN layer) is a row of ``xs @ w``: a new input sequence, one product
    before the loop."""
    body, invariant, outer, rows = _row_loop_parts(eqn)
    before, new_rows, eqns = [], [], []
    for e in body.eqns:
        side = _sequence_side(e, rows, invariant)
        if side is None:
            eqns.append(e)
            continue
        row, w = e.inputs[side], e.inputs[1 - side]
        xo, wo = outer[id(row)], outer[id(w)]
        out = e.outs[0]
        stacked = Var(Aval((xo.aval.shape[0],) + tuple(out.aval.shape), out.aval.dtype),
                      out.hint)
        before.append(Eqn(e.prim, (wo, xo) if side == 1 else (xo, wo), (stacked,),
                          e.params, _outer_loc(e.loc)))
        new_rows.append((stacked, out))  # the product's value is now a row read
    return before, _with_new_rows(eqn, body, eqns, new_rows) if before else eqn


def hoist_sequence_maps(eqn: Eqn) -> tuple[list[Eqn], Eqn]:
    """Elementwise work on rows of input sequences alone (and invariants and literals of
    no more dimensions: they broadcast against a row as against the whole sequence) is
    done on the whole sequences before the loop: ``1 - tanh_t ** 2`` of a reversed loop
    is one ``1 - square(tanh_stack)``, a new input sequence."""
    body, invariant, outer, rows = _row_loop_parts(eqn)
    before, new_rows, eqns = [], [], []
    for e in body.eqns:
        if not _maps_rows(e, rows, invariant):
            eqns.append(e)
            continue
        out = e.outs[0]
        length = next(outer[id(v)].aval.shape[0] for v in e.inputs if id(v) in rows)
        whole = Var(Aval((length,) + tuple(out.aval.shape), out.aval.dtype), out.hint)
        before.append(Eqn(e.prim, tuple(outer.get(id(v), v) for v in e.inputs), (whole,),
                          e.params, _outer_loc(e.loc, e.prim.name)))
        outer[id(out)] = whole
        rows.add(id(out))
        new_rows.append((whole, out))
    return before, _with_new_rows(eqn, body, eqns, new_rows) if before else eqn


def _maps_rows(e: Eqn, rows: set, invariant: set) -> bool:
    prim = e.prim
    if not prim.elementwise or not prim.pure or prim.multiple_results or len(e.outs) != 1:
        return False
    row_ndims = [len(v.aval.shape) for v in e.inputs if id(v) in rows]
    if not row_ndims or len(e.outs[0].aval.shape) != max(row_ndims):
        return False
    for v in e.inputs:
        if id(v) in rows:
            continue
        if isinstance(v, Var) and id(v) not in invariant:
            return False
        if len(v.aval.shape) > min(row_ndims):  # it would broadcast across the rows' axis
            return False
    return True


def _sequence_side(e: Eqn, rows: set, invariant: set) -> int | None:
    """Which input of ``e`` is a row of an input sequence, when ``e`` is that row times
    an invariant 2-d matrix of its dtype (``w @ row`` for a row of 2+ dimensions)."""
    if e.prim.name != "matmul" or len(e.inputs) != 2:
        return None
    for side in (0, 1):
        row, w = e.inputs[side], e.inputs[1 - side]
        if id(row) in rows and id(w) in invariant and len(w.aval.shape) == 2 and \
                len(row.aval.shape) >= (2 if side == 1 else 1) and \
                row.aval.dtype == w.aval.dtype:
            return side
    return None


def _outer_loc(loc, op: str = "matmul"):
    # A traced body's locations are the user's (file, line) alone; outside the loop the
    # writer reads ``(location, op)``.
    return (loc, op) if loc is not None and isinstance(loc[0], str) else loc


# --- acc + r.T @ d -> acc0 + one contraction after the loop -----------------------------


def _accumulated_product(body: Program, i: int, made_by: dict, readers: dict,
                         rows: set) -> tuple | None:
    """``(r, d, the add, the matmul, the transpose)`` when carry ``i`` is
    ``acc + r.T @ d`` (``r`` a row of an input sequence, ``acc`` read by nothing else,
    nothing else reading the sum), else ``None``."""
    acc, total = body.inputs[i], body.outputs[i]
    add = made_by.get(id(total))
    if add is None or add.prim.name != "add" or readers.get(id(acc)) != 1:
        return None
    if readers.get(id(total)) != 1 or not any(v is acc for v in add.inputs):
        return None
    term = add.inputs[1] if add.inputs[0] is acc else add.inputs[0]
    product = made_by.get(id(term))
    if product is None or product.prim.name != "matmul":
        return None
    flip, d = product.inputs
    flipped = made_by.get(id(flip))
    if flipped is None or flipped.prim.name != "transpose" or \
            flipped.params.get("axes") != (1, 0):
        return None
    r = flipped.inputs[0]
    if id(r) not in rows or len(d.aval.shape) != 2 or len(r.aval.shape) != 2:
        return None
    if r.aval.shape[0] == 0:  # no rows to flatten: the reshape's -1 would be ambiguous
        return None
    if not (acc.aval == term.aval == total.aval):  # no broadcasting, one dtype
        return None
    return r, d, add, product, flipped


def _contraction(found: tuple, r_rows: Var, d_rows: Var, start, out: Var,
                 loc) -> list[Eqn]:
    """``out = start + r_rows.reshape(-1, i).T @ d_rows.reshape(-1, j)``: the sum over
    the iterations and the rows' first axis at once. The stacks' length is the run's
    trip count, so the reshape leaves it to NumPy (-1); the avals say the trace's."""
    r, d, add, product, flipped = found
    (b, i), j = r.aval.shape, d.aval.shape[1]
    length = r_rows.aval.shape[0]
    flat_r = Var(Aval((length * b, i), r.aval.dtype), "rows")
    flat_d = Var(Aval((length * b, j), d.aval.dtype), "rows")
    flat_t = Var(Aval((i, length * b), r.aval.dtype), "rows")
    total = Var(out.aval, "contracted")
    return [
        Eqn(reshape_p, (r_rows,), (flat_r,), {"shape": (-1, i)}, loc),
        Eqn(reshape_p, (d_rows,), (flat_d,), {"shape": (-1, j)}, loc),
        Eqn(flipped.prim, (flat_r,), (flat_t,), flipped.params, loc),
        Eqn(product.prim, (flat_t, flat_d), (total,), product.params, loc),
        Eqn(add.prim, (start, total), (out,), add.params, loc),
    ]


def contract_accumulators(eqn: Eqn) -> tuple[Eqn, list[Eqn]]:
    params = eqn.params
    n_carry, n_inv, body = params["n_carry"], params["n_inv"], params["body"]
    if params["cond"] is not None or not isinstance(eqn.inputs[0], Var):
        return eqn, []  # a run-time trip count only: a literal one may mean "no bound"
    made_by = {id(o): e for e in body.eqns for o in e.outs}
    readers = _readers(body)
    rows = {id(v) for v in body.inputs[n_carry + n_inv:]}
    found = {}
    for i in range(n_carry):
        match = _accumulated_product(body, i, made_by, readers, rows)
        if match is not None:
            found[i] = match
    if not found:
        return eqn, []
    kept = [i for i in range(n_carry) if i not in found]
    stacked = list(body.outputs[n_carry:])
    stack_outs = list(eqn.outs[n_carry + 1:])
    length = params["length"]

    def stack_of(v: Var) -> Var:
        for s, o in zip(stacked, stack_outs):
            if s is v:
                return o
        stacked.append(v)
        stack_outs.append(Var(Aval((length,) + tuple(v.aval.shape), v.aval.dtype), "rows"))
        return stack_outs[-1]

    after = []
    for i, match in found.items():
        after += _contraction(match, stack_of(match[0]), stack_of(match[1]),
                              eqn.inputs[1 + i], eqn.outs[i], eqn.loc)
    new_body = eliminate_dead_code(Program(
        [body.inputs[i] for i in kept] + body.inputs[n_carry:],
        body.eqns, [body.outputs[i] for i in kept] + stacked))
    inputs = (eqn.inputs[0],) + tuple(eqn.inputs[1 + i] for i in kept) + \
        eqn.inputs[1 + n_carry:]
    outs = tuple(eqn.outs[i] for i in kept) + (eqn.outs[n_carry],) + tuple(stack_outs)
    return Eqn(eqn.prim, inputs, outs, dict(params, body=new_body, n_carry=len(kept)),
               eqn.loc), after
