"""Elementwise ops: values equal NumPy's; derivatives match finite differences to 2nd
order (3rd for a cheap subset), with broadcasting, float32 dtypes and NumPy dispatch."""

import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(0)

# name -> (op, NumPy reference, input domain low/high)
UNARY = {
    "negative": (gt.negative, np.negative, -2, 2),
    "abs": (gt.abs, np.abs, 0.2, 2),
    "exp": (gt.exp, np.exp, -2, 2),
    "exp2": (gt.exp2, np.exp2, -2, 2),
    "expm1": (gt.expm1, np.expm1, -2, 2),
    "log": (gt.log, np.log, 0.3, 3),
    "log2": (gt.log2, np.log2, 0.3, 3),
    "log10": (gt.log10, np.log10, 0.3, 3),
    "log1p": (gt.log1p, np.log1p, -0.5, 2),
    "sqrt": (gt.sqrt, np.sqrt, 0.3, 3),
    "cbrt": (gt.cbrt, np.cbrt, 0.3, 3),
    "square": (gt.square, np.square, -2, 2),
    "reciprocal": (gt.reciprocal, np.reciprocal, 0.5, 2),
    "sin": (gt.sin, np.sin, -3, 3),
    "cos": (gt.cos, np.cos, -3, 3),
    "tan": (gt.tan, np.tan, -1.2, 1.2),
    "arcsin": (gt.arcsin, np.arcsin, -0.8, 0.8),
    "arccos": (gt.arccos, np.arccos, -0.8, 0.8),
    "arctan": (gt.arctan, np.arctan, -3, 3),
    "sinh": (gt.sinh, np.sinh, -2, 2),
    "cosh": (gt.cosh, np.cosh, -2, 2),
    "tanh": (gt.tanh, np.tanh, -2, 2),
    "arcsinh": (gt.arcsinh, np.arcsinh, -2, 2),
    "arccosh": (gt.arccosh, np.arccosh, 1.2, 3),
    "arctanh": (gt.arctanh, np.arctanh, -0.8, 0.8),
    "sigmoid": (gt.sigmoid, lambda x: 1 / (1 + np.exp(-x)), -4, 4),
    "relu": (gt.relu, lambda x: np.maximum(x, 0), -2, 2),
    "softplus": (gt.softplus, lambda x: np.log1p(np.exp(x)), -3, 3),
}

BINARY = {
    "add": (gt.add, np.add, -2, 2),
    "subtract": (gt.subtract, np.subtract, -2, 2),
    "multiply": (gt.multiply, np.multiply, -2, 2),
    "divide": (gt.divide, np.divide, 0.5, 2),
    "power": (gt.power, np.power, 0.5, 2),
    "maximum": (gt.maximum, np.maximum, -2, 2),
    "minimum": (gt.minimum, np.minimum, -2, 2),
    "arctan2": (gt.arctan2, np.arctan2, 0.3, 2),
    "hypot": (gt.hypot, np.hypot, 0.3, 2),
    "logaddexp": (gt.logaddexp, np.logaddexp, -2, 2),
}


def _sample(shape, low, high):
    x = rng.uniform(low, high, size=shape)
    if low < 0 < high:  # keep away from kinks at 0 (abs, relu) for finite differences
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
def test_unary_values_and_second_order(name, shape):
    op, reference, low, high = UNARY[name]
    x = _sample(shape, low, high)
    np.testing.assert_allclose(op(gt.constant(x)).numpy(), reference(x), rtol=1e-12)
    check_grads(op, [x], order=2)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh", "sigmoid", "sqrt", "square"])
def test_unary_third_order(name):
    op, _, low, high = UNARY[name]
    check_grads(op, [_sample((4,), low, high)], order=3)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((4,), (4,)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ())])
def test_binary_broadcasting_second_order(name, shapes):
    op, reference, low, high = BINARY[name]
    a, b = _sample(shapes[0], low, high), _sample(shapes[1], low, high)
    if name in ("maximum", "minimum"):
        b = b + 0.05  # no ties: finite differences are not defined there
    np.testing.assert_allclose(op(gt.constant(a), gt.constant(b)).numpy(), reference(a, b))
    check_grads(op, [a, b], order=2)


