"""Broadcasting products regrouped: ``(A * v) * w`` -> ``A * (v * w)``, and the sign of
``-(A * v)`` moved onto the smaller factor, so the matrix-sized work is done once."""

import numpy as np
import pytest
from pass_testing import args_for, assert_same_results, build, prims, var

import gradtape as gt
from gradtape.ir.verifier import verify
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.simplify import simplify


def optimized(program):
    out = eliminate_dead_code(simplify(program))
    verify(out)
    return out


def _matrix_sized(program):
    """How many equations produce an array of the program output's size."""
    size = int(np.prod(program.outputs[0].shape))
    return sum(int(np.prod(e.outs[0].shape)) == size for e in program.eqns)


@pytest.mark.parametrize("make", [
    lambda a, v, w: a * v * w,
    lambda a, v, w: w * (v * a),
    lambda a, v, w: (a * v) * gt.sin(w),
], ids=["(a*v)*w", "w*(v*a)", "(a*v)*sin(w)"])
def test_a_matrix_scaled_by_two_vectors_is_one_matrix_product(make):
    before = build(make, var((4, 5), np.float64), var((5,), np.float64),
                   var((5,), np.float64))
    after = optimized(before)
    assert _matrix_sized(before) == 2 and _matrix_sized(after) == 1
    assert_same_results(before, after, args_for(before), exact=False)  # reassociated


def test_negation_moves_onto_the_smaller_factor():
    before = build(lambda a, v: gt.negative(a * v), var((4, 5), np.float64),
                   var((4, 1), np.float64))
    after = optimized(before)
    assert prims(after) == ["negative", "multiply"]
    assert after.eqns[0].outs[0].shape == (4, 1)  # the negation runs on the column
    assert_same_results(before, after, args_for(before))


def test_left_alone_when_it_would_not_save_work_or_is_integer():
    same_size = build(lambda a, b, c: a * b * c, var((3, 2)), var((3, 2)), var((3, 2)))
    integers = build(lambda a, v, w: a * v * w, var((4, 5), np.int64), var((5,), np.int64),
                     var((5,), np.int64))
    for program in (same_size, integers):
        assert _matrix_sized(optimized(program)) == _matrix_sized(program)


def test_a_product_read_twice_is_not_regrouped():
    def make(a, v, w):
        av = a * v
        return av * w, av

    before = build(make, var((4, 5)), var((5,)), var((5,)))
    after = optimized(before)
    assert prims(after) == prims(before)
