"""np.fmax / np.fmin (gt.fmax, gt.fmin): NumPy's NaN-ignoring maximum and minimum, whose
gradient goes to the operand selected (the one that is not NaN)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

A = np.array([1.0, np.nan, 3.0, np.nan, -0.5])
B = np.array([2.0, 0.5, np.nan, np.nan, -1.5])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_values_ignore_nan_as_numpy(name):
    reference = getattr(np, name)
    np.testing.assert_array_equal(reference(gt.constant(A), B).numpy(), reference(A, B))
    np.testing.assert_array_equal(getattr(gt, name)(A, gt.constant(B)).numpy(), reference(A, B))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_gradient_goes_to_the_selected_operand(name):
    reference = getattr(np, name)
    ga, gb = gt.grad(lambda a, b: np.sum(reference(a, b)), argnums=(0, 1))(A, B)
    picked_a = reference(A, B) == A
    both_nan = np.isnan(A) & np.isnan(B)
    np.testing.assert_array_equal(ga.numpy(), (picked_a | both_nan).astype(float))
    np.testing.assert_array_equal(gb.numpy(), 1.0 - (picked_a | both_nan).astype(float))
    _, tangent = gt.jvp(lambda a: reference(a, B), (A,), (np.full_like(A, 2.0),))
    np.testing.assert_array_equal(tangent.numpy(), 2.0 * (picked_a | both_nan))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_second_order_forward_mode_and_batching(name, check_jvp, check_batching):
    op = getattr(np, name)
    a, b = np.array([[0.3, -1.2, 2.0]]), np.array([[0.8], [-2.0]])
    check_grads(lambda x, y: op(x * x, y) ** 2, [a, b], order=2)
    check_jvp(lambda x, y: op(x * x, y) ** 2, [a, b])
    check_batching(lambda x, y: getattr(gt, name)(x, y), [a, b])
