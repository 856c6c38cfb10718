"""Convolution (ops/convolution.py): ``np.convolve``/``np.correlate`` on tensors (no SciPy
needed) and ``gt.scipy.signal.convolve``/``correlate`` against SciPy's; gradients in both
inputs to second order, forward mode, Jacobians, batching, compiled against interpreted."""

import numpy as np
import pytest
from scipy_testing import (
    assert_compiled_equals_interpreted,
    assert_forward_over_reverse,
    assert_jacobian_matches_differences,
)

import gradtape as gt
from gradtape.ops.convolution import convolve_p
from gradtape.ops.registry import bind
from gradtape.testing import check_grads

MODES = ["full", "same", "valid"]
LENGTHS = [(5, 3), (3, 5), (4, 4), (1, 3)]


def _rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n1,n2", LENGTHS, ids=str)
def test_numpy_convolve_and_correlate_values(mode, n1, n2):
    rng = _rng()
    a, v = rng.standard_normal(n1), rng.standard_normal(n2)
    np.testing.assert_allclose(np.convolve(gt.constant(a), gt.constant(v), mode).numpy(),
                               np.convolve(a, v, mode), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.correlate(gt.constant(a), gt.constant(v), mode).numpy(),
                               np.correlate(a, v, mode), rtol=1e-12, atol=1e-14)


def test_numpy_correlate_of_complex_inputs_conjugates_the_second():
    rng = _rng()
    a = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    v = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    for mode in MODES:
        np.testing.assert_allclose(np.correlate(gt.constant(a), gt.constant(v), mode).numpy(),
                                   np.correlate(a, v, mode), rtol=1e-12)
        np.testing.assert_allclose(np.correlate(gt.constant(v), gt.constant(a), mode).numpy(),
                                   np.correlate(v, a, mode), rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n1,n2", [(5, 3), (3, 5)], ids=str)
def test_numpy_convolve_gradients_to_second_order(mode, n1, n2):
    rng = _rng()
    check_grads(lambda a, v: np.convolve(a, v, mode), [rng.standard_normal(n1),
                                                       rng.standard_normal(n2)], order=2)
    check_grads(lambda a, v: np.correlate(a, v, mode), [rng.standard_normal(n1),
                                                        rng.standard_normal(n2)], order=1)


def test_numpy_convolve_errors():
    with pytest.raises(ValueError, match="mode"):
        np.convolve(gt.constant([1.0, 2.0]), gt.constant([1.0]), "middle")
    with pytest.raises(ValueError, match="empty"):
        np.convolve(gt.constant(np.zeros(0)), gt.constant([1.0]))


@pytest.mark.parametrize("mode", ["full", "valid"])
def test_primitive_rules(mode, check_jvp, check_batching):
    rng = _rng()
    x, k = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))

    def f(x, k):
        return bind(convolve_p, x, k, mode=mode, batch_dims=0)

    check_jvp(f, [x, k])
    check_batching(f, [x, k])
    check_batching(f, [x, k], batched=[True, False])
    check_batching(f, [x, k], batched=[False, True])
    assert_compiled_equals_interpreted(f, [x, k])
    assert_jacobian_matches_differences(lambda x: f(x, k), x)
    assert_forward_over_reverse(lambda x: gt.square(f(x, k)), x)


def test_batched_gradients_sum_over_broadcast_batch_dims():
    rng = _rng()
    x, k = rng.standard_normal((3, 6)), rng.standard_normal((1, 2))
    check_grads(lambda x, k: bind(convolve_p, x, k, mode="valid", batch_dims=1), [x, k],
                order=2)


# --- scipy.signal --------------------------------------------------------------------------