def test_power_by_python_scalar_and_zero_base():
    check_grads(lambda x: x ** 3.0, [rng.uniform(-2, 2, 5)], order=3)
    x = gt.constant([0.0, 2.0], dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.power(x, 2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.0, 4.0])
    y_exp = gt.constant(1.5, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(y_exp)
        z = gt.sum(gt.power(x, y_exp))
    # d/dy 0 ** y is 0 (not NaN); d/dy 2 ** 1.5 = log(2) * 2 ** 1.5
    np.testing.assert_allclose(tape.gradient(z, y_exp).numpy(), np.log(2) * 2**1.5)


def test_where_and_clip():
    x = _sample((6,), -2, 2)
    check_grads(lambda a: gt.where(a > 0, a * a, gt.sin(a)), [x], order=2)
    check_grads(lambda a: gt.clip(a, -1.0, 1.0), [np.array([-1.5, -0.5, 0.3, 1.7])], order=2)
    lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    check_grads(lambda a, b, c: gt.clip(a, b, c), [np.array([-1.5, 0.4]), lo, hi], order=1)


def test_max_min_ties_follow_tensorflow():
    x, y = gt.constant([1.0, 2.0]), gt.constant([1.0, 3.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        m = gt.maximum(x, y)
        n = gt.minimum(x, y)
    np.testing.assert_array_equal(tape.gradient(m, x).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(m, y).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(tape.gradient(n, x).numpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "less", "equal",
                                  "logical_not", "floor_divide"])
def test_non_differentiable_ops_give_no_gradient(name):
    # TF registers None as the gradient of Floor, Ceil, Round, Rint and FloorDiv, and
    # none at all for comparisons and logical ops.
    op = getattr(gt, name)
    x = gt.constant([0.4, -1.6])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = op(x) if name in ("floor", "ceil", "round", "logical_not") else op(x, x)
    assert tape.gradient(y, x) is None


def test_sign_has_a_zero_gradient_like_tensorflow():
    x = gt.constant([0.4, -1.6, 0.0], dtype="float64")
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.sign(x)
        z = gt.sign(x) * x  # the product rule sees sign's zero derivative
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [1.0, -1.0, 0.0])
    away_from_zero = np.array([0.4, -1.6, 2.5])
    check_grads(lambda a: gt.sign(a) * gt.sin(a), [away_from_zero], order=2)
    _, tangent = gt.jvp(gt.sign, [x], [gt.constant([1.0, 1.0, 1.0], dtype="float64")])
    assert tangent.numpy().tolist() == [0.0, 0.0, 0.0]


def test_float32_stays_float32_with_python_scalars():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.sum(gt.tanh(x * 2.0 + 1) / 3.0)
    assert y.dtype == np.float32
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    t = np.tanh(np.array([3.0, 5.0]))
    # float32 rounding of 1 - tanh^2 near saturation: compare with an absolute bound
    np.testing.assert_allclose(g.numpy(), 2 * (1 - t**2) / 3, rtol=1e-5, atol=1e-7)


def test_numpy_ufuncs_on_tensors_record():
    x = gt.constant(rng.uniform(0.5, 1.5, 4))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.exp(x) * np.log(x) + np.sqrt(x) - np.maximum(x, 1.0))
    assert isinstance(y, gt.Tensor)
    v = x.numpy()
    expected = np.exp(v) * np.log(v) + np.exp(v) / v + 0.5 / np.sqrt(v) - (v >= 1.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-5)


def test_unsupported_numpy_function_raises_type_error_naming_it():
    x = gt.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="numpy.spacing"):
        np.spacing(x)
    with pytest.raises(TypeError, match="numpy.add.reduce"):
        np.add.reduce(x)


def test_complex_follows_tensorflow_conjugate_convention():
    # TF: for real L(z), the gradient is dL/dx + i dL/dy; for L = |z|^2 that is 2z.
    z = gt.constant(np.array([1.0 + 2.0j, -0.5 + 0.25j]))
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.real(z * gt.conj(z))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * z.numpy())


def test_complex_abs_gradient_is_z_over_abs_z_like_tensorflow():
    z = gt.constant(np.array([1.0 + 2.0j, -3.0 + 0.5j, 0.0j]))
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = gt.reduce_sum(gt.abs(z))
    expected = np.array([(1 + 2j) / np.sqrt(5), (-3 + 0.5j) / np.sqrt(9.25), 0.0])
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), expected)


def _gradient_at(f, values):
    x = gt.constant(np.array(values, dtype=np.float64))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x).numpy()


@pytest.mark.parametrize("op, expected", [
    (gt.sqrt, [1.0, 0.25]),
    (gt.reciprocal, [1.0, -0.25]),
])
def test_masked_sqrt_and_reciprocal_have_tensorflows_gradient_at_zero(op, expected):
    # TF's SqrtGrad and ReciprocalGrad give 0 where the incoming gradient is 0, so the
    # where hides the branch's infinite derivative at x = 0 (not 0 * inf = nan).
    with np.errstate(divide="ignore"):
        grad = _gradient_at(lambda x: gt.where(x > 0, op(x), x), [0.0, 4.0 if op is gt.sqrt
                                                                  else 2.0])
    np.testing.assert_array_equal(grad, expected)
    # Away from the kink (both branches finite), to second order: the guard is exact.
    check_grads(lambda x: gt.where(x > 1, op(x), x), [np.array([0.5, 0.7, 3.0])], order=2)


def test_masked_log_and_power_keep_nan_at_zero_like_tensorflow():
    with np.errstate(divide="ignore", invalid="ignore"):
        log_grad = _gradient_at(lambda x: gt.where(x > 0, gt.log(x), x), [0.0, 4.0])
        pow_grad = _gradient_at(lambda x: gt.where(x > 0, x ** 0.5, x), [0.0, 4.0])
    assert np.isnan(log_grad[0]) and log_grad[1] == 0.25
    assert np.isnan(pow_grad[0]) and pow_grad[1] == 0.25


