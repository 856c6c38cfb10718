"""gt.scipy.special: SciPy's logsumexp (axis, b, keepdims, return_sign), expit, logit,
softmax, log_softmax and the special functions the distributions use, against SciPy;
gradients against finite differences to second order."""

import numpy as np
import pytest
from scipy_testing import assert_compiled_equals_interpreted, assert_forward_over_reverse

import gradtape as gt
from gradtape.testing import check_grads

ss = pytest.importorskip("scipy.special")
SP = gt.scipy.special


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
def test_logsumexp_values(axis, keepdims):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(SP.logsumexp(a, axis, keepdims=keepdims).numpy(),
                               ss.logsumexp(a, axis, keepdims=keepdims), rtol=1e-12)
    got = SP.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=True)
    want = ss.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-12)
    np.testing.assert_array_equal(got[1].numpy(), want[1])


def test_logsumexp_b_broadcasts_and_negative_sums_are_nan():
    a = np.array([[0.0, 1.0], [2.0, 3.0]])
    b = np.array([1.0, -2.0])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(SP.logsumexp(a, 1, b=b).numpy(), ss.logsumexp(a, 1, b=b))
    big = np.array([1000.0, 1000.0])
    np.testing.assert_allclose(SP.logsumexp(big, b=[0.5, 0.5]).numpy(), 1000.0)


def test_logsumexp_gradients():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), np.abs(rng.standard_normal((3, 4))) + 0.1
    check_grads(lambda a: SP.logsumexp(a, 0), [a], order=2)
    check_grads(lambda a, b: SP.logsumexp(a, 1, b=b), [a, b], order=2)
    check_grads(lambda a, b: SP.logsumexp(a, None, b=b * -1.0, return_sign=True)[0],
                [a, b], order=2)
    assert_compiled_equals_interpreted(lambda a, b: SP.logsumexp(a, 1, b=b), [a, b])
    assert_forward_over_reverse(lambda a: SP.logsumexp(a, 1, b=b), a)


def test_expit_logit_softmax_log_softmax():
    rng = np.random.default_rng(2)
    x, p = rng.standard_normal((3, 4)), rng.uniform(0.05, 0.95, 5)
    np.testing.assert_allclose(SP.expit(x).numpy(), ss.expit(x), rtol=1e-12)
    np.testing.assert_allclose(SP.logit(p).numpy(), ss.logit(p), rtol=1e-12)
    for axis in (None, 0, 1):
        np.testing.assert_allclose(SP.softmax(x, axis).numpy(), ss.softmax(x, axis), rtol=1e-12)
        np.testing.assert_allclose(SP.log_softmax(x, axis).numpy(), ss.log_softmax(x, axis),
                                   rtol=1e-12)
    check_grads(SP.expit, [x], order=2)
    check_grads(SP.logit, [p], order=2)
    check_grads(SP.softmax, [x], order=2)
    check_grads(lambda x: SP.log_softmax(x, 1), [x], order=2)


SPECIAL = [("gammaln", lambda: np.linspace(0.3, 4.0, 5)),
           ("digamma", lambda: np.linspace(0.3, 4.0, 5)),
           ("erf", lambda: np.linspace(-2.0, 2.0, 5)),
           ("erfc", lambda: np.linspace(-2.0, 2.0, 5)),
           ("ndtr", lambda: np.linspace(-3.0, 3.0, 5)),
           ("log_ndtr", lambda: np.linspace(-3.0, 3.0, 5))]


