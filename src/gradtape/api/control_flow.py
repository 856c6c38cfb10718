"""TF's control flow and mapping: ``cond``, ``case``, ``switch_case``, ``while_loop``,
``map_fn``, ``vectorized_map``, ``scan``, ``foldl``, ``foldr``.

They run Python: a branch or an iteration is the ops it calls, so tapes, forward
accumulators and ``@gt.function`` see ordinary ops and every derivative works. A
predicate that is a tensor is read with ``bool(pred)``: inside ``@gt.function`` that read
is a guard, so a call whose predicate differs from the traced one traces again (never a
stale branch or iteration count). A predicate computed from a random draw is a guard too
(a plain ``if`` on one is an error): the call draws once, tries its traces on that draw,
and returns the values of the path the draw took.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ops
from ..ad.batching import batch_program
from ..core import nest
from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, convert_to_tensor
from ..functions.spec import TensorSpec
from ..ir.builder import Builder
from ..ir.nodes import Aval, Literal, Var
from ..ir.walk import read_outputs, walk
from ..ops.registry import bind
from ..ops.shape import stop_gradient
from .tensor_array import TensorArray

__all__ = ["cond", "case", "switch_case", "while_loop", "map_fn", "vectorized_map", "scan",
           "foldl", "foldr"]


def _predicate(pred: Any, what: str) -> bool:
    """A scalar boolean's value (a guard while tracing)."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    pred = convert_to_tensor(pred)
    if pred.dtype != np.bool_ or pred.ndim != 0:
        raise TypeError(f"{what} must be a scalar bool tensor, got {pred.dtype.name} of "
                        f"shape {list(pred.shape)}; compare first (x > 0).")
    return _branch_read(bool, pred)


def _branch_read(reader: Callable[[Any], Any], value: Tensor) -> Any:
    """``reader(value)`` for a branch or loop condition: inside ``@gt.function`` a guard
    even if it comes from a random draw (the call draws once and takes the path of that
    draw), where a plain Python ``if`` on a draw is an error."""
    tracer = state.tracer
    if tracer is None:
        return reader(value)
    saved, tracer.branch_read = tracer.branch_read, True
    try:
        return reader(value)
    finally:
        tracer.branch_read = saved


def _check_callable(fn: Any, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"{what} must be callable, got {type(fn).__name__}.")


def cond(pred: Any, true_fn: Callable[[], Any] | None = None,
         false_fn: Callable[[], Any] | None = None, name: str | None = None) -> Any:
    """TF's ``tf.cond``: ``true_fn()`` if ``pred`` else ``false_fn()``."""
    del name
    _check_callable(true_fn, "true_fn")
    _check_callable(false_fn, "false_fn")
    if state.tracer is not None and isinstance(pred, Tensor) and pred.dtype == np.bool_ \
            and pred.ndim == 0:
        found = _traced_switch(pred, [false_fn, true_fn])
        if found is not _PYTHON:
            return found
    return true_fn() if _predicate(pred, "pred") else false_fn()


def _traced_scan(fn: Any, elems: Any, initializer: Any, reverse: bool, mode: str) -> Any:
    """Inside ``@gt.function``: one ``loop`` over the rows of ``elems``, or ``_PYTHON``."""
    if state.tracer is None or not callable(fn):
        return _PYTHON
    from .control_flow_traced import NotCompilable, traced_scan

    try:
        return traced_scan(fn, elems, initializer, reverse, mode, assert_same_structure)
    except NotCompilable:
        return _PYTHON


def _tracing() -> bool:
    return state.tracer is not None


_PYTHON = object()  # the traced form could not hold it: run Python's control flow


