"""``GradientTape.jacobian`` and ``batch_jacobian`` with TF's shapes and errors.

Vectorized (the default, TF's ``experimental_use_pfor=True``): the backward Program runs
ONCE for a whole basis of one-hot cotangents, batched over a leading axis
(``ad/batching.py``), not once per row. The batched program is built by
``compiler/build.build_batched``, then optimized, compiled and
cached like any backward, under the backward's key and its number of rows.

- ``jacobian``: ``target.size`` rows; row ``i`` seeds the one-hot ``e_i``.
- ``batch_jacobian``: ``prod(target.shape[1:])`` rows; row ``j`` seeds ``e_j`` on every
  example at once. Examples don't interact (TF's documented assumption), so the gradient
  of row ``j`` at example ``b`` is ``d target[b, j] / d source[b]``.

``parallel_iterations`` bounds the rows per batched call (memory); the last chunk is
padded with zero rows, so one compiled program serves every chunk.

While a tape, an accumulator or a ``@gt.function`` trace is active, the batched backward
runs as one call op (``ad/nested.py``), so the Jacobian is itself differentiable (a Hessian
as the jacobian of a jacobian, forward-over-jacobian Hessian-vector products).

``experimental_use_pfor=False`` keeps TF's looping path: one gradient per row, which
needs a persistent tape. A backward that is not cacheable (``custom_gradient``) also
loops while a tape records, so the outer tape sees ``grad_fn``'s own operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ad import nested
from ..compiler.build import build_batched, build_entry
from ..core import nest
from ..core.backends import dtype_of, kind_of, kind_of_all
from ..core.state import state
from ..core.tensor import Tensor, wrap
from ..core.unconnected import UnconnectedGradients, unconnected_mode
from ..ir.lower import SEED
from ..ops import broadcast_to, cast, concatenate, moveaxis, reshape, stack
from . import backward, lookup
from .arguments import check_source

_LOOP = object()  # "take the looping path": a non-cacheable backward under a tape


class _SeedSpec:
    """Stands in for the seed when looking up the backward: only its shape and dtype
    are read (the cache key's flags and the seed input's aval)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape = shape
        self.dtype = dtype


def _batched_gradients(tape, target: Tensor, sources: list[Tensor], rows: int,
                       chunk: int, basis: Callable[[int, int, int], np.ndarray],
                       basis_is_identity: bool = False) -> Any:
    """For each source, the gradients for ``rows`` seeds stacked on a leading axis (a
    tensor while something records, else an array), or ``None`` where unconnected.

    ``basis(start, stop, size)`` gives the seeds of rows ``start:stop`` as an array of
    ``size`` rows (zero-padded), shaped ``(size,) + target.shape``.
    ``basis_is_identity``: all rows together are one-hot over the target's last axis
    (``specialize_identity`` may then fold products with them away).
    """
    records, expanded, owner = tape._expand_sources([target], sources)
    if not expanded:
        return [None] * len(sources)
    spec = _SeedSpec(target._value.shape, dtype_of(target._value))
    size = rows if rows <= chunk else chunk
    # All rows at once of a one-hot basis over a vector: the seeds are an identity.
    identity = size == rows and basis_is_identity
    active = state.active
    whole_key = None
    if records is tape._records:
        whole_key, run = _whole_tape_runner(tape, records, expanded, target, spec, size,
                                            identity, active)
    if whole_key is None or run is None:
        found = lookup.find(records, expanded, [target], [spec],
                            tape if tape._persistent else None, None, build_entry)
        trace, entry = found
        if active and not entry.cacheable:
            return _LOOP
        if whole_key is not None:
            lookup.remember_whole_tape(whole_key, tape, records, found)
        key, batched = lookup.batched_entry(trace.key, entry, size, identity, build_batched)
        if active:
            def run(seeds: Any) -> list[Any]:
                args = nested.residual_arguments(
                    trace, batched, expanded, [None if seeds is None else wrap(seeds)])
                return nested.call_backward(key, batched, args)
        else:
            def run(seeds: Any) -> list[Any]:
                return batched.run(batched.arguments(trace, expanded, [seeds]))
        reads_seeds = any(f.kind == SEED for f in batched.feeds)
    else:
        reads_seeds = run.reads_seeds
        if size == rows:  # a known tape, all rows at once: the usual call, kept short
            outs = run(basis(0, rows, rows) if reads_seeds else None)
            return _summed(sources, owner, outs, rows)
    pieces: list[list[Any]] = [[] for _ in expanded]
    for start in range(0, rows, size):
        stop = min(start + size, rows)
        seeds = basis(start, stop, size) if reads_seeds else None
        outs = run(seeds)
        for k, out in enumerate(outs):
            if out is not None:
                pieces[k].append(out if stop - start == size else out[:stop - start])
    return _summed(sources, owner, [_concatenate(p) if p else None for p in pieces], rows)


