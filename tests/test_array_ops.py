"""TF's top_k, searchsorted, unique, bincount, band_part, meshgrid, divide_no_nan
(gradtape/api/array_ops.py): TF's documented examples, errors and gradients."""

import numpy as np
import pytest

import gradtape as gt
from tf_op_checks import check_compiled_matches_interpreted, check_first_and_second_order


def test_top_k_values_indices_and_names():
    values, indices = gt.math.top_k(gt.constant([1.0, 5.0, 3.0, 5.0]), k=2)
    np.testing.assert_array_equal(values, [5.0, 5.0])
    np.testing.assert_array_equal(indices, [1, 3])  # equal values in index order
    assert indices.dtype == np.int32
    assert gt.nn.top_k is gt.math.top_k
    result = gt.math.top_k(gt.constant([[1, 3, 2], [6, 4, 5]]))
    np.testing.assert_array_equal(result.values, [[3], [6]])
    np.testing.assert_array_equal(result.indices, [[1], [0]])


def test_top_k_errors():
    with pytest.raises(gt.errors.InvalidArgumentError, match="at least k=4 columns"):
        gt.math.top_k(gt.constant([1.0, 2.0]), k=4)
    with pytest.raises(gt.errors.InvalidArgumentError, match="rank >= 1"):
        gt.math.top_k(gt.constant(1.0))


def test_top_k_gradient_scatters_to_the_top_indices():
    x = gt.constant([0.3, 2.0, -1.0, 1.5])
    with gt.GradientTape() as tape:
        tape.watch(x)
        values = gt.math.top_k(x, k=2).values
        y = gt.reduce_sum(values * gt.constant([10.0, 1.0]))
    np.testing.assert_array_equal(tape.gradient(y, x), [0.0, 10.0, 0.0, 1.0])
    data = np.array([[0.3, 2.0, -1.0, 1.5], [1.0, -0.5, 0.2, 0.9]])
    check_first_and_second_order(lambda a: gt.math.top_k(a, k=3).values ** 2, data)
    check_compiled_matches_interpreted(lambda a: gt.math.top_k(a, k=3).values ** 2, data)


def test_searchsorted_docs_example():
    seq = gt.constant([[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]])
    values = gt.constant([[2, 4, 9], [0, 2, 6]])
    np.testing.assert_array_equal(gt.searchsorted(seq, values), [[1, 2, 2], [0, 1, 5]])
    np.testing.assert_array_equal(gt.searchsorted(seq, values, side="right"),
                                  [[1, 2, 4], [0, 2, 5]])
    assert gt.searchsorted(seq, values).dtype == np.int32
    assert gt.searchsorted(seq, values, out_type=gt.int64).dtype == np.int64


def test_searchsorted_in_a_function_takes_new_values():
    f = gt.function(lambda s, v: gt.searchsorted(s, v))
    seq = gt.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(seq, gt.constant([2.5])), [2])
    np.testing.assert_array_equal(f(seq, gt.constant([0.5])), [0])


def test_searchsorted_errors():
    with pytest.raises(gt.errors.InvalidArgumentError, match="leading dimensions"):
        gt.searchsorted(gt.constant([[1, 2]]), gt.constant([[1], [2]]))
    with pytest.raises(ValueError, match="side"):
        gt.searchsorted(gt.constant([1, 2]), gt.constant([1]), side="middle")