def _traced_switch(index: Tensor, fns: list) -> Any:
    """Inside ``@gt.function``: one ``switch`` equation, or ``_PYTHON``."""
    from .control_flow_traced import NotCompilable, traced_switch

    try:
        return traced_switch(index, fns, assert_same_structure)
    except NotCompilable:
        return _PYTHON


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None,
         exclusive: bool = False, strict: bool = False, name: str | None = None) -> Any:
    """TF's ``tf.case``: the function of the first predicate that holds, else
    ``default()`` (the last pair's function when ``default`` is None). ``exclusive``
    raises if more than one predicate holds."""
    del strict, name
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    if not pairs:
        raise ValueError("pred_fn_pairs must hold at least one (predicate, function) pair.")
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry of pred_fn_pairs must be a (predicate, callable) "
                            f"tuple, got {pair!r}.")
        _check_callable(pair[1], "Each function of pred_fn_pairs")
    if state.tracer is not None and not exclusive and all(
            isinstance(p, Tensor) and p.dtype == np.bool_ and p.ndim == 0 for p, _ in pairs):
        chosen = convert_to_tensor(np.int32(len(pairs)))
        for k in range(len(pairs) - 1, -1, -1):  # the first predicate that holds
            chosen = ops.where(pairs[k][0], np.int32(k), chosen)
        last = default if default is not None else pairs[-1][1]
        found = _traced_switch(chosen, [fn for _, fn in pairs] + [last])
        if found is not _PYTHON:
            return found
    holds = [_predicate(pred, "Each predicate of pred_fn_pairs") for pred, _ in pairs]
    if exclusive and sum(holds) > 1:
        raise InvalidArgumentError(
            f"case with exclusive=True found {sum(holds)} true predicates (of "
            f"{len(pairs)}); at most one may hold.")
    for held, (_, fn) in zip(holds, pairs):
        if held:
            return fn()
    return (default if default is not None else pairs[-1][1])()


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str | None = None) -> Any:
    """TF's ``tf.switch_case``: ``branch_fns[branch_index]()``; an index out of range runs
    ``default`` (the last branch when it is None). ``branch_fns`` is a list of
    functions, of ``(index, function)`` pairs, or a dict of them."""
    del name
    if isinstance(branch_fns, dict):
        table = dict(branch_fns)
    else:
        fns = list(branch_fns)
        table = dict(fns) if fns and isinstance(fns[0], tuple) else dict(enumerate(fns))
    if not table:
        raise ValueError("branch_fns must not be empty.")
    if sorted(table) != list(range(len(table))):
        raise ValueError(f"branch_fns keys must be 0..{len(table) - 1}, got {sorted(table)}.")
    for fn in table.values():
        _check_callable(fn, "Each of branch_fns")
    index = convert_to_tensor(branch_index)
    if not np.issubdtype(index.dtype, np.integer) or index.ndim != 0:
        raise TypeError(f"branch_index must be a scalar int32 tensor, got {index.dtype.name} "
                        f"of shape {list(index.shape)}.")
    if state.tracer is not None:
        fns = [table[k] for k in range(len(table))]
        found = _traced_switch(index, fns + [default] if default is not None else fns)
        if found is not _PYTHON:
            return found
    chosen = _branch_read(int, index)  # a guard while tracing
    fn = table.get(chosen, default if default is not None else table[len(table) - 1])
    return fn()


# --- while_loop ------------------------------------------------------------------------

def _as_loop_tensor(x: Any) -> Any:
    """A loop variable as a tensor; a TensorArray stays one (TF's loop-carried array)."""
    if isinstance(x, (Tensor, TensorArray)) or x is None:
        return x
    return convert_to_tensor(x)


def _without_gradient(x: Any) -> Any:
    """``back_prop=False``: a tensor's (or each TensorArray element's) gradient stopped."""
    if isinstance(x, TensorArray):
        return x._map_elements(stop_gradient)
    return stop_gradient(x)


def _check_tensor_array(k: int, a: TensorArray, b: Any) -> None:
    if not isinstance(b, TensorArray) or b.dtype != a.dtype:
        got = f"a {b.dtype.name} TensorArray" if isinstance(b, TensorArray) else \
            type(b).__name__
        raise TypeError(f"Loop variable {k} enters the loop as a {a.dtype.name} TensorArray "
                        f"and the body returns {got}: return the array that "
                        "ta.write(...) gives.")


