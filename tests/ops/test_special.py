"""Special functions (ops/special.py, gt.math's TF names): values equal SciPy's;
derivatives match finite differences in float64 to second order; forward mode, jacobians,
batching and compiled code agree; erf/erfc work without SciPy; SciPy stays optional."""

import math
import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops import erf_numpy
from gradtape.ops import special as S
from gradtape.testing import check_grads

sp = pytest.importorskip("scipy.special")

rng = np.random.default_rng(0)

# name -> (op of one tensor, SciPy reference, input domain low/high)
UNARY = {
    "erf": (S.erf, sp.erf, -2, 2), "erfc": (S.erfc, sp.erfc, -2, 2),
    "erfinv": (S.erfinv, sp.erfinv, -0.9, 0.9), "erfcinv": (S.erfcinv, sp.erfcinv, 0.1, 1.9),
    "ndtr": (S.ndtr, sp.ndtr, -2, 2), "ndtri": (S.ndtri, sp.ndtri, 0.1, 0.9),
    "log_ndtr": (S.log_ndtr, sp.log_ndtr, -3, 3), "gammaln": (S.gammaln, sp.gammaln, 0.3, 3),
    "gamma": (S.gamma, sp.gamma, 0.3, 3), "rgamma": (S.rgamma, sp.rgamma, 0.3, 3),
    "digamma": (S.digamma, sp.digamma, 0.3, 3), "expit": (S.expit, sp.expit, -4, 4),
    "logit": (S.logit, sp.logit, 0.1, 0.9), "entr": (S.entr, sp.entr, 0.2, 2),
    "i0": (S.i0, sp.i0, 0.2, 5), "i1": (S.i1, sp.i1, 0.2, 5), "i0e": (S.i0e, sp.i0e, -5, 5),
    "i1e": (S.i1e, sp.i1e, -5, 5), "j0": (S.j0, sp.j0, 0.2, 10), "j1": (S.j1, sp.j1, 0.2, 10),
    "y0": (S.y0, sp.y0, 0.5, 10), "y1": (S.y1, sp.y1, 0.5, 10), "k0": (S.k0, sp.k0, 0.3, 5),
    "k1": (S.k1, sp.k1, 0.3, 5), "k0e": (S.k0e, sp.k0e, 0.3, 5), "k1e": (S.k1e, sp.k1e, 0.3, 5),
    "dawsn": (S.dawsn, sp.dawsn, -3, 3), "expi": (S.expi, sp.expi, 0.3, 3),
    "spence": (S.spence, sp.spence, 0.2, 3),
    "fresnel_sin": (S.fresnel_sin, lambda x: sp.fresnel(x)[0], -2, 2),
    "fresnel_cos": (S.fresnel_cos, lambda x: sp.fresnel(x)[1], -2, 2),
    # an integer or fixed first argument (not differentiable), the tensor second
    "polygamma": (lambda x: S.polygamma(2, x), lambda x: sp.polygamma(2, x), 0.3, 3),
    "jv": (lambda x: S.jv(2.5, x), lambda x: sp.jv(2.5, x), 0.5, 8),
    "yv": (lambda x: S.yv(1.5, x), lambda x: sp.yv(1.5, x), 0.5, 8),
    "yn": (lambda x: S.yn(2, x), lambda x: sp.yn(2, x), 0.5, 8),
    "iv": (lambda x: S.iv(1.5, x), lambda x: sp.iv(1.5, x), 0.3, 5),
    "ive": (lambda x: S.ive(2.0, x), lambda x: sp.ive(2.0, x), -5, 5),
    "kv": (lambda x: S.kv(1.5, x), lambda x: sp.kv(1.5, x), 0.3, 5),
    "kve": (lambda x: S.kve(0.5, x), lambda x: sp.kve(0.5, x), 0.3, 5),
    "gammainc": (lambda x: S.gammainc(2.5, x), lambda x: sp.gammainc(2.5, x), 0.3, 4),
    "gammaincc": (lambda x: S.gammaincc(2.5, x), lambda x: sp.gammaincc(2.5, x), 0.3, 4),
    "betainc": (lambda x: S.betainc(2.0, 3.5, x), lambda x: sp.betainc(2.0, 3.5, x), 0.1, 0.9),
    "zeta": (lambda q: S.zeta(3.0, q), lambda q: sp.zeta(3.0, q), 0.5, 3),
    "multigammaln": (lambda a: S.multigammaln(a, 3), lambda a: sp.multigammaln(a, 3), 2, 4),
}