def test_unique_docs_examples():
    y, idx = gt.unique(gt.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    np.testing.assert_array_equal(y, [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx, [0, 0, 1, 2, 2, 2, 3, 4, 4])
    y, idx, count = gt.unique_with_counts(gt.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    np.testing.assert_array_equal(count, [2, 1, 3, 1, 2])
    y, idx = gt.unique(gt.constant([3, 1, 3, 2]))  # order of first appearance
    np.testing.assert_array_equal(y, [3, 1, 2])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2])
    with pytest.raises(gt.errors.InvalidArgumentError, match="1D"):
        gt.unique(gt.constant([[1, 2]]))


def test_unique_in_a_function_is_not_stale():
    f = gt.function(lambda x: gt.unique(x).y)
    np.testing.assert_array_equal(f(gt.constant([1, 1, 2])), [1, 2])
    np.testing.assert_array_equal(f(gt.constant([5, 3, 2])), [5, 3, 2])
    np.testing.assert_array_equal(f(gt.constant([4, 4, 4])), [4])


def test_bincount_docs_examples():
    values = gt.constant([1, 1, 2, 3, 2, 4, 4, 5])
    np.testing.assert_array_equal(gt.math.bincount(values), [0, 2, 2, 1, 2, 1])
    weights = gt.constant([1.0, 5.0, 0.0, 1.0, 0.0, 5.0, 4.0, 5.0])
    np.testing.assert_array_equal(gt.math.bincount(values, weights=weights),
                                  [0, 6, 0, 1, 9, 5])
    assert gt.math.bincount(values, weights=weights).dtype == np.float32
    data = gt.constant([[1, 2, 3, 0], [0, 0, 1, 2]])
    np.testing.assert_array_equal(gt.math.bincount(data, axis=-1),
                                  [[1, 1, 1, 1], [2, 1, 1, 0]])
    np.testing.assert_array_equal(gt.math.bincount(data, axis=-1, binary_output=True),
                                  [[1, 1, 1, 1], [1, 1, 1, 0]])
    np.testing.assert_array_equal(gt.bincount(values, minlength=8), [0, 2, 2, 1, 2, 1, 0, 0])
    np.testing.assert_array_equal(gt.bincount(values, maxlength=3), [0, 2, 2])
    with pytest.raises(gt.errors.InvalidArgumentError, match="non-negative"):
        gt.bincount(gt.constant([-1, 2]))


def test_band_part_docs_example():
    x = gt.constant([[0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1], [-3, -2, -1, 0]])
    np.testing.assert_array_equal(gt.linalg.band_part(x, 1, -1),
                                  [[0, 1, 2, 3], [-1, 0, 1, 2], [0, -1, 0, 1], [0, 0, -1, 0]])
    np.testing.assert_array_equal(gt.linalg.band_part(x, 2, 1),
                                  [[0, 1, 0, 0], [-1, 0, 1, 0], [-2, -1, 0, 1], [0, -2, -1, 0]])
    np.testing.assert_array_equal(gt.linalg.band_part(x, 0, 0), np.diag(np.diag(x)))
    a = np.random.default_rng(1).standard_normal((2, 3, 3))
    check_first_and_second_order(lambda m: gt.linalg.band_part(m, 0, -1) ** 2, a)


def test_meshgrid_docs_example():
    x, y = gt.meshgrid([1, 2, 3], [4, 5, 6])
    np.testing.assert_array_equal(x, [[1, 2, 3], [1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(y, [[4, 4, 4], [5, 5, 5], [6, 6, 6]])
    xi, _ = gt.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    assert xi.shape == (3, 2)
    check_first_and_second_order(lambda a: gt.meshgrid(a, a)[0] ** 2, np.array([0.5, 1.5]))


def test_divide_no_nan():
    out = gt.math.divide_no_nan(gt.constant([3.0, 0.0, 1.0]), gt.constant([0.0, 0.0, 2.0]))
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.5])
    x, y = gt.constant([3.0, 1.0]), gt.constant([0.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch([x, y])
        z = gt.reduce_sum(gt.math.divide_no_nan(x, y))
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_array_equal(gx, [0.0, 0.5])
    np.testing.assert_array_equal(gy, [0.0, -0.25])
    check_first_and_second_order(lambda a, b: gt.math.divide_no_nan(a, b),
                                 np.array([1.0, 2.0]), np.array([0.0, 3.0]))
    check_first_and_second_order(lambda b, a: gt.math.divide_no_nan(a, b),
                                 np.array([0.5, 3.0]), np.array([1.0, 2.0]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="one dtype"):
        gt.math.divide_no_nan(gt.constant([1.0]), gt.constant([1]))


def test_l2_normalize_in_math():
    assert gt.math.l2_normalize is gt.nn.l2_normalize
    np.testing.assert_allclose(gt.math.l2_normalize(gt.constant([3.0, 4.0])), [0.6, 0.8])


def test_erf_has_gradients_without_scipy():
    check_first_and_second_order(gt.math.erf, np.array([0.3, -1.2]))


def test_lgamma_digamma_have_gradients():
    pytest.importorskip("scipy")  # the optional extra: without it they raise ImportError
    check_first_and_second_order(gt.math.lgamma, np.array([0.3, 2.5]))
    check_first_and_second_order(gt.math.digamma, np.array([0.7, 2.5]))
