"""What ``gradient`` and ``jacobian`` take and give back: checked targets and sources,
output gradients fitted to their targets (TF's broadcasting rule), gradients in their
source's dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import nest
from ..core.backends import kind_of
from ..core.tensor import Tensor, constant, wrap
from ..ops import broadcast_to, cast


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"  # np.issubdtype(dtype, np.inexact), without its cost


def as_target(t: Any) -> Tensor:
    if isinstance(t, Tensor):
        return t
    raise TypeError(
        f"Targets must be gradtape Tensors or Variables (or nested structures of them), "
        f"got {type(t).__name__}: {t!r}. Compute the target from watched tensors inside "
        "the tape's `with` block."
    )


def check_source(s: Any) -> None:
    if not isinstance(s, Tensor):
        raise TypeError(
            f"Sources must be gradtape Tensors or Variables (or nested structures of them), "
            f"got {type(s).__name__}: {s!r}. Pass the tensors you watched (or the "
            "variables you read)."
        )


def flat_output_gradients(output_gradients: Any, flat_targets: list[Tensor]) -> list[Any]:
    """One cotangent (or None for ones) per target, of the target's dtype and shape."""
    if output_gradients is None:
        return [None] * len(flat_targets)
    flat = nest.flatten(output_gradients)
    if len(flat) != len(flat_targets):
        raise ValueError(
            f"output_gradients has {len(flat)} entries but target has {len(flat_targets)} "
            "tensors: give one output gradient (or None) per target tensor, in the "
            "structure of target."
        )
    return [None if g is None else fit_output_gradient(g, t) for g, t in zip(flat, flat_targets)]


def fit_output_gradient(g: Any, target: Tensor) -> Any:
    if not isinstance(g, Tensor):
        # Another library's array stays one (constant converts nothing to NumPy).
        g = wrap(np.asarray(g)) if kind_of(g) is None else constant(g)
    if np.issubdtype(g.dtype, np.complexfloating) and not np.issubdtype(
            target.dtype, np.complexfloating):
        raise TypeError(
            f"A complex output gradient ({g.dtype.name}) was given for a real target "
            f"({target.dtype.name}); give a real output gradient."
        )
    if is_float(target.dtype) and g.dtype != target.dtype:
        g = cast(g, target.dtype)
    if tuple(g.shape) != tuple(target.shape):
        # TF multiplies by the output gradient, so one that broadcasts to the target works.
        try:
            ok = np.broadcast_shapes(tuple(g.shape), tuple(target.shape)) == tuple(target.shape)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"An output gradient of shape {tuple(g.shape)} was given for a target of "
                f"shape {tuple(target.shape)}; give it the target's shape."
            )
        g = broadcast_to(g, target.shape)
    return g


def as_gradient(g: Any, source: Tensor) -> Tensor:
    """A raw result as a tensor of the source's dtype and shape (TF: gradients take the
    source's dtype)."""
    if isinstance(g, Tensor):
        if g.dtype != source.dtype:
            g = cast(g, source.dtype)
        if tuple(g.shape) != tuple(source.shape):
            g = broadcast_to(g, source.shape)
        return g
    value = source._value
    if g.__class__ is not np.ndarray:
        kind = kind_of(g)
        if kind is not None:  # Dask, ...: the gradient stays that library's array
            return wrap(kind.fit(g, tuple(source.shape), source.dtype))
        g = np.asarray(g)
    elif value.__class__ is not np.ndarray and kind_of(value) is not None:
        return _constant_gradient(g, source)
    elif g.dtype == value.dtype and g.shape == value.shape:
        return wrap(g)  # the common case
    if g.dtype != source.dtype:
        g = g.astype(source.dtype)
    if g.shape != source.shape:
        g = np.broadcast_to(g, source.shape).copy()
    return wrap(g)



def _constant_gradient(g: np.ndarray, source: Tensor) -> Tensor:
    """A NumPy gradient (built from constants alone, such as the ones seed of a sum) of
    a source holding another library's array: that library's array, like the source."""
    value = source._value
    if g.dtype != source.dtype:
        g = g.astype(source.dtype)
    return wrap(kind_of(value).from_constant(g, value))


def zeros_gradient(source: Tensor) -> Tensor:
    """The gradient ``unconnected_gradients=ZERO`` gives: zeros like the source, in the
    source's array library (lazy zeros, chunked like it, for Dask)."""
    value = source._value
    kind = None if value.__class__ is np.ndarray else kind_of(value)
    if kind is None:
        return wrap(np.zeros(source.shape, source.dtype))
    return wrap(kind.zeros_like(value, source.dtype))
