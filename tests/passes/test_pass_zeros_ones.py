"""Zeros and ones: no multiplications by one, additions of zero, or double negations."""

import numpy as np
import pytest
from pass_testing import args_for, assert_same_results, build, needs_nep50, prims, raw, var

import gradtape as gt
from gradtape.ir import interpreter
from gradtape.ir.nodes import Aval, Literal
from gradtape.ir.verifier import verify
from gradtape.ops import elementwise as ew
from gradtape.ops import shape as sh
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.zeros_ones import propagate_zeros_ones


def simplify(program):
    out = eliminate_dead_code(propagate_zeros_ones(program))
    verify(out)
    return out


def ones(shape, dtype=np.float32):
    return raw(sh.broadcast_to_p, np.dtype(dtype).type(1), shape=shape)


def zeros(shape, dtype=np.float32):
    return raw(sh.broadcast_to_p, np.dtype(dtype).type(0), shape=shape)


@pytest.mark.parametrize("make", [
    lambda g: g * 1.0,
    lambda g: 1.0 * g,
    lambda g: g / 1.0,
    lambda g: g * np.float32(1),
    lambda g: g + 0.0,
    lambda g: 0.0 + g,
    lambda g: g - 0.0,
    lambda g: g * ones((2, 3)),
    lambda g: ones((2, 3)) * g,
    lambda g: g / ones((2, 3)),
    lambda g: g + zeros((2, 3)),
    lambda g: gt.zeros_like(g) + g,
    pytest.param(lambda g: g + gt.ones_like(g) * 0.0, marks=needs_nep50),
    lambda g: gt.negative(gt.negative(g)),
], ids=["g*1", "1*g", "g/1", "g*f32(1)", "g+0", "0+g", "g-0", "g*ones", "ones*g", "g/ones",
        "g+zeros", "zeros_like+g", "g+ones*0", "neg(neg)"])
def test_identity_rewrites_leave_just_the_value(make):
    before = build(lambda x: make(gt.sin(x)), var((2, 3)))
    after = simplify(before)
    assert prims(after) == ["sin"]
    assert_same_results(before, after, args_for(before))


@needs_nep50
def test_multiply_by_wider_dtype_one_casts_instead():
    # float32 * np.float64(1) is float64: the multiply may go, the dtype change may not.
    before = build(lambda x: gt.sin(x) * np.float64(1), var((3,)))
    assert before.outputs[0].dtype == np.float64
    after = simplify(before)
    assert prims(after) == ["sin", "cast"]
    assert_same_results(before, after, args_for(before))


def test_integer_divided_by_one_is_a_cast():
    before = build(lambda x: x / 1, var((3,), np.int32))
    after = simplify(before)
    assert prims(after) == ["cast"] and after.outputs[0].dtype == np.float64
    assert_same_results(before, after, args_for(before))


def test_ones_wider_than_the_operand_broadcast_it():
    before = build(lambda x: gt.sin(x) * ones((4, 3)), var((3,)))
    after = simplify(before)
    assert prims(after) == ["sin", "broadcast_to"]
    assert_same_results(before, after, args_for(before))


def test_ones_of_another_dtype_are_not_dropped_silently():
    # float16 x * float32 ones is float32; the rewrite must keep the dtype.
    before = build(lambda x: x * ones((3,)), var((3,), np.float16))
    after = simplify(before)
    assert after.outputs[0].dtype == np.float32
    assert "multiply" not in prims(after)
    assert_same_results(before, after, args_for(before))


def test_zero_cotangents_vanish():
    def f(x, y):
        dead = gt.zeros_like(y) * gt.cos(y)  # a zero cotangent times a derivative
        return gt.sin(x) + dead / y

    before = build(f, var((2, 3)), var((2, 3)))
    after = simplify(before)
    assert prims(after) == ["sin"]
    assert_same_results(before, after, args_for(before))


def test_zero_times_something_wider_is_a_zero_fill():
    before = build(lambda x: zeros((3,)) * x, var((2, 3)))
    after = simplify(before)
    assert prims(after) == ["broadcast_to"] and after.outputs[0].shape == (2, 3)
    assert_same_results(before, after, args_for(before))


