"""TF's control flow and mapping (gradtape/api/control_flow.py): results, structures,
errors, gradients, and no stale branch or iteration count inside ``@gt.function``."""

import collections

import numpy as np
import pytest

import gradtape as gt
from tf_op_checks import check_compiled_matches_interpreted, check_first_and_second_order


def test_cond_and_its_gradient():
    x = gt.constant(2.0)
    assert float(gt.cond(x > 1, lambda: x * 3, lambda: x - 1)) == 6.0
    assert float(gt.cond(False, lambda: x * 3, lambda: x - 1)) == 1.0
    check_first_and_second_order(
        lambda a: gt.cond(gt.reduce_sum(a) > 0, lambda: a ** 3, lambda: gt.sin(a)),
        np.array([0.5, 1.0]))
    with pytest.raises(TypeError, match="scalar bool"):
        gt.cond(gt.constant([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="callable"):
        gt.cond(True, 1, lambda: 2)


def test_cond_in_a_function_is_never_stale():
    f = gt.function(lambda x, p: gt.cond(p > 0, lambda: x * 2.0, lambda: x - 1.0))
    x = gt.constant(3.0)
    assert [float(f(x, gt.constant(p))) for p in (1.0, -1.0, 2.0, -3.0)] == [6, 2, 6, 2]


def test_case_and_switch_case():
    x, y = gt.constant(1), gt.constant(2)
    f1, f2 = (lambda: gt.constant(17)), (lambda: gt.constant(23))
    assert int(gt.case([(x < y, f1)], default=f2)) == 17
    assert int(gt.case([(x > y, f1)], default=f2)) == 23
    assert int(gt.case([(x > y, f1), (x > 0, f2)])) == 23
    with pytest.raises(gt.errors.InvalidArgumentError, match="exclusive"):
        gt.case([(x < y, f1), (x > 0, f2)], exclusive=True)
    branches = {0: lambda: gt.constant(10), 1: lambda: gt.constant(20)}
    assert int(gt.switch_case(gt.constant(1), branches)) == 20
    assert int(gt.switch_case(5, [lambda: 1, lambda: 2], default=lambda: 7)) == 7
    assert int(gt.switch_case(5, [lambda: 1, lambda: 2])) == 2  # the last branch
    f = gt.function(lambda i, v: gt.switch_case(i, [lambda: v * 2.0, lambda: v * 3.0]))
    assert [float(f(gt.constant(i), gt.constant(1.0))) for i in (0, 1, 0)] == [2, 3, 2]


def test_while_loop_docs_examples():
    i = gt.constant(0)
    assert int(gt.while_loop(lambda i: gt.less(i, 10), lambda i: (gt.add(i, 1),), [i])[0]) == 10
    Pair = collections.namedtuple("Pair", "j, k")
    ijk = (gt.constant(0), Pair(gt.constant(1), gt.constant(2)))
    out = gt.while_loop(lambda i, p: i < 10, lambda i, p: (i + 1, Pair(p.j + p.k, p.j - p.k)),
                        ijk)
    assert int(out[0]) == 10 and isinstance(out[1], Pair)
    out = gt.while_loop(lambda i: i < 10, lambda i: i + 1, [0], maximum_iterations=4)
    assert int(out[0]) == 4


def test_while_loop_checks_the_loop_variables():
    with pytest.raises(ValueError, match="shape"):
        gt.while_loop(lambda x: gt.size(x) < 3, lambda x: gt.concat([x, x], 0),
                      [gt.constant([1.0])])
    with pytest.raises(TypeError, match="dtype"):
        gt.while_loop(lambda x: x < 3, lambda x: gt.cast(x, gt.float32) + 1, [gt.constant(0)])
    with pytest.raises(ValueError, match="structure"):
        gt.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), [0, 1])


def test_while_loop_gradient_and_trace():
    def power(x):
        return gt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x))[1]

    check_first_and_second_order(power, np.array([0.7, -1.3]))
    check_compiled_matches_interpreted(power, np.array([0.7, -1.3]))

    @gt.function
    def repeated_doubling(n):
        return gt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0),
                             (0, gt.constant(1.0)))[1]

    assert [float(repeated_doubling(gt.constant(n))) for n in (3, 5, 3)] == [8, 32, 8]


