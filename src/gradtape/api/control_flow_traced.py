"""``while_loop``, ``cond``, ``switch_case`` and ``case`` inside a ``@gt.function``
trace: one ``loop`` or ``switch`` equation with sub-programs (``ops/control_flow.py``),
so a loop stays a loop in the compiled code, and its trip count and a branch's
predicate are values of each call, not guards. Each function here raises
``NotCompilable`` when its body cannot be a sub-program (``functions/subtrace.py``), or
its loop variables change shape under ``shape_invariants``; the caller then runs Python
control flow, as eagerly.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ad.control_flow import with_residuals
from ..core import nest
from ..core.state import state
from ..core.tensor import Tensor, convert_to_tensor, wrap
from ..functions.subtrace import NotCompilable, close, operand_tensors, outer_values, trace_in_scope
from ..functions.trace_runs import record_values
from ..ir.nodes import Eqn, Literal, Program, Var, aval_of
from ..ops import elementwise as _ew
from ..ops.control_flow import COUNT_DTYPE, loop_p, subprograms, switch_p
from ..ops.registry import _hand_to_observers as hand_to_observers
from .tensor_array import TensorArray
from .tensor_array_buffer import BufferTensorArray, buffer_of, used_rows

__all__ = ["NotCompilable", "traced_while_loop", "traced_switch", "traced_scan"]


def _run_and_record(prim: Any, args: list, params: dict, set_length: bool = False) -> list:
    """Run ``prim`` on the arrays now (a loop as generated code) and hand the op to its
    observers (the stacks' leading dimension is this run's trip count)."""
    values = [a._value if isinstance(a, Tensor) else a for a in args]
    if prim is loop_p:
        arrays = _run_loop_compiled(values, params)
    elif _holds_loop(params["branches"]):
        arrays = _run_switch_compiled(values, params)
    else:  # a few equations: the interpreter costs less than generating them
        arrays = prim.impl(*values, **params)
    if set_length:
        params = dict(params, length=int(arrays[params["n_carry"]]))
    results = tuple(wrap(a) for a in arrays)
    # The tracer, and tapes or accumulators opened inside the function, as bind would.
    hand_to_observers(prim, tuple(args), values, params, results, arrays)
    if state.tracer is not None:
        _keep_run(state.tracer, results, arrays)
    return list(results)


def _keep_run(tracer: Any, results: tuple, arrays: Sequence[Any]) -> None:
    """Keep the run of a loop or switch for the call right after the trace
    (functions/trace_runs.py): the arrays of the equation just written for ``results``."""
    written = tracer.eqns[-1] if tracer.eqns and results else None
    if written is not None and len(written.outs) == len(arrays) and \
            tracer.env.get(results[0]._id) is written.outs[0]:
        record_values(tracer, written.outs, arrays, [written])


def _integer_scalar(value: Any) -> bool:
    return np.ndim(value) == 0 and np.asarray(value).dtype.kind in "iu"


def _run_loop_compiled(values: list, params: dict) -> Sequence[Any]:
    """The loop run now as generated code: the interpreter would pay its per-equation
    cost on every iteration of the trace's run (thousands, for an RNN)."""
    from ..codegen import compile_program

    inputs = [Var(aval_of(v), "operand") for v in values[1:]]
    n = values[0]
    unbounded = int(n) < 0  # the trace's n is then a literal too: no bound
    first = Literal(int(n)) if unbounded else Var(aval_of(n), "n")
    # A counter's start as the literal it is in the traced program (``t = 0``): the
    # generator then writes ``while t < n`` as a counted loop here too.
    carry = [Literal(np.asarray(v)[()], aval_of(v)) if _integer_scalar(v) else op
             for v, op in zip(values[1:1 + params["n_carry"]], inputs)]
    eqn_inputs = [first, *carry, *inputs[len(carry):]]
    outs = [Var(a, "out") for a in loop_p.abstract_eval(tuple(eqn_inputs), params)]
    program_inputs = inputs if isinstance(first, Literal) else [first, *inputs]
    program = Program(program_inputs, [Eqn(loop_p, eqn_inputs, outs, params)], outs)
    try:
        function = compile_program(program, kind="forward").function
    except Exception:  # a body the generator cannot write: the interpreter runs it
        return loop_p.impl(*values, **params)
    return function(*(values[1:] if unbounded else values))


