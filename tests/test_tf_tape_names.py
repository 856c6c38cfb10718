"""Names TF's own tape tests use (issue "Trust, round 3"), with TF 2.21's documented
behaviour: Variable.initializer, executing_eagerly, get_static_value, size's out_type,
nn.embedding_lookup, linalg.diag/set_diag, TensorShape == list, string constants."""

import logging

import numpy as np
import pytest

import gradtape as gt
from gradtape.tape import gradient_tape
from tf_op_checks import check_first_and_second_order


def test_variable_initializer_is_none_eagerly_as_tf2():
    assert gt.Variable([1.0, 2.0]).initializer is None


def test_executing_eagerly_is_false_only_while_a_function_traces():
    seen = []

    @gt.function
    def f(x):
        seen.append(gt.executing_eagerly())
        with gt.init_scope():
            seen.append(gt.executing_eagerly())
        return x * 2.0

    assert gt.executing_eagerly() is True
    f(gt.constant(1.0))
    assert seen == [False, True]


def test_get_static_value_knows_constants_not_traced_values():
    eager = gt.get_static_value(gt.constant([1, 2]))
    assert isinstance(eager, np.ndarray) and eager.tolist() == [1, 2]
    assert gt.get_static_value([3, 4]) == [3, 4]  # not a tensor: returned as is
    assert gt.get_static_value(gt.Variable(1.0)) is None
    before = gt.constant(5.0)
    seen = {}

    @gt.function
    def f(x):
        c = gt.constant([1.0, 2.0])
        seen["arg"] = gt.get_static_value(x)
        seen["computed"] = gt.get_static_value(x + 1.0)
        seen["const"] = gt.get_static_value(c)
        seen["before"] = gt.get_static_value(before)
        y = x * c
        seen["const_after_use"] = gt.get_static_value(c)
        return y

    f(gt.constant(3.0))
    assert seen["arg"] is None and seen["computed"] is None
    assert seen["const"].tolist() == [1.0, 2.0] == seen["const_after_use"].tolist()
    assert float(seen["before"]) == 5.0


def test_size_takes_a_float_out_type_as_tf2():
    out = gt.size(gt.zeros([2, 3]), out_type=gt.float32)
    assert out.dtype == np.float32 and float(out) == 6.0
    assert gt.size(gt.zeros([2, 3])).dtype == np.int32
    with pytest.raises(TypeError, match="numeric"):
        gt.size(gt.zeros([2]), out_type=gt.bool)


def test_tensor_shape_equals_lists_and_tuples_as_tf():
    shape = gt.TensorShape([3, 2, 1])
    assert shape == [3, 2, 1] and shape == (3, 2, 1) and [3, 2, 1] == shape
    assert not (shape != [3, 2, 1]) and shape != [3, 2] and shape != [3, 2, 2]
    assert gt.zeros([2, 3]).shape == [2, 3]
    assert {shape: "x"}[(3, 2, 1)] == "x"  # hashes as the tuple
    partial = gt.TensorShape([None, 2])
    assert partial == [None, 2] and partial != [3, 2]  # TF 2.9+: dims compared as given
    assert partial.as_list() == [None, 2] and partial.num_elements() is None
    assert not partial.is_fully_defined() and partial.is_compatible_with([3, 2])
    assert partial.merge_with([3, None]) == [3, 2]
    unknown = gt.TensorSpec(None).shape  # TensorShape(None)
    assert unknown == gt.TensorSpec(None).shape and unknown != [] and unknown != ()


