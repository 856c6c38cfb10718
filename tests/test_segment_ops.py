"""TF's segment reductions and scatter_nd family (gradtape/api/segment_ops.py): TF's
documented examples, errors, gradients of first and second order, compiled code."""

import numpy as np
import pytest

import gradtape as gt
from tf_op_checks import check_compiled_matches_interpreted, check_first_and_second_order

C = [[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]]


def test_unsorted_segment_sum_docs_example():
    out = gt.math.unsorted_segment_sum(gt.constant(C), gt.constant([0, 1, 0]), num_segments=2)
    np.testing.assert_array_equal(out, [[6, 8, 10, 12], [4, 3, 2, 1]])
    assert out.dtype == np.int32


def test_segment_sum_docs_example():
    out = gt.math.segment_sum(gt.constant(C), gt.constant([0, 0, 1]))
    np.testing.assert_array_equal(out, [[5, 5, 5, 5], [5, 6, 7, 8]])


def test_segment_max_min_prod_mean_docs_examples():
    c, ids = gt.constant(C), gt.constant([0, 0, 1])
    np.testing.assert_array_equal(gt.math.segment_max(c, ids), [[4, 3, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(gt.math.segment_min(c, ids), [[1, 2, 2, 1], [5, 6, 7, 8]])
    np.testing.assert_array_equal(gt.math.segment_prod(c, ids), [[4, 6, 6, 4], [5, 6, 7, 8]])
    mean = gt.math.segment_mean(gt.constant([[1.0, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]]), ids)
    np.testing.assert_allclose(mean, [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]])


def test_empty_segments_follow_tf():
    c = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(gt.math.segment_max(c, gt.constant([0, 2])),
                                  [[1, 2], [0, 0], [3, 4]])
    np.testing.assert_array_equal(gt.math.segment_prod(c, gt.constant([0, 2])),
                                  [[1, 2], [1, 1], [3, 4]])
    ids = gt.constant([0, 0])
    lowest, highest = np.finfo(np.float32).min, np.finfo(np.float32).max  # TF's, finite
    np.testing.assert_array_equal(gt.math.unsorted_segment_max(c, ids, 2)[1], [lowest] * 2)
    np.testing.assert_array_equal(gt.math.unsorted_segment_min(c, ids, 2)[1], [highest] * 2)
    np.testing.assert_array_equal(gt.math.unsorted_segment_prod(c, ids, 2)[1], [1, 1])
    np.testing.assert_array_equal(gt.math.unsorted_segment_mean(c, ids, 2), [[2, 3], [0, 0]])
    ints = gt.math.unsorted_segment_max(gt.constant([1, 2]), gt.constant([0, 0]), 2)
    assert ints.numpy()[1] == np.iinfo(np.int32).min


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_unsorted_extremum_of_an_empty_segment_is_the_dtypes_finite_bound(dtype):
    """TF: ``dtype.min`` for max (-3.4028235e38 in float32), ``dtype.max`` for min."""
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    data, ids = gt.constant(np.array([1, 2, 3], dtype)), gt.constant([0, 0, 3])
    for op, empty, full in ((gt.math.unsorted_segment_max, info.min, [2, 3]),
                            (gt.math.unsorted_segment_min, info.max, [1, 3])):
        out = op(data, ids, 4)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, [full[0], empty, empty, full[1]])
    no_rows = gt.math.unsorted_segment_max(gt.zeros([0, 2], dtype), gt.zeros([0], gt.int32), 2)
    np.testing.assert_array_equal(no_rows, np.full((2, 2), info.min))


def test_a_minus_infinity_row_is_kept_by_unsorted_max():
    """Only an empty segment takes ``dtype.min``: a segment of ``-inf`` is ``-inf``."""
    out = gt.math.unsorted_segment_max(gt.constant([-np.inf, 1.0]), gt.constant([0, 1]), 3)
    np.testing.assert_array_equal(out, [-np.inf, 1.0, np.finfo(np.float32).min])


EMPTY_AT_1_AND_2 = [(kind, False) for kind in ("max", "min", "prod", "mean", "sum", "sqrt_n")]
EMPTY_AT_1_AND_2 += [(kind, True) for kind in ("max", "min", "prod", "mean", "sum")]


def _empty_segment_reduction(kind: str, sort: bool):
    ids = gt.constant([0, 0, 3])
    if sort:
        return lambda d: getattr(gt.math, f"segment_{kind}")(d, ids)
    return lambda d: getattr(gt.math, f"unsorted_segment_{kind}")(d, ids, 4)


def _weighted_gradient(reduce, d):
    with gt.GradientTape() as tape:
        tape.watch(d)
        y = gt.reduce_sum(reduce(d) * gt.constant([1.0, 0.5, 0.25, 4.0], d.dtype))
    return y, tape.gradient(y, d)


@pytest.mark.parametrize("kind, sort", EMPTY_AT_1_AND_2)
def test_empty_segments_give_finite_values_and_no_gradient(kind, sort):
    """Empty segments 1 and 2 (weighted 0.5 and 0.25) add nothing to the gradient and no
    NaN, eagerly and in a ``@gt.function`` (traced, then compiled on later calls)."""
    reduce = _empty_segment_reduction(kind, sort)
    expected = {"max": [0, 1, 4], "min": [1, 0, 4], "prod": [2, 1, 4], "sum": [1, 1, 4],
                "mean": [0.5, 0.5, 4], "sqrt_n": [2 ** -0.5, 2 ** -0.5, 4]}[kind]
    d = gt.constant([1.0, 2.0, 3.0], gt.float64)
    traced = gt.function(lambda d: _weighted_gradient(reduce, d))
    for y, grad in [_weighted_gradient(reduce, d)] + [traced(d) for _ in range(3)]:
        assert np.isfinite(y.numpy())
        np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_unsorted_negative_ids_are_dropped_and_out_of_range_raises():
    data = gt.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(
        gt.math.unsorted_segment_sum(data, gt.constant([0, -1, 1]), 2), [1.0, 3.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="out of range"):
        gt.math.unsorted_segment_sum(data, gt.constant([0, 2, 1]), 2)


def test_sorted_segment_errors():
    data = gt.constant([1.0, 2.0, 3.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="not increasing"):
        gt.math.segment_sum(data, gt.constant([1, 0, 1]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="prefix"):
        gt.math.segment_sum(data, gt.constant([0, 0]))
    with pytest.raises(TypeError, match="int32"):
        gt.math.segment_sum(data, gt.constant([0.0, 0.0, 1.0]))


def test_multidimensional_ids():
    data = gt.constant(np.arange(12.0).reshape(2, 3, 2))
    ids = gt.constant([[0, 1, 0], [1, 1, 2]])
    out = gt.math.unsorted_segment_sum(data, ids, 3)
    expected = np.zeros((3, 2))
    np.add.at(expected, np.asarray(ids), np.asarray(data))
    np.testing.assert_array_equal(out, expected)


IDS = np.array([0, 2, 0, 1, 2, 2])
DATA = np.array([[0.3, -1.2], [2.0, 0.5], [1.1, 0.7], [-0.4, 2.2], [0.9, -0.3], [1.5, 1.0]])


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "sqrt_n"])
def test_unsorted_segment_gradients(name):
    op = getattr(gt.math, f"unsorted_segment_{name}")
    check_first_and_second_order(lambda d: op(d, gt.constant(IDS), 3), DATA)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_sorted_segment_gradients(name):
    op = getattr(gt.math, f"segment_{name}")
    ids = gt.constant(np.sort(IDS))
    check_first_and_second_order(lambda d: op(d, ids), DATA)
    check_compiled_matches_interpreted(lambda d: op(d, ids), DATA)


def test_segment_max_ties_share_the_gradient_as_tf():
    d = gt.constant([2.0, 2.0, 1.0])
    with gt.GradientTape() as tape:
        tape.watch(d)
        y = gt.math.segment_max(d, gt.constant([0, 0, 0]))
    np.testing.assert_array_equal(tape.gradient(y, d), [0.5, 0.5, 0.0])


def test_segment_prod_gradient_with_a_zero():
    d = gt.constant([2.0, 0.0, 3.0])
    with gt.GradientTape() as tape:
        tape.watch(d)
        y = gt.math.segment_prod(d, gt.constant([0, 0, 0]))
    np.testing.assert_array_equal(tape.gradient(y, d), [0.0, 6.0, 0.0])


def test_new_ids_in_a_function_are_not_stale():
    f = gt.function(lambda d, ids: gt.math.unsorted_segment_max(d, ids, 3))
    d = gt.constant([1.0, 5.0, 3.0, 4.0])
    for ids in ([0, 0, 1, 2], [2, 2, 1, 1], [0, 1, 1, 1]):
        expected = gt.math.unsorted_segment_max(d, gt.constant(ids), 3)
        np.testing.assert_array_equal(f(d, gt.constant(ids)), expected)


# --- scatter_nd --------------------------------------------------------------------------

def test_scatter_nd_docs_examples():
    out = gt.scatter_nd(gt.constant([[4], [3], [1], [7]]), gt.constant([9, 10, 11, 12]),
                        gt.constant([8]))
    np.testing.assert_array_equal(out, [0, 11, 0, 10, 9, 0, 0, 12])
    updates = gt.constant([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
                           [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]])
    out = gt.scatter_nd(gt.constant([[0], [2]]), updates, [4, 4, 4])
    assert out.shape == (4, 4, 4)
    np.testing.assert_array_equal(out[0], updates[0])
    np.testing.assert_array_equal(out[1], np.zeros((4, 4)))
    np.testing.assert_array_equal(out[2], updates[1])


def test_tensor_scatter_nd_docs_examples():
    t = gt.constant([1, 2, 3, 4, 5, 6, 7, 8])
    idx = gt.constant([[4], [3], [1], [7]])
    up = gt.constant([9, 10, 11, 12])
    np.testing.assert_array_equal(gt.tensor_scatter_nd_update(t, idx, up),
                                  [1, 11, 3, 10, 9, 6, 7, 12])
    np.testing.assert_array_equal(gt.tensor_scatter_nd_add(t, idx, up),
                                  [1, 13, 3, 14, 14, 6, 7, 20])
    np.testing.assert_array_equal(gt.tensor_scatter_nd_sub(t, idx, up),
                                  [1, -9, 3, -6, -4, 6, 7, -4])
    t2 = gt.constant([0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(
        gt.tensor_scatter_nd_max(t2, gt.constant([[4], [3], [1], [7]]),
                                 gt.constant([1, 2, 3, 4])), [0, 3, 0, 2, 1, 0, 0, 4])
    t3 = gt.constant([0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(
        gt.tensor_scatter_nd_min(t3, gt.constant([[4], [3], [1], [7]]),
                                 gt.constant([-1, -2, -3, -4])), [0, -3, 0, -2, -1, 0, 0, -4])


def test_tensor_scatter_nd_update_repeated_index_last_write_wins():
    out = gt.tensor_scatter_nd_update(gt.zeros([3]), [[1], [1]], gt.constant([5.0, 7.0]))
    np.testing.assert_array_equal(out, [0.0, 7.0, 0.0])


def test_scatter_errors():
    t = gt.constant([1.0, 2.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="does not index"):
        gt.tensor_scatter_nd_add(t, [[2]], gt.constant([1.0]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="updates must have shape"):
        gt.tensor_scatter_nd_add(t, [[1]], gt.constant([1.0, 2.0]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="dtype"):
        gt.tensor_scatter_nd_add(t, [[1]], gt.constant([1]))


T = np.array([[0.5, -1.0], [2.0, 0.3], [-0.7, 1.4]])
INDICES = gt.constant([[2], [0], [2]])
UPDATES = np.array([[1.3, 0.2], [-0.1, 0.8], [0.6, 2.5]])


@pytest.mark.parametrize("name", ["add", "sub", "max", "min", "update"])
def test_tensor_scatter_gradients_wrt_tensor_and_updates(name):
    op = getattr(gt, f"tensor_scatter_nd_{name}")
    check_first_and_second_order(lambda t, u: op(t, INDICES, u), T, UPDATES)
    check_first_and_second_order(lambda u, t: op(t, INDICES, u), UPDATES, T)
    check_compiled_matches_interpreted(lambda t, u: op(t, INDICES, u), T, UPDATES)


def test_scatter_nd_gradient():
    check_first_and_second_order(lambda u: gt.scatter_nd(INDICES, u, [4, 2]), UPDATES)


def test_tensor_scatter_python_updates_take_the_tensors_dtype():
    # TF converts a Python list of updates to the tensor's dtype (no float32 detour).
    tensor = gt.constant([1.0, 2.0, 3.0], gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(tensor)
        out = gt.tensor_scatter_nd_update(tensor, [[0]], [0.1])
        total = gt.reduce_sum(out * gt.constant([5.0, 6.0, 7.0], gt.float64))
    assert out.dtype == gt.float64
    np.testing.assert_array_equal(out.numpy(), [0.1, 2.0, 3.0])
    np.testing.assert_array_equal(tape.gradient(total, tensor).numpy(), [0.0, 6.0, 7.0])
    added = gt.tensor_scatter_nd_add(gt.constant([1, 2], gt.int64), [[1]], [5])
    assert added.dtype == gt.int64 and added.numpy().tolist() == [1, 7]