def test_sqrt_itself_at_zero_has_an_infinite_gradient():
    with np.errstate(divide="ignore"):
        grad = _gradient_at(gt.sqrt, [0.0, 4.0])
        sum_grad = _gradient_at(lambda x: gt.reduce_sum(gt.sqrt(x) * 3.0), [0.0, 4.0])
    np.testing.assert_array_equal(grad, [np.inf, 0.25])
    np.testing.assert_array_equal(sum_grad, [np.inf, 0.75])


def test_sqrt_jvp_is_zero_where_the_tangent_is_zero():
    x = gt.constant([0.0, 4.0], dtype="float64")
    with np.errstate(divide="ignore"):
        _, sqrt_tangent = gt.jvp(gt.sqrt, [x], [gt.constant([0.0, 1.0], dtype="float64")])
        _, rec_tangent = gt.jvp(gt.reciprocal, [x], [gt.constant([0.0, 1.0],
                                                                  dtype="float64")])
    np.testing.assert_array_equal(sqrt_tangent.numpy(), [0.0, 0.25])
    np.testing.assert_array_equal(rec_tangent.numpy(), [0.0, -1 / 16])


def test_sqrt_and_reciprocal_batch_with_their_zero_guard(check_batching):
    check_batching(lambda x: gt.sqrt(x) + gt.reciprocal(x), [np.array([0.5, 2.0, 3.0])])


@pytest.mark.parametrize("compiled", [True, False])
def test_guarded_rules_differentiate_without_nan_where_masked(compiled):
    # std of a constant is sqrt(0): the guarded tangent there is 0 for every (x, v), so
    # its derivative is 0 too (differentiating the masking `where` used to give 0 * inf).
    def std_tangent(x, v):
        return gt.jvp(np.std, (x,), (v,))[1]

    x = np.full(3, 3.5)
    with gt.config(compile=compiled):
        _, vjp_fn = gt.vjp(std_tangent, x, np.array([0.3, -0.1, 0.2]))
        grads = vjp_fn(np.float64(1.0))
    for grad in grads:
        np.testing.assert_array_equal(grad.numpy(), np.zeros(3))
    # Away from the mask the second derivative is untouched.
    y = np.array([1.0, 2.0, 4.0])
    _, vjp_fn = gt.vjp(lambda x, v: gt.jvp(gt.sqrt, (x,), (v,))[1], y, np.ones(3))
    gx, gv = vjp_fn(np.ones(3))
    np.testing.assert_allclose(gx.numpy(), -0.25 * y ** -1.5)
    np.testing.assert_allclose(gv.numpy(), 0.5 / np.sqrt(y))


@pytest.mark.parametrize("compiled", [True, False])
def test_power_with_exponent_zero_has_zero_derivative_at_zero(compiled):
    # x ** 0 is 1 everywhere; its derivative 0 * 0 ** -1 used to be NaN at x = 0.
    with gt.config(compile=compiled), np.errstate(divide="ignore", invalid="ignore"):
        assert gt.grad(lambda x: np.power(x, 0.0))(np.float64(0.0)).numpy() == 0.0
        assert gt.grad(lambda x: x ** 0)(np.float64(0.0)).numpy() == 0.0
        dx, dy = gt.grad(lambda x, y: np.power(x, y), argnums=(0, 1))(
            np.float64(0.0), np.float64(0.0))
        assert dx.numpy() == 0.0 and dy.numpy() == 0.0
        assert gt.grad(gt.grad(lambda x, y: x ** y))(np.float64(0.0),
                                                     np.float64(0.0)).numpy() == 0.0
    # A nonzero tensor exponent keeps y * x ** (y - 1).
    dx = gt.grad(lambda x, y: x ** y)(np.float64(2.0), np.float64(3.0))
    assert dx.numpy() == 12.0


@pytest.mark.parametrize("compile_mode", [True, False], ids=["compiled", "interpreted"])
def test_sigmoid_saturates_without_warnings(compile_mode):
    """sigmoid is 1 / (1 + exp(-x)), TF's and JAX's formula: exp(-x) overflows below
    x = -709, where the value 0 is right; no RuntimeWarning, and the softplus gradient
    (which is sigmoid) saturates the same way, in the generated backward too."""
    x = gt.constant(np.array([-1000.0, -745.0, -40.0, -1e-8, 0.0, 2.5, 40.0, 1000.0]))
    expected = np.array([0.0, 0.0, 4.248354255291589e-18, 0.5 - 2.5e-9, 0.5,
                         0.9241418199787566, 1.0, 1.0])
    with gt.config(compile=compile_mode), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(gt.sigmoid(x).numpy(), expected, rtol=1e-15, atol=0)
        for _ in range(4):  # the backward is compiled after a few calls of a structure
            with gt.GradientTape() as tape:
                tape.watch(x)
                loss = gt.reduce_sum(gt.math.softplus(x))
            grad = tape.gradient(loss, x)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-15, atol=0)
    assert gt.sigmoid(gt.constant(np.float32(-3.0))).dtype == np.float32
