"""nn's cross-entropies as primitives whose backwards read as the textbook:
``sigmoid_cross_entropy_with_logits``'s ``(sigmoid(z) - y) / n`` and
``sparse_softmax_cross_entropy_with_logits``'s ``(softmax(logits) - one_hot(labels)) / n``.
Their values are those of the composites they used to be (TF's stable sigmoid form
written out with wheres; log_softmax and take_along_axis) at any size of logits, and
every derivative order, forward mode, jacobians and ``@gt.function`` agree with finite
differences; bad arguments raise TF's errors."""

import re

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

EDGES = [0.0, -0.0, 1e-8, -1e-8, 0.5, -3.0, 20.0, -20.0, 50.0, -50.0, 1e4, -1e4]


def written_out(labels, logits):
    """TF's formula, ``where(z >= 0, z, 0) - z * y + log1p(exp(where(z >= 0, -z, z)))``."""
    nonneg = gt.greater_equal(logits, 0.0)
    relu_logits = gt.where(nonneg, logits, gt.zeros_like(logits))
    neg_abs = gt.where(nonneg, -logits, logits)
    return relu_logits - logits * labels + gt.math.log1p(gt.exp(neg_abs))


def _loss_and_grads(loss_fn, z, y):
    z, y = gt.constant(z), gt.constant(y)
    with gt.GradientTape() as tape:
        tape.watch([z, y])
        loss = gt.reduce_mean(loss_fn(y, z))
    dz, dy = tape.gradient(loss, [z, y])
    return loss.numpy(), dz.numpy(), dy.numpy()


