"""``tf.keras.backend``'s functions that Keras 3 keeps for tf.keras programs (its
``legacy`` backend, exported under ``tf.keras.backend`` in TF 2.16+): the random draws
keras-io's examples call (``tf.keras.backend.random_normal`` in the VAE's sampling
layer), ``floatx`` and ``epsilon``. The draws are ``tf.random``'s, seeded as its ops
are (an integer ``seed`` is the op seed)."""

from __future__ import annotations

from typing import Any

from .. import ops as g
from ..api import random as gt_random
from ..core.tensor import Tensor

__all__ = ["epsilon", "floatx", "random_bernoulli", "random_normal", "random_uniform",
           "truncated_normal"]


def floatx() -> str:
    """Keras's default float type: ``"float32"``."""
    return "float32"


def epsilon() -> float:
    """Keras's fuzz factor, ``1e-7`` (the losses' clipping)."""
    return 1e-7


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: int | None = None) -> Tensor:
    return gt_random.normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(),
                            seed=seed)


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: int | None = None) -> Tensor:
    return gt_random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(),
                             seed=seed)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: int | None = None) -> Tensor:
    return gt_random.truncated_normal(shape, mean=mean, stddev=stddev,
                                      dtype=dtype or floatx(), seed=seed)


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None,
                     seed: int | None = None) -> Tensor:
    """Ones with probability ``p``, else zeros (Keras's ``uniform <= p``)."""
    dtype = dtype or floatx()
    draws = gt_random.uniform(shape, dtype=dtype, seed=seed)
    return g.cast(draws <= p, dtype)
