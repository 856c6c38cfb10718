"""The ops of a logistic regression, their gradients and generated code on
``array_api_strict`` arrays: a library with no NumPy fallbacks (no ``__array_ufunc__``,
no NumPy scalars beside its arrays), which keeps the design honest. Results are
compared with NumPy on the same data, and must stay ``array_api_strict`` arrays."""

import numpy as np
import pytest

import gradtape as gt

xp = pytest.importorskip("array_api_strict")

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

ROWS, COLS = 8, 3


def is_strict(t):
    return type(t._value).__module__.startswith("array_api_strict")


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(ROWS, COLS))
    y = (rng.random((ROWS, 1)) > 0.5).astype(np.float64)
    return x, y


def logistic_loss(x, y, w, b):
    z = gt.matmul(x, w) + b
    p = gt.sigmoid(z)
    # Every op of the set: matmul, exp/log/logaddexp, sum/mean, sigmoid,
    # subtract/multiply, reshape, transpose.
    nll = gt.reduce_mean(np.logaddexp(0.0, z) - y * z)
    calibration = gt.reduce_sum(gt.transpose(gt.reshape(p, (2, ROWS // 2)))) / ROWS
    log_p = gt.reduce_mean(gt.math.log(p))
    return nll + 0.1 * calibration - 0.01 * log_p + 0.001 * gt.reduce_sum(gt.exp(-w * w))


def gradients(x, y, as_array):
    w = gt.constant(as_array(np.array([[0.2], [-0.1], [0.4]])))
    b = gt.constant(as_array(np.array([0.05])))
    with gt.GradientTape() as tape:
        tape.watch([w, b])
        loss = logistic_loss(gt.constant(as_array(x)), gt.constant(as_array(y)), w, b)
    return loss, tape.gradient(loss, [w, b])


def test_tensors_keep_strict_arrays(data):
    x, _ = data
    t = gt.constant(xp.asarray(x))
    assert is_strict(t)
    assert t.dtype == np.float64 and t.shape == (ROWS, COLS)
    np.testing.assert_array_equal(t.numpy(), x)
    assert gt.constant(xp.asarray(x), dtype="float32").dtype == np.float32


@pytest.mark.parametrize("op", [
    lambda t: gt.matmul(t, gt.transpose(t)), lambda t: gt.exp(t),
    lambda t: gt.math.log(gt.exp(t)), lambda t: np.logaddexp(t, t),
    lambda t: gt.reduce_sum(t, axis=1), lambda t: gt.reduce_mean(t),
    lambda t: gt.sigmoid(t), lambda t: t - 2.0 * t * t,
    lambda t: gt.reshape(t, (COLS, ROWS)), lambda t: gt.transpose(t),
], ids=["matmul", "exp", "log", "logaddexp", "sum", "mean", "sigmoid",
        "subtract-multiply", "reshape", "transpose"])
def test_ops_run_in_the_namespace(data, op):
    x, _ = data
    got = op(gt.constant(xp.asarray(x)))
    expected = op(gt.constant(x))
    assert is_strict(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_logistic_regression_gradient_matches_numpy(data, compile_mode):
    x, y = data
    expected_loss, expected = gradients(x, y, np.asarray)
    for _ in range(3):  # the first call interprets or compiles, later ones hit the cache
        loss, got = gradients(x, y, xp.asarray)
        assert all(is_strict(g) for g in got)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
        assert float(loss) == pytest.approx(float(expected_loss), abs=1e-12)


def test_logistic_regression_gradient_matches_finite_differences(data):
    x, y = data
    w0 = np.array([[0.2], [-0.1], [0.4]])

    def loss_at(w):
        return float(logistic_loss(gt.constant(xp.asarray(x)), gt.constant(xp.asarray(y)),
                                   gt.constant(xp.asarray(w)),
                                   gt.constant(xp.asarray(np.array([0.05])))))

    grad_w = gradients(x, y, xp.asarray)[1][0].numpy()
    eps = 1e-6
    for i in range(COLS):
        step = np.zeros((COLS, 1))
        step[i] = eps
        numeric = (loss_at(w0 + step) - loss_at(w0 - step)) / (2 * eps)
        assert grad_w[i, 0] == pytest.approx(numeric, abs=1e-8)


def test_generated_code_calls_the_namespace(data):
    x, y = data
    with gt.config(compile=True, compile_after=1):
        w = gt.constant(xp.asarray(np.array([[0.2], [-0.1], [0.4]])))
        b = gt.constant(xp.asarray(np.array([0.05])))
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([w, b])
            loss = logistic_loss(gt.constant(xp.asarray(x)), gt.constant(xp.asarray(y)), w, b)
        compiled = tape.gradient(loss, [w, b])
        source = tape.inspect(loss, [w, b]).source
    with gt.config(compile=False):
        interpreted = tape.gradient(loss, [w, b])
    assert "For array_api_strict arrays" in source
    assert "namespace_impl('array_api_strict'" in source
    for c, i in zip(compiled, interpreted):
        assert is_strict(c)
        np.testing.assert_allclose(c.numpy(), i.numpy(), rtol=1e-12, atol=1e-12)


def test_an_op_without_a_namespace_version_raises_clearly(data):
    x, _ = data
    with pytest.raises(NotImplementedError, match="does not run on array_api_strict"):
        gt.linalg.eig(gt.constant(xp.asarray(x[:COLS])))


def test_variable_keeps_its_library_when_assigned_numpy_values():
    # As a TF variable keeps its device: assigning NumPy values (or NumPy tensors) must
    # not turn the variable into a NumPy one, and assign_add must accept them.
    v = gt.Variable(xp.asarray(np.ones(3)))
    v.assign(np.array([1.0, 2.0, 3.0]))
    assert is_strict(v)
    v.assign_add(gt.constant(np.full(3, 0.5)))
    v.assign_sub([1.0, 1.0, 1.0])
    assert is_strict(v)
    np.testing.assert_array_equal(v.numpy(), [0.5, 1.5, 2.5])
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(v * gt.constant(xp.asarray(np.array([1.0, 2.0, 3.0]))))
    grad = tape.gradient(y, v)
    assert is_strict(grad)
    np.testing.assert_array_equal(grad.numpy(), [1.0, 2.0, 3.0])