def _check_loop_vars(before: list, after: list, has_invariants: bool) -> None:
    """TF's check that an iteration keeps every loop variable's dtype and shape."""
    for k, (a, b) in enumerate(zip(before, after)):
        if isinstance(a, TensorArray):
            _check_tensor_array(k, a, b)
        if not isinstance(a, Tensor):
            continue
        if not isinstance(b, Tensor) or b.dtype != a.dtype:
            got = b.dtype.name if isinstance(b, Tensor) else type(b).__name__
            raise TypeError(f"Loop variable {k} enters the loop as {a.dtype.name} and the "
                            f"body returns {got}: keep its dtype (gt.cast).")
        if tuple(b.shape) != tuple(a.shape) and not has_invariants:
            raise ValueError(
                f"Loop variable {k} enters the loop with shape {tuple(a.shape)}, but has "
                f"shape {tuple(b.shape)} after one iteration. Pass shape_invariants to "
                "let it change.")


def _like_loop_vars(new: Any, state: Any, single: bool) -> Any:
    """``body``'s result in the container of the loop variables: TF accepts a tensor for
    a one-element list, and a list for a tuple."""
    if single:
        return new[0] if isinstance(new, (list, tuple)) and len(new) == 1 else new
    if len(state) == 1 and not isinstance(new, (list, tuple, dict)):
        new = [new]
    if isinstance(new, (list, tuple)) and type(new) is not type(state):
        return type(state)(*new) if hasattr(state, "_fields") else type(state)(new)
    return new


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               shape_invariants: Any = None, parallel_iterations: int = 10,
               back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.while_loop``: ``loop_vars = body(*loop_vars)`` while
    ``cond(*loop_vars)`` holds, at most ``maximum_iterations`` times; ``loop_vars`` is any
    nested structure (tensors, Python numbers become tensors) and keeps it."""
    del parallel_iterations, swap_memory, name
    _check_callable(cond, "cond")
    _check_callable(body, "body")
    single = not isinstance(loop_vars, (list, tuple))  # TF: body(x) returns x, not (x,)
    state = nest.map_structure(_as_loop_tensor, loop_vars)
    if _tracing():
        from .control_flow_traced import NotCompilable, traced_while_loop

        try:
            final = traced_while_loop(cond, body, state, single, shape_invariants is not None,
                                      maximum_iterations, _like_loop_vars,
                                      assert_same_structure)
            return final if back_prop else nest.map_structure(_without_gradient, final)
        except NotCompilable:
            pass
    limit = None if maximum_iterations is None else int(maximum_iterations)
    iteration = 0
    while limit is None or iteration < limit:
        args = (state,) if single else tuple(state)
        if not _predicate(cond(*args), "cond's result"):
            break
        new = body(*args)
        new = _like_loop_vars(new, state, single)
        assert_same_structure(state, new, "body's result", "loop_vars")
        new = nest.map_structure(_as_loop_tensor, new)
        _check_loop_vars(nest.flatten(state), nest.flatten(new), shape_invariants is not None)
        state, iteration = new, iteration + 1
    return state if back_prop else nest.map_structure(_without_gradient, state)


def assert_same_structure(a: Any, b: Any, what_b: str = "the second structure",
                          what_a: str = "the first structure") -> None:
    """Raise TF's ValueError if ``a`` and ``b`` do not nest the same way."""
    if not _same_structure(a, b):
        raise ValueError(f"{what_b} must have the structure of {what_a}: got {b!r}, "
                         f"expected the structure of {a!r}.")


def _same_structure(a: Any, b: Any) -> bool:
    containers = (list, tuple, dict)
    if isinstance(a, containers) != isinstance(b, containers):
        return False
    if isinstance(a, dict):
        return isinstance(b, dict) and sorted(a) == sorted(b) and \
            all(_same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b))
    return True


# --- map_fn, scan, foldl, foldr --------------------------------------------------------

def _leading_length(flat: Sequence[Tensor], what: str) -> int:
    if not flat:
        raise ValueError(f"{what} must hold at least one tensor.")
    lengths = set()
    for t in flat:
        if t.ndim == 0:
            raise ValueError(f"{what} must be tensors of rank >= 1 (mapped over axis 0), "
                             "got a scalar.")
        lengths.add(int(t.shape[0]))
    if len(lengths) > 1:
        raise InvalidArgumentError(f"All of {what} must have one length along axis 0, got "
                                   f"{sorted(lengths)}.")
    return lengths.pop()


