"""``gt.nn.sparse_softmax_cross_entropy_with_logits`` as one primitive: its backward
reads as the textbook ``(softmax(logits) - one_hot(labels)) / n``, its values are those of
``-log_softmax(logits)[..., label]`` (the composite it used to be), and its higher
derivatives, forward mode, jacobians and ``@gt.function`` agree with finite differences."""

import re

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads


def picked(labels, logits):
    """The composite: log_softmax, then the label's entry picked by take_along_axis."""
    log_probs = gt.nn.log_softmax(logits)
    labels = gt.constant(labels)
    return -gt.take_along_axis(log_probs, gt.expand_dims(labels, -1), axis=-1)[..., 0]


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _one_hot(labels, depth):
    return np.eye(depth)[labels]


def _loss_and_grad(loss_fn, labels, z):
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
    assert re.search(r"= float32_0p125 \* \(softmax_\d+ - one_hot_\d+\)", source), source
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
    loss, grad = _loss_and_grad(gt.nn.sparse_softmax_cross_entropy_with_logits, labels, z)
    old_loss, old_grad = _loss_and_grad(picked, labels, z)
    np.testing.assert_array_equal(loss, old_loss)
    assert np.isfinite(grad).all() and grad.dtype == dtype
    np.testing.assert_allclose(grad, old_grad, rtol=rtol, atol=rtol / 6)
    expected = (_softmax(z.astype(np.float64)) - _one_hot(labels, 4)) / 6
    np.testing.assert_allclose(grad, expected, rtol=rtol, atol=rtol / 6)


def test_derivatives_against_finite_differences():
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


def test_forward_mode():
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
