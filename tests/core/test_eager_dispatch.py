"""Eager ops run Python's operators where NumPy's scalar math is faster: the results
must be exactly what the NumPy ufunc gives, and array-likes must keep NumPy's rules."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops.operands import _NUMPY1, weak_scalars

BINARY = [(gt.add, np.add), (gt.subtract, np.subtract), (gt.multiply, np.multiply),
          (gt.divide, np.true_divide)]


def _scalar_tensor(value, dtype):
    # An op's result on a 0-d tensor is a NumPy scalar, as NumPy returns it.
    return gt.constant(np.asarray(value, dtype)) + np.asarray(0, dtype)


@pytest.mark.parametrize("op, ufunc", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64"])
def test_scalar_results_match_the_ufunc(op, ufunc, dtype):
    x, y = _scalar_tensor(3, dtype), _scalar_tensor(2, dtype)
    for a, b in [(x, y), (x, 0.5), (2, y), (x, True)]:
        got = op(a, b)
        # The ufunc on what the op passes on (NumPy 2's weak Python scalars, which the op
        # applies itself under NumPy 1).
        passed = weak_scalars(a, b) if _NUMPY1 else (a, b)
        want = ufunc(*(t.numpy() if isinstance(t, gt.Tensor) else t for t in passed))
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("op", [gt.add, gt.multiply])
def test_lists_beside_integer_scalars_are_arrays_not_sequences(op):
    # Python's `[1, 2] * 3` repeats the list and `[1, 2] + x` concatenates; NumPy
    # broadcasts. An integer 0-d tensor or NumPy scalar must not trigger the former.
    for three in (gt.constant(3), _scalar_tensor(3, "int64")):
        got = op([1, 2], three)
        np.testing.assert_array_equal(got.numpy(), op(np.array([1, 2]), three).numpy())
        assert got.shape == (2,)


def test_gradients_through_scalar_ops_are_exact():
    x = gt.constant(np.float64(0.7))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.sin(x) * x + gt.cos(x) * 0.5 - x / 3.0
    dx = tape.gradient(y, x)
    v = 0.7
    expected = np.cos(v) * v + np.sin(v) - 0.5 * np.sin(v) - 1 / 3.0
    assert dx.dtype == np.float64
    np.testing.assert_allclose(dx.numpy(), expected, rtol=1e-15)