def _holds_loop(programs: Sequence[Program]) -> bool:
    """Whether a loop runs anywhere in ``programs`` (nested in a branch or a body)."""
    return any(e.prim is loop_p or _holds_loop(subprograms(e.params))
               for program in programs for e in program.eqns)


def _run_switch_compiled(values: list, params: dict) -> Sequence[Any]:
    """A switch whose branch holds a loop, run now as generated code: the interpreter
    would run that loop equation by equation on every iteration of the trace's run."""
    from ..codegen import compile_program

    inputs = [Var(aval_of(v), "operand") for v in values]
    outs = [Var(a, "out") for a in switch_p.abstract_eval(tuple(inputs), params)]
    program = Program(inputs, [Eqn(switch_p, list(inputs), outs, params)], outs)
    try:
        function = compile_program(program, kind="forward").function
    except Exception:  # a branch the generator cannot write: the interpreter runs it
        return switch_p.impl(*values, **params)
    return function(*values)


def _leaves_as_tensors(leaves: Sequence[Any], buffers: bool = False) -> list[Tensor]:
    """The leaves as tensors; with ``buffers`` (a while_loop's carry) a TensorArray
    carried as a buffer is its buffer, else it is a reason for Python control flow."""
    out = []
    for leaf in leaves:
        if buffers and isinstance(leaf, BufferTensorArray):
            out.append(leaf._buffer)
            continue
        if leaf is None or not isinstance(leaf, (Tensor, bool, int, float, complex,
                                                 np.ndarray, np.generic)):
            raise NotCompilable  # a TensorArray, None, an object: Python control flow
        out.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf))
    return out


def _check_carry(before: Sequence[Tensor], after: Sequence[Tensor], relaxed: bool) -> None:
    """TF's check that an iteration keeps each loop variable's dtype and shape."""
    for k, (a, b) in enumerate(zip(before, after)):
        if b.dtype != a.dtype:
            raise TypeError(f"Loop variable {k} enters the loop as {a.dtype.name} and the "
                            f"body returns {b.dtype.name}: keep its dtype (gt.cast).")
        if tuple(b.shape) != tuple(a.shape):
            if relaxed:
                raise NotCompilable  # shape_invariants let it change: Python's loop
            raise ValueError(
                f"Loop variable {k} enters the loop with shape {tuple(a.shape)}, but has "
                f"shape {tuple(b.shape)} after one iteration. Pass shape_invariants to "
                "let it change.")


def traced_while_loop(cond: Callable[..., Any], body: Callable[..., Any], state_: Any,
                      single: bool, relaxed: bool, maximum_iterations: Any,
                      like_loop_vars: Callable[..., Any],
                      same_structure: Callable[..., Any]) -> Any:
    """``tf.while_loop`` as one ``loop`` equation: the final loop variables."""
    leaves = nest.flatten(state_)
    arrays = {k: leaf for k, leaf in enumerate(leaves) if isinstance(leaf, TensorArray)}
    dynamic = [k for k, a in arrays.items() if a._dynamic_size]
    if arrays:
        _infer_element_shapes(arrays, cond, body, leaves, state_, single)
    loop = _WhileLoop(cond, body, state_, single, relaxed, maximum_iterations,
                      like_loop_vars, same_structure, leaves, arrays, dynamic)
    capacity = {k: max(used_rows(arrays[k]), 16) for k in dynamic}
    if dynamic:  # the rows this call writes, to preallocate them (a guard, below)
        used = loop.rows_used(capacity)
        capacity = {k: max(used_rows(arrays[k]), used[k], 1) for k in dynamic}
    results = _run_and_record(loop_p, *loop.build(capacity), set_length=True)
    n_leaves = len(leaves)
    final = []
    for k, r in enumerate(results[:n_leaves]):
        if k in dynamic:  # its size is a value of the trace: later calls check it
            r = r[:int(results[n_leaves + dynamic.index(k)])]
        final.append(BufferTensorArray(arrays[k], r) if k in arrays else r)
    return nest.pack_sequence_as(state_, final)


