"""Negations absorbed by the adds, subtracts and constant multiplies next to them."""

import numpy as np
import pytest
from pass_testing import (
    args_for,
    assert_same_results,
    build,
    literal_values,
    needs_nep50,
    prims,
    var,
)

import gradtape as gt
from gradtape.ir.verifier import verify
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.signs import fold_negations


def simplify(program):
    out = eliminate_dead_code(fold_negations(program))
    verify(out)
    return out


@pytest.mark.parametrize("make, expect", [
    (lambda x, y: x + gt.negative(y), ["subtract"]),
    (lambda x, y: gt.negative(y) + x, ["subtract"]),
    (lambda x, y: x - gt.negative(y), ["add"]),
    (lambda x, y: gt.negative(x) * gt.negative(y), ["multiply"]),
    (lambda x, y: x + y * gt.negative(gt.sin(x)), ["sin", "multiply", "subtract"]),
    (lambda x, y: x - gt.negative(gt.sin(x)) * y, ["sin", "multiply", "add"]),
], ids=["x+-y", "-y+x", "x--y", "-x*-y", "x+y*-s", "x--s*y"])
def test_negations_fold_into_adds_and_products(make, expect):
    before = build(make, var((2, 3)), var((2, 3)))
    after = simplify(before)
    assert prims(after) == expect
    assert_same_results(before, after, args_for(before))


def test_negated_operand_times_a_constant():
    before = build(lambda x: gt.negative(x) * 0.5, var((3,)))
    after = simplify(before)
    assert prims(after) == ["multiply"] and literal_values(after) == [-0.5]
    assert type(literal_values(after)[0]) is float  # still weakly typed: float32 result
    assert_same_results(before, after, args_for(before))


@needs_nep50
def test_negated_constant_product():
    before = build(lambda x: gt.negative(x * np.float64(3)), var((3,)))
    after = simplify(before)
    assert prims(after) == ["multiply"] and after.outputs[0].dtype == np.float64
    assert type(literal_values(after)[0]) is np.float64
    assert_same_results(before, after, args_for(before))


def test_shared_product_is_not_duplicated():
    # y * -s is read twice: rewriting one reader would add a multiply, not save one.
    def f(x, y):
        p = y * gt.negative(gt.sin(x))
        return x + p, p * 2.0

    before = build(f, var((3,)), var((3,)))
    after = simplify(before)
    assert len(after.eqns) <= len(before.eqns)
    assert_same_results(before, after, args_for(before))


def test_integer_constants_are_not_negated():
    # -(-2**31) overflows: leave integer products alone.
    before = build(lambda x: gt.negative(x) * np.int32(-2**31), var((3,), np.int32))
    after = simplify(before)
    assert prims(after) == ["negative", "multiply"]


def test_negation_sinks_through_sums_to_the_subtract_that_absorbs_it():
    # subtract's VJP: unbroadcast(-g) feeding an add: the add becomes a subtract.
    def f(x, g):
        return x + gt.unbroadcast(gt.negative(g), (3,)) / 4.0

    before = build(f, var((3,)), var((2, 3)))
    after = simplify(before)
    assert prims(after) == ["unbroadcast", "divide", "subtract"]
    assert_same_results(before, after, args_for(before), exact=False)


def test_negation_does_not_sink_into_a_bigger_array():
    before = build(lambda a, b: gt.negative(a) * b, var((3,)), var((4, 3)))
    after = simplify(before)
    assert prims(after) == ["negative", "multiply"]


def test_negation_read_twice_stays():
    def f(x, g):
        n = gt.negative(g)
        return gt.sum(n, axis=0), n * x

    before = build(f, var((3,)), var((2, 3)))
    after = simplify(before)
    assert prims(after).count("negative") == 1
    assert_same_results(before, after, args_for(before))


def test_negative_minus_something_is_a_negated_sum():
    before = build(lambda x, y: gt.sum(gt.negative(x) - y) + 1.0, var((3,)), var((3,)))
    after = simplify(before)
    assert prims(after) == ["add", "sum", "subtract"]  # 1.0 - sum(x + y)
    assert_same_results(before, after, args_for(before), exact=False)