# name -> (op of two tensors, SciPy reference, domain of both)
BINARY = {
    "beta": (S.beta, sp.beta, 0.5, 3), "betaln": (S.betaln, sp.betaln, 0.5, 3),
    "xlogy": (S.xlogy, sp.xlogy, 0.2, 3), "xlog1py": (S.xlog1py, sp.xlog1py, 0.2, 3),
    "xdivy": (S.xdivy, np.divide, 0.2, 3), "rel_entr": (S.rel_entr, sp.rel_entr, 0.2, 3),
    "kl_div": (S.kl_div, sp.kl_div, 0.2, 3),
}


def _sample(shape, low, high):
    x = rng.uniform(low, high, size=shape)
    if low < 0 < high:  # away from the kink of i0e & co. at 0
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_second_order(name):
    op, reference, low, high = UNARY[name]
    x = _sample((4,), low, high)
    np.testing.assert_allclose(op(gt.constant(x)).numpy(), reference(x), rtol=1e-13)
    check_grads(op, [x], order=2)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_second_order_with_broadcasting(name):
    op, reference, low, high = BINARY[name]
    a, b = _sample((2, 3), low, high), _sample((3,), low, high)
    np.testing.assert_allclose(op(gt.constant(a), gt.constant(b)).numpy(), reference(a, b),
                               rtol=1e-13)
    check_grads(op, [a, b], order=2)


def test_scipy_ufuncs_on_tensors_differentiate():
    x = np.array([0.4, 1.3, 2.7])
    t = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = sp.gammaln(t) + sp.jn(2, t) + sp.erf(t) + sp.psi(t) + sp.expit(t)
    expected = (sp.psi(x) + (sp.jv(1, x) - sp.jv(3, x)) / 2 + 2 / np.sqrt(np.pi) * np.exp(-x * x)
                + sp.polygamma(1, x) + sp.expit(x) * (1 - sp.expit(x)))
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), expected, rtol=1e-12)


def test_integer_orders_get_no_gradient():
    n, x = gt.constant(np.array([1.0, 2.0])), gt.constant(np.array([0.7, 1.5]))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([n, x])
        y = S.polygamma(n, x) + S.jv(n, x)
    assert tape.gradient(y, n) is None
    assert tape.gradient(y, x) is not None


def test_gradient_with_respect_to_betainc_a_raises_when_asked_for():
    a, x = gt.Variable(2.0, dtype=gt.float64), gt.Variable(0.3, dtype=gt.float64)
    # Watched but not differentiated: a's cotangent is dead code, never run.
    with gt.GradientTape(persistent=True) as tape:
        y = sp.betainc(a, 3.0, x) + gt.math.igamma(a, x)
    assert tape.gradient(y, x) is not None
    with pytest.raises(NotImplementedError, match="with respect to a.* not implemented"):
        tape.gradient(y, a)

    @gt.function
    def both(a, x):
        with gt.GradientTape() as inner:
            inner.watch([a, x])
            z = gt.math.igamma(a, x)
        return inner.gradient(z, [a, x])

    with pytest.raises(NotImplementedError, match="gammainc with respect to a"):
        both(gt.constant(2.0, gt.float64), gt.constant(0.3, gt.float64))
    with pytest.raises(NotImplementedError, match="with respect to a"):
        gt.jvp(lambda a: sp.gammainc(a, 0.3), (np.float64(2.0),), (np.float64(1.0),))


def test_complex_erf_follows_the_conjugate_convention():
    z = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    t = gt.constant(z)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = gt.reduce_sum(gt.real(sp.erf(t)))
    # d Re(erf)/d z for holomorphic erf: TF's gradient is conj(erf'(z)).
    expected = np.conj(2 / np.sqrt(np.pi) * np.exp(-z * z))
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), expected, rtol=1e-13)


# --- forward mode, jacobians, batching, compiled code --------------------------------------

