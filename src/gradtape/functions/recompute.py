"""A ``gt.recompute_grad`` block inside a ``@gt.function`` trace: one ``recompute``
equation (``ops/control_flow.py``) whose sub-program is the block, traced in a scope of
its own (``subtrace.py``) as a loop body is.

Its operands are the block's positional arguments, the outer values it reads (weights,
variables: their gradients come through them; a tensor keyword argument passes through
``stop_gradient``, as eagerly it gets no gradient) and what it drew: the block's random
draws move out, in front of the equation, so the recomputation in the backward reads the
forward's draws (a dropout mask is replayed exactly) and the block is a pure function of
its operands. A block the scope cannot hold (a Python read of a tensor, a variable
assigned, a draw whose operands the block computes) raises ``NotCompilable``: the caller
then runs it as eagerly (``custom_gradient``), which makes the function run eagerly.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from ..core import nest
from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..ir.nodes import Eqn, Var
from ..ops import random
from ..ops.control_flow import recompute_p, subprograms
from ..ops.registry import _hand_to_observers as hand_to_observers
from ..ops.shape import stop_gradient
from ..tape import recompute as _recompute
from ..tape.custom_gradient import _as_input
from .subtrace import NotCompilable, Traced, close, operand_tensors, outer_values, trace_in_scope


def traced_recompute(f: Callable[..., Any], name: str, args: tuple, kwargs: dict) -> Any:
    """``f(*args, **kwargs)`` as one ``recompute`` equation of the active trace, or
    ``RUN_AS_EAGERLY`` when the block cannot be one."""
    try:
        return _recompute_equation(f, name, args, kwargs)
    except NotCompilable:
        return _recompute.RUN_AS_EAGERLY


def _recompute_equation(f: Callable[..., Any], name: str, args: tuple, kwargs: dict) -> Any:
    tracer = state.tracer
    flat = [_as_input(a, name) for a in nest.flatten(args)]
    # Keyword arguments pass through and get no gradient, as eagerly.
    kwargs = nest.map_structure(
        lambda v: stop_gradient(v) if isinstance(v, Tensor) else v, kwargs)
    _build_layer(f, args)
    returned: list = []
    drawn: dict[Any, Tensor] = {}

    def call(fn: Callable[..., Any], placeholders: list[Tensor]) -> list:
        random.traced_draw_watchers.append(drawn)
        try:
            result = fn(*nest.pack_sequence_as(args, placeholders), **kwargs)
        finally:
            random.traced_draw_watchers.remove(drawn)
        returned.append(result)
        leaves = nest.flatten(result)
        if not all(isinstance(leaf, Tensor) for leaf in leaves):
            raise NotCompilable  # a Python value among the results: run as eagerly
        return leaves

    traced = _draws_moved_out(tracer, trace_in_scope(f, flat, call), flat, drawn)
    for placeholder in traced.placeholders:  # fresh vars of this scope: named in the IR
        placeholder.hint = "argument"
    outer = outer_values([traced])
    block = close(traced, outer)
    if _draws_inside(block.eqns):
        raise NotCompilable  # a draw in a loop of the block would differ when recomputed
    operands = flat + operand_tensors(outer, [traced])
    arrays = tuple(t._value for t in traced.returned)
    results = tuple(wrap(a) for a in arrays)
    params = {"block": block, "name": _function_name(name)}
    hand_to_observers(recompute_p, tuple(operands), [t._value for t in operands], params,
                      results, arrays)
    return nest.pack_sequence_as(returned[0], list(results))


def _draws_moved_out(tracer: Any, traced: Traced, flat: list[Tensor],
                     drawn: dict[Any, Tensor]) -> Traced:
    """``traced`` without its random draws, which go to the trace in front of the block
    (on the block's arguments' outer values): each becomes an outer value it reads."""
    outer_of = {p: tracer.value_of(t) for p, t in zip(traced.placeholders, flat)}
    made = {o for e in traced.eqns for o in e.outs}
    kept, reads = [], dict(traced.reads)
    for eqn in traced.eqns:
        if eqn.prim is not random.random_draw_p:
            kept.append(eqn)
            continue
        inputs = [outer_of.get(v, v) if isinstance(v, Var) else v for v in eqn.inputs]
        if any(isinstance(v, Var) and v in made for v in inputs):
            raise NotCompilable  # drawn from what the block computes
        tracer.eqns.append(Eqn(eqn.prim, inputs, eqn.outs, eqn.params, eqn.loc))
        for out in eqn.outs:
            tensor = drawn[out]
            tracer.env[tensor._id] = out
            reads[out] = tensor
        tracer.keep(list(eqn.outs))  # drawn on every call, as eagerly
    return Traced(kept, traced.placeholders, traced.outputs, traced.returned, reads)


def _draws_inside(eqns: list[Eqn]) -> bool:
    return any(e.prim is random.random_draw_p or any(_draws_inside(p.eqns)
               for p in subprograms(e.params)) for e in eqns)


def _build_layer(f: Any, args: tuple) -> None:
    """A Keras layer not built yet builds before its block is traced: its weights are
    made once, outside the block, which reads them."""
    build_for = getattr(f, "build_for", None)
    if build_for is not None and not getattr(f, "built", True) and args:
        build_for(_shapes(args[0]))


def _shapes(value: Any) -> Any:
    """What Keras's ``build`` receives: a tuple per tensor, lists and dicts kept."""
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return tuple(value.shape)


def _function_name(name: str) -> str:
    """The block's name as the generated function's (``block`` when it is none)."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_")
    return cleaned if cleaned.isidentifier() and not keyword.iskeyword(cleaned) else "block"


_recompute.traced_call = traced_recompute
