"""Gradient checks shared by the tests of TF's functions: first and second order against
float64 finite differences, and compiled against interpreted under ``@gt.function``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradtape as gt
from gradient_checks import assert_same_gradients, assert_vjp_matches_differences


def _gradient(f: Callable[..., Any], xs: list, u: np.ndarray) -> Any:
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return tape.gradient(y, xs[0], output_gradients=gt.constant(u))


def check_first_and_second_order(f: Callable[..., Any], *arrays: np.ndarray,
                                 seed: int = 0) -> None:
    """``f``'s gradient (wrt its first argument) and the gradient of that gradient match
    central differences in float64."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, np.float64) for a in arrays]
    xs = [gt.constant(a) for a in arrays]
    u = rng.standard_normal(np.shape(f(*xs)))
    first = _gradient(f, xs, u)
    assert first is not None, "no gradient"
    rest = xs[1:]  # held fixed: the checks are wrt the first argument
    assert_vjp_matches_differences(lambda a: f(a, *rest), arrays[:1], u, [first], rng)

    def gradient_of(*a):
        return _gradient(f, list(a), u)

    w = rng.standard_normal(np.shape(arrays[0]))
    with gt.GradientTape() as outer:
        outer.watch(xs)
        g = gradient_of(*xs)
    second = outer.gradient(g, xs[0], output_gradients=gt.constant(w))
    second = np.zeros_like(arrays[0]) if second is None else second
    assert_vjp_matches_differences(lambda a: gradient_of(a, *rest), arrays[:1], w, [second],
                                   rng, rtol=1e-5, what="second-order gradient")


def check_compiled_matches_interpreted(f: Callable[..., Any], *arrays: np.ndarray) -> None:
    """Under ``@gt.function``, value and gradient of generated code equal the
    interpreter's (each is called three times, so the compiled path runs)."""
    results = []
    for compile_ in (False, True):
        with gt.config(compile=compile_, compile_after=1):
            compiled = gt.function(f)
            for _ in range(3):
                xs = [gt.constant(np.asarray(a, np.float64)) for a in arrays]
                with gt.GradientTape() as tape:
                    tape.watch(xs)
                    y = compiled(*xs)
                    loss = gt.reduce_sum(y * y)
                grad = tape.gradient(loss, xs[0])
            results.append([np.asarray(y), np.asarray(grad)])
    assert_same_gradients(results[0], results[1], what="compiled vs interpreted")
