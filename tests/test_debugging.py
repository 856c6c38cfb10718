"""gt.debugging's assertions and gt.nest (gradtape/api/debugging.py)."""

import collections

import numpy as np
import pytest

import gradtape as gt

IAE = gt.errors.InvalidArgumentError


def test_comparison_assertions():
    x = gt.constant([1, 2])
    assert gt.debugging.assert_equal(x, [1, 2]) is None
    with pytest.raises(IAE, match="my message"):
        gt.debugging.assert_equal(x, [1, 3], message="my message")
    gt.debugging.assert_less(x, 3)
    with pytest.raises(IAE, match="x < y"):
        gt.debugging.assert_less(x, 2)
    gt.debugging.assert_greater(x, 0)
    with pytest.raises(IAE):
        gt.debugging.assert_greater(x, 1)
    with pytest.raises(IAE):
        gt.debugging.assert_positive(gt.constant([1.0, 0.0]))
    gt.debugging.assert_non_negative(gt.constant([1.0, 0.0]))


def test_assert_near_default_tolerance():
    gt.debugging.assert_near(gt.constant([1.0]), gt.constant([1.0 + 1e-7]))
    with pytest.raises(IAE):
        gt.debugging.assert_near(gt.constant([1.0]), gt.constant([1.001]))
    gt.debugging.assert_near(gt.constant([1.0]), gt.constant([1.001]), atol=0.01)


def test_check_numerics_and_assert_all_finite():
    x = gt.constant([1.0, 2.0])
    np.testing.assert_array_equal(gt.debugging.check_numerics(x, "ok"), x)
    with pytest.raises(IAE, match="bad : Tensor had NaN values"):
        gt.debugging.check_numerics(gt.constant([1.0, np.nan]), "bad")
    with pytest.raises(IAE, match="Inf"):
        gt.debugging.assert_all_finite(gt.constant([np.inf]), "bad")


def test_assert_in_a_function_checks_every_call():
    @gt.function
    def f(x):
        gt.debugging.assert_less(x, 10.0)
        return x * 2.0

    assert float(f(gt.constant(1.0))) == 2.0
    assert float(f(gt.constant(2.0))) == 4.0
    with pytest.raises(IAE):
        f(gt.constant(11.0))


def test_static_assertions():
    gt.debugging.assert_rank(gt.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match="rank 3"):
        gt.debugging.assert_rank(gt.zeros([2, 3]), 3)
    x, y = gt.zeros([2, 3]), gt.zeros([3])
    gt.debugging.assert_shapes([(x, ("N", "Q")), (y, ("Q",))])
    gt.debugging.assert_shapes([(x, ("*", 3))])
    with pytest.raises(ValueError, match="'Q'"):
        gt.debugging.assert_shapes([(x, ("N", "Q")), (gt.zeros([2]), ("Q",))])
    with pytest.raises(ValueError, match="rank"):
        gt.debugging.assert_shapes([(x, ("N",))])


def test_nest():
    structure = {"b": [1, 2], "a": (3, {"c": 4})}
    assert gt.nest.flatten(structure) == [3, 4, 1, 2]
    assert gt.nest.pack_sequence_as(structure, [5, 6, 7, 8]) == {"b": [7, 8],
                                                                  "a": (5, {"c": 6})}
    assert gt.nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == \
        [11, (22, 33)]
    assert gt.nest.is_nested([1]) and not gt.nest.is_nested(gt.constant(1))
    Point = collections.namedtuple("Point", "x y")
    assert gt.nest.map_structure(lambda v: v * 2, Point(1, 2)) == Point(2, 4)
    with pytest.raises(ValueError, match="structure"):
        gt.nest.map_structure(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match="structure"):
        gt.nest.assert_same_structure([1, [2]], [1, 2])
