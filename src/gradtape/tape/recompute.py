"""``recompute_grad`` (TF's ``tf.recompute_grad``): gradient checkpointing.

Under a tape, the block runs with recording paused, so none of its intermediates is
kept; one ``custom_gradient`` record (``custom_gradient.reissue``) of the block's
positional arguments and the trainable variables it read re-issues its results. The
record's ``grad_fn`` runs the block again under an inner tape and differentiates that,
which is what TF's implementation does.

Two things go beyond TF's: random draws inside the block give the forward's values again
on recomputation (the block notes where each stream stood before its first draw,
``ops.random.draw_watchers``, and rewinds it for the recomputation, then puts it back),
and under nested tapes the outer tape records the recomputation, so second derivatives
through a block are the un-checkpointed ones (TF raises ``NotImplementedError``).

Inside a ``@gt.function`` trace the block becomes one ``recompute`` equation instead
(``functions/recompute.py``, installed as ``traced_call``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core import nest
from ..core.state import state
from ..core.tensor import Tensor
from ..core.unconnected import UnconnectedGradients
from ..core.variable import Variable
from ..ops import random
from .custom_gradient import _as_input, _VariableWatcher, reissue

__all__ = ["recompute_grad"]

# Where a stream stood before a block's first draw from it, by the generator's id.
_Draws = dict


class _CaptureWatcher:
    """Sits on the tape stack beside the variable watcher while a block runs unrecorded,
    to see the tensors it reads from outside that a paused tape differentiates (a value
    the tape computed before the block, a watched constant): they become inputs of the
    block's record, so their gradients are not dropped."""

    def __init__(self, passed: set[int], tapes: list) -> None:
        self.passed = passed  # the block's arguments, by id
        self.tapes = tapes
        self.made: set[int] = set()
        self.captured: dict[int, Tensor] = {}

    def on_op(self, prim: Any, args: tuple, values: list, params: dict, result: Any,
              out: Any, shared: Any) -> Any:
        for a in args:
            if isinstance(a, Tensor) and not isinstance(a, Variable) and (
                    a._id not in self.made and a._id not in self.passed
                    and a._id not in self.captured
                    and any(tape.sees(a) for tape in self.tapes)):
                self.captured[a._id] = a
        for r in result if isinstance(result, tuple) else (result,):
            self.made.add(r._id)
        return shared

    def on_op_alone(self, *args: Any) -> None:  # never alone: two watchers stand
        raise AssertionError("the capture watcher is never the only observer")

    def on_op_nested(self, prim: Any, args: tuple, in_ids: list, values: list,
                     params: dict, result: Any, out: Any, reads: Any, raw_arrays: bool,
                     shared: Any) -> Any:
        return self.on_op(prim, args, values, params, result, out, shared)

    def sees(self, tensor: Any) -> bool:
        return False

    def on_variable_read(self, variable: Any) -> None:
        pass


def _run_unrecorded(f: Callable[..., Any], args: tuple, kwargs: dict
                    ) -> tuple[Any, _VariableWatcher, list[Tensor], _Draws]:
    """``f(*args, **kwargs)`` with no tape recording: only watchers see which variables
    and outside tensors with a gradient it reads, and the block's draws are noted."""
    watcher = _VariableWatcher()
    paused = state.recording[:]
    captures = _CaptureWatcher({x._id for x in nest.flatten((args, kwargs))
                                if isinstance(x, Tensor)}, paused)
    draws: _Draws = {}
    state.recording[:] = [watcher, captures]
    random.draw_watchers.append(draws)
    try:
        result = f(*args, **kwargs)
    finally:
        state.recording[:] = paused
        random.draw_watchers.remove(draws)
    return result, watcher, list(captures.captured.values()), draws


@contextlib.contextmanager
def _replaying(draws: _Draws) -> Iterator[None]:
    """The block's streams put back where the forward found them, and afterwards where
    they are now: recomputing moves no stream."""
    now = [(generator, generator.bit_generator.state) for generator, _ in draws.values()]
    random.rewind(list(draws.values()))
    try:
        yield
    finally:
        random.rewind(now)


# Inside a ``@gt.function`` trace: ``(f, name, args, kwargs) -> result`` writing the
# block as one ``recompute`` equation, or ``RUN_AS_EAGERLY`` when it cannot
# (functions/recompute.py installs it; the functions layer stands above this one).
traced_call: Callable[..., Any] | None = None
RUN_AS_EAGERLY = object()


