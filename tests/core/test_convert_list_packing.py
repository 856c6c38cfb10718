"""TF packs a list or tuple holding tensors into one tensor with its gradient kept
(``tf.convert_to_tensor([t1, t2])``): the PINN of tests/programs passes the list of a
model's outputs to ``tf.keras.losses.mse``, and every gradient came back ``None``."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads


def _gradient(f, x):
    with gt.GradientTape() as tape:
        y = f(x)
    return tape.gradient(y, x)


def test_convert_to_tensor_of_a_list_of_tensors_keeps_the_gradient():
    x = gt.Variable([1.0, 2.0])
    grad = _gradient(lambda v: gt.reduce_sum(gt.convert_to_tensor([v * 2.0, v]) ** 2), x)
    np.testing.assert_allclose(grad.numpy(), 2 * 4 * x.numpy() + 2 * x.numpy())


def test_nested_tuple_and_numbers_beside_tensors_pack_like_tf():
    t = gt.constant([1.0, 2.0])
    packed = gt.convert_to_tensor(((t, [3.0, 4.0]),))
    assert packed.shape == (1, 2, 2) and packed.dtype == np.float32
    np.testing.assert_array_equal(packed.numpy(), [[[1, 2], [3, 4]]])


def test_packed_list_matches_finite_differences_in_float64():
    x = np.array([0.3, -1.2, 0.7])
    check_grads(lambda v: gt.reduce_sum(gt.sin(gt.convert_to_tensor([v, v * v]))), (x,),
                order=1)


@pytest.mark.parametrize("loss", [
    lambda y, p: gt.reduce_sum(gt.keras.losses.mse(y, p)),
    lambda y, p: gt.keras.losses.MeanSquaredError()(y, p),
    lambda y, p: gt.reduce_sum(gt.keras.losses.mean_absolute_error(y, p)),
])
def test_keras_losses_take_a_list_of_outputs(loss):
    # the PINN's tf.reduce_mean(tf.keras.losses.mse(self.model(x), y)), with y a list
    x = gt.Variable([[1.0, 2.0]])
    targets = [np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32)]
    grad = _gradient(lambda v: loss(targets, [v * 1.0, v * 3.0]), x)
    assert grad is not None
    eps = 1e-3
    base = float(loss(targets, [x.numpy(), 3 * x.numpy()]))
    for j in range(2):
        bumped = x.numpy().astype(np.float64)
        bumped[0, j] += eps
        fd = (float(loss(targets, [bumped, 3 * bumped])) - base) / eps
        np.testing.assert_allclose(grad.numpy()[0, j], fd, rtol=2e-2)


def test_keras_ops_on_a_list_of_tensors_keep_the_gradient():
    x = gt.Variable([1.0, 2.0])
    grad = _gradient(lambda v: gt.keras.ops.mean([v * 2.0, v]), x)
    np.testing.assert_allclose(grad.numpy(), [0.75, 0.75])


def test_a_packed_list_inside_gt_function_differentiates():
    x = gt.Variable([1.0, 2.0])

    @gt.function
    def f(v):
        return gt.reduce_sum(gt.keras.losses.mse([v, v * 2.0], np.zeros((2, 2), np.float32)))

    grad = _gradient(f, x)
    np.testing.assert_allclose(grad.numpy(), [5.0, 10.0])


def test_tensors_of_different_shapes_raise_tfs_error():
    with pytest.raises(gt.errors.InvalidArgumentError, match="same shape"):
        gt.convert_to_tensor([gt.constant([1.0, 2.0]), 1.0])
