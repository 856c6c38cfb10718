"""Cells of TF's "Introduction to Tensors" guide (tensorflow.org/guide/tensor), run with
``import gradtape as tf``; each checks the values the guide prints. Ragged, string and
sparse tensor cells are left out."""

import numpy as np
import pytest

import gradtape as tf

rank_2_tensor = tf.constant([[1, 2],
                             [3, 4],
                             [5, 6]], dtype=tf.float16)
rank_3_tensor = tf.constant([
    [[0, 1, 2, 3, 4],
     [5, 6, 7, 8, 9]],
    [[10, 11, 12, 13, 14],
     [15, 16, 17, 18, 19]],
    [[20, 21, 22, 23, 24],
     [25, 26, 27, 28, 29]], ])


def test_basics():
    rank_0_tensor = tf.constant(4)
    assert rank_0_tensor.dtype == tf.int32 and rank_0_tensor.shape == ()
    rank_1_tensor = tf.constant([2.0, 3.0, 4.0])
    assert rank_1_tensor.dtype == tf.float32
    assert rank_2_tensor.dtype == tf.float16 and rank_3_tensor.shape == (3, 2, 5)
    np.testing.assert_array_equal(np.array(rank_2_tensor), [[1, 2], [3, 4], [5, 6]])
    assert rank_2_tensor.numpy().dtype == np.float16


def test_math():
    a = tf.constant([[1, 2],
                     [3, 4]])
    b = tf.constant([[1, 1],
                     [1, 1]])  # Could have also said `tf.ones([2,2], dtype=tf.int32)`
    np.testing.assert_array_equal(tf.add(a, b).numpy(), [[2, 3], [4, 5]])
    np.testing.assert_array_equal(tf.multiply(a, b).numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(tf.matmul(a, b).numpy(), [[3, 3], [7, 7]])
    np.testing.assert_array_equal((a @ b).numpy(), [[3, 3], [7, 7]])
    assert tf.add(a, b).dtype == tf.int32
    c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
    assert tf.reduce_max(c).numpy() == 10.0
    i = tf.math.argmax(c)
    np.testing.assert_array_equal(i.numpy(), [1, 0])
    assert i.dtype == tf.int64
    np.testing.assert_allclose(tf.nn.softmax(c).numpy(),
                               [[2.6894143e-01, 7.3105854e-01], [9.9987662e-01, 1.2339458e-04]],
                               rtol=1e-5)
    assert tf.reduce_max([1, 2, 3]).numpy() == 3
    assert tf.reduce_max(np.array([1, 2, 3])).numpy() == 3


def test_shapes():
    rank_4_tensor = tf.zeros([3, 2, 4, 5])
    assert rank_4_tensor.dtype == tf.float32 and rank_4_tensor.ndim == 4
    assert rank_4_tensor.shape == (3, 2, 4, 5)
    assert rank_4_tensor.shape[0] == 3 and rank_4_tensor.shape[-1] == 5
    assert tf.size(rank_4_tensor).numpy() == 120
    r = tf.rank(rank_4_tensor)
    assert r.numpy() == 4 and r.dtype == tf.int32
    s = tf.shape(rank_2_tensor)
    np.testing.assert_array_equal(s.numpy(), [3, 2])
    assert s.dtype == tf.int32


def test_indexing():
    rank_1_tensor = tf.constant([0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
    assert rank_1_tensor[0].numpy() == 0 and rank_1_tensor[1].numpy() == 1
    assert rank_1_tensor[-1].numpy() == 34
    np.testing.assert_array_equal(rank_1_tensor[:4].numpy(), [0, 1, 1, 2])
    np.testing.assert_array_equal(rank_1_tensor[4:].numpy(), [3, 5, 8, 13, 21, 34])
    np.testing.assert_array_equal(rank_1_tensor[2:7].numpy(), [1, 2, 3, 5, 8])
    np.testing.assert_array_equal(rank_1_tensor[::2].numpy(), [0, 1, 3, 8, 21])
    np.testing.assert_array_equal(rank_1_tensor[::-1].numpy(),
                                  [34, 21, 13, 8, 5, 3, 2, 1, 1, 0])
    assert rank_2_tensor[1, 1].numpy() == 4.0
    np.testing.assert_array_equal(rank_2_tensor[1, :].numpy(), [3, 4])
    np.testing.assert_array_equal(rank_2_tensor[:, 1].numpy(), [2, 4, 6])
    np.testing.assert_array_equal(rank_2_tensor[-1, :].numpy(), [5, 6])
    assert rank_2_tensor[0, -1].numpy() == 2.0
    np.testing.assert_array_equal(rank_2_tensor[1:, :].numpy(), [[3, 4], [5, 6]])
    np.testing.assert_array_equal(rank_3_tensor[:, :, 4].numpy(), [[4, 9], [14, 19], [24, 29]])


def test_reshaping():
    x = tf.constant([[1], [2], [3]])
    assert x.shape == (3, 1) and x.shape.as_list() == [3, 1]
    reshaped = tf.reshape(x, [1, 3])
    assert x.shape == (3, 1) and reshaped.shape == (1, 3)
    np.testing.assert_array_equal(tf.reshape(rank_3_tensor, [-1]).numpy(), np.arange(30))
    assert tf.reshape(rank_3_tensor, [3*2, 5]).shape == (6, 5)
    assert tf.reshape(rank_3_tensor, [3, -1]).shape == (3, 10)
    assert tf.reshape(rank_3_tensor, [2, 3, 5]).shape == (2, 3, 5)
    assert tf.reshape(rank_3_tensor, [5, 6]).shape == (5, 6)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reshape(rank_3_tensor, [7, -1])


def test_dtypes_and_casts():
    the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
    the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
    # Now, cast to an uint8 and lose the decimal precision
    the_u8_tensor = tf.cast(the_f16_tensor, dtype=tf.uint8)
    np.testing.assert_array_equal(the_u8_tensor.numpy(), [2, 3, 4])
    assert the_u8_tensor.dtype == tf.uint8


def test_broadcasting():
    x = tf.constant([1, 2, 3])
    y = tf.constant(2)
    z = tf.constant([2, 2, 2])
    for out in (tf.multiply(x, 2), x * y, x * z):
        np.testing.assert_array_equal(out.numpy(), [2, 4, 6])
    x = tf.reshape(x, [3, 1])
    y = tf.range(1, 5)
    np.testing.assert_array_equal(tf.multiply(x, y).numpy(),
                                  [[1, 2, 3, 4], [2, 4, 6, 8], [3, 6, 9, 12]])
    np.testing.assert_array_equal(tf.broadcast_to(tf.constant([1, 2, 3]), [3, 3]).numpy(),
                                  [[1, 2, 3]] * 3)


def test_non_rectangular_list_raises_value_error():
    ragged_list = [
        [0, 1, 2, 3],
        [4, 5],
        [6, 7, 8],
        [9]]
    with pytest.raises(ValueError):
        tf.constant(ragged_list)