@pytest.mark.parametrize("name,points", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_unary_special_functions(name, points):
    x = points()
    np.testing.assert_allclose(getattr(SP, name)(x).numpy(), getattr(ss, name)(x), rtol=1e-12)
    check_grads(getattr(SP, name), [x], order=2)


def test_binary_special_functions():
    x, y = np.array([0.0, 0.5, 2.0]), np.array([0.0, 1.5, 3.0])
    np.testing.assert_allclose(SP.xlogy(x, y).numpy(), ss.xlogy(x, y))
    np.testing.assert_allclose(SP.xlog1py(x, y - 1.0).numpy(), ss.xlog1py(x, y - 1.0))
    xg = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xg)
        value = gt.reduce_sum(SP.xlogy(xg, gt.constant(y)))
    assert np.all(np.isfinite(tape.gradient(value, xg).numpy()[1:]))
    a, v = np.array([0.5, 2.0, 3.0]), np.array([0.3, 1.0, 4.0])
    np.testing.assert_allclose(SP.gammainc(a, v).numpy(), ss.gammainc(a, v))
    np.testing.assert_allclose(SP.gammaincc(a, v).numpy(), ss.gammaincc(a, v))
    np.testing.assert_allclose(SP.betainc(a, a + 1.0, v / 5).numpy(),
                               ss.betainc(a, a + 1.0, v / 5))
    np.testing.assert_allclose(SP.betaln(a, v).numpy(), ss.betaln(a, v))
    np.testing.assert_allclose(SP.polygamma(2, v).numpy(), ss.polygamma(2, v))
    check_grads(lambda v: SP.gammainc(a, v), [v], order=2)
    check_grads(lambda v: SP.betainc(a, a + 1.0, v), [v / 5], order=2)
    check_grads(lambda a, v: SP.betaln(a, v), [a, v], order=2)


def test_the_special_function_family_is_listed_under_scipy_names():
    assert {"gamma", "beta", "iv", "multigammaln", "stdtr"} <= set(dir(SP))
    x = np.array([0.7, 1.9])
    np.testing.assert_allclose(SP.gamma(x).numpy(), ss.gamma(x), rtol=1e-12)
    np.testing.assert_allclose(SP.stdtr(3.0, x).numpy(), ss.stdtr(3.0, x), rtol=1e-12)


def test_logsumexp_b_given_as_a_list_is_float64_as_scipy():
    """b=[0.1, ...] was made a float32 tensor (TF's rule for Python lists): the result
    missed SciPy's by 3e-8 relative, and gt.config(dtype_promotion="tf") refused it."""
    a = np.array([0.5, 1.5, -2.0])
    b = [0.1, 0.3, 0.7]
    np.testing.assert_allclose(SP.logsumexp(a, b=b).numpy(), ss.logsumexp(a, b=b),
                               rtol=1e-15)
    with gt.config(dtype_promotion="tf"):
        np.testing.assert_allclose(SP.logsumexp(a, b=b).numpy(), ss.logsumexp(a, b=b),
                                   rtol=1e-15)


@pytest.mark.parametrize("name, args", [
    ("gammaln", ([0.1, 2.5],)), ("digamma", ([0.3, 4.0],)), ("erf", ([0.1, -0.7],)),
    ("ndtr", ([0.1, 1.3],)), ("xlogy", ([0.1, 2.0], [0.3, 0.7])),
    ("betaln", ([0.5, 2.0], [1.5, 0.25])), ("polygamma", (1, [0.5, 3.0])),
    ("gammainc", ([0.5, 2.0], [0.3, 1.0])), ("stdtr", ([3.0, 5.0], [0.1, -1.2])),
])
def test_python_values_compute_in_float64_as_scipy(name, args):
    """SciPy computes Python numbers and lists in float64; these took TF's conversion
    (float32) and missed SciPy's values by ~1e-8."""
    out = getattr(SP, name)(*args)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), getattr(ss, name)(*args), rtol=1e-13)


def test_scipy_signal_takes_python_lists_in_float64():
    sg = pytest.importorskip("scipy.signal")
    a, b = [0.1, 0.2, 0.7], [0.3, -0.9]
    for name in ("convolve", "correlate"):
        out = getattr(gt.scipy.signal, name)(a, b)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), getattr(sg, name)(a, b), rtol=1e-15)
