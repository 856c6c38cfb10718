"""gt.zeros, ones, fill, range, linspace, eye: TF's signatures, values and dtypes (the
expected values are the examples of TF's API docs)."""

import numpy as np
import pytest

import gradtape as gt


def check(t, values, dtype):
    assert isinstance(t, gt.Tensor)
    assert t.dtype == dtype, t.dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(values, dtype))


@pytest.mark.parametrize("shape", [[2, 3], (2, 3), gt.TensorShape([2, 3]),
                                   gt.constant([2, 3]), np.array([2, 3])])
def test_zeros_and_ones_take_any_shape_form(shape):
    check(gt.zeros(shape), np.zeros((2, 3)), np.float32)
    check(gt.ones(shape), np.ones((2, 3)), np.float32)


def test_zeros_ones_dtypes_and_scalar_shapes():
    check(gt.zeros(3, dtype=gt.int32), [0, 0, 0], np.int32)
    check(gt.ones([], gt.float64), 1.0, np.float64)
    check(gt.ones([2], "bool"), [True, True], np.bool_)
    x = gt.zeros([2, 3])
    check(gt.zeros(x.shape), np.zeros((2, 3)), np.float32)


def test_bad_shapes_are_invalid_arguments():
    with pytest.raises(gt.errors.InvalidArgumentError, match=">= 0"):
        gt.zeros([2, -1])
    with pytest.raises(gt.errors.InvalidArgumentError, match="1-D list of ints"):
        gt.ones([[2, 3]])
    with pytest.raises(gt.errors.InvalidArgumentError, match="1-D list of ints"):
        gt.zeros([2.5])


def test_fill_uses_tf_dtypes_of_the_value():
    check(gt.fill([2, 3], 9), np.full((2, 3), 9), np.int32)  # TF's doc example
    check(gt.fill([2], 1.5), [1.5, 1.5], np.float32)
    check(gt.fill([2], np.float64(0.25)), [0.25, 0.25], np.float64)
    check(gt.fill([1], gt.constant(True)), [True], np.bool_)
    with pytest.raises(gt.errors.InvalidArgumentError, match="scalar"):
        gt.fill([2], [1, 2])


def test_range_values_and_dtypes():
    check(gt.range(3, 18, 3), [3, 6, 9, 12, 15], np.int32)
    check(gt.range(3, 1, -0.5), [3, 2.5, 2, 1.5], np.float32)
    check(gt.range(5), [0, 1, 2, 3, 4], np.int32)
    check(gt.range(1, 5, dtype=gt.float64), [1, 2, 3, 4], np.float64)
    check(gt.range(0, 2, 0.5), [0, 0.5, 1, 1.5], np.float32)  # int and float: float32
    check(gt.range(gt.constant(2, gt.int64)), [0, 1], np.int64)  # the widest argument
    check(gt.range(np.float64(2)), [0, 1], np.float64)
    check(gt.range(3, 3), [], np.int32)


def test_range_errors_are_tfs():
    with pytest.raises(gt.errors.InvalidArgumentError, match="Requires delta != 0"):
        gt.range(0, 5, 0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="start <= limit"):
        gt.range(5, 1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="start >= limit"):
        gt.range(1, 5, -1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="scalar"):
        gt.range([1, 2])


def test_linspace():
    check(gt.linspace(10.0, 12.0, 3), [10.0, 11.0, 12.0], np.float32)
    check(gt.linspace(np.float64(0), 1.0, 5), [0, 0.25, 0.5, 0.75, 1], np.float64)
    check(gt.linspace(0, 10, 3), [0, 5, 10], np.float64)  # int32 start: TF's truediv
    start, stop = [0.0, 5.0], [10.0, 40.0]
    expected = [[0.0, 5.0], [2.5, 13.75], [5.0, 22.5], [7.5, 31.25], [10.0, 40.0]]
    check(gt.linspace(start, stop, 5), expected, np.float32)
    check(gt.linspace(start, stop, 5, axis=-1), np.transpose(expected), np.float32)
    check(gt.linspace(1.0, 2.0, 1), [1.0], np.float32)
    check(gt.linspace(1.0, 2.0, gt.constant(2)), [1.0, 2.0], np.float32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="num >= 0"):
        gt.linspace(0.0, 1.0, -1)


def test_eye():
    check(gt.eye(2), [[1, 0], [0, 1]], np.float32)
    check(gt.eye(2, num_columns=3), [[1, 0, 0], [0, 1, 0]], np.float32)
    check(gt.eye(2, dtype=gt.int32), [[1, 0], [0, 1]], np.int32)
    batch = gt.eye(2, batch_shape=[3])
    check(batch, np.broadcast_to(np.eye(2), (3, 2, 2)), np.float32)
    assert gt.eye(2, batch_shape=[3, 4]).shape == (3, 4, 2, 2)


def test_like_functions_and_one_hot_take_dtype():
    x = gt.constant([[1.5, 2.0]])
    check(gt.zeros_like(x), [[0, 0]], np.float32)
    check(gt.ones_like(x, dtype=gt.int32), [[1, 1]], np.int32)
    check(gt.one_hot([0, 2], 3), [[1, 0, 0], [0, 0, 1]], np.float32)
    check(gt.one_hot([1], 2, dtype=gt.int64), [[0, 1]], np.int64)


def test_created_tensors_are_constants_on_a_tape():
    with gt.GradientTape() as tape:
        z = gt.zeros([2])
        tape.watch(z)
        y = gt.reduce_sum(z * gt.range(2, dtype=gt.float32) + gt.ones([2]))
    np.testing.assert_array_equal(tape.gradient(y, z).numpy(), [0.0, 1.0])