class _WhileLoop:
    """One ``while_loop`` call traced into a ``loop`` equation, for given buffer
    capacities of its ``dynamic_size`` TensorArrays (each carries its used-row count
    after the loop variables)."""

    def __init__(self, cond: Callable[..., Any], body: Callable[..., Any], state_: Any,
                 single: bool, relaxed: bool, maximum_iterations: Any,
                 like_loop_vars: Callable[..., Any], same_structure: Callable[..., Any],
                 leaves: list, arrays: dict, dynamic: list):
        self.cond, self.body, self.state, self.single = cond, body, state_, single
        self.relaxed, self.maximum_iterations = relaxed, maximum_iterations
        self.like_loop_vars, self.same_structure = like_loop_vars, same_structure
        self.leaves, self.arrays, self.dynamic = leaves, arrays, dynamic

    def _args_of(self, tensors: list) -> tuple:
        n = len(self.leaves)
        used = dict(zip(self.dynamic, tensors[n:]))
        packed = [BufferTensorArray(self.arrays[k], t, used.get(k)) if k in self.arrays
                  else t for k, t in enumerate(tensors[:n])]
        packed = nest.pack_sequence_as(self.state, packed)
        return (packed,) if self.single else tuple(packed)

    def _call_cond(self, fn: Callable[..., Any], tensors: list) -> list:
        pred = fn(*self._args_of(tensors))
        if not isinstance(pred, Tensor):
            raise NotCompilable  # a Python bool: Python decides
        if pred.dtype != np.bool_ or pred.ndim != 0:
            raise TypeError(f"cond's result must be a scalar bool tensor, got "
                            f"{pred.dtype.name} of shape {list(pred.shape)}; compare "
                            "first (x > 0).")
        return [pred]

    def _call_body(self, fn: Callable[..., Any], tensors: list) -> list:
        new = self.like_loop_vars(fn(*self._args_of(tensors)), self.state, self.single)
        self.same_structure(self.state, new, "body's result", "loop_vars")
        new_leaves = nest.flatten(new)
        for k, a in self.arrays.items():
            _check_same_array(k, a, new_leaves[k])
        new_flat = _leaves_as_tensors(new_leaves, buffers=True)
        new_flat += [new_leaves[k]._used for k in self.dynamic]
        if any(tuple(new_flat[k].shape) != tuple(tensors[k].shape) for k in self.dynamic):
            raise NotCompilable  # its first iteration outgrew the buffer: Python's loop
        _check_carry(tensors, new_flat, self.relaxed)
        return new_flat

    def build(self, capacity: dict) -> tuple[list, dict]:
        """The loop's operands and params."""
        leaves = [buffer_of(leaf, capacity.get(k, 0)) if k in self.arrays else leaf
                  for k, leaf in enumerate(self.leaves)]
        flat = _leaves_as_tensors(leaves, buffers=True)
        flat += [convert_to_tensor(np.int64(used_rows(self.arrays[k])))
                 for k in self.dynamic]
        traced_cond = trace_in_scope(self.cond, flat, self._call_cond)
        traced_body = trace_in_scope(self.body, flat, self._call_body)
        outer = outer_values([traced_cond, traced_body])
        n_carry = len(flat)
        body_program = with_residuals(close(traced_body, outer), n_carry, len(outer))
        # A tensor even when unbounded: a raw operand would make the tapes copy them all.
        limit: Any = convert_to_tensor(np.int64(-1))
        if self.maximum_iterations is not None:  # each call's bound (negative: none)
            limit = _ew.maximum(_ew.cast(convert_to_tensor(self.maximum_iterations),
                                         COUNT_DTYPE), np.int64(0))
        params = dict(cond=close(traced_cond, outer), body=body_program, n_carry=n_carry,
                      n_inv=len(outer), reverse=False, length=0)
        operands = [limit, *flat, *operand_tensors(outer, [traced_cond, traced_body])]
        return operands, params

    def rows_used(self, capacity: dict) -> dict:
        """The rows each dynamic-size array uses after this call's loop: the loop run
        once now, unrecorded, on buffers that grow (random streams put back after)."""
        tracer = state.tracer
        streams = {key: entry[0].bit_generator.state for key, entry in tracer.streams.items()}
        operands, params = self.build(capacity)
        values = [a._value if isinstance(a, Tensor) else a for a in operands]
        arrays = _run_loop_compiled(values, params)
        for key, entry in tracer.streams.items():
            if key in streams:
                entry[0].bit_generator.state = streams[key]
        n = len(self.leaves)
        return {k: int(arrays[n + j]) for j, k in enumerate(self.dynamic)}


