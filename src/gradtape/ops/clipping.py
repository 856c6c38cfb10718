"""TF's clipping functions: ``clip_by_norm`` and ``clip_by_global_norm``, composed of
existing ops (so every derivative order, forward mode and ``@gt.function`` work), in
TF's exact formulas: the same values, and the same gradient where a ``maximum`` or
``minimum`` ties (the first operand takes it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import reduce as _reduce
from .elementwise import cast, greater, maximum, minimum, ones_like, sqrt, where
from .operands import floating_operand
from .registry import operand

__all__ = ["clip_by_norm", "clip_by_global_norm"]


def _scalar_norm(clip_norm: Any, dtype: np.dtype) -> Any:
    if np.ndim(clip_norm) != 0:
        raise ValueError(f"clip_norm must be a scalar (0-D), got shape {np.shape(clip_norm)}.")
    return clip_norm if hasattr(clip_norm, "_value") else dtype.type(clip_norm)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """TF's ``tf.clip_by_norm``: ``t * clip_norm / max(l2norm(t, axes), clip_norm)``,
    so the L2 norm over ``axes`` (all axes by default) is at most ``clip_norm``."""
    del name
    t = floating_operand(t, "clip_by_norm's t", TypeError)
    clip_norm = _scalar_norm(clip_norm, t.dtype)
    l2sum = _reduce.reduce_sum(t * t, axes, keepdims=True)
    positive = greater(l2sum, 0.0)
    # TF's two-where trick: sqrt never sees 0, so a zero t gets a zero gradient, not nan.
    safe_sum = where(positive, l2sum, ones_like(l2sum))
    l2norm = where(positive, sqrt(safe_sum), l2sum)
    return t * clip_norm / maximum(l2norm, clip_norm)


def global_norm(t_list: Sequence[Any]) -> Any:
    """``sqrt(sum of squares of every entry of every tensor)``, ``None`` entries skipped
    (TF's ``tf.linalg.global_norm``)."""
    from .stacking import stack

    squares = [_reduce.reduce_sum(t * t) * 0.5 for t in t_list if t is not None]
    dtypes = {s.dtype for s in squares}
    if len(dtypes) > 1:
        names = sorted(map(str, dtypes))
        raise TypeError(f"the tensors of t_list must share one dtype, got {names}.")
    return sqrt(_reduce.reduce_sum(stack(squares)) * 2.0)


def clip_by_global_norm(t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Any]:
    """TF's ``tf.clip_by_global_norm``: every tensor times
    ``clip_norm / max(global_norm, clip_norm)``; returns ``(list_clipped, global_norm)``.
    ``None`` entries stay ``None``; an infinite or nan norm makes every value nan, as TF."""
    del name
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"t_list should be a sequence of tensors, got {type(t_list).__name__}.")
    values = [None if t is None else floating_operand(t, "each tensor of t_list", TypeError)
              for t in t_list]
    if use_norm is None:
        use_norm = global_norm(values)
    use_norm = operand(use_norm)
    clip_norm = _scalar_norm(clip_norm, use_norm.dtype)
    scale_for_finite = clip_norm * minimum(1.0 / use_norm, 1.0 / clip_norm)
    scale = scale_for_finite + (use_norm - use_norm)  # nan when use_norm is inf or nan
    clipped = [None if v is None else v * cast(scale, v.dtype) for v in values]
    return clipped, use_norm