SHAPES = [((5,), (3,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 2)),
          ((4, 2), (2, 3))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1,s2", SHAPES, ids=str)
def test_scipy_signal_values(mode, s1, s2):
    signal = pytest.importorskip("scipy.signal")
    rng = _rng()
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    try:
        expected = signal.convolve(a, b, mode)
    except ValueError:
        with pytest.raises(ValueError, match="at least as large"):
            gt.scipy.signal.convolve(a, b, mode)
        return
    np.testing.assert_allclose(gt.scipy.signal.convolve(a, b, mode).numpy(), expected,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(gt.scipy.signal.correlate(a, b, mode).numpy(),
                               signal.correlate(a, b, mode), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", MODES)
def test_scipy_signal_gradients(mode):
    rng = _rng()
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    check_grads(lambda a, b: gt.scipy.signal.convolve(a, b, mode), [a, b], order=2)
    check_grads(lambda a, b: gt.scipy.signal.correlate(b, a, mode), [a, b], order=1)


def test_scipy_signal_complex_gradient_follows_the_conjugate_convention():
    """d/dz sum |conv(z, k)|^2 as TF defines it: 2 * conj-correlation, checked against the
    real and imaginary finite differences."""
    rng = _rng()
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    k = rng.standard_normal(2) + 1j * rng.standard_normal(2)

    def loss(z):
        y = gt.scipy.signal.convolve(z, gt.constant(k))
        return gt.reduce_sum(gt.real(y * gt.conj(y)))

    zc = gt.constant(z)
    with gt.GradientTape() as tape:
        tape.watch(zc)
        value = loss(zc)
    g = tape.gradient(value, zc).numpy()
    eps = 1e-6
    expected = np.zeros_like(z)
    for i in range(4):
        e = np.zeros(4)
        e[i] = eps
        d_re = (float(loss(gt.constant(z + e))) - float(loss(gt.constant(z - e)))) / (2 * eps)
        d_im = (float(loss(gt.constant(z + 1j * e))) -
                float(loss(gt.constant(z - 1j * e)))) / (2 * eps)
        expected[i] = d_re + 1j * d_im
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    assert float(value) == pytest.approx(value.numpy())
    assert float(np.sum(np.abs(np.convolve(z, k)) ** 2)) == pytest.approx(float(value))


def test_scipy_signal_rank_mismatch_raises():
    with pytest.raises(ValueError, match="same dimensionality"):
        gt.scipy.signal.convolve(np.ones((2, 2)), np.ones(2))


# --- axes and dot_axes (autograd's generalization) -------------------------------------------

def test_convolve_axes_outer_product_of_other_axes():
    rng = _rng()
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((4, 2))
    for mode in MODES:
        got = gt.scipy.signal.convolve(a, b, axes=([1], [1]), mode=mode).numpy()
        want = np.array([[np.convolve(a[i], b[j], mode) for j in range(4)] for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_convolve_dot_axes_contract():
    rng = _rng()
    a, b = rng.standard_normal((3, 6, 2)), rng.standard_normal((2, 3, 4))
    # a's axis 0 with b's axis 1 summed; a's axis 2 and b's axis 0 kept; 6 and 4 convolved.
    got = gt.scipy.signal.convolve(a, b, axes=([1], [2]), dot_axes=([0], [1]),
                                   mode="valid").numpy()
    want = np.array([[sum(np.convolve(a[d, :, i], b[j, d, :], "valid") for d in range(3))
                      for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    assert gt.scipy.signal.convolve(a, b, axes=([], []), dot_axes=([0], [1])).shape == \
        (6, 2, 2, 4)


@pytest.mark.parametrize("mode", MODES)
def test_convolve_axes_gradients(mode):
    rng = _rng()
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    check_grads(lambda a, b: gt.scipy.signal.convolve(a, b, axes=([0], [1]), mode=mode),
                [a, b], order=2)
    check_grads(lambda a, b: gt.scipy.signal.convolve(a, b, axes=([1], [1]),
                                                      dot_axes=([0], [0]), mode=mode),
                [a, rng.standard_normal((4, 2))], order=1)