def _check_same_array(k: int, before: TensorArray, after: Any) -> None:
    """TF's check that the body returns a loop-carried TensorArray as one."""
    if not isinstance(after, TensorArray) or after.dtype != before.dtype:
        got = f"a {after.dtype.name} TensorArray" if isinstance(after, TensorArray) else \
            type(after).__name__
        raise TypeError(f"Loop variable {k} enters the loop as a {before.dtype.name} "
                        f"TensorArray and the body returns {got}: return the array that "
                        "ta.write(...) gives.")
    if not isinstance(after, BufferTensorArray):
        raise NotCompilable  # a new array made in the body: Python's loop


def _infer_element_shapes(arrays: dict, cond: Callable[..., Any], body: Callable[..., Any],
                          leaves: list, state_: Any, single: bool) -> None:
    """The element shape of each TensorArray that has none yet (TF infers it from the
    first write): the body traced once on copies, whose first write sets it."""
    unknown = {k: a for k, a in arrays.items() if a._element_shape is None
               or None in a._element_shape}
    if not unknown:
        return
    copies = {k: copy.copy(a) for k, a in unknown.items()}
    for c in copies.values():
        c._elements, c._read_indices = list(c._elements), set(c._read_indices)
    tensors = [leaf for k, leaf in enumerate(leaves) if k not in arrays]

    def probe(fn: Callable[..., Any], placeholders: list) -> list:
        it = iter(placeholders)
        args = [copies.get(k, arrays.get(k)) if k in arrays else next(it)
                for k in range(len(leaves))]
        packed = nest.pack_sequence_as(state_, args)
        fn(*((packed,) if single else tuple(packed)))
        raise NotCompilable  # nothing of the probe stays in the trace

    try:
        trace_in_scope(body, _leaves_as_tensors(tensors), probe)
    except NotCompilable:
        pass
    for k, c in copies.items():
        arrays[k]._element_shape = c._element_shape


def traced_switch(index: Any, branch_fns: Sequence[Callable[[], Any]],
                  same_structure: Callable[..., Any]) -> Any:
    """``branch_fns[index]()`` as one ``switch`` equation (an index out of range runs the
    last function): the chosen branch's results, in its structure."""
    found: dict[int, tuple] = {}

    def call_branch(fn: Callable[[], Any], tensors: list) -> list:
        returned = fn()
        found[len(found)] = returned
        if returned is None:  # a branch run for its effects (it prints): no result
            return []
        return _leaves_as_tensors(nest.flatten(returned))

    # TF traces a cond's true_fn first (its Python side effects come in that order).
    order = [1, 0] if len(branch_fns) == 2 and getattr(index, "dtype", None) == np.bool_ \
        else list(range(len(branch_fns)))
    by_position = {k: trace_in_scope(branch_fns[k], [], call_branch) for k in order}
    traced = [by_position[k] for k in range(len(branch_fns))]
    returned_by = dict(zip(order, (found[k] for k in range(len(order)))))
    structures = [returned_by[k] for k in range(len(branch_fns))]
    if any(r is None for r in structures) and any(r is not None for r in structures):
        raise NotCompilable  # a result in one branch only: Python picks the branch
    first = traced[0].returned
    for k, t in enumerate(traced[1:], 1):
        same_structure(structures[0], structures[k], f"branch {k}'s result",
                       "branch 0's result")
        for a, b in zip(first, t.returned):
            if a.dtype != b.dtype:
                raise TypeError(f"The branches return different dtypes ({a.dtype.name} "
                                f"and {b.dtype.name}): cast one so both match.")
            if tuple(a.shape) != tuple(b.shape):
                raise NotCompilable  # differently shaped results: Python picks one
    outer = outer_values(traced)
    branches = tuple(close(t, outer) for t in traced)
    operands = [index, *operand_tensors(outer, traced)]
    results = _run_and_record(switch_p, operands, {"branches": branches})
    return None if structures[0] is None else nest.pack_sequence_as(structures[0], results)