def _call_recomputed(f: Callable[..., Any], name: str, args: tuple, kwargs: dict) -> Any:
    if state.tracer is not None and traced_call is not None:
        result = traced_call(f, name, args, kwargs)
        if result is not RUN_AS_EAGERLY:
            return result
    if not (state.recording or state.accumulators):
        return f(*args, **kwargs)  # nothing differentiates: nothing to save
    result, watcher, captured, draws = _run_unrecorded(f, args, kwargs)
    flat_args = nest.flatten(args)
    inputs = [_as_input(a, name) for a in flat_args]
    passed = {id(x) for x in flat_args + nest.flatten(kwargs)}
    variables = [v for v in watcher.variables.values() if id(v) not in passed]
    # The tensors the block read from outside, with a gradient: inputs of its record
    # after its arguments (the recomputation reads them where the block found them).
    inputs += captured
    grad_fn = _recomputation(f, nest.pack_sequence_as(args, list(range(len(flat_args)))),
                             kwargs, captured, draws, _wanted(inputs))
    # The arguments reach grad_fn from the backward, which lets go of them after the
    # block's gradient; grad_fn holds none of the block's arrays itself.
    return reissue(name, grad_fn, inputs, variables, result, reads_inputs=len(flat_args))


def _wanted(inputs: list[Tensor]) -> list[bool]:
    """Which inputs a gradient can reach: those a recording tape or an accumulator
    differentiates now (a record made later cannot connect them). The recomputation
    differentiates only those, as the plain tape would: no gradient of a block's
    constant input is computed."""
    observers = [*state.recording, *state.accumulators]
    return [any(o.sees(x) for o in observers) for x in inputs]


def _recomputation(f: Callable[..., Any], structure: Any, kwargs: dict, captured: list,
                   draws: _Draws, wanted: list[bool]) -> Callable[..., Any]:
    """The block's ``grad_fn``: ``f`` run again under an inner tape on ``inputs`` (the
    block's arguments, flat, in ``structure``: their positions), differentiated."""

    def grad_fn(upstream: list, inputs: list, variables: list | None = None) -> Any:
        from .gradient_tape import GradientTape

        all_inputs = inputs + captured
        watched = [x for x, w in zip(all_inputs, wanted) if w] + list(variables or [])
        with _replaying(draws), GradientTape() as tape:
            tape.watch(watched)
            recomputed = f(*nest.pack_sequence_as(structure, inputs), **kwargs)
        del inputs, all_inputs  # the backward holds the arguments while it needs them
        # The block's outputs stand in by id, shape and dtype, and the upstream gradients
        # go to the inner backward (``upstream`` is emptied): it lets go of each
        # recomputed value and each upstream gradient after its last use, as the plain
        # tape's backward does.
        flat = nest.flatten(recomputed)
        del recomputed
        # A result that is no tensor (a Python number) is a constant: no gradient.
        tensors = [isinstance(t, Tensor) for t in flat]
        targets = [_stand_in(t) for t, is_tensor in zip(flat, tensors) if is_tensor]
        upstream[:] = [u for u, is_tensor in zip(upstream, tensors) if is_tensor]
        del flat
        if state.active:  # nested tapes record the recomputation's gradient
            grads = iter(tape.gradient(targets, watched, output_gradients=upstream,
                                       unconnected_gradients=UnconnectedGradients.ZERO))
        else:
            grads = iter(tape._gradient_of_seeds(targets, watched, upstream))
        del watched
        # None: an input no gradient can reach (the record's VJP makes it zeros).
        input_grads = [next(grads) if w else None for w in wanted]
        if variables is None:
            return input_grads
        return input_grads, list(grads)

    return grad_fn


def _stand_in(t: Tensor) -> Tensor:
    """``t`` as the inner gradient sees a target: its id, shape and dtype, no data (a
    NumPy array's is a broadcast zero; another library's array stays as it is)."""
    value = t._value
    if value.__class__ is not np.ndarray:
        return t
    return Tensor._alias(np.broadcast_to(np.zeros((), value.dtype), value.shape), t._id)


class _RecomputeFunction:
    """The wrapped block; binds like a method when used on one."""

    def __init__(self, f: Callable[..., Any]):
        self._f = f
        self._name = getattr(f, "__name__", None) or getattr(f, "name", None) or \
            type(f).__name__
        # A layer's __dict__ is its state, not the wrapper's: copy only the names.
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call_recomputed(self._f, self._name, args, kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None or not hasattr(self._f, "__get__"):
            return self
        return _RecomputeFunction(self._f.__get__(instance, owner))


def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """TF's ``tf.recompute_grad``: ``f`` whose forward keeps only its inputs under a tape;
    the backward runs ``f`` again to differentiate it (gradient checkpointing).

    ``f`` is a function, a method or a Keras layer; its positional arguments (tensors or
    nests of them) and the trainable variables it reads get gradients, its keyword
    arguments pass through. Random draws inside ``f`` repeat the forward's values when
    it is recomputed. Inside ``@gt.function`` the block compiles into one ``recompute``
    equation (a local function of the generated code, recomputed in the backward).
    """
    return _RecomputeFunction(f)
