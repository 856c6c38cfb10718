"""Comparison, rounding and integer-valued ops carry zero tangents, so second
derivatives through the backward of ``abs``, ``max``, ``clip``, ``mod``, norms... (which
use ``sign``, ``equal``, ``greater_equal``, ``floor_divide``, ``zeros_like``) agree in all
four nestings of forward and reverse mode, with finite differences in float64, compiled
and interpreted; TF's ``None`` gradients of the rounding ops stay."""

import numpy as np
import pytest

import gradtape as gt

rng = np.random.default_rng(7)
X = np.array([0.35, -1.25, 2.45, -0.7, 1.15])  # away from every kink used below
V = rng.standard_normal(X.shape)
W = rng.standard_normal(X.shape)
WEIGHTS = np.arange(1.0, 6.0)

# name -> a scalar function of one float64 vector whose second derivative exists at X.
FUNCTIONS = {
    "abs": lambda x: np.sum(np.abs(x) ** 3),
    "max": lambda x: np.max(x * x) + np.max(np.reshape(x[:4], (2, 2)) ** 3, axis=0)[1],
    "min": lambda x: np.min(x * x * x) + gt.reduce_min(x ** 2),
    "maximum": lambda x: np.sum(np.maximum(x, 0.3 * x * x) ** 2),
    "minimum": lambda x: np.sum(np.minimum(x * x, x + 1.0) ** 2),
    "fmax": lambda x: np.sum(np.fmax(x, 0.5 * x * x) ** 2),
    "fmin": lambda x: np.sum(np.fmin(x, 0.5 * x * x) ** 2),
    "clip": lambda x: np.sum(np.clip(x * x, 0.2, 2.0) ** 2 + x.clip(-1.0, 1.0) ** 3),
    "mod": lambda x: np.sum(np.mod(x * x, 0.7) ** 2 + (x * x + 1.0) % x ** 2),
    "remainder": lambda x: np.sum(np.remainder(3.0 * x, x * x + 1.0) ** 2),
    "fmod": lambda x: np.sum(np.fmod(x * x, 0.7) ** 2 + np.fmod(3.0 * x, x * x + 1.0) ** 2),
    "norm ord 3": lambda x: np.linalg.norm(x, 3),
    "norm ord 4": lambda x: np.linalg.norm(x, 4),
    "norm ord inf": lambda x: np.linalg.norm(x * x, np.inf) ** 2,
    "sort": lambda x: np.sum(np.sort(x ** 3) * WEIGHTS) ** 2,
    "where": lambda x: np.sum(np.where(x > 0, x ** 3, np.sin(x))),
    "relu": lambda x: np.sum(gt.relu(x) ** 3 + np.maximum(x, 0.0) ** 2),
    "rounding": lambda x: np.sum((np.floor(x) + np.ceil(x) + np.round(x) + np.trunc(x)
                                  + gt.sign(x) + np.fix(x) + x // 0.4) * x ** 3),
    "comparisons": lambda x: np.sum(gt.cast(gt.logical_and(x >= -1.0, np.isfinite(x)),
                                            np.float64) * np.exp(x)
                                    + gt.cast(np.not_equal(x, 0.0), np.float64) * x ** 3),
    "argmax and argsort": lambda x: x[np.argmax(x)] ** 3 + x[gt.argmin(x)] ** 2
                                    + np.sum(x[np.argsort(x)] * WEIGHTS) ** 2,
    "integer casts": lambda x: np.sum(x ** 3 * gt.cast(gt.cast(x * 2.0, np.int32), np.float64)),
    "zeros_like and ones_like": lambda x: np.sum((np.ones_like(x) + gt.zeros_like(x)) * x ** 3),
}


def _second_difference(f, x, v, w, eps=1e-4):
    """``v^T H w`` by central differences of ``f`` (float64)."""
    def at(p):
        return float(f(gt.constant(p)))

    return (at(x + eps * (v + w)) - at(x + eps * (v - w)) - at(x - eps * (v - w))
            + at(x - eps * (v + w))) / (4 * eps * eps)


def _first_difference(f, x, v, eps=1e-6):
    return (float(f(gt.constant(x + eps * v))) - float(f(gt.constant(x - eps * v)))) / (2 * eps)


def _directional(f, v):
    """``y -> f'(y) v``, by forward mode."""
    return lambda y: gt.jvp(f, (y,), (v,))[1]


def _four_nestings(f):
    """``v^T H w`` computed in each nesting of forward and reverse mode."""
    return {
        "fwd(fwd)": float(gt.jvp(_directional(f, V), (X,), (W,))[1]),
        "fwd(rev)": float(np.dot(gt.jvp(gt.grad(f), (X,), (W,))[1], V)),
        "rev(fwd)": float(np.dot(gt.grad(_directional(f, V))(X), W)),
        "rev(rev)": float(V @ np.asarray(gt.hessian(f)(X)) @ W),
    }


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_four_nestings_match_finite_differences(name):
    f = FUNCTIONS[name]
    first = _first_difference(f, X, V)
    np.testing.assert_allclose(float(gt.jvp(f, (X,), (V,))[1]), first, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(float(np.dot(gt.grad(f)(X), V)), first, rtol=1e-6, atol=1e-7)
    expected = _second_difference(f, X, V, W)
    for nesting, value in _four_nestings(f).items():
        assert value == pytest.approx(expected, rel=1e-5, abs=1e-5), nesting


@pytest.mark.parametrize("name", ["abs", "clip", "fmod", "norm ord 3", "max", "rounding"])
def test_forward_over_reverse_compiled_equals_interpreted(name):
    f = FUNCTIONS[name]
    compiled = _four_nestings(f)
    with gt.config(compile=False):
        interpreted = _four_nestings(f)
    for nesting in compiled:
        assert compiled[nesting] == pytest.approx(interpreted[nesting], rel=1e-12), nesting


@pytest.mark.parametrize("name", ["abs", "mod", "sort", "where"])
def test_forward_over_reverse_under_jacobian_and_function(name):
    """The Hessian as the Jacobian of the gradient, the JVP of the Jacobian of the
    gradient's components, and forward-over-reverse inside ``@gt.function``."""
    f = FUNCTIONS[name]
    hessian = np.asarray(gt.hessian(f)(X))
    np.testing.assert_allclose(np.asarray(gt.jacobian(gt.grad(f))(X)), hessian, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(gt.jvp(gt.grad(f), (X,), (W,))[1]), hessian @ W,
                               rtol=1e-10, atol=1e-12)
    traced = gt.function(lambda y: gt.jvp(gt.grad(f), (y,), (W,))[1])
    np.testing.assert_allclose(traced(gt.constant(X)).numpy(), hessian @ W, rtol=1e-10,
                               atol=1e-12)


def test_rounding_ops_keep_tf_gradients_while_forward_mode_gets_zeros():
    """TF registers ``None`` as the gradient of floor, ceil, round and floor_divide, and
    zeros for sign; a forward-mode user asking for a JVP gets zeros (the derivative is
    zero almost everywhere), not an error."""
    x = gt.constant(X)
    ops = {"floor": gt.floor, "ceil": gt.ceil, "round": gt.round,
           "floor_divide": lambda t: gt.floor_divide(t, 0.4), "trunc": np.trunc}
    for name, op in ops.items():
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = op(x)
        assert tape.gradient(y, x) is None, name
        with gt.ForwardAccumulator(x, gt.constant(V)) as acc:
            y = op(x)
        assert acc.jvp(y) is None, name
        _, tangent = gt.jvp(op, (X,), (V,))
        np.testing.assert_array_equal(tangent.numpy(), np.zeros_like(X))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.sign(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.zeros_like(X))
