"""gt.py_function and gt.numpy_function: eager calls, Tout conversion and errors, runs on
every call of a @gt.function, and gradients (finite differences, first and second order,
compiled vs interpreted, jacobians, forward mode)."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_same_gradients, assert_vjp_matches_differences


def sin_times(a, b):
    """A py_function body that runs gradtape ops: TF differentiates through them."""
    return gt.sin(a) * b, gt.reduce_sum(a * a)


def _call_sin_times(x, y):
    first, second = gt.py_function(sin_times, [x, y], [gt.float64, gt.float64])
    return gt.reduce_sum(first * first) + second


def _args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(3), rng.standard_normal(3)]


# --- eager ----------------------------------------------------------------------------------


def test_eager_results_and_tout_conversion():
    x = gt.constant([1.0, 2.0])
    single = gt.py_function(lambda t: t.numpy() * 2, [x], gt.float64)  # NumPy -> Tout
    assert isinstance(single, gt.Tensor) and single.dtype == np.float64
    np.testing.assert_array_equal(single.numpy(), [2.0, 4.0])
    pair = gt.py_function(lambda t: (t, 3), [x], [gt.float32, gt.int64])
    assert isinstance(pair, list) and [p.dtype for p in pair] == [np.float32, np.int64]
    assert gt.py_function(lambda t: None, [x], []) == []


def test_tout_errors():
    x = gt.constant([1.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="cast it in func"):
        gt.py_function(lambda t: t, [x], gt.float64)  # a float32 tensor is not cast
    with pytest.raises(gt.errors.InvalidArgumentError, match="returned 1 value"):
        gt.py_function(lambda t: t, [x], [gt.float32, gt.float32])
    with pytest.raises(TypeError, match="Cannot convert"):
        gt.py_function(lambda t: t, [x], "no such dtype")
    with pytest.raises(TypeError, match="callable"):
        gt.py_function(3, [x], gt.float32)


def test_eager_gradient_first_and_second_order():
    arrays = _args()
    x, y = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as outer:
        outer.watch([x, y])
        with gt.GradientTape() as inner:
            inner.watch([x, y])
            z = _call_sin_times(x, y)
        grads = inner.gradient(z, [x, y])
        gx_sum = gt.reduce_sum(grads[0])
    assert_vjp_matches_differences(_call_sin_times, arrays, np.ones(()), grads,
                                   np.random.default_rng(1))

    def gradient_sum(a, b):
        with gt.GradientTape() as t:
            t.watch(a)
            out = _call_sin_times(a, b)
        return gt.reduce_sum(t.gradient(out, a))

    assert_vjp_matches_differences(gradient_sum, arrays, np.ones(()),
                                   outer.gradient(gx_sum, [x, y]), np.random.default_rng(2),
                                   rtol=1e-5)


def test_numpy_function_gets_arrays_and_gives_constants():
    x = gt.constant([1.0, 2.0], dtype=gt.float64)
    seen = []

    def double(a):
        seen.append(type(a))
        return a * 2

    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.numpy_function(double, [x], gt.float64)
    assert seen == [np.ndarray]
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    assert tape.gradient(y, x) is None  # no gradient, as in TF


# --- inside @gt.function ------------------------------------------------------------------


def test_runs_on_every_call_with_that_calls_values():
    calls = []

    def noisy(a):
        calls.append(a.numpy().copy())
        return gt.exp(a)

    @gt.function
    def f(x):
        return gt.py_function(noisy, [x], gt.float64) + 1.0

    for k in range(3):
        x = np.array([0.5, k])
        np.testing.assert_allclose(f(gt.constant(x)).numpy(), np.exp(x) + 1.0)
    assert len(calls) == 3  # once per call: the trace's own run served the first call
    np.testing.assert_array_equal(calls[2], [0.5, 2.0])


def test_side_effect_only_calls_are_not_dead_code():
    log = []

    @gt.function
    def f(x):
        gt.py_function(lambda a: log.append(float(a)), [x], [])
        gt.numpy_function(lambda a: log.append(-float(a)), [x], [])
        return x * 2.0

    for value in (1.0, 2.0):
        f(gt.constant(value))
    assert log == [1.0, -1.0, 2.0, -2.0]


def test_numpy_function_in_a_function_runs_every_call_without_gradient():
    @gt.function
    def f(x):
        return gt.numpy_function(np.cumsum, [x], gt.float64) * x

    x = gt.constant(np.array([1.0, 2.0, 3.0]))
    for shift in (0.0, 1.0):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x + shift)
        np.testing.assert_allclose(y.numpy(), np.cumsum(x.numpy() + shift) * (x.numpy() + shift))
        # d/dx of c * x with c constant: c.
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cumsum(x.numpy() + shift))


def test_a_changed_result_shape_is_an_error():
    @gt.function
    def f(x, n):
        return gt.py_function(lambda a, k: gt.ones([int(k)], dtype=gt.float64) * a, [x, n],
                              gt.float64)

    f(gt.constant(1.0, dtype=gt.float64), gt.constant(2))
    with pytest.raises(gt.errors.InvalidArgumentError, match="when the @gt.function traced"):
        f(gt.constant(1.0, dtype=gt.float64), gt.constant(3))


def test_gradient_inside_a_function_matches_finite_differences(compile_mode):
    @gt.function
    def gradients(x, y):
        with gt.GradientTape() as tape:
            tape.watch([x, y])
            z = _call_sin_times(x, y)
        return tape.gradient(z, [x, y])

    arrays = _args()
    for shift in (0.0, 0.5):  # the second call reuses the trace
        shifted = [arrays[0] + shift, arrays[1]]
        grads = gradients(*[gt.constant(a) for a in shifted])
        assert_vjp_matches_differences(_call_sin_times, shifted, np.ones(()), grads,
                                       np.random.default_rng(3))


def test_outer_tapes_over_a_function_first_and_second_order(compile_mode):
    traced = gt.function(_call_sin_times)
    arrays = _args()
    x, y = [gt.constant(a) for a in arrays]
    results = []
    for f in (_call_sin_times, traced):
        with gt.GradientTape() as outer:
            outer.watch([x, y])
            with gt.GradientTape() as inner:
                inner.watch([x, y])
                z = f(x, y)
            gx = inner.gradient(z, x)
            total = gt.reduce_sum(gx * gx)
        results.append([z, gx] + outer.gradient(total, [x, y]))
    assert_same_gradients(results[0], results[1], what=f"compile={compile_mode}")
    assert_vjp_matches_differences(lambda a: traced(a, y), arrays[:1], np.ones(()),
                                   [results[1][1]], np.random.default_rng(4))


def test_jacobian_and_forward_mode_through_a_function():
    @gt.function
    def f(x):
        return gt.py_function(lambda a: gt.sin(a) * a, [x * x], gt.float64)

    array = np.array([0.4, -1.1, 0.8])
    u = array * array
    expected = np.diag((np.cos(u) * u + np.sin(u)) * 2 * array)
    x = gt.constant(array)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tape.jacobian(y, x, experimental_use_pfor=False).numpy(),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(gt.jacobian(f)(x).numpy(), expected, rtol=1e-12)
    direction = np.array([1.0, 2.0, -1.0])
    _, tangent = gt.jvp(f, [x], [gt.constant(direction)])
    np.testing.assert_allclose(tangent.numpy(), expected @ direction, rtol=1e-12)

    def total(x):
        return gt.reduce_sum(f(x))

    # Forward over reverse: the JVP of the gradient is a Hessian-vector product.
    _, hvp = gt.jvp(gt.grad(total), [x], [gt.constant(direction)])
    eps = 1e-6
    plus = gt.grad(total)(gt.constant(array + eps * direction)).numpy()
    minus = gt.grad(total)(gt.constant(array - eps * direction)).numpy()
    np.testing.assert_allclose(hvp.numpy(), (plus - minus) / (2 * eps), rtol=1e-6)


def test_batching_rule_runs_func_once_per_element():
    from gradtape.ad import batching
    from gradtape.functions.py_function import PyCall, py_function_p
    from gradtape.ir import interpreter
    from gradtape.ir.builder import Builder
    from gradtape.ir.nodes import Aval, Var

    call = PyCall("py_function square", lambda ts: [ts[0] * ts[0] + ts[1]],
                  [Aval((2,), np.dtype(np.float64))])
    inputs = [Var(Aval((2,), np.dtype(np.float64))), Var(Aval((), np.dtype(np.float64)))]
    with Builder() as b:
        out = gt.ops.registry.bind(py_function_p, *inputs, call=call)[0]
    program = b.program(inputs, [out])
    values = [np.arange(6.0).reshape(3, 2), np.array(0.5)]
    vectorized = batching.batch_program(program, [True, False], 3)
    result = interpreter.run(vectorized, values)[0]
    np.testing.assert_array_equal(result, values[0] ** 2 + 0.5)
    assert [e.prim for e in vectorized.eqns] == [py_function_p]  # its rule, no fallback
