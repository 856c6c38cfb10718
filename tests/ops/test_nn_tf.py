"""TF's moments, gelu, dropout, l2_normalize, clip_by_norm and clip_by_global_norm:
values against closed forms and TF's documented examples, derivatives against finite
differences (float64, two orders, forward mode), jacobians, and compiled against
interpreted backwards."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(12)


# --- moments -----------------------------------------------------------------------------

@pytest.mark.parametrize("axes, keepdims", [([0], False), ([0, 2], False), ([1], True),
                                            ([-1], False), ([0, 1, 2], True)])
def test_moments_values_and_shapes(axes, keepdims):
    x = rng.standard_normal((2, 3, 4))
    mean, var = gt.nn.moments(x, axes, keepdims=keepdims)
    ax = tuple(axes)
    np.testing.assert_allclose(mean.numpy(), x.mean(ax, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), x.var(ax, keepdims=keepdims), rtol=1e-12)
    assert mean.dtype == var.dtype == np.float64


def test_moments_float16_is_computed_in_float32():
    x = np.full((4000,), 60.0, np.float16)  # the float16 sum overflows (max 65504)
    mean, var = gt.nn.moments(x, [0])
    assert mean.dtype == var.dtype == np.float16
    assert float(mean) == 60.0 and float(var) == 0.0


@pytest.mark.parametrize("axes", [[0], [1], [0, 1]])
def test_moments_derivatives(axes, check_jvp):
    x = rng.standard_normal((3, 4))
    # Second order too: the variance's Hessian is the true one (TF's stop_gradient is not).
    check_grads(lambda t: gt.nn.moments(t, axes)[1], [x], order=2)
    check_grads(lambda t: gt.nn.moments(t, axes)[0] * 2.0, [x], order=2)
    check_jvp(lambda t: gt.nn.moments(t, axes)[1], [x])


def test_variance_hessian_in_closed_form():
    # var = mean((x - mean)^2): Hessian 2/n (I - 1/n), which stopping the mean would break.
    n = 4
    hess = gt.hessian(lambda t: gt.nn.moments(t, [0])[1])(gt.constant(rng.standard_normal(n)))
    np.testing.assert_allclose(hess.numpy(), 2 / n * (np.eye(n) - 1 / n), atol=1e-12)


# --- gelu --------------------------------------------------------------------------------

def test_gelu_tf_doc_example():
    x = gt.constant([-3.0, -1.0, 0.0, 1.0, 3.0])
    y = gt.nn.gelu(x, approximate=True)
    # TF's documented float32 values (its -0.00363752 differs in the float32 rounding).
    np.testing.assert_allclose(y.numpy(), [-0.00363752, -0.15880796, 0.0, 0.841192,
                                           2.9963627], rtol=1e-6, atol=1e-6)
    assert y.dtype == np.float32
    x64 = np.linspace(-5, 5, 21)
    closed = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
    np.testing.assert_allclose(gt.nn.gelu(x64, approximate=True).numpy(), closed,
                               rtol=1e-12, atol=1e-15)


def test_gelu_derivatives(check_jvp):
    x = rng.standard_normal((3, 4)) * 2
    check_grads(lambda t: gt.nn.gelu(t, approximate=True), [x], order=2)
    check_jvp(lambda t: gt.nn.gelu(t, approximate=True), [x])


def test_gelu_exact_is_the_default_and_integer_inputs_raise_clearly(check_jvp):
    y = gt.nn.gelu(gt.constant([-3.0, -1.0, 0.0, 1.0, 3.0]))
    # TF's documented float32 values of the exact (erf) form; at -3 TF's float32
    # 1 + erf(x) cancels (-0.00404951), the float64 value is -0.0040496942.
    np.testing.assert_allclose(y.numpy(), [-0.0040496942, -0.15865529, 0.0, 0.8413447,
                                           2.9959507], rtol=1e-6, atol=2e-7)
    assert y.dtype == np.float32
    check_jvp(gt.nn.gelu, [rng.standard_normal(5)])
    with pytest.raises(ValueError, match="floating-point"):
        gt.nn.gelu(gt.constant([1, 2]), approximate=True)


# --- l2_normalize ------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_l2_normalize_values(axis):
    x = rng.standard_normal((3, 4))
    ax = None if axis is None else tuple(np.atleast_1d(axis))
    expected = x / np.sqrt(np.sum(x * x, axis=ax, keepdims=True))
    np.testing.assert_allclose(gt.nn.l2_normalize(x, axis=axis).numpy(), expected,
                               rtol=1e-12)


def test_l2_normalize_of_zero_uses_epsilon():
    x = gt.constant([0.0, 0.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.nn.l2_normalize(x, epsilon=1e-4)
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0])
    # Below epsilon, y = x / sqrt(epsilon): the gradient is 100, finite.
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [100.0, 100.0], rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 1])
def test_l2_normalize_derivatives(axis, check_jvp):
    x = rng.standard_normal((3, 4))
    check_grads(lambda t: gt.nn.l2_normalize(t, axis=axis), [x], order=2)
    check_jvp(lambda t: gt.nn.l2_normalize(t, axis=axis), [x])


# --- dropout -----------------------------------------------------------------------------

def test_dropout_scales_kept_values_and_is_seeded():
    x = gt.constant(rng.standard_normal((50, 40)).astype(np.float32))
    gt.random.set_seed(7)
    first = gt.nn.dropout(x, 0.25, seed=3).numpy()
    gt.random.set_seed(7)
    again = gt.nn.dropout(x, 0.25, seed=3).numpy()
    np.testing.assert_array_equal(first, again)
    kept = first != 0
    np.testing.assert_allclose(first[kept], x.numpy()[kept] / 0.75, rtol=1e-6)
    assert 0.2 < 1 - kept.mean() < 0.3
    assert first.dtype == np.float32


def test_dropout_noise_shape_drops_whole_rows():
    y = gt.nn.dropout(gt.ones([30, 5]), 0.5, noise_shape=[30, 1]).numpy()
    assert all(len(set(row)) == 1 for row in y)
    assert set(np.unique(y)) <= {0.0, 2.0}
    y = gt.nn.dropout(gt.ones([30, 5]), 0.5, noise_shape=[None, 1]).numpy()
    assert y.shape == (30, 5) and all(len(set(row)) == 1 for row in y)


def test_dropout_gradient_is_the_mask_times_the_scale():
    x = gt.constant(rng.standard_normal((6, 7)))
    gt.random.set_seed(1)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.nn.dropout(x, 0.4)
    grad = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(grad, np.where(y.numpy() != 0, 1 / 0.6, 0.0), rtol=1e-12)


def test_dropout_rate_zero_is_identity_and_tensor_rate_works():
    x = gt.constant([1.0, 2.0])
    assert gt.nn.dropout(x, 0.0) is x
    y = gt.nn.dropout(gt.ones([1000]), gt.constant(0.5)).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6


@pytest.mark.parametrize("rate", [1.0, -0.1, 1.5])
def test_dropout_rate_out_of_range_raises(rate):
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        gt.nn.dropout(gt.ones([2]), rate)


def test_dropout_bad_inputs_raise():
    with pytest.raises(ValueError, match="floating-point"):
        gt.nn.dropout(gt.constant([1, 2]), 0.5)
    with pytest.raises(ValueError, match="broadcast"):
        gt.nn.dropout(gt.ones([3, 4]), 0.5, noise_shape=[2, 4])
    with pytest.raises(ValueError, match="scalar"):
        gt.nn.dropout(gt.ones([3]), gt.constant([0.5, 0.5]))


# --- clip_by_norm and clip_by_global_norm ------------------------------------------------

def test_clip_by_norm_tf_doc_example():
    t = gt.constant([[1.0, 2.0, 3.0, 4.0, 5.0]])
    clipped = gt.clip_by_norm(t, 2.0).numpy()
    np.testing.assert_allclose(clipped, [[0.26967996, 0.5393599, 0.80903983, 1.0787199,
                                          1.3483998]], rtol=1e-6)
    np.testing.assert_array_equal(gt.clip_by_norm(t, 100.0).numpy(), t.numpy())


def test_clip_by_norm_per_row_and_zero_gradient_of_zero():
    x = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(gt.clip_by_norm(x, 1.0, axes=[1]).numpy(),
                               [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], rtol=1e-12)
    z = gt.constant([0.0, 0.0])
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = gt.clip_by_norm(z, 1.0)
    np.testing.assert_array_equal(tape.gradient(y, z).numpy(), [1.0, 1.0])  # no nan


@pytest.mark.parametrize("clip", [0.5, 50.0])  # clipped, and left alone
def test_clip_by_norm_derivatives(clip, check_jvp):
    x = rng.standard_normal((3, 4))
    check_grads(lambda t: gt.clip_by_norm(t, clip), [x], order=2)
    check_grads(lambda t: gt.clip_by_norm(t, clip, axes=[0]), [x], order=2)
    check_jvp(lambda t: gt.clip_by_norm(t, clip), [x])


def test_clip_by_global_norm_values():
    a, b = np.array([3.0, 0.0]), np.array([[0.0], [4.0]])
    (ca, none, cb), norm = gt.clip_by_global_norm([a, None, b], 2.5)
    assert none is None and float(norm) == 5.0
    np.testing.assert_allclose(ca.numpy(), a / 2, rtol=1e-12)
    np.testing.assert_allclose(cb.numpy(), b / 2, rtol=1e-12)
    (same,), norm = gt.clip_by_global_norm([a], 10.0)
    np.testing.assert_allclose(same.numpy(), a, rtol=1e-12)
    (given,), norm = gt.clip_by_global_norm([a], 1.0, use_norm=gt.constant(6.0, gt.float64))
    np.testing.assert_allclose(given.numpy(), a / 6, rtol=1e-12)
    assert float(norm) == 6.0


def test_clip_by_global_norm_of_infinite_norm_is_nan():
    with np.errstate(invalid="ignore"):  # inf - inf, on purpose (TF's nan scale)
        (clipped,), norm = gt.clip_by_global_norm([np.array([np.inf, 1.0])], 1.0)
    assert np.isinf(float(norm)) and np.isnan(clipped.numpy()).all()


@pytest.mark.parametrize("clip", [0.5, 50.0])
def test_clip_by_global_norm_derivatives(clip):
    a, b = rng.standard_normal(3), rng.standard_normal((2, 2))
    check_grads(lambda s, t: gt.clip_by_global_norm([s, t], clip)[0][1], [a, b], order=2)
    check_grads(lambda s, t: gt.clip_by_global_norm([s, t], clip)[1], [a, b], order=2)


def test_clipping_bad_inputs_raise():
    with pytest.raises(TypeError, match="sequence"):
        gt.clip_by_global_norm(gt.constant([1.0]), 1.0)
    with pytest.raises(ValueError, match="scalar"):
        gt.clip_by_norm(gt.constant([1.0, 2.0]), np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating-point"):
        gt.clip_by_norm(gt.constant([1, 2]), 1.0)
    assert gt.clip_by_value(gt.constant([-2.0, 0.5, 3.0]), -1.0, 1.0,
                            name="c").numpy().tolist() == [-1.0, 0.5, 1.0]


# --- the composites under jacobians, @gt.function, and compiled vs interpreted -----------

def _all_of_them(x):
    mean, var = gt.nn.moments(x, [0])
    return (gt.nn.gelu(x, approximate=True) + gt.nn.l2_normalize(x, axis=1)
            + gt.clip_by_norm(x, 1.0, axes=[1]) + gt.clip_by_global_norm([x], 2.0)[0][0]
            + mean * var)


def _gradient(x, u):
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = _all_of_them(x)
    return tape.gradient(y, x, output_gradients=u).numpy()


def test_compiled_backward_equals_interpreted():
    x, u = gt.constant(rng.standard_normal((3, 4))), gt.constant(rng.standard_normal((3, 4)))
    with gt.config(compile=False):
        interpreted = _gradient(x, u)
    with gt.config(compile=True, compile_after=1):
        compiled = [_gradient(x, u) for _ in range(3)]
    for c in compiled:
        np.testing.assert_allclose(c, interpreted, rtol=1e-12, atol=1e-14)


def test_jacobian_and_function_agree_with_eager():
    x = gt.constant(rng.standard_normal((2, 3)))
    jac = gt.jacobian(_all_of_them)(x).numpy()
    eps = 1e-6
    fd = np.stack([(np.asarray(_all_of_them(gt.constant(x.numpy() + eps * e)))
                    - np.asarray(_all_of_them(gt.constant(x.numpy() - eps * e)))) / (2 * eps)
                   for e in np.eye(6).reshape(6, 2, 3)], axis=-1).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(jac, fd, rtol=1e-5, atol=1e-7)
    traced = gt.function(_all_of_them)
    np.testing.assert_allclose(traced(x).numpy(), _all_of_them(x).numpy(), rtol=1e-12)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = traced(x)
    u = gt.constant(rng.standard_normal((2, 3)))
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=u).numpy(),
                               _gradient(x, u), rtol=1e-10)
