"""The random primitives and their streams: ``random_draw`` (stateful: draws from a
stream when its equation runs) and ``stateless_random_draw`` (the values depend on a seed
operand), the NumPy samplers they share with eager calls, and the seeding state TF's
``tf.random.set_seed`` restarts. ``gt.random``'s functions (``api/random.py``) scale
these unit values with ordinary, differentiable ops.

Seeding follows TF's rules (``tf.random.set_seed`` docs): with a global seed set, the
same sequence of calls gives the same values on every run; an op-level ``seed`` gives
that op its own stream (successive calls still differ), and ``set_seed`` restarts every
stream. The values are NumPy's (PCG64), not TF's Philox stream.

Inside ``@gt.function`` each draw is an equation of the trace whose implementation draws
from its stream when the compiled function runs, as TF's stateful random ops do; the
tracer rewinds the streams it moved (``stream_states``, ``rewind``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.state import state
from ..core.tensor import Tensor, _to_array, concrete_value
from ..ir.nodes import Aval
from .batch_rules import batch_by_loop
from .registry import Primitive, bind, per_primitive

__all__: list[str] = []  # the public names are gt.random's (api/random.py)

_DEFAULT_GLOBAL_SEED = 87654321  # TF's DEFAULT_GRAPH_SEED: an op seed without a global one


class _Seeds:
    """The global seed and the streams drawn from it."""

    def __init__(self) -> None:
        self.global_seed: int | None = None
        self.stream = np.random.default_rng()
        self.op_streams: dict[int, np.random.Generator] = {}

    def reset(self, seed: int | None) -> None:
        self.global_seed = seed
        self.stream = np.random.default_rng(None if seed is None else entropy(seed))
        self.op_streams.clear()

    def for_op(self, seed: int | None) -> np.random.Generator:
        """The stream an op draws from: the global one, or the op seed's own."""
        if seed is None:
            return self.stream
        stream = self.op_streams.get(seed)
        if stream is None:
            base = _DEFAULT_GLOBAL_SEED if self.global_seed is None else self.global_seed
            stream = self.op_streams[seed] = np.random.default_rng(
                [entropy(base), entropy(seed)])
        return stream


_seeds = _Seeds()


def entropy(seed: Any) -> int:
    """A seed as the non-negative int NumPy's SeedSequence takes (TF takes any int64)."""
    if isinstance(seed, Tensor):
        seed = concrete_value(seed)
    return int(seed) & 0xFFFF_FFFF_FFFF_FFFF


def set_seed(seed: int | None) -> None:
    """TF's ``tf.random.set_seed``: restart every random stream from ``seed``."""
    _seeds.reset(seed)


class OwnStream:
    """A random stream of its own, independent of ``set_seed`` (``gt.random.Generator``
    is one): its draws take values from its NumPy generator ``_rng``."""

    def __init__(self, rng: np.random.Generator | None = None):
        self._rng = np.random.default_rng() if rng is None else rng


# --- samplers: NumPy draws of unit values, shared by eager calls and traced equations --

