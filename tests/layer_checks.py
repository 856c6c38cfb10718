"""A layer's gradients against central finite differences in float64: with respect to
its input and to every trainable weight, along one random direction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradtape as gt


def _loss(call: Callable[[Any], Any], x: np.ndarray, u: np.ndarray) -> float:
    return float(np.sum(np.asarray(call(gt.constant(x))) * u))


def assert_gradients_match_differences(call: Callable[[Any], Any], x: np.ndarray,
                                       variables: list[Any] = (), *, seed: int = 0,
                                       eps: float = 1e-6, rtol: float = 1e-6) -> None:
    """``<grad, v> == (L(p + eps v) - L(p - eps v)) / 2 eps`` for ``L = sum(call(x) * u)``,
    the parameters ``p`` being ``x`` and ``variables`` (float64)."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, np.float64)
    u = rng.standard_normal(np.shape(np.asarray(call(gt.constant(x)))))
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        loss = gt.reduce_sum(call(xt) * u)
    grads = tape.gradient(loss, [xt, *variables])
    directions = [rng.standard_normal(x.shape)] + [rng.standard_normal(v.shape)
                                                   for v in variables]
    analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, directions))
    originals = [v.numpy() for v in variables]

    def shifted(sign: float) -> float:
        for v, value, d in zip(variables, originals, directions[1:]):
            v.assign(value + sign * eps * d)
        return _loss(call, x + sign * eps * directions[0], u)

    numeric = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
    for v, value in zip(variables, originals):
        v.assign(value)
    scale = sum(float(np.sum(np.abs(np.asarray(g) * d))) for g, d in zip(grads, directions))
    assert abs(analytic - numeric) <= rtol * max(scale, 1e-12) + 1e-7, (analytic, numeric)
