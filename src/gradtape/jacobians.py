"""``GradientTape.jacobian`` and ``batch_jacobian`` with TF's shapes and errors.

Each row of a Jacobian is one backward pass with a one-hot cotangent. The backward is
built once (cached by structure), so each further row costs only its NumPy calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import nest
from .recording import state
from .tensor import Tensor


def _stack_rows(rows: list[Any], shape: tuple[int, ...]) -> Any:
    if any(isinstance(r, Tensor) for r in rows):
        from .ops import reshape, stack

        return reshape(stack(rows), shape)
    return Tensor._wrap(np.stack([np.asarray(r) for r in rows]).reshape(shape))


def _rows(tape, target: Tensor, sources: list[Tensor], seeds_shape, mode) -> list[list[Any]]:
    """For each one-hot cotangent over ``seeds_shape``, the gradient of every source."""
    size = int(np.prod(seeds_shape, dtype=np.int64))
    rows = []
    for i in range(size):
        seed = np.zeros(size, dtype=target.dtype)
        seed[i] = 1
        seed = seed.reshape(seeds_shape)
        if seed.shape != target.shape:
            seed = np.broadcast_to(seed, target.shape).copy()
        rows.append(tape._gradients([target], sources, [seed], mode))
    return rows


def _raw_or_tensor(g: Any) -> Any:
    # While a tape records (or a @gt.function traces), keep tensors so it sees the
    # stacking (Hessians via jacobian).
    return g if (state.recording or state.tracer) and isinstance(g, Tensor) else np.asarray(g)


def _single_target(target: Any, method: str) -> Tensor:
    if not isinstance(target, Tensor):
        raise TypeError(
            f"{method} takes one Tensor as target, got {type(target).__name__}: {target!r}. "
            "For several targets, call it once per target (or stack them with gt.stack)."
        )
    return target


def jacobian(tape, target, sources, unconnected_gradients, parallel_iterations,
             experimental_use_pfor):
    from .tape import UnconnectedGradients, _check_source, _unconnected_mode

    del parallel_iterations  # every row is a cached backward: no chunking is needed
    if not tape._live:
        tape._begin_gradient("jacobian")  # raises TF's RuntimeError
    target = _single_target(target, "jacobian")
    if not experimental_use_pfor and not tape._persistent:
        raise RuntimeError(
            "GradientTape must be created with persistent=True to compute the jacobian "
            "with experimental_use_pfor set to False (each row is a separate gradient "
            "call). Use GradientTape(persistent=True), or keep experimental_use_pfor=True."
        )
    flat_sources = nest.flatten(sources)
    for s in flat_sources:
        _check_source(s)
    mode = _unconnected_mode(unconnected_gradients)
    tape._begin_gradient("jacobian")
    rows = _rows(tape, target, flat_sources, target.shape, mode) if target.size else []
    out = []
    for k, s in enumerate(flat_sources):
        shape = tuple(target.shape) + tuple(s.shape)
        column = [row[k] for row in rows]
        if not rows:
            out.append(Tensor._wrap(np.zeros(shape, s.dtype))
                       if mode is UnconnectedGradients.ZERO else None)
        elif all(c is None for c in column):
            out.append(None)
        else:
            column = [np.zeros(s.shape, s.dtype) if c is None else c for c in column]
            out.append(_stack_rows([_raw_or_tensor(c) for c in column], shape))
    tape._end_gradient()
    return nest.pack_sequence_as(sources, out)


def batch_jacobian(tape, target, source, unconnected_gradients, parallel_iterations,
                   experimental_use_pfor):
    from .tape import _check_source, _unconnected_mode

    del parallel_iterations
    if not tape._live:
        tape._begin_gradient("batch_jacobian")  # raises TF's RuntimeError
    target = _single_target(target, "batch_jacobian")
    _check_source(source)
    for name, t in (("target", target), ("source", source)):
        if t.ndim < 2:
            raise ValueError(
                f"Shape {tuple(t.shape)} must have rank at least 2: batch_jacobian needs "
                f"a {name} of shape [batch, ...]. Use jacobian for unbatched tensors, or "
                "add a batch axis with gt.expand_dims."
            )
    if target.shape[0] != source.shape[0]:
        raise ValueError(
            f"Need first dimension of target shape ({tuple(target.shape)}) and source shape "
            f"({tuple(source.shape)}) to match: both are the batch dimension."
        )
    if not experimental_use_pfor and not tape._persistent:
        raise RuntimeError(
            "GradientTape must be created with persistent=True to compute the "
            "batch_jacobian with experimental_use_pfor set to False (each row is a "
            "separate gradient call). Use GradientTape(persistent=True), or keep "
            "experimental_use_pfor=True."
        )
    mode = _unconnected_mode(unconnected_gradients)
    tape._begin_gradient("batch_jacobian")
    batch = target.shape[0]
    y_shape, x_shape = tuple(target.shape[1:]), tuple(source.shape[1:])
    shape = (batch,) + y_shape + x_shape
    # One backward per target element of an example, seeded on every example at once:
    # examples don't interact (TF's documented assumption), so rows stay separate.
    rows = _rows(tape, target, [source], (1,) + y_shape, mode) if target.size else []
    column = [row[0] for row in rows]
    if not rows or all(c is None for c in column):
        # TF returns zeros here whatever unconnected_gradients says.
        tape._end_gradient()
        return Tensor._wrap(np.zeros(shape, target.dtype))
    column = [np.zeros(source.shape, source.dtype) if c is None else _raw_or_tensor(c)
              for c in column]
    # rows: [prod(y)] of [batch, x...] -> [batch, y..., x...]
    stacked = _stack_rows(column, (len(column), batch) + x_shape)
    from .ops import moveaxis, reshape

    result = reshape(moveaxis(stacked, 0, 1), shape)
    tape._end_gradient()
    return result