def _summed(sources: list[Tensor], owner: list[int], stacked: list[Any], rows: int
            ) -> list[Any]:
    """Per source, its stacked gradients in its dtype (the sum over the values a variable
    had, if it was assigned while recording), or ``None`` where unconnected."""
    summed: list[Any] = [None] * len(sources)
    for k, g in zip(owner, stacked):
        if g is not None:
            value = sources[k]._value
            g = _fit(g, (rows,) + value.shape, dtype_of(value))
            summed[k] = g if summed[k] is None else summed[k] + g
    return summed


def _whole_tape_runner(tape, records, expanded, target, spec, size, identity, active):
    """``(whole-tape key, run)``: the backward's shortcut for a tape that recorded a
    known structure (the lookup ladder's whole-tape rung: no pruning or keying).
    ``run(seeds)`` runs the batched backward (``active``: as the call op the general
    path records, under the same key), or is ``None`` if it was not built yet for this
    key."""
    key, hit = lookup.whole_tape(tape, lookup.tape_slots(tape, expanded),
                                 lookup.tape_slots(tape, [target]), ((spec.shape, spec.dtype),))
    located = None if hit is None else lookup.located_batched(hit, size, identity)
    if located is None:
        return key, None
    if active:
        call_key = lookup.batched_key(hit.trace_key, size, identity)

        def run(seeds: Any) -> list[Any]:
            return backward.call_located_as(located, call_key, records, expanded,
                                            [None if seeds is None else wrap(seeds)])
    else:
        def run(seeds: Any) -> list[Any]:
            return backward.run_located(located, records, expanded, [seeds])
    run.reads_seeds = located.reads_seeds  # type: ignore[attr-defined]
    return key, run


def _concatenate(parts: list[Any]) -> Any:
    if len(parts) == 1:
        return parts[0]
    if any(isinstance(p, Tensor) for p in parts):
        return concatenate(parts, axis=0)
    kind = kind_of_all(parts)
    if kind is not None:  # Dask, ...: stays lazy
        return kind.concatenate(parts, axis=0)
    return np.concatenate(parts, axis=0)