def test_zero_minus_g_is_negative_g():
    before = build(lambda x: zeros((2, 3)) - gt.sin(x), var((2, 3)))
    after = simplify(before)
    assert prims(after) == ["sin", "negative"]
    assert_same_results(before, after, args_for(before))


def test_times_minus_one_is_negative():
    before = build(lambda x: gt.sin(x) * -1.0, var((2,)))
    after = simplify(before)
    assert prims(after) == ["sin", "negative"]
    assert_same_results(before, after, args_for(before))


def test_select_between_zeros_is_zero():
    def f(x):
        z = gt.zeros_like(x)
        return gt.where(gt.greater(x, 0.0), z, 0.0)

    before = build(f, var((4,)))
    after = simplify(before)
    assert "where" not in prims(after)
    assert_same_results(before, after, args_for(before))


def test_nontrivial_constants_stay():
    before = build(lambda x: x * 2.0 + 1.0, var((3,)))
    after = simplify(before)
    assert prims(after) == ["multiply", "add"]


@needs_nep50
def test_python_literal_never_replaces_a_var():
    # 1.0 * ones_f32 has float32 avals; the Python float 1.0 is weakly typed, so it may
    # not stand in for the float32 result even though the values agree.
    before = build(lambda x: x * raw(ew.multiply.primitive, 1.0, ones(())), var((3,), np.float16))
    after = simplify(before)
    assert after.outputs[0].dtype == np.float32
    assert_same_results(before, after, args_for(before))


def test_a_shaped_literal_never_replaces_a_var():
    # The implicit seed of a non-scalar target is a literal whose aval has the target's
    # shape but whose value is one scalar (read as that scalar by every equation): it
    # may not stand in for a var of that shape, which a reshape or a sum could read.
    seed = Literal(np.float32(1), Aval((2, 3), np.dtype(np.float32)))
    before = build(lambda x: (gt.negative(gt.negative(seed)), x), var((2, 3)))
    after = simplify(before)
    assert not isinstance(after.outputs[0], Literal)
    assert_same_results(before, after, args_for(before))


def test_a_zero_the_user_wrote_keeps_ieee_arithmetic():
    # The VJP of x * 0.0 is g * 0.0: an infinite g gives NaN, in TF as before the passes.
    before = build(lambda g: g * 0.0 + 1.0, var((3,)))
    after = simplify(before)
    assert "multiply" in prims(after)
    args = [np.array([1.0, np.inf, -2.0], np.float32)]
    assert_same_results(before, after, args)
    assert np.isnan(interpreter.run(after, args)[0][1])


def test_a_materialized_zero_gradient_absorbs_even_infinities():
    # zeros_like(y) is a zero cotangent: it contributes nothing, whatever it multiplies.
    before = build(lambda x, y: gt.zeros_like(y) * gt.reciprocal(x) + y, var((2,)), var((2,)))
    after = simplify(before)
    assert prims(after) == []
    out = interpreter.run(after, [np.zeros(2, np.float32), np.ones(2, np.float32)])[0]
    assert (out == 1).all()


@pytest.mark.parametrize("condition, kept", [(True, "sin"), (False, "cos")])
def test_where_with_a_known_condition_is_the_branch_it_selects(condition, kept):
    # sqrt's VJP is where(equal(g, 0), 0, g * d): the ones seed makes it just g * d.
    def make(x):
        mask = raw(sh.broadcast_to_p, np.bool_(condition), shape=(2, 3))
        return gt.where(mask, gt.sin(x), gt.cos(x))

    before = build(make, var((2, 3)))
    after = simplify(before)
    assert prims(after) == [kept]
    assert_same_results(before, after, args_for(before))


def test_where_with_a_known_condition_selecting_a_literal_is_a_fill():
    def make(x):
        mask = raw(sh.broadcast_to_p, np.bool_(True), shape=(3,))
        return gt.where(mask, 0, gt.sin(x))

    before = build(make, var((3,)))
    after = simplify(before)
    assert "sin" not in prims(after) and "where" not in prims(after)
    assert_same_results(before, after, args_for(before))


def test_sqrt_backward_from_the_seed_has_no_zero_test():
    x = gt.constant(np.array([1.0, 4.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.sqrt(x)
    source = tape.inspect(y, x).source
    assert "where" not in source and "equal" not in source
    assert tape.gradient(y, x).numpy().tolist() == [0.5, 0.25]
