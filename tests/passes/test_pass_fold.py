"""Constant folding: known fills and all-literal equations computed at compile time."""

import numpy as np
from pass_testing import (
    args_for,
    assert_same_results,
    build,
    literal_values,
    needs_nep50,
    prims,
    raw,
    var,
)

import gradtape as gt
from gradtape.ir.nodes import Aval, Literal
from gradtape.ir.verifier import verify
from gradtape.ops import elementwise as ew
from gradtape.ops import shape as sh
from gradtape.ops.registry import Primitive
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.fold import fold_constants


def fold(program):
    out = eliminate_dead_code(fold_constants(program))
    verify(out)
    return out


def test_seed_chain_collapses_to_one_broadcast():
    def f(x):
        ones = raw(sh.reshape_p, np.float32(1), shape=(1, 1))
        ones = raw(sh.broadcast_to_p, ones, shape=(4, 2))
        ones = raw(sh.reshape_p, ones, shape=(4, 1, 2))
        ones = raw(sh.broadcast_to_p, ones, shape=(4, 5, 2))
        return ones, gt.sin(x)

    before = build(f, var((3,)))
    after = fold(before)
    assert prims(after) == ["broadcast_to", "sin"]
    (c,) = literal_values(after)
    assert isinstance(c, np.float32) and c == 1
    assert_same_results(before, after, args_for(before))


@needs_nep50
def test_scalar_literals_fold_and_keep_their_dtype():
    # np.float32 * np.float32 is float32: the folded literal must stay float32, so that
    # x_float16 * it is still float32 (a Python float would make it float16).
    before = build(lambda x: x * raw(ew.multiply.primitive, np.float32(2), np.float32(3)),
                   var((3,), np.float16))
    after = fold(before)
    assert prims(after) == ["multiply"]
    (c,) = literal_values(after)
    assert type(c) is np.float32 and c == 6
    assert after.outputs[0].dtype == np.float32
    assert_same_results(before, after, args_for(before))


@needs_nep50
def test_python_float_literals_fold_to_float64():
    # 2.0 * 3.0 on Python floats runs as float64: x_f32 * that 0-d float64 is float64.
    before = build(lambda x: x * raw(ew.multiply.primitive, 2.0, 3.0), var((3,)))
    assert before.outputs[0].dtype == np.float64
    after = fold(before)
    (c,) = literal_values(after)
    assert type(c) is np.float64 and c == 6
    assert_same_results(before, after, args_for(before))


def test_scalar_output_becomes_literal():
    before = build(lambda x: (gt.sin(x), raw(sh.reshape_p, np.float64(3), shape=())), var((2,)))
    after = fold(before)
    assert prims(after) == ["sin"]
    assert isinstance(after.outputs[1], Literal) and after.outputs[1].value == 3
    assert_same_results(before, after, args_for(before))


def test_zeros_like_stops_reading_its_input():
    before = build(lambda x: gt.zeros_like(gt.cos(x)) + gt.sin(x), var((2, 3)))
    after = fold(before)
    assert "cos" not in prims(after) and "zeros_like" not in prims(after)
    assert_same_results(before, after, args_for(before))


def test_fill_operand_becomes_scalar_literal():
    def f(x):
        twos = raw(sh.broadcast_to_p, np.float32(2), shape=(2, 3))
        return gt.multiply(x, twos)

    before = build(f, var((2, 3)))
    after = fold(before)
    assert prims(after) == ["multiply"]
    assert literal_values(after) == [2]
    assert_same_results(before, after, args_for(before))


def test_fill_that_sets_the_output_shape_stays():
    def f(x):
        twos = raw(sh.broadcast_to_p, np.float32(2), shape=(4, 3))
        return gt.multiply(x, twos)  # x is (3,): the fill makes the output (4, 3)

    before = build(f, var((3,)))
    after = fold(before)
    assert after.outputs[0].shape == (4, 3)
    assert_same_results(before, after, args_for(before))