def test_embedding_lookup_is_tfs_gather_with_its_gradient():
    params = gt.constant([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    ids = gt.constant([[2, 0], [2, 2]])
    with gt.GradientTape() as tape:
        tape.watch(params)
        rows = gt.nn.embedding_lookup(params, ids)
        y = gt.reduce_sum(rows * gt.constant([1.0, 10.0]))
    np.testing.assert_array_equal(rows, [[[3, 4], [1, 0]], [[3, 4], [3, 4]]])
    np.testing.assert_array_equal(gt.convert_to_tensor(tape.gradient(y, params)),
                                  [[1, 10], [0, 0], [3, 30]])


def test_embedding_lookup_of_shards_and_max_norm():
    shards = [gt.constant([[1.0, 0.0], [0.0, 2.0]]), gt.constant([[3.0, 4.0]])]
    np.testing.assert_array_equal(gt.nn.embedding_lookup(shards, [2, 1]), [[3, 4], [0, 2]])
    clipped = gt.nn.embedding_lookup(shards, [2, 0], max_norm=1.0)  # |[3, 4]| = 5 -> 1
    np.testing.assert_allclose(clipped, [[0.6, 0.8], [1.0, 0.0]], rtol=1e-6)
    with pytest.raises(TypeError, match="int32"):
        gt.nn.embedding_lookup(shards[0], gt.constant([0.0]))


def test_linalg_diag_docs_examples():
    np.testing.assert_array_equal(gt.linalg.diag(gt.constant([[1, 2, 3, 4], [5, 6, 7, 8]])),
                                  [np.diag([1, 2, 3, 4]), np.diag([5, 6, 7, 8])])
    np.testing.assert_array_equal(gt.linalg.diag(gt.constant([[1, 2, 3], [4, 5, 6]]), k=1),
                                  [np.diag([1, 2, 3], 1), np.diag([4, 5, 6], 1)])
    diagonal = gt.constant([1, 2])
    np.testing.assert_array_equal(gt.linalg.diag(diagonal, k=-1, num_rows=3, num_cols=4),
                                  [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0]])
    np.testing.assert_array_equal(
        gt.linalg.diag(diagonal, k=-1, num_rows=3, num_cols=4, padding_value=9),
        [[9, 9, 9, 9], [1, 9, 9, 9], [9, 2, 9, 9]])


def test_linalg_diag_band_docs_example_and_alignments():
    expected = [[1, 8, 0], [4, 2, 9], [0, 5, 3]]
    right_left = gt.constant([[0, 8, 9], [1, 2, 3], [4, 5, 0]])
    np.testing.assert_array_equal(gt.linalg.diag(right_left, k=(-1, 1)), expected)
    left_right = gt.constant([[8, 9, 0], [1, 2, 3], [0, 4, 5]])
    np.testing.assert_array_equal(gt.linalg.diag(left_right, k=(-1, 1), align="LEFT_RIGHT"),
                                  expected)
    with pytest.raises(gt.errors.InvalidArgumentError, match="align"):
        gt.linalg.diag(right_left, k=(-1, 1), align="UP")
    with pytest.raises(gt.errors.InvalidArgumentError, match="least that fits"):
        gt.linalg.diag(gt.constant([1, 2]), num_rows=5, num_cols=5)


def test_linalg_diag_and_set_diag_gradients():
    check_first_and_second_order(lambda d: gt.linalg.diag(d, k=1) ** 2,
                                 np.array([[0.5, -1.0], [2.0, 0.3]]))
    check_first_and_second_order(
        lambda d, p: gt.linalg.diag(d, k=-1, num_rows=3, num_cols=4, padding_value=p) ** 2,
        np.array([0.5, -1.0]), np.array(1.5))
    check_first_and_second_order(lambda x, d: gt.linalg.set_diag(x, d) ** 2,
                                 np.arange(6.0).reshape(2, 3) - 2.5, np.array([0.7, -0.4]))
    out = gt.linalg.set_diag(gt.ones([2, 3]), gt.constant([7.0, 8.0]), k=1)
    np.testing.assert_array_equal(out, [[1, 7, 1], [1, 1, 8]])


def test_string_constants_have_tfs_string_dtype_and_no_gradient(caplog, monkeypatch):
    # The dtype warning is logged a few times per process: start this test's count afresh.
    monkeypatch.setattr(gradient_tape, "_warning_counts", {})
    scalar, vector = gt.constant("abc"), gt.constant(["a", "b"])
    assert scalar.dtype == gt.string and vector.dtype == gt.string
    assert scalar.numpy() == b"abc" and vector.numpy().tolist() == [b"a", b"b"]
    assert gt.constant([b"x"], dtype=gt.string).numpy().tolist() == [b"x"]
    assert gt.as_dtype("string") is gt.string and str(gt.string) == "<dtype: 'string'>"
    x = gt.constant(2.0)
    with caplog.at_level(logging.WARNING), gt.GradientTape() as tape:
        tape.watch(scalar)
        tape.watch(x)
        y = x * x
    assert "must be floating (e.g. float32), got string" in caplog.text  # TF: tf.string
    grads = tape.gradient(y, [scalar, x])
    assert grads[0] is None and float(grads[1]) == 4.0
