"""np.pad with NumPy's forms of ``pad_width`` (an int, one ``(before, after)`` pair for
all axes, one pair per axis) and ``constant_values``, in every mode linear in the input,
with gradients (finite differences to second order, forward mode, jacobian, compiled vs
interpreted, batching)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(11)
A = rng.standard_normal((2, 3))
WIDTHS = [0, 3, (3,), (3, 2), ((3, 2),), ((1, 2), (3, 4)), ((0, 0), (0, 0)), [[2, 0]]]
MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS, ids=str)
def test_values_follow_numpy(width, mode):
    np.testing.assert_array_equal(np.pad(gt.constant(A), width, mode=mode).numpy(),
                                  np.pad(A, width, mode=mode))


@pytest.mark.parametrize("values", [1.5, (1.0, -2.0), ((1.0, 2.0), (3.0, 4.0)), ((5.0, 6.0),)],
                         ids=str)
def test_constant_values_follow_numpy(values):
    width = ((1, 2), (2, 1))
    got = np.pad(gt.constant(A), width, constant_values=values)
    np.testing.assert_array_equal(got.numpy(), np.pad(A, width, constant_values=values))
    # The padding values are constants: the gradient is the interior's.
    grad = gt.grad(lambda a: np.sum(np.pad(a, width, constant_values=values) ** 2))(A)
    np.testing.assert_allclose(grad.numpy(), 2 * A, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", [2, ((1, 2),), (2, 1)], ids=str)
def test_gradients_second_order(width, mode):
    check_grads(lambda a: np.pad(a * a, width, mode=mode), [A], order=2)


@pytest.mark.parametrize("mode", ["constant", "reflect", "wrap"])
def test_forward_mode_jacobian_and_compiled(mode):
    def f(a):
        return np.pad(np.sin(a), ((1, 2),), mode=mode, constant_values=0.5)

    v = rng.standard_normal(A.shape)
    eps = 1e-6
    _, tangent = gt.jvp(f, (A,), (v,))
    differences = (f(gt.constant(A + eps * v)).numpy() - f(gt.constant(A - eps * v)).numpy())
    np.testing.assert_allclose(tangent.numpy(), differences / (2 * eps), rtol=1e-6, atol=1e-8)
    jac = np.asarray(gt.jacobian(f)(A))
    np.testing.assert_allclose(np.tensordot(jac, v, 2), tangent.numpy(), rtol=1e-10)

    def loss(a):
        return gt.reduce_sum(f(a) ** 3)

    hessian = np.asarray(gt.hessian(loss)(A))
    np.testing.assert_allclose(np.asarray(gt.jvp(gt.grad(loss), (A,), (v,))[1]),
                               np.tensordot(hessian, v, 2), rtol=1e-10, atol=1e-12)
    with gt.config(compile=False):
        np.testing.assert_allclose(np.asarray(gt.jacobian(f)(A)), jac, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gt.hessian(loss)(A)), hessian, rtol=1e-12)


def test_batching_of_constant_values_frame(check_batching):
    check_batching(lambda a: gt.pad(a, [[1, 0], [2, 1]], constant_values=(1.0, 2.0)), [A])
    check_batching(lambda a: gt.pad(a, [[1, 0], [2, 1]], mode="SYMMETRIC"), [A])


def test_tf_pad_keeps_one_row_per_axis():
    with pytest.raises(ValueError, match="one \\(before, after\\) row per axis"):
        gt.pad(gt.constant(A), [[1, 1]])
    np.testing.assert_array_equal(gt.pad(gt.constant(A), [[1, 0], [0, 1]], "REFLECT").numpy(),
                                  np.pad(A, ((1, 0), (0, 1)), mode="reflect"))


def test_bad_widths_and_arguments_raise():
    with pytest.raises(ValueError, match="does not fit a tensor of rank 2"):
        np.pad(gt.constant(A), ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(TypeError, match="reflect_type"):
        np.pad(gt.constant(A), 1, mode="reflect", reflect_type="odd")
    np.testing.assert_array_equal(
        np.pad(gt.constant(A), 1, mode="reflect", reflect_type="even").numpy(),
        np.pad(A, 1, mode="reflect"))


def test_constant_values_of_the_wrong_shape_raise():
    with pytest.raises(ValueError, match="constant_values of shape \\(3,\\)"):
        np.pad(gt.constant(A), 1, constant_values=(1.0, 2.0, 3.0))
