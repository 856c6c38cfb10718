"""``gt.nn``: TF's ``tf.nn`` names. The ops live in ``ops.nn``; ``dropout`` is here
because it draws its mask from ``gt.random``'s seeded streams, a layer above ``ops``."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..core.namespaces import namespace as public_namespace
from ..core.tensor import Tensor, concrete_value
from ..ops import nn as _nn
from ..ops import pooling_tf as _pooling
from ..ops.clipping import clip_by_norm
from ..ops.conv import tf_ops as _conv
from ..ops.elementwise import greater_equal, where
from ..ops.index import gather
from ..ops.registry import operand
from ..ops.stacking import concat
from . import random as _random
from .array_ops import top_k

__all__ = ["dropout", "embedding_lookup", "namespace"]


def _checked_rate(rate: Any) -> Any:
    """``rate`` as TF takes it: a number in [0, 1) or a scalar tensor (ValueError else)."""
    if isinstance(rate, numbers.Real):
        if not 0 <= rate < 1:
            raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), "
                             f"got {rate}.")
        return rate
    rate = operand(rate)
    if len(rate.shape) != 0:
        raise ValueError(f"rate must be a scalar tensor, got shape {tuple(rate.shape)}.")
    return rate


def _noise_shape(x: Tensor, noise_shape: Any) -> tuple[int, ...]:
    """``noise_shape`` with its ``None`` entries filled from ``x``'s shape (as TF)."""
    if noise_shape is None:
        return tuple(x.shape)
    if isinstance(noise_shape, Tensor):
        noise_shape = concrete_value(noise_shape).tolist()
    dims = list(noise_shape)
    if len(dims) == len(x.shape):
        dims = [x.shape[i] if d is None else int(d) for i, d in enumerate(dims)]
    try:
        np.broadcast_shapes(tuple(dims), tuple(x.shape))
    except ValueError:
        raise ValueError(f"noise_shape {tuple(noise_shape)} must broadcast to x's shape "
                         f"{tuple(x.shape)}.") from None
    return tuple(dims)


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None) -> Any:
    """TF's ``tf.nn.dropout``: each element (each ``noise_shape`` slice) is zeroed with
    probability ``rate``; kept ones are scaled by ``1 / (1 - rate)``. The mask is drawn
    from ``gt.random`` (``set_seed`` and ``seed`` as in ``gt.random.uniform``); inside
    ``@gt.function`` a new mask on every call."""
    del name
    rate = _checked_rate(rate)
    x = operand(x)
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"x must be a floating-point tensor, as it is scaled; got {x.dtype}.")
    if isinstance(rate, numbers.Real) and rate == 0:
        return x  # TF's fast path: no draw, so the random streams do not move
    noise = _random.uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed)
    kept = greater_equal(noise, rate)
    scale = 1.0 / (1.0 - rate)
    return where(kept, x * scale, x.dtype.type(0))


def embedding_lookup(params: Any, ids: Any, max_norm: Any = None,
                     name: str | None = None) -> Tensor:
    """TF's ``tf.nn.embedding_lookup``: the rows ``params[ids]`` (shape ``ids.shape +
    params.shape[1:]``), a ``gather`` along axis 0 with its gradient. A list of params
    is one table split into consecutive shards (TF 2's "div" strategy); ``max_norm``
    clips each looked-up embedding to that L2 norm (TF's ``clip_by_norm``)."""
    del name
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("embedding_lookup needs at least one params tensor, got an "
                             "empty list.")
        table = operand(params[0]) if len(params) == 1 else concat(list(params), axis=0)
    else:
        table = operand(params)
    ids = operand(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"ids must be an int32 or int64 tensor, got {ids.dtype.name}; cast "
                        "them with gt.cast(ids, gt.int32).")
    rows = gather(table, ids, axis=0)
    if max_norm is None:
        return rows
    return clip_by_norm(rows, max_norm, axes=list(range(ids.ndim, rows.ndim)))


namespace = public_namespace("gradtape.nn", "TF's tf.nn names over gradtape's ops.",
                             {**_nn.MEMBERS, **_conv.MEMBERS, **_pooling.MEMBERS,
                              "dropout": dropout, "top_k": top_k,
                              "embedding_lookup": embedding_lookup})
