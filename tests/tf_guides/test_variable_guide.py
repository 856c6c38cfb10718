"""Cells of TF's "Introduction to Variables" guide (tensorflow.org/guide/variable), run
with ``import gradtape as tf``; each checks the values the guide prints."""

import numpy as np
import pytest

import gradtape as tf

my_tensor = tf.constant([[1.0, 2.0], [3.0, 4.0]])


def test_create_a_variable():
    my_variable = tf.Variable(my_tensor)
    bool_variable = tf.Variable([False, False, False, True])
    complex_variable = tf.Variable([5 + 4j, 6 + 1j])
    assert bool_variable.dtype == tf.bool and complex_variable.dtype == tf.complex128
    assert my_variable.shape == (2, 2) and my_variable.dtype == tf.float32
    np.testing.assert_array_equal(my_variable.numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(tf.convert_to_tensor(my_variable).numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(tf.math.argmax(my_variable).numpy(), [1, 1])
    np.testing.assert_array_equal(tf.reshape(my_variable, [1, 4]).numpy(), [[1, 2, 3, 4]])


def test_assign_and_copies():
    a = tf.Variable([2.0, 3.0])
    a.assign([1, 2])  # This will keep the same dtype, float32
    assert a.dtype == tf.float32
    with pytest.raises(ValueError, match="shape"):
        a.assign([1.0, 2.0, 3.0])  # Not allowed as it resizes the variable
    a = tf.Variable([2.0, 3.0])
    b = tf.Variable(a)  # Create b based on the value of a
    a.assign([5, 6])
    np.testing.assert_array_equal(a.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(a.assign_add([2, 3]).numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(a.assign_sub([7, 9]).numpy(), [0.0, 0.0])


def test_names_and_trainable():
    a = tf.Variable(my_tensor, name="Mark")
    b = tf.Variable(my_tensor + 1, name="Mark")
    assert a.name == b.name == "Mark:0"
    np.testing.assert_array_equal((a == b).numpy(), [[False, False], [False, False]])
    step_counter = tf.Variable(1, trainable=False)
    assert not step_counter.trainable


def test_placing_variables_and_tensors():
    with tf.device('CPU:0'):
        a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = tf.matmul(a, b)
    np.testing.assert_array_equal(c.numpy(), [[22.0, 28.0], [49.0, 64.0]])
    assert c.device.endswith("device:CPU:0")
    with tf.device('CPU:0'):
        a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.Variable([[1.0, 2.0, 3.0]])
    with tf.device('GPU:0'):  # soft placement: there is no GPU, it runs on the CPU
        k = a * b
    np.testing.assert_array_equal(k.numpy(), [[1.0, 4.0, 9.0], [4.0, 10.0, 18.0]])
    assert k.device == "/job:localhost/replica:0/task:0/device:CPU:0"