@pytest.mark.parametrize("name", ["gammaln", "erf", "log_ndtr", "i1e", "jv", "betainc"])
def test_forward_mode_and_forward_over_reverse(name, check_jvp):
    op, _, low, high = UNARY[name]
    x = _sample((3,), low, high)
    check_jvp(op, [x])
    grad = gt.grad(lambda t: gt.reduce_sum(op(t)))
    check_jvp(grad, [x], rtol=1e-4)


def test_jacobian_is_diagonal_of_the_derivative():
    x = np.array([0.5, 1.5, 2.5])
    jac = gt.jacobian(S.digamma)(gt.constant(x)).numpy()
    np.testing.assert_allclose(jac, np.diag(sp.polygamma(1, x)), rtol=1e-12)


@pytest.mark.parametrize("f", [S.gammaln, S.erf, lambda x: S.iv(1.0, x),
                               lambda x: S.xlogy(x, x + 1.0)])
def test_batching(f, check_batching):
    check_batching(f, [np.array([0.7, 1.3])])


def _loss(x):
    return gt.reduce_sum(sp.gammaln(x) * sp.erfc(x) + gt.math.xlog1py(x, x) + S.i0e(x) ** 2)


def test_compiled_equals_interpreted_to_second_order():
    x = np.array([0.4, 1.1, 2.3])
    results = []
    for compiled in (False, True):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            for _ in range(2):  # the second call runs the cached (compiled) backward
                t = gt.constant(x)
                with gt.GradientTape() as outer:
                    outer.watch(t)
                    with gt.GradientTape() as inner:
                        inner.watch(t)
                        y = _loss(t)
                    g = inner.gradient(y, t)
                    s = gt.reduce_sum(g * g)
                h = outer.gradient(s, t)
        results.append((g.numpy(), h.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    check_grads(_loss, [x], order=2)


def test_under_function():
    f = gt.function(lambda x: gt.grad(lambda t: gt.reduce_sum(sp.gammaln(t)))(x))
    x = np.array([0.6, 1.7])
    np.testing.assert_allclose(f(gt.constant(x)).numpy(), sp.psi(x), rtol=1e-12)


# --- erf and erfc in NumPy --------------------------------------------------------------

def test_numpy_erf_and_erfc_are_accurate_across_the_range():
    x = np.concatenate([np.linspace(-6, 27, 4001), [0.0, 1e-300, -1e-20, 0.46875, 4.0]])
    erf_ref = np.array([math.erf(v) for v in x])
    erfc_ref = np.array([math.erfc(v) for v in x])
    tiny = np.abs(erfc_ref) < 1e-300  # subnormal: relative accuracy means nothing there
    np.testing.assert_allclose(erf_numpy.erf(x), erf_ref, rtol=2e-15, atol=0)
    np.testing.assert_allclose(erf_numpy.erfc(x)[~tiny], erfc_ref[~tiny], rtol=2e-15, atol=0)
    near = np.abs(x) <= 6  # SciPy's erfc loses digits further in the tail; ours does not
    np.testing.assert_allclose(erf_numpy.erfc(x[near]), sp.erfc(x[near]), rtol=1e-14, atol=0)
    np.testing.assert_allclose(erf_numpy.erf(x), sp.erf(x), rtol=1e-14, atol=0)


def test_numpy_erf_keeps_dtype_and_special_values():
    assert erf_numpy.erf(np.float32(0.5)).dtype == np.float32
    out = erf_numpy.erfc(np.array([np.inf, -np.inf, np.nan, 30.0]))
    np.testing.assert_array_equal(out[[0, 1, 3]], [0.0, 2.0, 0.0])
    assert np.isnan(out[2])


_WITHOUT_SCIPY = """
import sys
sys.modules["scipy"] = None
import numpy as np
import gradtape as gt
x = gt.constant(np.array([-0.7, 0.2, 1.9]))
with gt.GradientTape() as tape:
    tape.watch(x)
    y = gt.reduce_sum(gt.math.erf(x) + gt.math.erfc(x) * x + gt.nn.gelu(x))
print(repr(y.numpy().item()), repr(tape.gradient(y, x).numpy().tolist()))
print(gt.math.xdivy(gt.constant(0.0), gt.constant(0.0)).numpy())
for call in (lambda: gt.math.lgamma(x), lambda: gt.math.special.bessel_j0(x)):
    try:
        call()
    except ImportError as e:
        print("ImportError:", e)
"""


def test_without_scipy_erf_works_and_others_name_the_extra():
    out = subprocess.run([sys.executable, "-c", _WITHOUT_SCIPY], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    x = np.array([-0.7, 0.2, 1.9])
    gelu = 0.5 * x * (1 + sp.erf(x / np.sqrt(2)))
    value = float(np.sum(sp.erf(x) + sp.erfc(x) * x + gelu))
    assert float(out[0].split()[0]) == pytest.approx(value, rel=1e-14)
    assert out[1] == "0.0"
    assert len(out) == 4 and all("pip install -e '.[scipy]'" in line for line in out[2:])


def test_import_gradtape_does_not_import_scipy():
    code = "import sys, gradtape; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


# --- TF's names ---------------------------------------------------------------------------

def test_tf_names_follow_tf_dtypes_and_errors():
    assert gt.math.lgamma(3.0).dtype == gt.float32  # a Python float is float32
    y = gt.math.xlogy(2.0, gt.constant([1.0, 3.0], gt.float64))  # takes the tensor's dtype
    assert y.dtype == gt.float64
    np.testing.assert_allclose(y.numpy(), [0.0, 2 * np.log(3.0)])
    with pytest.raises(gt.errors.InvalidArgumentError, match="floating-point"):
        gt.math.erf(gt.constant([1, 2]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="one dtype"):
        gt.math.igamma(gt.constant(1.0), gt.constant(1.0, gt.float64))


@pytest.mark.parametrize("name, reference", [
    ("erf", sp.erf), ("erfc", sp.erfc), ("lgamma", sp.gammaln), ("digamma", sp.digamma),
    ("ndtr", sp.ndtr), ("log_ndtr", sp.log_ndtr), ("bessel_i0", sp.i0),
    ("bessel_i0e", sp.i0e), ("bessel_i1", sp.i1), ("bessel_i1e", sp.i1e),
])
def test_tf_unary_names(name, reference):
    x = np.array([0.3, 0.8])
    np.testing.assert_allclose(getattr(gt.math, name)(gt.constant(x)).numpy(), reference(x),
                               rtol=1e-13)


def test_tf_special_namespace():
    x = np.array([0.3, 0.8])
    pairs = {"bessel_j0": sp.j0, "bessel_y1": sp.y1, "bessel_k1e": sp.k1e, "dawsn": sp.dawsn,
             "expint": sp.expi, "spence": sp.spence}
    for name, reference in pairs.items():
        got = getattr(gt.math.special, name)(gt.constant(x)).numpy()
        np.testing.assert_allclose(got, reference(x), rtol=1e-13, err_msg=name)
    assert gt.math.special.bessel_i0 is gt.math.bessel_i0


def test_tf_binary_names_and_lbeta():
    a, x = np.array([1.5, 2.5]), np.array([0.4, 0.7])
    c = gt.constant
    np.testing.assert_allclose(gt.math.igamma(c(a), c(x)).numpy(), sp.gammainc(a, x))
    np.testing.assert_allclose(gt.math.igammac(c(a), c(x)).numpy(), sp.gammaincc(a, x))
    np.testing.assert_allclose(gt.math.betainc(c(a), c(a), c(x)).numpy(), sp.betainc(a, a, x))
    n = np.array([1.0, 2.0])
    np.testing.assert_allclose(gt.math.polygamma(c(n), c(x)).numpy(), sp.polygamma(n, x))
    np.testing.assert_allclose(gt.math.zeta(c(a + 1), c(x)).numpy(), sp.zeta(a + 1, x))
    m = np.array([[0.5, 1.5, 2.0], [1.0, 1.0, 3.0]])
    expected = np.sum(sp.gammaln(m), -1) - sp.gammaln(np.sum(m, -1))
    np.testing.assert_allclose(gt.math.lbeta(c(m)).numpy(), expected, rtol=1e-13)
    check_grads(gt.math.lbeta, [m], order=2)


def test_exact_gelu_is_tfs_default():
    x = np.array([-2.0, -0.3, 0.4, 1.7])
    expected = 0.5 * x * (1 + sp.erf(x / np.sqrt(2)))
    np.testing.assert_allclose(gt.nn.gelu(gt.constant(x)).numpy(), expected, rtol=1e-14)
    check_grads(gt.nn.gelu, [x], order=2)