def traced_scan(fn: Callable[..., Any], elems: Any, initializer: Any, reverse: bool,
                mode: str, same_structure: Callable[..., Any]) -> Any:
    """``tf.scan`` (``mode="scan"``: every accumulator stacked), ``foldl``/``foldr``
    (``"fold"``: the last one) and ``map_fn`` (``"map"``: ``fn(x)`` stacked) as one
    ``loop`` over the rows of ``elems``."""
    flat_elems = [convert_to_tensor(e) for e in nest.flatten(elems)]
    n = int(flat_elems[0].shape[0]) if flat_elems and flat_elems[0].ndim else 0
    if n == 0 or any(e.ndim == 0 or int(e.shape[0]) != n for e in flat_elems):
        raise NotCompilable  # Python's version raises TF's errors
    first_row = n - 1 if reverse else 0
    rows = [e[first_row] for e in flat_elems]
    start = None
    if mode != "map":
        if initializer is None:  # the first element is the first accumulator
            start = nest.pack_sequence_as(elems, rows)
            flat_elems = [e[:-1] if reverse else e[1:] for e in flat_elems]
            n -= 1
            if n == 0:
                raise NotCompilable
            rows = [e[n - 1 if reverse else 0] for e in flat_elems]
            init = start
        else:
            init = initializer
        flat_init = _leaves_as_tensors(nest.flatten(init))
    else:
        init, flat_init = None, []
    n_carry = len(flat_init)
    structure: list = []

    def call(f: Callable[..., Any], tensors: list) -> list:
        row = nest.pack_sequence_as(elems, tensors[n_carry:])
        if mode == "map":
            out = f(row)
            structure.append(out)
            return _leaves_as_tensors(nest.flatten(out))
        acc = nest.pack_sequence_as(init, tensors[:n_carry])
        new = f(acc, row)
        same_structure(acc, new, "fn's result", "the accumulator")
        new_flat = _leaves_as_tensors(nest.flatten(new))
        _check_carry(tensors[:n_carry], new_flat, False)
        return new_flat + (new_flat if mode == "scan" else [])

    traced = trace_in_scope(fn, flat_init + rows, call)
    outer = outer_values([traced])
    closed = close(traced, outer)
    k = len(closed.inputs) - len(outer)
    inputs = closed.inputs[:n_carry] + closed.inputs[k:] + closed.inputs[n_carry:k]
    body = Program(inputs, closed.eqns, closed.outputs)
    body = with_residuals(body, n_carry, len(outer))
    params = dict(cond=None, body=body, n_carry=n_carry, n_inv=len(outer),
                  reverse=reverse, length=n)
    operands = [convert_to_tensor(np.int64(n)), *flat_init,
                *operand_tensors(outer, [traced]), *flat_elems]
    results = _run_and_record(loop_p, operands, params)
    if mode == "fold":
        return nest.pack_sequence_as(init, results[:n_carry])
    stacks = results[n_carry + 1:]
    if mode == "map":
        return nest.pack_sequence_as(structure[0], stacks[:len(nest.flatten(structure[0]))])
    stacks = stacks[:n_carry]
    if start is not None:  # the first accumulator is the first (last) result
        from ..ops import concat, expand_dims

        firsts = [expand_dims(s, 0) for s in nest.flatten(start)]
        stacks = [concat([s, f] if reverse else [f, s], 0) for s, f in zip(stacks, firsts)]
    return nest.pack_sequence_as(init, stacks)
