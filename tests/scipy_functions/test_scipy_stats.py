"""gt.scipy.stats against scipy.stats: values of every function, gradients in x and the
parameters (finite differences in float64, second order), the parameters' gradients the
incomplete gamma/beta functions lack raise, and SciPy's own functions on watched tensors
raise TypeError naming the gt.scipy route."""

import subprocess
import sys

import numpy as np
import pytest
from scipy_testing import (
    assert_compiled_equals_interpreted,
    assert_forward_over_reverse,
    assert_jacobian_matches_differences,
)

import gradtape as gt
from gradtape.testing import check_grads

st = pytest.importorskip("scipy.stats")
S = gt.scipy.stats

X = np.linspace(-2.0, 3.0, 7)
FUNCTIONS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
# (name, shape parameters, loc, scale): x spans both sides of each support.
CONTINUOUS = [("norm", (), 0.5, 2.0), ("t", (3.5,), 0.5, 2.0), ("gamma", (2.5,), -1.0, 2.0),
              ("chi2", (2.5,), -1.0, 2.0), ("beta", (2.5, 1.5), -1.0, 4.0)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) outside the support
@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("name,shapes,loc,scale", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_values(name, shapes, loc, scale, function):
    got = getattr(getattr(S, name), function)(X, *shapes, loc, scale).numpy()
    want = getattr(getattr(st, name), function)(X, *shapes, loc, scale)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    by_keyword = getattr(getattr(S, name), function)(X, *shapes, scale=scale, loc=loc)
    np.testing.assert_allclose(by_keyword.numpy(), want, rtol=1e-10)


def test_parameters_broadcast_as_in_scipy():
    x, loc, scale = np.array([[0.1], [0.7]]), np.array([0.0, 0.5, -0.5]), 1.3
    np.testing.assert_allclose(S.norm.logpdf(x, loc, scale).numpy(),
                               st.norm.logpdf(x, loc, scale))
    df = np.array([[2.0, 5.0, 9.0]])
    np.testing.assert_allclose(S.t.logpdf(x, df).numpy(), st.t.logpdf(x, df))


def test_python_float_parameters_compute_in_float64():
    assert S.norm.pdf(0.5, 0.1, 2.0).dtype == np.float64
    np.testing.assert_allclose(S.norm.pdf(0.5, 0.1, 2.0).numpy(), st.norm.pdf(0.5, 0.1, 2.0),
                               rtol=1e-14)


def test_norm_gradients_in_x_loc_and_scale():
    x = np.random.default_rng(1).standard_normal(5)
    for function in FUNCTIONS:
        check_grads(lambda x, loc, scale, f=function: getattr(S.norm, f)(x, loc, scale),
                    [x, 0.3, 1.7], order=2)


def test_shape_parameter_gradients():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(5)
    positive = np.abs(x) + 0.5
    unit = rng.uniform(0.1, 0.9, 5)
    check_grads(lambda x, df, loc, scale: S.t.logpdf(x, df, loc, scale), [x, 3.3, 0.3, 1.7])
    check_grads(lambda x, a, scale: S.gamma.logpdf(x, a, 0.0, scale), [positive, 2.3, 1.7])
    check_grads(lambda x, df: S.chi2.logpdf(x, df), [positive, 2.3])
    check_grads(lambda x, a, b: S.beta.logpdf(x, a, b), [unit, 2.3, 1.4])


def test_cdf_gradients_in_x_loc_and_scale():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5)
    check_grads(lambda x, loc, scale: S.t.cdf(x, 3.3, loc, scale), [x, 0.3, 1.7])
    check_grads(lambda x, scale: S.gamma.cdf(x, 2.3, 0.0, scale), [np.abs(x) + 0.5, 1.7])
    check_grads(lambda x: S.chi2.sf(x, 3.0), [np.abs(x) + 0.5])
    check_grads(lambda x: S.beta.cdf(x, 2.3, 1.4), [rng.uniform(0.1, 0.9, 5)])


@pytest.mark.parametrize("function", [
    lambda a: S.gamma.cdf(1.5, a), lambda a: S.beta.cdf(0.3, a, 2.0),
    lambda a: S.t.cdf(0.3, a), lambda a: S.chi2.sf(0.3, a)])
