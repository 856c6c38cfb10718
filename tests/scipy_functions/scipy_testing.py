"""Checks shared by the gt.scipy tests: compiled against interpreted gradients, the
Jacobian against finite differences, and forward-over-reverse against reverse-over-reverse."""

import numpy as np

import gradtape as gt


def gradients(f, arrays, compiled: bool):
    """The gradients of ``sum(f(*arrays) * u)`` for a fixed ``u``, compiled or interpreted."""
    gt.clear_cache()
    xs = [gt.constant(np.asarray(a, np.float64)) for a in arrays]
    with gt.config(compile=compiled, compile_after=1):
        grads = None
        for _ in range(2):  # the second call runs the generated code when compiled
            with gt.GradientTape() as tape:
                tape.watch(xs)
                y = f(*xs)
                u = np.linspace(-1.0, 1.0, int(np.prod(y.shape))).reshape(y.shape)
                loss = gt.reduce_sum(y * u)
            grads = tape.gradient(loss, xs)
    return [g.numpy() for g in grads]


def assert_compiled_equals_interpreted(f, arrays):
    interpreted = gradients(f, arrays, compiled=False)
    compiled = gradients(f, arrays, compiled=True)
    for a, b in zip(interpreted, compiled):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def assert_jacobian_matches_differences(f, x, eps=1e-6):
    """``gt.jacobian(f)(x)`` against central differences, column by column."""
    x = np.asarray(x, np.float64)
    jac = gt.jacobian(f)(gt.constant(x)).numpy()
    out_shape = np.shape(f(gt.constant(x)))
    flat = x.reshape(-1)
    columns = []
    for i in range(flat.size):
        step = np.zeros_like(flat)
        step[i] = eps
        plus = np.asarray(f(gt.constant((flat + step).reshape(x.shape))))
        minus = np.asarray(f(gt.constant((flat - step).reshape(x.shape))))
        columns.append(((plus - minus) / (2 * eps)).reshape(-1))
    expected = np.stack(columns, axis=-1).reshape(out_shape + x.shape)
    np.testing.assert_allclose(jac, expected, rtol=1e-5, atol=1e-6)


def assert_forward_over_reverse(f, x, seed=0):
    """``jvp(grad(sum f))`` (forward over reverse) equals the Hessian-vector product
    computed by nested tapes (reverse over reverse)."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, np.float64)
    v = rng.standard_normal(x.shape)

    def scalar(t):
        return gt.reduce_sum(f(t))

    _, hvp_forward = gt.jvp(gt.grad(scalar), [gt.constant(x)], [gt.constant(v)])
    xc = gt.constant(x)
    with gt.GradientTape() as outer:
        outer.watch(xc)
        with gt.GradientTape() as inner:
            inner.watch(xc)
            y = scalar(xc)
        g = inner.gradient(y, xc)
        along = gt.reduce_sum(g * v)
    hvp_reverse = outer.gradient(along, xc)
    np.testing.assert_allclose(hvp_forward.numpy(), hvp_reverse.numpy(), rtol=1e-9,
                               atol=1e-10)