def test_map_fn_nested_elems_and_signature():
    out = gt.map_fn(lambda t: t[0] * t[1], (gt.constant([1, 2, 3]), gt.constant([4, 5, 6])))
    np.testing.assert_array_equal(out, [4, 10, 18])
    out = gt.map_fn(lambda x: (x, -x), gt.constant([3, 5, 2]),
                    fn_output_signature=(gt.int32, gt.int32))
    np.testing.assert_array_equal(out[1], [-3, -5, -2])
    out = gt.map_fn(lambda d: d["a"] + 1.0, {"a": gt.constant([1.0, 2.0])})
    np.testing.assert_array_equal(out, [2.0, 3.0])
    empty = gt.map_fn(lambda x: x * 2, gt.zeros([0, 3]),
                      fn_output_signature=gt.TensorSpec([3], gt.float32))
    assert empty.shape == (0, 3) and empty.dtype == np.float32
    with pytest.raises(TypeError, match="fn_output_signature"):
        gt.map_fn(lambda x: x, gt.constant([1, 2]), fn_output_signature=gt.float32)
    check_first_and_second_order(lambda a: gt.map_fn(lambda r: gt.reduce_sum(r ** 3), a),
                                 np.array([[0.5, 1.0], [-0.3, 0.2]]))


def test_vectorized_map_matches_map_fn_and_differentiates():
    def fn(row):
        return gt.reduce_sum(gt.sin(row) * row) + gt.reduce_max(row)

    data = np.random.default_rng(0).standard_normal((4, 3))
    np.testing.assert_allclose(gt.vectorized_map(fn, gt.constant(data)),
                               gt.map_fn(fn, gt.constant(data)))
    check_first_and_second_order(lambda a: gt.vectorized_map(fn, a), data)
    check_compiled_matches_interpreted(lambda a: gt.vectorized_map(fn, a), data)


def test_vectorized_map_nested_and_fallbacks():
    out = gt.vectorized_map(lambda t: (t[0] + t[1], t[0] * 2.0),
                            (gt.constant([1.0, 2.0]), gt.constant([10.0, 20.0])))
    np.testing.assert_array_equal(out[0], [11.0, 22.0])
    np.testing.assert_array_equal(out[1], [2.0, 4.0])
    # fn reads a value in Python: it cannot be traced, so the loop runs it
    out = gt.vectorized_map(lambda r: r * 2.0 if float(r[0]) > 0 else r, gt.constant([[1.0],
                                                                                   [-1.0]]))
    np.testing.assert_array_equal(out, [[2.0], [-1.0]])
    # a primitive without a batching rule (searchsorted) loops inside the program
    seq = gt.constant([[1.0, 2.0, 3.0], [0.0, 5.0, 9.0]])
    out = gt.vectorized_map(lambda s: gt.searchsorted(s, gt.constant([2.5])), seq)
    np.testing.assert_array_equal(out, [[2], [1]])


def test_scan_foldl_foldr_docs_examples():
    elems = gt.constant([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(gt.scan(lambda a, x: a + x, elems), [1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(gt.scan(lambda a, x: a + x, elems, reverse=True),
                                  [21, 20, 18, 15, 11, 6])
    assert int(gt.foldl(lambda a, x: a + x, elems)) == 21
    assert int(gt.foldr(lambda a, x: a + x, elems)) == 21
    assert int(gt.foldr(lambda a, x: a - x, elems)) == -9  # 6 - 5 - 4 - 3 - 2 - 1
    elems = gt.constant([1.0, 2.0, 3.0])
    pairs = gt.scan(lambda a, x: (a[0] + x, a[1] * x), elems,
                    initializer=(gt.constant(0.0), gt.constant(1.0)))
    np.testing.assert_array_equal(pairs[0], [1.0, 3.0, 6.0])
    np.testing.assert_array_equal(pairs[1], [1.0, 2.0, 6.0])
    with pytest.raises(ValueError, match="initializer"):
        gt.foldl(lambda a, x: a + x, gt.zeros([0]))


def test_scan_gradients():
    def cumulative_product(a):
        return gt.scan(lambda acc, x: acc * x, a, initializer=gt.constant(np.ones(2)))

    data = np.array([[0.5, 1.2], [-0.7, 0.9], [1.1, 2.0]])
    check_first_and_second_order(cumulative_product, data)
    check_first_and_second_order(lambda a: gt.foldr(lambda acc, x: gt.sin(acc) * x, a), data)
    check_compiled_matches_interpreted(cumulative_product, data)
