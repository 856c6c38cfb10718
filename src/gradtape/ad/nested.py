"""Nested tapes: a compiled backward recorded on the outer tapes as ONE call op.

When ``gradient`` (or ``jacobian``) runs while another tape records, or while a
``ForwardAccumulator`` is active, its backward Program runs as compiled code, and the
outer tapes see a single ``backward_call`` equation: inputs are the residual tensors
(with the ids the outer tapes know them by) and the seeds, outputs are the connected
gradients. Its derivative rules work on the inner Program, as IR:

- VJP: the autodiff of the inner backward Program (its equations, then their VJPs),
  built once per structure and inlined into the outer backward, so the outer backward is
  an ordinary program of primitives: optimized, compiled and cached like any other.
  Hessians and third derivatives stay compiled at every level.
- JVP: the inner Program's equations run with their JVP rules (forward-over-backward).
- Batching: the inner Program vectorized (``ir/batching``) and inlined.

The call op's param is an ``InnerBackward``: equal for equal structural keys, so the key
of an outer trace containing a call op includes the inner program's key. It holds the
built backward (a Program, maybe its compiled function), never arrays.

Backwards that are not cacheable (``custom_gradient`` runs user code on tensors) keep
the op-by-op path (``run_recorded``), so the outer tapes see ``grad_fn``'s
own operations, as in TensorFlow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.memos import MAX_DERIVED_PER_ENTRY, EntryMemo
from ..core.tensor import Tensor
from ..ir.interpreter import full_array
from ..ir.lower import SEED, feed_tensor_id, feed_value
from ..ir.nodes import Eqn, Literal, Program, Var
from ..ir.walk import keep_literal, read_outputs, walk
from ..ops.registry import Primitive, bind
from .reverse import vjp_program

__all__: list[str] = []

# Programs derived from a call op's entry: its VJP, its batched forms (emptied by
# ``gt.clear_cache()``, tape/lookup.py).
derived_programs = EntryMemo(MAX_DERIVED_PER_ENTRY)


class InnerBackward:
    """Which built backward a call op runs: its structural key and its entry.

    Call ops with equal keys are the same computation, whatever entry object they hold
    (an entry rebuilt after eviction has the same program), so they compare equal.
    """

    __slots__ = ("key", "entry", "outputs", "_hash")

    def __init__(self, key: Any, entry: Any):
        self.key = key
        self.entry = entry
        # Positions of the program outputs the call op returns (the connected gradients).
        self.outputs = tuple(i for i, o in enumerate(entry.program.outputs) if o is not None)
        self._hash = None

    @property
    def program(self) -> Program:
        return self.entry.program

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("backward_call", self.key))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, InnerBackward):
            return NotImplemented
        return hash(self) == hash(other) and self.key == other.key

    def __repr__(self) -> str:
        program = self.entry.program
        return (f"<backward: {len(program.inputs)} inputs, {len(program.eqns)} equations, "
                f"{len(self.outputs)} outputs>")

    def returned(self) -> Program:
        """The inner program with only the outputs the call op returns."""
        program = self.program
        return Program(program.inputs, program.eqns, [program.outputs[i] for i in self.outputs])


def run_recorded(program: Program, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``program`` on tensors via ``bind``, so active tapes record each step."""
    def apply_recorded(eqn: Eqn, ins: list) -> Any:
        # A primitive that runs user code on tensors (custom_gradient's grad_fn) does so
        # itself, so that the recording tapes see that code's own operations.
        run_on_tensors = eqn.prim.run_on_tensors
        if run_on_tensors is not None:
            return run_on_tensors(*ins, **eqn.params)
        return bind(eqn.prim, *ins, **eqn.params)

    return read_outputs(program, walk(program, args, apply_recorded), full_array)


def inline(program: Program, args: Sequence[Any]) -> list[Any]:
    """Emit ``program``'s equations on ``args`` through ``bind`` (IR values here: the
    equations land in the program being built); its outputs, ``None`` kept."""
    env = walk(program, args, _bind_eqn, keep_literal)
    return read_outputs(program, env, _materialize)


def _bind_eqn(eqn: Eqn, ins: list) -> Any:
    return bind(eqn.prim, *ins, **eqn.params)


def _materialize(literal: Literal) -> Any:
    """A constant output (an array of the literal's shape)."""
    from ..ops import broadcast_to, cast

    value = cast(Literal(literal.value), literal.aval.dtype)
    return broadcast_to(value, literal.aval.shape) if literal.aval.shape else value


def _linearize(inner: InnerBackward) -> Program:
    """The VJP of the inner program as one program: inputs are the inner inputs, then
    one cotangent per returned output; outputs are one cotangent (or None) per input.

    It recomputes the inner equations whose values the VJP reads (dead code removes the
    others): the call op keeps only its outputs.
    """
    forward = inner.returned()
    cts = [Var(o.aval, "ct") for o in forward.outputs]
    backward, _ = vjp_program(forward, list(forward.inputs), cts)
    from ..ir.dce import eliminate_dead_code

    combined = Program(list(forward.inputs) + cts, list(forward.eqns) + list(backward.eqns),
                       backward.outputs)
    return eliminate_dead_code(combined)


