"""No-op shape ops removed, chains of shape ops collapsed."""

import numpy as np
from pass_testing import args_for, assert_same_results, build, prims, raw, var

import gradtape as gt
from gradtape.ir.verifier import verify
from gradtape.ops import elementwise as ew
from gradtape.ops import reduce as rd
from gradtape.ops import shape as sh
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.noop_shapes import remove_noop_shapes


def simplify(program):
    out = eliminate_dead_code(remove_noop_shapes(program))
    verify(out)
    return out


def check(fn, *inputs, expect):
    before = build(fn, *inputs)
    after = simplify(before)
    assert prims(after) == expect
    assert_same_results(before, after, args_for(before))
    return after


def test_noops_for_the_static_shapes_disappear():
    def f(x):
        y = raw(sh.reshape_p, gt.sin(x), shape=(2, 3))
        y = raw(sh.transpose_p, y, axes=(0, 1))
        y = raw(sh.broadcast_to_p, y, shape=(2, 3))
        y = raw(sh.unbroadcast_p, y, axes=(), shape=(2, 3))
        y = raw(rd.sum_p, y, axis=(), keepdims=False)
        y = raw(ew.cast_p, y, dtype="float32")
        return raw(sh.identity_p, y)

    check(f, var((2, 3)), expect=["sin"])


def test_reshape_of_reshape_is_one_reshape():
    after = check(lambda x: gt.reshape(gt.reshape(gt.sin(x), (3, 2)), (6,)), var((2, 3)),
                  expect=["sin", "reshape"])
    assert after.eqns[1].params["shape"] == (6,)


def test_reshape_back_to_the_start_is_nothing():
    check(lambda x: gt.reshape(gt.reshape(gt.sin(x), (3, 2)), (2, 3)), var((2, 3)),
          expect=["sin"])


def test_transposes_compose():
    after = check(lambda x: gt.transpose(gt.transpose(x, (1, 2, 0)), (0, 2, 1)), var((2, 3, 4)),
                  expect=["transpose"])
    x = np.arange(24).reshape(2, 3, 4)
    expected = np.transpose(np.transpose(x, (1, 2, 0)), (0, 2, 1))
    np.testing.assert_array_equal(np.transpose(x, after.eqns[0].params["axes"]), expected)


def test_inverse_transposes_cancel():
    check(lambda x: gt.transpose(gt.transpose(gt.sin(x), (2, 0, 1)), (1, 2, 0)), var((2, 3, 4)),
          expect=["sin"])


def test_broadcast_of_broadcast_is_one_broadcast():
    after = check(lambda x: gt.broadcast_to(gt.broadcast_to(x, (2, 3)), (5, 2, 3)), var((3,)),
                  expect=["broadcast_to"])
    assert after.eqns[0].inputs[0] is after.inputs[0]


def test_broadcast_reads_past_a_leading_ones_reshape():
    # expand_reduced's pattern: reshape(g, (1, 1)) then broadcast_to((4, 2)).
    check(lambda x: gt.broadcast_to(gt.reshape(x, (1, 1)), (4, 2)), var(()),
          expect=["broadcast_to"])


def test_broadcast_keeps_a_reshape_that_moves_data():
    check(lambda x: gt.broadcast_to(gt.reshape(x, (3, 1)), (3, 4)), var((3,)),
          expect=["reshape", "broadcast_to"])


def test_unbroadcast_over_no_axes_is_a_reshape():
    check(lambda x: raw(sh.unbroadcast_p, x, axes=(), shape=(3,)), var((3, 1)),
          expect=["reshape"])


def test_elementwise_ops_broadcast_by_themselves():
    check(lambda a, b: a + gt.broadcast_to(b, (2, 3)), var((2, 3)), var((2, 1)),
          expect=["add"])
    check(lambda a, b: a * gt.broadcast_to(gt.reshape(b, (1, 1, 3)), (4, 2, 3)),
          var((4, 2, 3)), var((3,)), expect=["multiply"])


def test_broadcast_that_sets_the_output_shape_stays():
    check(lambda a, b: a + gt.broadcast_to(b, (2, 3)), var((3,)), var((3,)),
          expect=["broadcast_to", "add"])


def test_dtype_changing_noops_stay():
    # sum over no axes of int8 is int64 in NumPy: not the same value type.
    check(lambda x: raw(rd.sum_p, x, axis=(), keepdims=False), var((3,), np.int8),
          expect=["sum"])
    check(lambda x: gt.cast(x, np.float64), var((3,)), expect=["cast"])


def test_reshape_of_unbroadcast_is_one_sum():
    after = check(lambda g: gt.reshape(gt.unbroadcast(g, (4, 1, 5)), (4, 5)), var((4, 3, 5)),
                  expect=["sum"])
    assert after.eqns[0].params == {"axis": (1,), "keepdims": False}


def test_an_unbroadcast_by_gemv_stays_one_through_a_reshape():
    # Over leading axes of >= 256 rows it sums by GEMV (ops/leading_sums), np.sum would not.
    after = check(lambda g: gt.reshape(gt.unbroadcast(g, (1, 3, 5)), (3, 5)), var((300, 3, 5)),
                  expect=["unbroadcast"])
    assert after.eqns[0].params == {"axes": (0,), "shape": (3, 5)}
    after = check(lambda g: gt.unbroadcast(g, (32,)), var((2000, 32)), expect=["unbroadcast"])
    assert after.eqns[0].params == {"axes": (0,), "shape": (32,)}
    # Too few rows, or one column: NumPy's sum, as before.
    check(lambda g: gt.unbroadcast(g, (32,)), var((64, 32)), expect=["sum"])
    check(lambda g: gt.unbroadcast(g, (1,)), var((2000, 1)), expect=["sum"])


def test_reshape_of_sum_is_one_sum():
    after = check(lambda g: gt.reshape(gt.sum(g, axis=(0, 2)), (1, 3, 1)), var((4, 3, 5)),
                  expect=["sum"])
    assert after.eqns[0].params == {"axis": (0, 2), "keepdims": True}


def test_reshape_that_moves_summed_data_stays():
    check(lambda g: gt.reshape(gt.sum(g, axis=0), (6, 1)), var((4, 2, 3)),
          expect=["sum", "reshape"])


def test_broadcast_keeps_a_reshape_that_drops_leading_ones_it_cannot_restore():
    # reshape((1, 1) -> (1,)) then broadcast_to((2,)): broadcasting the (1, 1) source to
    # a rank-1 shape is an error, so the reshape stays (it came from a @gt.function's
    # backward through tensordot of an expand_dims'd sum).
    check(lambda x: gt.broadcast_to(gt.reshape(gt.sin(x), (1,)), (2,)), var((1, 1)),
          expect=["sin", "reshape", "broadcast_to"])
