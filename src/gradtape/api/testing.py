"""Numerical gradient checks, public so users can test their own functions.

``check_grads(f, args, order=2)`` compares reverse-mode VJPs with central finite
differences in float64 along random directions, then does the same for the gradient
itself (computed with a nested tape) up to ``order``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.tensor import Tensor, constant
from ..tape.gradient_tape import GradientTape


def _as_float64(arg: Any) -> np.ndarray:
    value = arg._value if isinstance(arg, Tensor) else arg
    return np.asarray(value, dtype=np.float64)


def _scalar_dot(a: Any, b: np.ndarray) -> float:
    return float(np.sum(np.asarray(a, dtype=np.float64) * b))


def check_vjp(f: Callable[..., Any], args: Sequence[Any], *, eps: float = 1e-6,
              rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0) -> None:
    """Check that ``f``'s reverse-mode gradient matches finite differences.

    The check is ``<u, J v>``: ``u`` a random output cotangent, ``v`` a random input
    direction. Raises ``AssertionError`` with both numbers when they disagree.
    """
    rng = np.random.default_rng(seed)
    arrays = [_as_float64(a) for a in args]
    xs = [constant(a) for a in arrays]
    with GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    u = rng.standard_normal(np.shape(y))
    grads = tape.gradient(y, xs, output_gradients=u, unconnected_gradients="zero")
    vs = [rng.standard_normal(a.shape) for a in arrays]
    analytic = sum(_scalar_dot(g.numpy(), v) for g, v in zip(grads, vs))
    plus = f(*[constant(a + eps * v) for a, v in zip(arrays, vs)])
    minus = f(*[constant(a - eps * v) for a, v in zip(arrays, vs)])
    numeric = _scalar_dot(np.asarray(plus) - np.asarray(minus), u) / (2 * eps)
    if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
        raise AssertionError(
            f"VJP check failed for {getattr(f, '__name__', f)}: analytic {analytic!r} vs "
            f"numerical {numeric!r} (difference {abs(analytic - numeric):.3g})"
        )


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int = 2, *,
                eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-6,
                seed: int = 0) -> None:
    """Check ``f``'s derivatives up to ``order`` against central finite differences.

    ``f`` takes tensors and returns a tensor; ``args`` are array-likes (checked in
    float64). Order 2 checks the gradient of ``<grad f, w>`` for a random ``w``: the
    inner gradient is computed on a nested tape, as a user computes a Hessian.
    """
    check_vjp(f, args, eps=eps, rtol=rtol, atol=atol, seed=seed)
    if order <= 1:
        return
    rng = np.random.default_rng(seed + 1)
    arrays = [_as_float64(a) for a in args]
    out_shape = np.shape(f(*[constant(a) for a in arrays]))
    u = rng.standard_normal(out_shape)
    ws = [constant(rng.standard_normal(a.shape)) for a in arrays]

    def grad_along(*xs):
        with GradientTape() as inner:
            inner.watch(xs)
            y = f(*xs)
        grads = inner.gradient(y, list(xs), output_gradients=constant(u),
                               unconnected_gradients="zero")
        total = None
        for g, w in zip(grads, ws):
            term = (g * w).sum() if g.ndim else g * w
            total = term if total is None else total + term
        return total

    grad_along.__name__ = f"grad({getattr(f, '__name__', 'f')})"
    check_grads(grad_along, arrays, order - 1, eps=eps, rtol=rtol, atol=atol, seed=seed + 2)