# --- the primitive -----------------------------------------------------------------------

def _impl(*args: Any, inner: InnerBackward) -> tuple:
    outs = inner.entry.run(list(args))
    return tuple(outs[i] for i in inner.outputs)


def _shape_rule(*inputs: Any, inner: InnerBackward) -> list:
    return [inner.program.outputs[i].aval for i in inner.outputs]


def _vjp(g: tuple, y: tuple, *inputs: Any, inner: InnerBackward) -> tuple:
    program = derived_programs.get_or_build(inner.entry, "vjp", lambda: _linearize(inner))
    return tuple(inline(program, list(inputs) + list(g)))


def _jvp(ts: tuple, y: tuple, *inputs: Any, inner: InnerBackward) -> tuple:
    """Push the tangents through the inner program, equation by equation, on tensors (the
    tapes outside the accumulator record these steps too)."""
    from .forward_mode import _fit_tangent

    program = inner.returned()

    def push(eqn: Eqn, pairs: list) -> Any:
        """``(value, tangent)`` of each output of ``eqn`` from its inputs' pairs."""
        vals = [x for x, _ in pairs]
        tangents = tuple(t for _, t in pairs)
        out = bind(eqn.prim, *vals, **eqn.params)
        outs = out if eqn.prim.multiple_results else (out,)
        if not eqn.prim.differentiable or all(t is None for t in tangents):
            out_ts = (None,) * len(outs)  # a comparison's outputs are constants, as eagerly
        else:
            if eqn.prim.jvp is None:
                raise NotImplementedError(
                    f"Forward mode through a nested gradient needs a JVP rule for the "
                    f"primitive {eqn.prim.name!r}, which has none. Compute this derivative "
                    "with nested GradientTapes (reverse over reverse) instead."
                )
            out_ts = eqn.prim.jvp(tangents, out, *vals, **eqn.params)
            out_ts = out_ts if eqn.prim.multiple_results else (out_ts,)
            out_ts = tuple(_fit_tangent(t, o) for t, o in zip(out_ts, outs))
        pairs_out = tuple(zip(outs, out_ts))
        return pairs_out if eqn.prim.multiple_results else pairs_out[0]

    env = walk(program, list(zip(inputs, ts)), push, _constant_pair)
    # A constant output has no tangent.
    return tuple(None if pair is None else pair[1]
                 for pair in read_outputs(program, env, _no_pair))


def _constant_pair(literal: Literal) -> tuple:
    return (literal.value, None)


def _no_pair(literal: Literal) -> None:
    return None


def _batch(size: int, args: list, batched: list, inner: InnerBackward) -> tuple:
    from .batching import batch_program

    key = ("batch", size, tuple(batched))
    program = derived_programs.get_or_build(
        inner.entry, key, lambda: batch_program(inner.returned(), batched, size))
    return tuple(inline(program, args))


backward_call_p = Primitive(
    "backward_call", _impl, vjp=_vjp, jvp=_jvp, shape_rule=_shape_rule,
    kind_neutral=True,
    batch=_batch, multiple_results=True,
)


# --- running a backward as a call op -------------------------------------------------------

def call_backward(key: Any, entry: Any, args: Sequence[Any],
                  inner: InnerBackward | None = None) -> list[Any]:
    """Run ``entry`` on ``args`` (tensors, or arrays for constants) as one call op, so
    that the active tapes and accumulators see it. One tensor or ``None`` per output of
    its program. ``inner``: the call's param, if the caller keeps one for ``key``."""
    if inner is None:
        inner = InnerBackward(key, entry)
    result: list[Any] = [None] * len(entry.program.outputs)
    if not inner.outputs:
        return result
    outs = bind(backward_call_p, *args, inner=inner)
    for i, out in zip(inner.outputs, outs):
        result[i] = out
    return result


def residual_arguments(trace: Any, entry: Any, sources: Sequence[Tensor],
                       seeds: Sequence[Any]) -> list[Any]:
    """The backward's arguments as tensors the outer tapes know: each residual under the
    id it was recorded with (a raw constant stays an array), then the seeds."""
    args = []
    records = trace.records
    for f in entry.feeds:
        kind, index, _ = f  # one unpacking: cheaper than reading the fields
        if kind == SEED:
            args.append(seeds[index])
            continue
        value, tensor_id = feed_value(f, records, sources), feed_tensor_id(f, records, sources)
        args.append(value if tensor_id is None else Tensor._alias(value, tensor_id))
    return args


def nested_gradients(trace: Any, entry: Any, sources: Sequence[Tensor],
                     seeds: Sequence[Tensor]) -> list[Any] | None:
    """The gradients as one recorded call op, or ``None`` if this backward must run op by
    op (it is not cacheable: ``custom_gradient``)."""
    if not entry.cacheable:
        return None
    return call_backward(trace.key, entry, residual_arguments(trace, entry, sources, seeds))