def _fit(g: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A stacked gradient with the source's dtype (TF's rule) and the stacked shape."""
    if isinstance(g, Tensor):
        if g.dtype != dtype:
            g = cast(g, dtype)
        return g if tuple(g.shape) == shape else broadcast_to(g, shape)
    if g.__class__ is np.ndarray and g.dtype == dtype and g.shape == shape:
        return g  # the usual case
    kind = kind_of(g)
    if kind is not None:  # Dask, ...: stays lazy
        return kind.fit(g, shape, dtype)
    g = np.asarray(g)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g if g.shape == shape else np.broadcast_to(g, shape)


def _reshape(g: Any, shape: tuple[int, ...]) -> Tensor:
    if isinstance(g, Tensor):
        return reshape(g, shape)
    return wrap(g.reshape(shape) if g.__class__ is np.ndarray else np.reshape(g, shape))


def _one_hot_rows(n: int, dtype: np.dtype, shape: tuple[int, ...]
                  ) -> Callable[[int, int, int], np.ndarray]:
    """Seeds for ``jacobian``: row ``i`` is ``e_i`` of a target of ``shape`` (n elements)."""
    def basis(start: int, stop: int, size: int) -> np.ndarray:
        seeds = np.zeros((size, n), dtype)
        seeds[np.arange(stop - start), np.arange(start, stop)] = 1
        return seeds.reshape((size,) + shape)
    return basis


def _one_hot_per_example(batch: int, m: int, dtype: np.dtype, shape: tuple[int, ...]
                         ) -> Callable[[int, int, int], np.ndarray]:
    """Seeds for ``batch_jacobian``: row ``j`` is ``e_j`` on every example."""
    def basis(start: int, stop: int, size: int) -> np.ndarray:
        seeds = np.zeros((size, batch, m), dtype)
        seeds[np.arange(stop - start), :, np.arange(start, stop)] = 1
        return seeds.reshape((size,) + shape)
    return basis


# --- the looping path ---------------------------------------------------------------------

def _stack_rows(rows: list[Any], shape: tuple[int, ...]) -> Any:
    if any(isinstance(r, Tensor) for r in rows):
        return reshape(stack(rows), shape)
    kind = kind_of_all(rows)
    if kind is not None:  # Dask, ...: stays lazy
        return wrap(kind.namespace.reshape(kind.stack(rows), shape))
    return wrap(np.stack([np.asarray(r) for r in rows]).reshape(shape))


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
    # While a tape, accumulator or trace sees ops, keep tensors so it sees the stacking.
    if state.active and isinstance(g, Tensor):
        return g
    value = g._value if isinstance(g, Tensor) else g
    return value if kind_of(value) is not None else np.asarray(value)  # Dask stays lazy


def _looped_columns(tape, target: Tensor, sources: list[Tensor], seeds_shape,
                    rows: int) -> list[Any]:
    """Per source: its gradients for every row, stacked to ``(rows,) + source.shape``."""
    found = _rows(tape, target, sources, seeds_shape, UnconnectedGradients.NONE)
    columns = []
    for k, s in enumerate(sources):
        column = [row[k] for row in found]
        if all(c is None for c in column):
            columns.append(None)
            continue
        column = [np.zeros(s.shape, s.dtype) if c is None else _raw_or_tensor(c)
                  for c in column]
        stacked = _stack_rows(column, (rows,) + tuple(s.shape))
        columns.append(stacked if state.active else stacked._value)
    return columns


# --- the API ------------------------------------------------------------------------------

def _single_target(target: Any, method: str) -> Tensor:
    if not isinstance(target, Tensor):
        raise TypeError(
            f"{method} takes one Tensor as target, got {type(target).__name__}: {target!r}. "
            "For several targets, call it once per target (or stack them with gt.stack)."
        )
    return target


def _chunk_size(parallel_iterations: Any, rows: int) -> int:
    if parallel_iterations is None:
        return max(rows, 1)
    if isinstance(parallel_iterations, bool) or not isinstance(
            parallel_iterations, (int, np.integer)) or parallel_iterations < 1:
        raise ValueError(
            f"parallel_iterations must be a positive integer or None, got "
            f"{parallel_iterations!r}: it bounds how many rows are computed in one "
            "vectorized backward call."
        )
    return int(parallel_iterations)


def _needs_persistent(method: str) -> RuntimeError:
    return RuntimeError(
        f"GradientTape must be created with persistent=True to compute the {method} "
        "with experimental_use_pfor set to False (each row is a separate gradient "
        "call). Use GradientTape(persistent=True), or keep experimental_use_pfor=True."
    )


def _known_jacobian(tape, target: Any, source: Any) -> Tensor | None:
    """The usual call, kept short: one tensor source, all rows at once, nothing
    recording, on a tape whose structure was seen before (the whole-tape rung).
    ``None``: take the general path, which also builds what this one finds."""
    if (tape._recording or not tape._live or state.recording or state.accumulators
            or state.tracer is not None or not isinstance(target, Tensor)
            or not isinstance(source, Tensor)):
        return None
    signature, tracked, value = tape._signature, tape._tracked, source._value
    slot = tracked.get(source._id)
    if signature is None or slot is None or dtype_of(value).kind not in "fc" or (
            source._watch_on_read
            and tape._var_versions.get(source._id, source._version) != source._version):
        return None  # unwatched, not a float, or assigned since it was read
    target_value = target._value
    rows = target_value.size
    _, hit = lookup.whole_tape(tape, (slot,), (tracked.get(target._id),),
                               ((target_value.shape, dtype_of(target_value)),))
    located = None if hit is None else hit.batched.get((rows, target_value.ndim == 1))
    if not rows or located is None:
        return None
    seeds = _one_hot_rows(rows, dtype_of(target_value), target_value.shape)(0, rows, rows) \
        if located.reads_seeds else None
    g = backward.run_located(located, tape._records, [source], [seeds])[0]
    if g is None:
        return None  # unconnected: the general path knows what to return
    g = _fit(g, (rows,) + value.shape, dtype_of(value))
    tape._end_gradient()
    return wrap(g.reshape(target_value.shape + value.shape))


def jacobian(tape, target, sources, unconnected_gradients, parallel_iterations,
             experimental_use_pfor):
    if not tape._live:
        tape._begin_gradient("jacobian")  # raises TF's RuntimeError
    mode = unconnected_mode(unconnected_gradients)
    if parallel_iterations is None and experimental_use_pfor:
        found = _known_jacobian(tape, target, sources)
        if found is not None:
            return found
    target = _single_target(target, "jacobian")
    if not experimental_use_pfor and not tape._persistent:
        raise _needs_persistent("jacobian")
    flat_sources = nest.flatten(sources)
    for s in flat_sources:
        check_source(s)
    rows = int(target._value.size)
    chunk = _chunk_size(parallel_iterations, rows)
    tape._begin_gradient("jacobian")
    columns: Any = [None] * len(flat_sources)
    if rows:
        tape._computing = True  # a grad_fn calling this tape again raises, not recurses
        try:
            if experimental_use_pfor:
                basis = _one_hot_rows(rows, target.dtype, tuple(target.shape))
                columns = _batched_gradients(tape, target, flat_sources, rows, chunk, basis,
                                             basis_is_identity=target.ndim == 1)
            if not experimental_use_pfor or columns is _LOOP:
                columns = _looped_columns(tape, target, flat_sources, tuple(target.shape),
                                          rows)
        finally:
            tape._computing = False
    out = []
    for s, column in zip(flat_sources, columns):
        shape = tuple(target.shape) + tuple(s.shape)
        if column is None:
            out.append(wrap(np.zeros(shape, s.dtype))
                       if mode is UnconnectedGradients.ZERO else None)
        else:
            out.append(_reshape(column, shape))
    tape._end_gradient()
    return nest.pack_sequence_as(sources, out)


def batch_jacobian(tape, target, source, unconnected_gradients, parallel_iterations,
                   experimental_use_pfor):
    if not tape._live:
        tape._begin_gradient("batch_jacobian")  # raises TF's RuntimeError
    target = _single_target(target, "batch_jacobian")
    check_source(source)
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
        raise _needs_persistent("batch_jacobian")
    unconnected_mode(unconnected_gradients)  # validated; TF gives zeros either way
    batch = int(target.shape[0])
    y_shape, x_shape = tuple(target.shape[1:]), tuple(source.shape[1:])
    rows = int(np.prod(y_shape, dtype=np.int64))
    chunk = _chunk_size(parallel_iterations, rows)
    shape = (batch,) + y_shape + x_shape
    tape._begin_gradient("batch_jacobian")
    column: Any = None
    if 0 not in tuple(target.shape):  # np.size would compute a Dask array
        tape._computing = True  # a grad_fn calling this tape again raises, not recurses
        try:
            if experimental_use_pfor:
                basis = _one_hot_per_example(batch, rows, target.dtype, tuple(target.shape))
                found = _batched_gradients(tape, target, [source], rows, chunk, basis,
                                           basis_is_identity=target.ndim == 2)
                column = found if found is _LOOP else found[0]
            if not experimental_use_pfor or column is _LOOP:
                column = _looped_columns(tape, target, [source], (1,) + y_shape, rows)[0]
        finally:
            tape._computing = False
    if column is None:
        # TF returns zeros here whatever unconnected_gradients says.
        tape._end_gradient()
        return wrap(np.zeros(shape, target.dtype))
    # column: [prod(y), batch, x...] -> [batch, y..., x...]
    if isinstance(column, Tensor):
        result = reshape(moveaxis(column, 0, 1), shape)
    else:
        result = wrap(np.moveaxis(column, 0, 1).reshape(shape))
    tape._end_gradient()
    return result