def test_cdf_gradient_in_a_shape_parameter_raises(function):
    a = gt.constant(2.5, gt.float64)
    # Raised when the function sees a watched parameter, or (stdtr's df, also inside
    # traced code) when its gradient is asked for: never a silent zero.
    with pytest.raises(NotImplementedError, match="not implemented"):
        with gt.GradientTape() as tape:
            tape.watch(a)
            y = function(a)
        tape.gradient(y, a)
    with pytest.raises(NotImplementedError, match="not implemented"):
        gt.jvp(function, [a], [gt.constant(1.0, gt.float64)])


def test_outside_the_support_the_gradient_is_zero():
    x = gt.constant(np.array([-1.0, 0.5]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(S.gamma.pdf(x, 2.0))
    g = tape.gradient(y, x).numpy()
    assert g[0] == 0.0 and np.isfinite(g[1])


def test_poisson():
    k = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 7.0])
    for function in ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"]:
        np.testing.assert_allclose(getattr(S.poisson, function)(k, 2.3).numpy(),
                                   getattr(st.poisson, function)(k, 2.3), rtol=1e-10)
    np.testing.assert_allclose(S.poisson.pmf(k, 2.3, loc=1).numpy(),
                               st.poisson.pmf(k, 2.3, loc=1))
    counts = np.array([0.0, 1.0, 3.0, 5.0])
    check_grads(lambda mu: S.poisson.logpmf(counts, mu), [2.3], order=2)
    check_grads(lambda mu: S.poisson.cdf(counts, mu), [2.3], order=2)


def test_dirichlet():
    alpha = np.array([1.5, 2.0, 3.0])
    points = np.array([[0.2, 0.3], [0.3, 0.3], [0.5, 0.4]])  # components on axis 0
    np.testing.assert_allclose(S.dirichlet.logpdf(points, alpha).numpy(),
                               st.dirichlet.logpdf(points, alpha))
    np.testing.assert_allclose(S.dirichlet.pdf(points[:, 0], alpha).numpy(),
                               st.dirichlet.pdf(points[:, 0], alpha))
    check_grads(lambda x, a: S.dirichlet.logpdf(x, a), [points, alpha], order=2)


def _symmetric(c):
    return (c + gt.transpose(c, (1, 0))) / 2


def test_multivariate_normal_values():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3))
    cov, mean, x = a @ a.T + np.eye(3), rng.standard_normal(3), rng.standard_normal((4, 3))
    mvn, want = S.multivariate_normal, st.multivariate_normal
    for singular in (False, True):
        np.testing.assert_allclose(mvn.logpdf(x, mean, cov, allow_singular=singular).numpy(),
                                   want.logpdf(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(mvn.pdf(x[0], mean, cov).numpy(), want.pdf(x[0], mean, cov))
    np.testing.assert_allclose(mvn.pdf(x[0], mean, np.diag(cov)).numpy(),
                               want.pdf(x[0], mean, np.diag(cov)))
    np.testing.assert_allclose(mvn.logpdf(0.3, 0.1, 2.0).numpy(), want.logpdf(0.3, 0.1, 2.0))
    np.testing.assert_allclose(mvn.logpdf(x[:, 0], None, 2.0).numpy(),
                               want.logpdf(x[:, 0], None, 2.0))
    np.testing.assert_allclose(mvn.entropy(mean, cov).numpy(), want.entropy(mean, cov))


def test_multivariate_normal_gradients():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 3))
    cov, mean, x = a @ a.T + np.eye(3), rng.standard_normal(3), rng.standard_normal((4, 3))
    mvn = S.multivariate_normal
    check_grads(lambda x, m, c: mvn.logpdf(x, m, _symmetric(c)), [x, mean, cov], order=2)
    check_grads(lambda x, m, c: mvn.logpdf(x, m, _symmetric(c), allow_singular=True),
                [x, mean, cov], order=2)
    check_grads(lambda c: mvn.entropy(mean, _symmetric(c)), [cov], order=2)


