"""``keras.random``: Keras 3's random draws. ``seed=None`` draws from ``gt.random``'s
global stream (``keras.utils.set_random_seed`` repeats it); an integer ``seed`` gives
the same values at every call, as Keras 3's integer seeds do (a stateless draw)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as g
from ..api import nn as tf_nn
from ..api import random as gt_random
from ..core.tensor import Tensor, convert_to_tensor

__all__ = ["dropout", "normal", "randint", "shuffle", "truncated_normal", "uniform"]


def _draw(stateful: Any, stateless: Any, shape: Any, dtype: Any, seed: int | None,
          **params: Any) -> Tensor:
    """Keras's seeds: ``None`` draws from ``gt.random``'s stream, an int gives the same
    values at every call (the stateless op with the seed ``(seed, 0)``)."""
    dtype = dtype or "float32"
    if seed is None:
        return stateful(shape, dtype=dtype, **params)
    return stateless(shape, (int(seed), 0), dtype=dtype, **params)


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
           seed: int | None = None) -> Tensor:
    return _draw(gt_random.normal, gt_random.stateless_normal, shape, dtype, seed,
                 mean=mean, stddev=stddev)


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
            seed: int | None = None) -> Tensor:
    return _draw(gt_random.uniform, gt_random.stateless_uniform, shape, dtype, seed,
                 minval=minval, maxval=maxval)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: int | None = None) -> Tensor:
    """Normal draws more than two standard deviations from the mean drawn again."""
    return _draw(gt_random.truncated_normal, gt_random.stateless_truncated_normal, shape,
                 dtype, seed, mean=mean, stddev=stddev)


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32",
            seed: int | None = None) -> Tensor:
    """Integers in ``[minval, maxval)``."""
    draws = uniform(shape, 0.0, 1.0, dtype="float64", seed=seed).numpy()
    values = np.floor(minval + draws * (maxval - minval))
    return convert_to_tensor(np.minimum(values, maxval - 1).astype(dtype))


def shuffle(x: Any, axis: int = 0, seed: int | None = None) -> Tensor:
    """``x`` with its entries along ``axis`` in a random order (differentiable)."""
    x = convert_to_tensor(x)
    n = x.shape[axis]
    keys = uniform((n,), dtype="float64", seed=seed).numpy()
    order = convert_to_tensor(np.argsort(keys, kind="stable"))
    return g.take(x, order, axis=axis)


def dropout(inputs: Any, rate: float, noise_shape: Any = None,
            seed: int | None = None) -> Tensor:
    """Entries zeroed with probability ``rate``, the others scaled by ``1/(1-rate)``."""
    return tf_nn.dropout(convert_to_tensor(inputs), rate, noise_shape=noise_shape, seed=seed)
