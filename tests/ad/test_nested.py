"""Nested tapes give higher-order derivatives: the inner gradient is recorded outside."""

import numpy as np
import pytest

import gradtape as gt


def test_seed_example_x_cubed(compile_mode):
    # y = x^3 at 5: dy/dx = 3x^2 = 75, d2y/dx2 = 6x = 30.
    x = gt.constant(5.0)
    with gt.GradientTape() as g:
        g.watch(x)
        with gt.GradientTape() as gg:
            gg.watch(x)
            y = x * x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    assert repr(dy_dx) == "Tensor(75.0, shape=(), dtype=float32)"
    assert repr(d2y_dx2) == "Tensor(30.0, shape=(), dtype=float32)"


@pytest.mark.parametrize("x0", [2.0, -1.5])
def test_third_derivative_of_x_to_the_fourth(compile_mode, x0):
    # d/dx x^4 = 4x^3, then 12x^2, then 24x.
    x = gt.constant(x0)
    with gt.GradientTape() as t3:
        t3.watch(x)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert np.isclose(d1.numpy(), 4 * x0 ** 3)
    assert np.isclose(d2.numpy(), 12 * x0 ** 2)
    assert np.isclose(d3.numpy(), 24 * x0)


def test_gradient_penalty_pattern(compile_mode):
    # y = (x w)^2, gx = 2 (x w) w^T = 22 [3, 4];
    # pen = |gx|^2 = 4 (xw)^2 |w|^2, d pen/dw = 8 (xw) (|w|^2 x^T + (xw) w)
    #     = 88 ([25, 50] + [33, 44]) = [5104, 8272].
    x = gt.constant([[1.0, 2.0]])
    w = gt.Variable([[3.0], [4.0]])
    with gt.GradientTape() as outer:
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.reduce_sum(gt.matmul(x, w) ** 2)
        gx = inner.gradient(y, x)
        penalty = gt.reduce_sum(gx ** 2)
    np.testing.assert_array_equal(gx.numpy(), [[66.0, 88.0]])
    np.testing.assert_array_equal(outer.gradient(penalty, w).numpy(), [[5104.0], [8272.0]])


def test_hessian_as_jacobian_of_a_gradient(compile_mode):
    # f = sum(tanh(A x)): H = A^T diag(-2 t (1 - t^2)) A with t = tanh(A x).
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3))
    x = gt.constant(rng.standard_normal(3))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            f = gt.reduce_sum(gt.tanh(gt.matmul(gt.constant(a), x)))
        g = inner.gradient(f, x)
    h = outer.jacobian(g, x)
    t = np.tanh(a @ x.numpy())
    np.testing.assert_allclose(h.numpy(), a.T @ np.diag(-2 * t * (1 - t ** 2)) @ a, rtol=1e-10)


def test_second_order_on_one_persistent_tape():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 3
        dy = tape.gradient(y, x)
    assert dy.numpy() == 27.0 and tape.gradient(dy, x).numpy() == 18.0


def test_mixed_second_derivative_with_variables():
    # f = a^2 b^3: df/da = 2 a b^3, d/db (df/da) = 6 a b^2 = 6 * 2 * 9 = 108.
    a, b = gt.Variable(2.0), gt.Variable(3.0)
    with gt.GradientTape() as outer:
        with gt.GradientTape() as inner:
            f = a ** 2 * b ** 3
        df_da = inner.gradient(f, a)
    assert df_da.numpy() == 108.0  # 2 * 2 * 27
    assert outer.gradient(df_da, b).numpy() == 108.0


def test_outer_tape_does_not_see_an_inner_gradient_taken_while_it_is_stopped():
    x = gt.constant(3.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        with outer.stop_recording():
            dy = inner.gradient(y, x)
    assert dy.numpy() == 6.0
    assert outer.gradient(dy, x) is None


def test_outer_tape_sees_the_first_order_ops_too():
    # The outer tape can differentiate y itself as well as the inner gradient.
    x = gt.constant(2.0)
    with gt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.sin(x) * x
        dy = inner.gradient(y, x)  # cos(x) x + sin(x)
    assert np.isclose(outer.gradient(y, x).numpy(), np.cos(2.0) * 2 + np.sin(2.0))
    # d/dx (x cos x + sin x) = 2 cos x - x sin x
    assert np.isclose(outer.gradient(dy, x).numpy(), 2 * np.cos(2.0) - 2 * np.sin(2.0),
                      rtol=1e-6)


def test_vector_hessian_vector_product_via_output_gradients():
    # f = sum(x^3): grad = 3x^2, H v = 6 x v.
    x = gt.constant([1.0, 2.0, 3.0])
    v = gt.constant([1.0, 0.5, -1.0])
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            f = gt.reduce_sum(x ** 3)
        g = inner.gradient(f, x)
    hv = outer.gradient(g, x, output_gradients=v)
    np.testing.assert_allclose(hv.numpy(), 6 * x.numpy() * v.numpy())


def test_inner_gradients_of_known_tapes_take_the_short_path_as_call_ops(monkeypatch):
    """From the second step on, the inner gradient of a loop of nested fresh tapes is
    answered by ``_known_gradient``; it is still one call op the outer tape
    differentiates (a Hessian and a gradient penalty, with each step's values)."""
    from gradtape.tape import gradient_tape as tape_module

    answered = []
    original = tape_module._known_gradient
    monkeypatch.setattr(tape_module, "_known_gradient",
                        lambda *a: answered.append(original(*a)) or answered[-1])
    a = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    for step in range(4):
        x_value = np.array([0.2, -0.4, 0.1]) * (step + 1)
        x = gt.constant(x_value)
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(gt.tanh(gt.matmul(a, x)))
            g = inner.gradient(y, x)
            penalty = gt.reduce_sum(g * g)
        t = np.tanh(a @ x_value)
        w = -2 * t * (1 - t * t)
        hessian = a.T @ (w[:, None] * a)
        np.testing.assert_allclose(g.numpy(), a.T @ (1 - t * t), rtol=1e-12)
        np.testing.assert_allclose(outer.gradient(penalty, x).numpy(),
                                   2 * hessian @ g.numpy(), rtol=1e-10)
    inner_calls = [found for found in answered if found is not tape_module._UNKNOWN]
    assert len(inner_calls) >= 2  # the inner gradients of the last steps
    assert all(isinstance(g, gt.Tensor) for g in inner_calls)