def _elements(elems: Any, what: str = "elems") -> tuple[Any, list[Tensor], int]:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    return elems, flat, _leading_length(flat, what)


def _rows(elems: Any, flat: list[Tensor]) -> list:
    """Every element, sliced by one ``unstack`` per leaf: its gradient stacks the
    elements' cotangents once (``t[i]`` per element summed T full-size arrays)."""
    columns = [ops.unstack(t) for t in flat]
    return [nest.pack_sequence_as(elems, list(row)) for row in zip(*columns)]


def _spec_dtype(spec: Any) -> Any:
    if isinstance(spec, TensorSpec):
        return np.dtype(getattr(spec.dtype, "as_numpy_dtype", spec.dtype))
    return np.dtype(getattr(spec, "as_numpy_dtype", spec))


def _stacked(results: list, signature: Any, what: str) -> Any:
    """The per-element results stacked along a new axis 0, in their structure; with no
    elements, empty tensors of ``signature``'s dtypes and shapes."""
    if not results:
        if signature is None:
            raise ValueError(f"{what} of no elements needs fn_output_signature to know "
                             "the result's dtype and shape.")
        return nest.map_structure(
            lambda s: ops.zeros_like(np.zeros((0,) + tuple(getattr(s, "shape", ()) or ()),
                                              _spec_dtype(s))), signature)
    flats = [[convert_to_tensor(x) for x in nest.flatten(r)] for r in results]
    columns = [ops.stack([flat[k] for flat in flats]) for k in range(len(flats[0]))]
    return nest.pack_sequence_as(results[0], columns)


def _check_signature(result: Any, signature: Any) -> None:
    if signature is None:
        return
    specs, leaves = nest.flatten(signature), nest.flatten(result)
    if len(specs) != len(leaves):
        raise ValueError(f"fn returned {len(leaves)} tensors, fn_output_signature "
                         f"describes {len(specs)}.")
    for spec, leaf in zip(specs, leaves):
        dtype = convert_to_tensor(leaf).dtype
        if dtype != _spec_dtype(spec):
            raise TypeError(f"fn returned a {dtype} tensor where fn_output_signature says "
                            f"{_spec_dtype(spec)}: cast it in fn, or fix the signature.")


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None,
           parallel_iterations: int | None = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: str | None = None,
           fn_output_signature: Any = None) -> Any:
    """TF's ``tf.map_fn``: ``fn`` on each element along axis 0 of ``elems`` (a nested
    structure of tensors, unpacked together), the results stacked."""
    del parallel_iterations, swap_memory, infer_shape, name
    _check_callable(fn, "fn")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    found = _traced_scan(fn, elems, None, False, "map")
    if found is not _PYTHON:
        _check_signature(found, signature)
        return found if back_prop else nest.map_structure(_without_gradient, found)
    elems, flat, n = _elements(elems)
    results = []
    for row in _rows(elems, flat):
        result = fn(row)
        _check_signature(result, signature)
        results.append(result)
    out = _stacked(results, signature, "map_fn")
    return out if back_prop else nest.map_structure(_without_gradient, out)