def _sigmoid(z):
    """exp(z) / (1 + exp(z)), from the side where exp cannot overflow."""
    z = np.asarray(z)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def test_the_backward_reads_as_sigmoid_minus_labels():
    z = gt.constant(np.linspace(-2, 2, 8, dtype=np.float32))
    y = gt.constant((np.arange(8) % 2).astype(np.float32))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(z)
        loss = gt.reduce_mean(gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
    source = tape.inspect(loss, [z]).source
    assert "where" not in source
    assert "(sigmoid_impl(z) - y)" in source
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               (_sigmoid(z.numpy()) - y.numpy()) / 8, rtol=1e-6)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-15)])
@pytest.mark.parametrize("label", [0.0, 1.0, 0.25])
def test_values_are_those_of_the_written_out_form(dtype, rtol, label):
    """The same loss bitwise, and the same gradients to rounding, at z = 0, +-50, +-1e4."""
    z = np.array(EDGES, dtype)
    y = np.full(z.shape, label, dtype)
    loss, dz, dy = _loss_and_grads(gt.nn.sigmoid_cross_entropy_with_logits, z, y)
    old_loss, old_dz, old_dy = _loss_and_grads(written_out, z, y)
    np.testing.assert_array_equal(loss, old_loss)
    assert np.isfinite(dz).all() and dz.dtype == dtype
    scale = 1.0 / z.size  # the gradient's entries are at most 1/n
    np.testing.assert_allclose(dz, old_dz, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(dz, (_sigmoid(z.astype(np.float64)) - label) * scale,
                               rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(dy, old_dy, rtol=rtol)
    np.testing.assert_allclose(dy, -z * scale, rtol=rtol)


def test_the_kink_at_zero_follows_tf():
    """TF picks the z >= 0 branch at 0: 1 - y - 1/2 = sigmoid(0) - y."""
    _, dz, _ = _loss_and_grads(gt.nn.sigmoid_cross_entropy_with_logits,
                               np.zeros(2), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(dz, [0.25, -0.25])


def test_sigmoid_derivatives_against_finite_differences():
    rng = np.random.default_rng(0)
    z, y = rng.standard_normal((3, 4)) * 3, rng.uniform(0, 1, (3, 4))
    check_grads(lambda y, z: gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
                [y, z], order=3)


def test_hessian_is_sigmoid_times_one_minus_sigmoid():
    z0 = np.array([-50.0, -2.0, 0.0, 0.7, 50.0])
    z, y = gt.constant(z0), gt.constant([0.0, 1.0, 0.5, 1.0, 0.0])
    with gt.GradientTape() as outer:
        outer.watch(z)
        with gt.GradientTape() as inner:
            inner.watch(z)
            loss = gt.reduce_sum(gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
        dz = inner.gradient(loss, z)
    hessian = outer.jacobian(dz, z).numpy()
    # sigmoid(z) * sigmoid(-z) is exact; the rule's y * (1 - y) (gt.nn.sigmoid's) rounds
    # 1.9e-22 to 0 at z = 50, as the sigmoid's own Hessian does: within rounding of 0.25.
    exact = _sigmoid(z0) * _sigmoid(-z0)
    np.testing.assert_allclose(hessian, np.diag(exact), rtol=1e-12, atol=1e-17)


def test_sigmoid_forward_mode():
    z0, y0 = np.array([-3.0, 0.0, 2.5]), np.array([0.2, 1.0, 0.0])
    tz, ty = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -1.0])
    z, y = gt.constant(z0), gt.constant(y0)
    with gt.autodiff.ForwardAccumulator([z, y], [gt.constant(tz), gt.constant(ty)]) as acc:
        loss = gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z)
    expected = tz * (_sigmoid(z0) - y0) - ty * z0
    np.testing.assert_allclose(acc.jvp(loss).numpy(), expected, rtol=1e-12)
    eps = 1e-6
    plus = gt.nn.sigmoid_cross_entropy_with_logits(labels=y0 + eps * ty, logits=z0 + eps * tz)
    minus = gt.nn.sigmoid_cross_entropy_with_logits(labels=y0 - eps * ty, logits=z0 - eps * tz)
    np.testing.assert_allclose(expected, (plus.numpy() - minus.numpy()) / (2 * eps), rtol=1e-7)


def test_under_gt_function_and_compiled():
    rng = np.random.default_rng(1)
    features = rng.standard_normal((16, 3))
    y = (rng.random(16) > 0.5).astype(np.float64)
    w = gt.Variable(np.array([0.3, -1.0, 2.0]), name="w")

    @gt.function
    def step(features, y):
        with gt.GradientTape() as tape:
            z = gt.linalg.matvec(features, w)
            loss = gt.reduce_mean(gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
        return tape.gradient(loss, w)

    expected = features.T @ (_sigmoid(features @ w.numpy()) - y) / 16
    with gt.config(compile_after=1):
        for _ in range(3):  # the traced call, then compiled code
            np.testing.assert_allclose(step(features, y).numpy(), expected, rtol=1e-12)


def test_jacobian_is_diagonal():
    z0, y0 = np.array([-1.0, 0.0, 4.0]), np.array([1.0, 0.0, 0.5])
    z = gt.constant(z0)
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.nn.sigmoid_cross_entropy_with_logits(labels=y0, logits=z)
    np.testing.assert_allclose(tape.jacobian(loss, z).numpy(), np.diag(_sigmoid(z0) - y0),
                               rtol=1e-12)


def test_keras_binary_crossentropy_from_logits_shares_the_rule():
    z0, y0 = np.array([[-1.0, 0.0], [4.0, 30.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    z = gt.constant(z0)
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.keras.losses.BinaryCrossentropy(from_logits=True)(y0, z)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), (_sigmoid(z0) - y0) / 4,
                               rtol=1e-12, atol=1e-16)  # sigmoid(30) - 1 cancels


def test_labels_of_another_shape_raise_tfs_error():
    with pytest.raises(ValueError, match=r"must have the same shape, received \(\(2, 3\) vs "
                                         r"\(3,\)\)"):
        gt.nn.sigmoid_cross_entropy_with_logits(labels=np.ones(3), logits=np.ones((2, 3)))


def test_a_missing_argument_raises_tfs_error():
    with pytest.raises(ValueError, match="Both labels and logits must be provided"):
        gt.nn.sigmoid_cross_entropy_with_logits(logits=np.ones(3))


def test_tf_dtype_promotion_raises_on_mixed_floats():
    with gt.config(dtype_promotion="tf"), pytest.raises(gt.errors.InvalidArgumentError):
        gt.nn.sigmoid_cross_entropy_with_logits(labels=gt.constant([1.0], gt.float64),
                                                logits=gt.constant([0.5], gt.float32))


# --- sparse softmax cross-entropy ----------------------------------------------------

def picked_composite(labels, logits):
    """The composite: log_softmax, then the label's entry picked by take_along_axis."""
    log_probs = gt.nn.log_softmax(logits)
    labels = gt.constant(labels)
    return -gt.take_along_axis(log_probs, gt.expand_dims(labels, -1), axis=-1)[..., 0]


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _one_hot(labels, depth):
    return np.eye(depth)[labels]


def _sparse_loss_and_grad(loss_fn, labels, z):
    z = gt.constant(z)
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.reduce_mean(loss_fn(labels, z))
    return loss.numpy(), tape.gradient(loss, z).numpy()


def test_the_backward_reads_as_softmax_minus_one_hot():
    rng = np.random.default_rng(0)
    logits = gt.constant(rng.standard_normal((8, 3)).astype(np.float32))
    labels = gt.constant(np.array([0, 2, 1, 1, 0, 2, 2, 0]))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    source = tape.inspect(loss, [logits]).source
    # NumPy 1's value-based casting keeps the mean's 1/8 an input, so it is not folded.
    scale = "float32_0p125" if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else r"\w+"
    assert re.search(rf"= {scale} \* \(softmax_\d+ - one_hot_\d+\)", source), source
    assert "add.at" not in source and "zeros(" not in source
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(),
                               (_softmax(logits.numpy()) - _one_hot(labels.numpy(), 3)) / 8,
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("scale", [1.0, 50.0, 1e4])
def test_values_are_those_of_the_composite(dtype, rtol, scale):
    """The same loss bitwise and the same gradient to rounding, for logits up to 1e4."""
    rng = np.random.default_rng(1)
    z = (rng.standard_normal((6, 4)) * scale).astype(dtype)
    labels = np.array([0, 3, 1, 1, 2, 0])
    loss, grad = _sparse_loss_and_grad(gt.nn.sparse_softmax_cross_entropy_with_logits, labels, z)
    old_loss, old_grad = _sparse_loss_and_grad(picked_composite, labels, z)
    np.testing.assert_array_equal(loss, old_loss)
    assert np.isfinite(grad).all() and grad.dtype == dtype
    np.testing.assert_allclose(grad, old_grad, rtol=rtol, atol=rtol / 6)
    expected = (_softmax(z.astype(np.float64)) - _one_hot(labels, 4)) / 6
    np.testing.assert_allclose(grad, expected, rtol=rtol, atol=rtol / 6)


def test_sparse_derivatives_against_finite_differences():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((2, 3, 4)) * 2
    labels = np.array([[0, 3, 1], [2, 2, 0]])
    check_grads(lambda z: gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z), [z],
                order=3)


def test_hessian_is_diag_p_minus_p_p_transposed():
    z0 = np.array([0.3, -1.0, 2.0, 0.0])
    z = gt.constant(z0)
    with gt.GradientTape() as outer:
        outer.watch(z)
        with gt.GradientTape() as inner:
            inner.watch(z)
            loss = gt.nn.sparse_softmax_cross_entropy_with_logits(np.array(2), z)
        dz = inner.gradient(loss, z)
    p = _softmax(z0)
    np.testing.assert_allclose(dz.numpy(), p - _one_hot(2, 4), rtol=1e-12)
    np.testing.assert_allclose(outer.jacobian(dz, z).numpy(), np.diag(p) - np.outer(p, p),
                               rtol=1e-12, atol=1e-17)


def test_sparse_forward_mode():
    rng = np.random.default_rng(3)
    z0, t0 = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    labels = np.array([4, 0, 2])
    z = gt.constant(z0)
    with gt.autodiff.ForwardAccumulator(z, gt.constant(t0)) as acc:
        loss = gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z)
    expected = ((_softmax(z0) - _one_hot(labels, 5)) * t0).sum(axis=-1)
    np.testing.assert_allclose(acc.jvp(loss).numpy(), expected, rtol=1e-12)
    eps = 1e-6
    plus = gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z0 + eps * t0).numpy()
    minus = gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z0 - eps * t0).numpy()
    np.testing.assert_allclose(expected, (plus - minus) / (2 * eps), rtol=1e-7)


