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


@pytest.mark.parametrize("make, combine", [
    (lambda a, b, c: a * b + a * c, "add"),
    (lambda a, b, c: b * a - c * a, "subtract"),
    (lambda a, b, c: a * b - c * a, "subtract"),
], ids=["a*b+a*c", "b*a-c*a", "a*b-c*a"])
def test_a_shared_factor_is_multiplied_once(make, combine):
    before = build(make, var((6,), np.float64), var((6,), np.float64), var((6,), np.float64))
    after = optimized(before)
    assert prims(after) == [combine, "multiply"]
    assert_same_results(before, after, args_for(before), exact=False)


def test_a_shared_factor_read_elsewhere_or_integer_is_left_alone():
    def shared(a, b, c):
        ab = a * b
        return ab + a * c, ab

    programs = [build(shared, var((6,)), var((6,)), var((6,))),
                build(lambda a, b, c: a * b + a * c, var((6,), np.int32), var((6,), np.int32),
                      var((6,), np.int32))]
    for before in programs:
        assert prims(optimized(before)) == prims(before)


def test_the_gradient_of_exp_of_minus_x_squared_multiplies_once():
    x = gt.constant(np.linspace(-1.0, 1.0, 5))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.exp(-x * x))
    source = tape.inspect(y, x).source
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert code.count(" * ") == 1, source
    v = x.numpy()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), -2 * v * np.exp(-v * v))