def _scan_steps(fn, elems, initializer, reverse: bool, what: str):
    """The accumulators after each element (in element order) of ``fn(acc, x)``."""
    _check_callable(fn, "fn")
    elems, flat, n = _elements(elems)
    order = list(range(n))[::-1] if reverse else list(range(n))
    rows = _rows(elems, flat)
    accs = {}
    if initializer is None:
        if n == 0:
            raise ValueError(f"{what} of empty elems needs an initializer.")
        first = order.pop(0)
        acc = rows[first]
        accs[first] = acc
    else:
        acc = nest.map_structure(_as_loop_tensor, initializer)
    for i in order:
        new = fn(acc, rows[i])
        assert_same_structure(acc, new, "fn's result", "the accumulator")
        acc = accs[i] = new
    return acc, [accs[i] for i in sorted(accs)]


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """TF's ``tf.scan``: ``acc = fn(acc, x)`` over ``elems`` along axis 0 (from the end
    if ``reverse``), every accumulator stacked; without ``initializer`` the first element
    is the first accumulator (and the first result)."""
    del parallel_iterations, swap_memory, infer_shape, name
    found = _traced_scan(fn, elems, initializer, reverse, "scan")
    if found is not _PYTHON:
        return found if back_prop else nest.map_structure(_without_gradient, found)
    _, steps = _scan_steps(fn, elems, initializer, reverse, "scan")
    out = _stacked(steps, initializer, "scan")
    return out if back_prop else nest.map_structure(_without_gradient, out)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """TF's ``tf.foldl``: the last accumulator of ``acc = fn(acc, x)`` along axis 0."""
    del parallel_iterations, swap_memory, name
    found = _traced_scan(fn, elems, initializer, False, "fold")
    if found is not _PYTHON:
        return found if back_prop else nest.map_structure(_without_gradient, found)
    acc, _ = _scan_steps(fn, elems, initializer, False, "foldl")
    return acc if back_prop else nest.map_structure(_without_gradient, acc)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """TF's ``tf.foldr``: ``foldl`` from the last element to the first."""
    del parallel_iterations, swap_memory, name
    found = _traced_scan(fn, elems, initializer, True, "fold")
    if found is not _PYTHON:
        return found if back_prop else nest.map_structure(_without_gradient, found)
    acc, _ = _scan_steps(fn, elems, initializer, True, "foldr")
    return acc if back_prop else nest.map_structure(_without_gradient, acc)


# --- vectorized_map ---------------------------------------------------------------------

class _NotVectorizable(Exception):
    """fn did something a program cannot hold (a Python read of a value, a constant
    made from data): vectorized_map runs the loop instead."""


def _element_program(fn: Callable[[Any], Any], elems: Any, flat: list[Tensor]):
    """``fn`` on one element as a program (IR), its inputs one per leaf of ``elems``,
    and the structure of its result."""
    inputs = [Var(Aval(tuple(t.shape[1:]), t.dtype), "elem") for t in flat]
    with Builder() as b:
        try:
            result = fn(nest.pack_sequence_as(elems, list(inputs)))
        except Exception as error:  # anything fn cannot do on IR values
            raise _NotVectorizable from error
    leaves = nest.flatten(result)
    if not leaves or not all(isinstance(leaf, (Var, Literal)) for leaf in leaves):
        raise _NotVectorizable  # constants or non-tensors returned: the loop handles them
    return b.program(inputs, leaves), result


def _run_program(program, args: list) -> list:
    """``program``'s equations applied to tensors with ``bind``: tapes and tracers see
    them as the ops they are."""
    def literal(lit: Literal) -> Any:
        return lit.value

    env = walk(program, args, lambda eqn, ins: bind(eqn.prim, *ins, **eqn.params), literal)
    return read_outputs(program, env, literal)


def vectorized_map(fn: Callable[[Any], Any], elems: Any, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """TF's ``tf.vectorized_map``: ``map_fn(fn, elems)`` computed for all elements at
    once. ``fn`` is traced on one element into a program and batched by each primitive's
    batching rule (as ``jacobian``'s ``experimental_use_pfor``); primitives without one
    loop inside the program, and an ``fn`` that cannot be traced (it reads a value in
    Python) runs as ``map_fn``."""
    del warn
    _check_callable(fn, "fn")
    elems, flat, n = _elements(elems)
    try:
        if n == 0:
            raise _NotVectorizable
        program, structure = _element_program(fn, elems, flat)
    except _NotVectorizable:
        if not fallback_to_while_loop and n:
            raise ValueError("fn could not be vectorized and fallback_to_while_loop is "
                             "False.") from None
        return map_fn(fn, elems)
    batched = batch_program(program, [True] * len(flat), n)
    outputs = _run_program(batched, flat)
    return nest.pack_sequence_as(structure, outputs)