def _standard_normal(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.name == "float16":  # NumPy samples float32 and float64 only
        return rng.standard_normal(shape, np.float32).astype(dtype)
    return rng.standard_normal(shape, dtype)


def _truncated(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Standard normal values, each redrawn until it lies within two standard deviations
    (TF's truncated_normal)."""
    values = _standard_normal(rng, shape, dtype)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = _standard_normal(rng, (int(outside.sum()),), dtype)
        outside = np.abs(values) > 2
    return values


def _unit_uniform(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Floats in [0, 1)."""
    unit = rng.random(shape, np.float64 if dtype.name == "float64" else np.float32)
    return unit.astype(dtype, copy=False)


def _integers(rng: np.random.Generator, shape: tuple, dtype: np.dtype, low: Any,
              high: Any) -> np.ndarray:
    """Integers in [low, high)."""
    if np.any(low >= high):
        raise InvalidArgumentError(f"Need minval < maxval: {low} >= {high}.")
    return rng.integers(low, high, shape, dtype=dtype)


def _permutation(rng: np.random.Generator, shape: tuple, dtype: np.dtype,
                 value: Any) -> np.ndarray:
    """``value`` with its first axis permuted (``shape`` and ``dtype`` are its own)."""
    return rng.permutation(value)


def _categorical(rng: np.random.Generator, shape: tuple, dtype: np.dtype,
                 logits: Any) -> np.ndarray:
    """``shape[1]`` class indices per row of ``logits``, drawn with probabilities
    softmax(row). The Gumbel-max trick: argmax(logits + Gumbel noise) samples them."""
    scores = np.asarray(logits).astype(np.float64)
    noise = rng.gumbel(size=(scores.shape[0], shape[1], scores.shape[1]))
    return np.argmax(scores[:, None, :] + noise, axis=-1).astype(dtype)


# (rng, shape, dtype, *operands) -> an array of that shape and dtype, by distribution.
_SAMPLERS: dict[str, Callable[..., np.ndarray]] = {
    "normal": _standard_normal, "truncated_normal": _truncated, "uniform": _unit_uniform,
    "integers": _integers, "shuffle": _permutation, "categorical": _categorical,
}


# --- draws: now (eagerly), or equations of a @gt.function trace that draw on every call --

def _generator_of(stream: Any) -> np.random.Generator:
    """The NumPy generator a stream is now: the global one (``None``), an op seed's (an
    int) or a ``Generator``'s. Looked up on every draw: ``set_seed`` and
    ``reset_from_seed`` replace them."""
    if isinstance(stream, OwnStream):
        return stream._rng
    return _seeds.for_op(stream)


def _draw_impl(*operands: Any, stream: Any, distribution: str, shape: tuple,
               dtype: np.dtype) -> np.ndarray:
    return _SAMPLERS[distribution](_generator_of(stream), shape, dtype, *operands)


def _stateless_impl(seed: Any, *operands: Any, distribution: str, shape: tuple,
                    dtype: np.dtype) -> np.ndarray:
    return _SAMPLERS[distribution](_stateless_stream(seed), shape, dtype, *operands)


def _drawn_aval(*operands: Any, distribution: str, shape: tuple, dtype: np.dtype,
                **stream: Any) -> Aval:
    return Aval(shape, dtype)


def _batch_by_loop(prim: Primitive) -> Callable[..., Any]:
    """One draw per batch element, in order (each element its own values)."""
    return lambda size, args, batched, **params: batch_by_loop(prim, size, args, batched,
                                                               **params)


# ``random_draw(*operands, stream=, distribution=, shape=, dtype=)``: unit values drawn
# from ``stream`` when the equation runs, so a compiled function draws anew on every call.
# Its outputs are constants (no VJP, no JVP, as TF's random ops); the scaling by mean and
# stddev is ordinary, differentiable ops. Impure: never merged, folded or dropped.
random_draw_p = Primitive(
    "random_draw", _draw_impl, shape_rule=_drawn_aval,
    kind_neutral=True,
    batch=per_primitive(_batch_by_loop), pure=False,
)

# ``stateless_random_draw(seed, *operands, ...)``: the values depend on the seed operand
# only, so a seed passed as a tensor argument changes them without a new trace.
stateless_random_draw_p = Primitive(
    "stateless_random_draw", _stateless_impl, shape_rule=_drawn_aval,
    kind_neutral=True,
    batch=per_primitive(_batch_by_loop),
)

# ``recompute_grad``'s blocks, innermost last: each notes where a stream stood before the
# block's first draw from it, so that recomputing the block draws the same values.
draw_watchers: list[dict[int, tuple[np.random.Generator, Any]]] = []
# The same inside a ``@gt.function`` trace: each block's dict gets the tensor of each
# traced draw by its program value (the draws move out of the block: functions/recompute).
traced_draw_watchers: list[dict[Any, Tensor]] = []


def draw(stream: Any, distribution: str, shape: tuple, dtype: np.dtype,
          *operands: Any) -> Any:
    """Unit values from ``stream``: an array now, or while a ``@gt.function`` traces, a
    tensor computed by a ``random_draw`` equation (drawn on every call, used or not: the
    stream moves as eagerly). Tracing itself moves no stream: the tracer rewinds it."""
    tracer = state.tracer
    if tracer is None:
        if draw_watchers:
            generator = _generator_of(stream)
            for seen in draw_watchers:
                seen.setdefault(id(generator), (generator, generator.bit_generator.state))
        arrays = [_to_array(o) if isinstance(o, Tensor) else o for o in operands]
        return _draw_impl(*arrays, stream=stream, distribution=distribution, shape=shape,
                          dtype=dtype)
    generator = _generator_of(stream)
    before = generator.bit_generator.state
    drawn = bind(random_draw_p, *operands, stream=stream, distribution=distribution,
                 shape=shape, dtype=dtype)
    value = tracer.value_of(drawn)
    for seen in traced_draw_watchers:
        seen[value] = drawn
    tracer.traced_draw(generator, before, value)
    tracer.keep([value])
    return drawn


def stateless_draw(seed: Any, distribution: str, shape: tuple, dtype: np.dtype,
                    *operands: Any) -> Any:
    """Unit values for ``seed``: an array now, or a traced ``stateless_random_draw``
    tensor whose seed is an operand (a tensor argument: no guard, no new trace)."""
    if state.tracer is None:
        return _stateless_impl(seed, *operands, distribution=distribution, shape=shape,
                               dtype=dtype)
    return bind(stateless_random_draw_p, seed, *operands, distribution=distribution,
                shape=shape, dtype=dtype)


def streams_of(eqns: Any) -> list[Any]:
    """The streams the ``random_draw`` equations among ``eqns`` take values from."""
    return list(dict.fromkeys(e.params["stream"] for e in eqns if e.prim is random_draw_p))


def stream_states(streams: list[Any]) -> list[tuple[np.random.Generator, Any]]:
    """Where ``streams`` are now: ``rewind`` puts them back there."""
    return [(g, g.bit_generator.state) for g in map(_generator_of, streams)]


def rewind(states: list[tuple[np.random.Generator, Any]]) -> None:
    for generator, stream_state in states:
        generator.bit_generator.state = stream_state


def _stateless_stream(seed: Any) -> np.random.Generator:
    pair = np.asarray(concrete_value(seed) if isinstance(seed, Tensor) else seed)
    check_seed_pair(pair.shape, pair.dtype, seed)
    return np.random.default_rng([entropy(v) for v in pair])


def check_seed_pair(shape: Any, dtype: Any, seed: Any) -> None:
    if tuple(shape) != (2,) or np.dtype(dtype).kind not in "iu":
        raise InvalidArgumentError(f"seed must have shape [2] and an integer dtype, got "
                                   f"{seed!r}: pass seed=[a, b].")