@needs_nep50
def test_elementwise_of_fills_is_a_fill():
    def f(x):
        ones = gt.ones_like(x)
        return gt.sin(ones * 3.0) + x

    before = build(f, var((2, 2)))
    after = fold(before)
    assert prims(after) == ["add"]
    assert_same_results(before, after, args_for(before))


def test_non_scalar_literal_only_result_is_not_a_literal():
    before = build(lambda x: (x, raw(sh.reshape_p, np.float32(5), shape=(1, 1))), var((2,)))
    after = fold(before)
    assert not isinstance(after.outputs[1], Literal)
    assert after.outputs[1].shape == (1, 1)
    assert_same_results(before, after, args_for(before))


def test_nan_fills_fold():
    before = build(lambda x: x + raw(sh.reshape_p, np.float32("nan"), shape=(1,)), var((3,)))
    after = fold(before)
    assert_same_results(before, after, args_for(before))


def _checked_impl(x):
    if x == 0:
        raise ZeroDivisionError("only at run time")
    return np.reciprocal(x)


_checked = Primitive("checked_reciprocal", _checked_impl,
                     shape_rule=lambda x: Aval(x.shape, x.dtype))


def test_folding_that_fails_is_left_for_run_time():
    before = build(lambda x: x + raw(_checked, np.float32(4)) + raw(_checked, np.float32(0)),
                   var((2,)))
    after = fold(before)
    assert prims(after).count("checked_reciprocal") == 1  # 1/4 folded, 1/0 kept
    assert 0.25 in literal_values(after)


def test_power_of_two_scales_combine():
    # A mean of squares: g * 2.0 * (1 / n). Scaling by 2 is exact, so one multiply by
    # 2 / n rounds exactly as the two did.
    before = build(lambda x: (x * 2.0) * np.float32(0.1), var((5,)))
    after = fold(before)
    assert prims(after) == ["multiply"]
    assert literal_values(after) == [np.float32(0.2)]
    assert_same_results(before, after, args_for(before))


def test_other_scales_stay_apart():
    before = build(lambda x: (x * 3.0) * np.float32(0.1), var((5,)))
    assert prims(fold(before)) == ["multiply", "multiply"]


def test_scales_across_dtypes_stay_apart():
    # float16 * 2.0 may overflow to inf where float32 * 0.2 would not.
    before = build(lambda x: (x * 2.0) * np.float32(0.1), var((5,), np.float16))
    assert prims(fold(before)) == ["multiply", "multiply"]


def test_scales_whose_product_is_subnormal_stay_apart():
    tiny = np.finfo(np.float32).tiny
    before = build(lambda x: (x * 0.5) * np.float32(tiny), var((5,)))
    assert prims(fold(before)) == ["multiply", "multiply"]


def test_exact_sums_of_fills_fold():
    # mean's VJP of a ones seed: -1 summed over 3 rows is exactly -3 in any order.
    def f(x):
        fill = raw(sh.broadcast_to_p, np.float64(-1), shape=(3, 4))
        return x + gt.unbroadcast(fill, (4,)) / 3 + gt.sum(fill, axis=(0, 1))

    before = build(f, var((4,), np.float64))
    after = fold(before)
    assert prims(after) == ["add", "add"]
    assert_same_results(before, after, args_for(before))


def test_inexact_sums_of_fills_stay():
    # 0.1f has a 24-bit mantissa: 0.1f + 0.1f + 0.1f may round differently than 3 * 0.1f.
    def f(x):
        return x + gt.sum(raw(sh.broadcast_to_p, np.float32(0.1), shape=(3, 4)), axis=0)

    before = build(f, var((4,)))
    after = fold(before)
    assert "sum" in prims(after)
    assert_same_results(before, after, args_for(before))


def test_integer_sums_of_fills_fold_in_the_sum_dtype():
    def f(x):
        ones = gt.ones_like(x)  # int32; np.sum of int32 is the platform integer
        return gt.sum(ones, axis=0)

    before = build(f, var((5, 2), np.int32))
    after = fold(before)
    assert prims(after) == ["broadcast_to"]
    assert_same_results(before, after, args_for(before))
