"""Checks of gradients against central finite differences in float64, and of two ways of
computing a gradient against each other (compiled and interpreted)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradtape as gt


def evaluate(f: Callable[..., Any], arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``f`` on constants made from ``arrays``, as a float64 array (no tape)."""
    return np.asarray(f(*[gt.constant(np.asarray(a, np.float64)) for a in arrays]), np.float64)


def directional_difference(f: Callable[..., Any], arrays: Sequence[np.ndarray],
                           directions: Sequence[np.ndarray], eps: float) -> np.ndarray:
    """Central difference of ``f`` at ``arrays`` along ``directions``."""
    plus = evaluate(f, [a + eps * v for a, v in zip(arrays, directions)])
    minus = evaluate(f, [a - eps * v for a, v in zip(arrays, directions)])
    return (plus - minus) / (2 * eps)


def assert_vjp_matches_differences(f: Callable[..., Any], arrays: Sequence[np.ndarray],
                                   u: np.ndarray, grads: Sequence[Any],
                                   rng: np.random.Generator, *, eps: float = 1e-6,
                                   rtol: float = 1e-6, what: str = "gradient") -> None:
    """``grads`` is ``u``'s vector-Jacobian product of ``f`` at ``arrays``: checked as
    ``<grads, v> == <u, (f(x + eps v) - f(x - eps v)) / 2 eps>`` along a random ``v``.

    The tolerance is relative to the size of the terms summed (``|grads| . |v|``), plus the
    rounding of the differences (``|u| . |f| * 1e-16 / eps``), so that large cancelling
    terms do not hide an error and tiny gradients are still checked."""
    vs = [rng.standard_normal(np.shape(a)) for a in arrays]
    gs = [np.asarray(g, np.float64) for g in grads]
    analytic = sum(float(np.sum(g * v)) for g, v in zip(gs, vs))
    numeric = float(np.sum(u * directional_difference(f, arrays, vs, eps)))
    terms = sum(float(np.sum(np.abs(g * v))) for g, v in zip(gs, vs))
    rounding = float(np.sum(np.abs(u * evaluate(f, arrays)))) * 1e-15 / eps
    tolerance = rtol * (1.0 + terms) + rounding
    assert abs(analytic - numeric) <= tolerance, (
        f"{what} disagrees with finite differences: <g, v> = {analytic!r}, numerical "
        f"{numeric!r} (difference {abs(analytic - numeric):.3g}, tolerance {tolerance:.3g})")


def assert_same_gradients(expected: Sequence[Any], got: Sequence[Any], *,
                          rtol: float = 1e-9, what: str = "gradients") -> None:
    """Two computations of the same gradients agree to rounding (same shapes and dtypes).
    The tolerance is relative to the largest entry: fused generated code may sum in
    another order than the interpreter."""
    assert len(expected) == len(got), what
    for k, (e, g) in enumerate(zip(expected, got)):
        e, g = np.asarray(e), np.asarray(g)
        assert e.shape == g.shape and e.dtype == g.dtype, (what, k, e.shape, g.shape)
        scale = max(1.0, float(np.max(np.abs(e), initial=0.0)))
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{what}: source {k}")


def central_differences(f: Callable[[np.ndarray], Any], x: Any, eps: float = 1e-6
                        ) -> np.ndarray:
    """The gradient of the scalar ``f`` at ``x`` (float64), one central difference per
    element."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def program_primitives(program: Any) -> set[str]:
    """The names of ``program``'s primitives, those in loop bodies and branches too."""
    from gradtape.ops.control_flow import subprograms

    found = set()
    for eqn in program.eqns:
        found.add(eqn.prim.name)
        for sub in subprograms(eqn.params):
            found |= program_primitives(sub)
    return found


def traced_primitives(fn: Any, *args: Any) -> set[str]:
    """The primitives of a ``@gt.function``'s trace for ``args``, sub-programs too."""
    return program_primitives(fn.get_concrete_function(*args).program)
