"""Random programs with loops and branches: compiled (@gt.function) = eager Python
control flow = finite differences in float64, at first and second order, in forward mode
and under jacobian."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradient_checks import central_differences as _fd

# One step of a body: (a, b, w) -> a new value; smooth, so differences are exact enough.
STEPS = [
    lambda a, b, w: gt.sin(a) * w + b * 0.5,
    lambda a, b, w: gt.tanh(a - b * w),
    lambda a, b, w: a * b * 0.3 + w,
    lambda a, b, w: gt.exp(-a * a) + b * w,
    lambda a, b, w: a / (1.0 + b * b) + gt.cos(w),
]


def make_program(steps, trips, branchy, value_cond):
    def body(i, a, b, w):
        for k in steps:
            a, b = STEPS[k](a, b, w), a
        if branchy:
            a = gt.cond(gt.reduce_sum(a) > 0.0, lambda: a * w, lambda: a - 0.5 * w)
        return i + 1, a, b

    def program(x, w):
        if value_cond:  # the trip count depends on the values, bounded
            def cond(i, a, b):
                return gt.logical_and(i < trips, gt.reduce_sum(a * a) < 50.0)
        else:
            def cond(i, a, b):
                return i < trips
        _, a, b = gt.while_loop(cond, lambda i, a, b: body(i, a, b, w),
                                (gt.constant(0), x, x * 0.5))
        return gt.reduce_sum(a * gt.constant([1.0, -2.0, 0.5])) + gt.reduce_sum(b * b)
    return program


programs = st.tuples(st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=3),
                     st.integers(0, 4), st.booleans(), st.booleans())



def _grad(f, x, w):
    xt, wt = gt.constant(x), gt.constant(w)
    with gt.GradientTape() as tape:
        tape.watch([xt, wt])
        y = f(xt, wt)
    return [g.numpy() for g in tape.gradient(y, [xt, wt], unconnected_gradients="zero")]


X = np.array([0.3, -0.6, 0.9])
W = np.array([0.8, -0.4, 0.6])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_compiled_equals_eager_equals_differences(spec):
    program = make_program(*spec)
    compiled = gt.function(program)
    value = compiled(gt.constant(X), gt.constant(W)).numpy()
    traced = compiled.get_concrete_function(gt.constant(X), gt.constant(W)).program
    assert "loop" in {e.prim.name for e in traced.eqns}  # one loop, not unrolled
    assert value == pytest.approx(program(gt.constant(X), gt.constant(W)).numpy(), rel=1e-10)
    gx, gw = _grad(compiled, X, W)
    np.testing.assert_allclose(gx, _fd(lambda v: program(gt.constant(v), gt.constant(W))
                                       .numpy(), X), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gw, _fd(lambda v: program(gt.constant(X), gt.constant(v))
                                       .numpy(), W), rtol=1e-5, atol=1e-7)
    ex, ew = _grad(program, X, W)
    np.testing.assert_allclose(gx, ex, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, ew, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_second_order_forward_mode_and_jacobian(spec):
    program = make_program(*spec)
    compiled = gt.function(program)
    u = np.array([0.5, 1.0, -0.7])
    xt, wt = gt.constant(X), gt.constant(W)
    with gt.GradientTape() as outer:
        outer.watch(wt)
        with gt.GradientTape() as inner:
            inner.watch(wt)
            y = compiled(xt, wt)
        s = gt.reduce_sum(inner.gradient(y, wt) * u)
    second = outer.gradient(s, wt, unconnected_gradients="zero").numpy()
    want = _fd(lambda v: float(np.sum(_grad(program, X, v)[1] * u)), W)
    np.testing.assert_allclose(second, want, rtol=1e-4, atol=1e-6)

    with gt.autodiff.ForwardAccumulator(wt, gt.constant(u)) as acc:
        y = compiled(xt, wt)
    tangent = acc.jvp(y, unconnected_gradients="zero").numpy()
    eps = 1e-6
    fd = (program(xt, gt.constant(W + eps * u)).numpy()
          - program(xt, gt.constant(W - eps * u)).numpy()) / (2 * eps)
    assert tangent == pytest.approx(fd, rel=1e-5, abs=1e-7)

    def vector(x, w):
        return compiled(x, w) * gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(wt)
        v = vector(xt, wt)
    jac = tape.jacobian(v, wt, unconnected_gradients="zero").numpy()
    grad_w = _grad(program, X, W)[1]
    np.testing.assert_allclose(jac, np.stack([grad_w, 2 * grad_w]), rtol=1e-9, atol=1e-10)
