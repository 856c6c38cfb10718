"""np.fmod (gt.truncatemod) and np.trunc / np.fix: C's remainder and rounding toward zero.
Values against NumPy; fmod's derivatives against finite differences to second order in
both operands, in forward mode, batched, and compiled vs interpreted."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

A = np.array([[5.5, -5.5, 5.5], [-5.5, 0.35, -2.45]])
B = np.array([2.1, -2.1, 0.7])


def test_values_follow_numpy():
    np.testing.assert_array_equal(np.fmod(gt.constant(A), gt.constant(B)).numpy(),
                                  np.fmod(A, B))
    np.testing.assert_array_equal(gt.truncatemod(A, B).numpy(), np.fmod(A, B))
    assert gt.math.truncatemod is gt.truncatemod
    np.testing.assert_array_equal(np.trunc(gt.constant(A / B)).numpy(), np.trunc(A / B))
    np.testing.assert_array_equal(np.fix(gt.constant(A / B)).numpy(), np.fix(A / B))


def test_gradients_are_one_and_minus_the_truncated_quotient():
    ga, gb = gt.grad(lambda a, b: np.sum(np.fmod(a, b)), argnums=(0, 1))(A, B)
    np.testing.assert_array_equal(ga.numpy(), np.ones_like(A))
    np.testing.assert_array_equal(gb.numpy(), -np.trunc(A / B).sum(axis=0))


def test_second_order_in_both_operands():
    check_grads(lambda a, b: np.fmod(a * a, b * b + 0.3), [A * 0.5, B], order=2)


def test_forward_mode(check_jvp):
    check_jvp(lambda a, b: np.fmod(a * a, b), [A * 0.5, B])


def test_batching(check_batching):
    check_batching(lambda a, b: gt.truncatemod(a, b), [A, B])


def test_compiled_equals_interpreted():
    def hessian_of_a():
        return np.asarray(gt.hessian(lambda a: gt.reduce_sum(np.fmod(a ** 3, B) ** 2))(A))

    compiled = hessian_of_a()
    with gt.config(compile=False):
        np.testing.assert_allclose(hessian_of_a(), compiled, rtol=1e-12)


def test_trunc_has_no_gradient_like_floor():
    x = gt.constant(A)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = np.trunc(x)
    assert tape.gradient(y, x) is None
    with pytest.raises(TypeError, match="immutable"):
        np.fix(x, out=np.empty_like(A))