def test_multivariate_normal_singular_covariance():
    rng = np.random.default_rng(6)
    b, mean = rng.standard_normal((3, 2)), rng.standard_normal(3)
    cov = b @ b.T  # rank 2
    inside = mean + rng.standard_normal((3, 2)) @ b.T
    points = np.vstack([inside, rng.standard_normal((1, 3))])  # the last is off the plane
    got = S.multivariate_normal.logpdf(points, mean, cov, allow_singular=True).numpy()
    want = st.multivariate_normal.logpdf(points, mean, cov, allow_singular=True)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert got[-1] == -np.inf
    np.testing.assert_allclose(S.multivariate_normal.entropy(mean, cov).numpy(),
                               st.multivariate_normal.entropy(mean, cov), rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        S.multivariate_normal.logpdf(points, mean, cov)
    # The derivatives hold at constant rank: perturb b (cov = b b^T) and points on the plane.
    z = rng.standard_normal((3, 2))

    def logpdf(z, b):
        bt = gt.transpose(b, (1, 0))
        return S.multivariate_normal.logpdf(mean + z @ bt, mean, b @ bt, allow_singular=True)

    check_grads(logpdf, [z, b], order=2)
    check_grads(lambda b: S.multivariate_normal.entropy(mean, b @ gt.transpose(b, (1, 0))),
                [b], order=2)


def test_psd_pseudo_rules(check_jvp, check_batching):
    from gradtape.ops.scipy_linalg import psd_pseudo

    rng = np.random.default_rng(7)
    b = rng.standard_normal((3, 2))

    def pinv_of_gram(b):
        return psd_pseudo(b @ gt.transpose(b, (1, 0)))[0]

    check_jvp(pinv_of_gram, [b])
    a = rng.standard_normal((3, 3))
    check_batching(lambda a: psd_pseudo(a @ gt.transpose(a, (1, 0)))[1], [a])


def test_compiled_jacobian_and_forward_mode():
    x = np.random.default_rng(8).standard_normal(4)
    assert_compiled_equals_interpreted(lambda x, s: S.norm.logcdf(x, 0.2, s), [x, 1.3])
    assert_compiled_equals_interpreted(lambda x, a: S.gamma.logpdf(gt.abs(x) + 0.5, a),
                                       [x, 2.2])
    assert_jacobian_matches_differences(lambda x: S.t.logpdf(x, 3.0), x)
    assert_forward_over_reverse(lambda x: S.norm.logcdf(x), x)
    assert_forward_over_reverse(lambda x: S.gamma.logpdf(gt.abs(x) + 0.5, x * x + 1.0), x)


# --- SciPy's own functions on tensors ---------------------------------------------------------

def test_scipy_stats_on_a_watched_tensor_raises_naming_the_route():
    x = gt.Variable(np.array([0.1, 0.2]))
    with gt.GradientTape():
        with pytest.raises(TypeError, match=r"scipy\.stats\.norm\.pdf does not .* use "
                                            r"gt\.scipy\.stats\.norm\.pdf"):
            st.norm.pdf(x)
        with pytest.raises(TypeError, match=r"gt\.scipy\.stats\.norm\.logcdf"):
            st.norm(0.0, 1.0).logcdf(x)
        with pytest.raises(TypeError, match=r"gt\.scipy\.stats\.multivariate_normal\.logpdf"):
            st.multivariate_normal.logpdf(x, np.zeros(2), np.eye(2))
        with pytest.raises(TypeError, match=r"scipy\.stats\.lognorm\.pdf .* no "
                                            r"differentiable version"):
            st.lognorm.pdf(x, 1.0)


def test_scipy_stats_on_an_unwatched_tensor_computes():
    np.testing.assert_allclose(st.norm.pdf(gt.constant([0.0, 1.0])), st.norm.pdf([0.0, 1.0]))


def test_import_gradtape_does_not_import_scipy():
    code = ("import sys, gradtape as gt; gt.scipy.stats.norm.logpdf(1.0); "
            "assert 'scipy' not in sys.modules, 'scipy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_rvs_are_scipys_draws():
    draws = S.dirichlet.rvs(np.array([1.5, 2.0, 3.0]), size=2, random_state=0)
    np.testing.assert_array_equal(
        draws, st.dirichlet.rvs(np.array([1.5, 2.0, 3.0]), size=2, random_state=0))
    assert S.norm.rvs(size=3, random_state=1).shape == (3,)