def test_jacobian_batches_the_rows():
    rng = np.random.default_rng(4)
    z0 = rng.standard_normal((3, 4))
    labels = np.array([1, 0, 3])
    z = gt.constant(z0)
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z)
    jacobian = tape.jacobian(loss, z).numpy()  # (3, 3, 4): row i depends on row i only
    rows = _softmax(z0) - _one_hot(labels, 4)
    expected = np.zeros((3, 3, 4))
    expected[np.arange(3), np.arange(3)] = rows
    np.testing.assert_allclose(jacobian, expected, rtol=1e-12, atol=1e-17)


def test_under_gt_function_new_labels_no_retrace():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3))
    w = gt.Variable(rng.standard_normal((3, 4)), name="w")

    @gt.function
    def step(x, labels):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(
                labels, gt.matmul(x, w)))
        return tape.gradient(loss, w)

    with gt.config(compile_after=1):
        for seed in range(3):
            labels = np.random.default_rng(seed).integers(0, 4, 8)
            expected = x.T @ (_softmax(x @ w.numpy()) - _one_hot(labels, 4)) / 8
            np.testing.assert_allclose(step(x, labels).numpy(), expected, rtol=1e-12)
    assert step.experimental_get_tracing_count() == 1


def test_labels_out_of_range_still_raise_tfs_error():
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"outside the valid range"):
        gt.nn.sparse_softmax_cross_entropy_with_logits(np.array([3]), np.zeros((1, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5,), (7, 4), (2, 3, 6)])
def test_each_loss_on_numpy_is_the_masked_form_bitwise(dtype, shape):
    """NumPy logits take the label's entry; other array kinds sum a mask: the losses of
    each row are the same to the bit (and TF's for its docs' logits, below)."""
    rng = np.random.default_rng(3)
    z = (rng.standard_normal(shape) * 8).astype(dtype)
    labels = rng.integers(0, shape[-1], shape[:-1])
    got = gt.nn.sparse_softmax_cross_entropy_with_logits(labels, z).numpy()
    shifted = z - z.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    hot = np.expand_dims(labels, -1) == np.arange(shape[-1])
    masked = -np.sum(np.where(hot, log_probs, np.zeros_like(log_probs)), axis=-1)
    assert got.dtype == dtype and got.shape == shape[:-1]
    np.testing.assert_array_equal(got, masked)


def test_losses_of_tfs_doc_logits():
    logits = np.array([[4.0, 2.0, 1.0], [0.0, 5.0, 1.0]], np.float32)
    got = gt.nn.sparse_softmax_cross_entropy_with_logits(np.array([0, 1]), logits)
    np.testing.assert_allclose(got.numpy(), [0.16984602, 0.02474489], rtol=3e-6)  # float32 rounding
