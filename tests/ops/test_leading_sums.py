"""``unbroadcast``'s sum over leading axes by GEMV (``ops/leading_sums.py``).

Its values against NumPy's in float64, its accuracy in float32 against a float64
reference on data built to make a running sum lose digits (no worse than NumPy's), the
shapes and dtypes it leaves to NumPy, and a dense layer's bias gradient compiled against
interpreted, bit for bit, and against finite differences.
"""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops import leading_sums
from gradtape.ops.leading_sums import MIN_ROWS
from gradtape.ops.shape import unbroadcast_p


def sum_over(x, axes):
    """``x`` summed over ``axes`` as unbroadcast sums it (to NumPy's result shape)."""
    kept = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return unbroadcast_p.impl(x, axes=axes, shape=kept)


@pytest.mark.parametrize("shape, axes", [
    ((2000, 32), (0,)), ((MIN_ROWS, 3), (0,)), ((400, 6), (0,)), ((30, 9, 5), (0, 1)),
    ((300, 2, 4), (0,)), ((MIN_ROWS, 1000), (0,)),
])
def test_float64_values_match_numpys_sum(shape, axes):
    x = np.random.default_rng(0).standard_normal(shape)
    got = sum_over(x, axes)
    expected = np.sum(x, axis=axes)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13 * np.abs(x).sum())


def _adversarial(kind: str, rows: int, rng) -> np.ndarray:
    """float32 columns on which a running sum loses digits."""
    if kind == "normal":
        x = rng.standard_normal((rows, 32))
    elif kind == "large mean":  # every addend small against the running total
        x = 1000.0 + rng.standard_normal((rows, 32))
    elif kind == "wide range":  # magnitudes over ten decades, both signs
        x = rng.lognormal(0.0, 3.0, (rows, 32)) * rng.choice([-1.0, 1.0], (rows, 32))
    elif kind == "cancelling":  # big pairs cancelling, the small remainder is the sum
        x = rng.standard_normal((rows, 32))
        x[::2] = 1e4 * rng.standard_normal((rows // 2, 32))
        x[1::2] = -x[::2] + rng.standard_normal((rows // 2, 32))
    else:  # increasing: the worst order for a running sum
        x = np.sort(rng.lognormal(0.0, 2.0, (rows, 32)), axis=0)
    return x.astype(np.float32)


@pytest.mark.parametrize("rows", [MIN_ROWS, 500, 2000, 20_000])
@pytest.mark.parametrize("kind", ["normal", "large mean", "wide range", "cancelling",
                                  "increasing"])
def test_float32_accuracy_is_no_worse_than_numpys(kind, rows):
    x = _adversarial(kind, rows, np.random.default_rng(rows))
    exact = x.astype(np.float64).sum(axis=0)
    scale = np.abs(x.astype(np.float64)).sum(axis=0)  # the condition of each column sum
    got, numpy = sum_over(x, (0,)), np.sum(x, axis=0)
    assert got.dtype == np.float32 and got.shape == (32,)

    def error(s):
        return np.abs(s.astype(np.float64) - exact) / scale

    # Worst and mean error over the columns; a float32 ulp of slack for ties.
    assert error(got).max() <= error(numpy).max() + 2 ** -24
    assert error(got).mean() <= error(numpy).mean() + 2 ** -24
    assert error(got).max() <= rows * 2 ** -24  # the running sum's own bound


def test_non_contiguous_operands_sum_as_their_contiguous_copy():
    rng = np.random.default_rng(1)
    x = (1000 + rng.standard_normal((300, 32))).astype(np.float32)
    f_order = np.asfortranarray(x)
    strided = np.repeat(x, 2, axis=1)[:, ::2]
    for view in (f_order, strided):
        np.testing.assert_array_equal(sum_over(view, (0,)), sum_over(x, (0,)))


def test_a_broadcast_view_is_summed_by_numpy_not_copied():
    row = np.random.default_rng(5).standard_normal((1, 32)).astype(np.float32)
    view = np.broadcast_to(row, (10_000, 32))
    np.testing.assert_array_equal(sum_over(view, (0,)), np.add.reduce(view, axis=(0,)))


def test_nan_inf_and_empty_columns_sum_as_numpys():
    x = np.ones((300, 4), np.float32)
    x[3, 0], x[5, 1], x[7, 2], x[8, 2] = np.nan, np.inf, np.inf, -np.inf
    np.testing.assert_array_equal(sum_over(x, (0,)), np.sum(x, axis=0))
    empty = np.ones((300, 0), np.float32)
    assert sum_over(empty, (0,)).shape == (0,)


@pytest.mark.parametrize("x, axes", [
    (np.ones((MIN_ROWS - 1, 8), np.float32), (0,)),  # few rows
    (np.ones((2000, 1), np.float32), (0,)),  # one column: NumPy's pairwise sum
    (np.ones((300, 7), np.float32), (1,)),  # not a leading axis
    (np.ones((300, 7, 3)), (0, 2)),
    (np.ones((300, 7), np.int64), (0,)),  # not float32/float64
    (np.ones((300, 7), np.complex128), (0,)),
    (np.ones((300, 7), np.float16), (0,)),
])
def test_other_sums_are_numpys_bit_for_bit(x, axes):
    x = x * np.random.default_rng(2).standard_normal(x.shape).astype(x.dtype)
    got = sum_over(x, axes)
    expected = np.add.reduce(x, axis=axes)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_the_shared_ones_are_read_only_and_long_ones_not_kept():
    assert not leading_sums._ones(300, np.dtype(np.float32)).flags.writeable
    assert leading_sums._ones(300, np.dtype(np.float32)) is leading_sums._ones(
        300, np.dtype(np.float32))
    long = leading_sums._KEPT_ONES + 1
    assert leading_sums._ones(long, np.dtype(np.float64)) is not leading_sums._ones(
        long, np.dtype(np.float64))


def _dense_loss(w, b, x):
    return gt.reduce_sum(gt.tanh(x @ w + b) ** 2)


def _gradients(w, b, x, compile_: bool) -> list[np.ndarray]:
    gt.clear_cache()
    sources = [gt.Variable(w), gt.Variable(b)]
    with gt.config(compile=compile_, compile_after=1):
        with gt.GradientTape() as tape:
            loss = _dense_loss(*sources, x)
        grads = tape.gradient(loss, sources)
    assert gt.cache_info().compiled == int(compile_)
    return [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_bias_gradient_compiled_equals_interpreted_bit_for_bit(dtype):
    rng = np.random.default_rng(3)
    x = gt.constant(rng.standard_normal((500, 4)).astype(dtype))
    w, b = rng.standard_normal((4, 16)).astype(dtype), rng.standard_normal(16).astype(dtype)
    interpreted, compiled = _gradients(w, b, x, False), _gradients(w, b, x, True)
    for i, c in zip(interpreted, compiled):
        assert i.dtype == dtype
        np.testing.assert_array_equal(c, i)
    # The bias gradient is the GEMV's sum of the layer's cotangent, not np.sum's.
    g = 2 * np.tanh(x.numpy() @ w + b) * (1 - np.tanh(x.numpy() @ w + b) ** 2)
    np.testing.assert_allclose(interpreted[1], sum_over(g, (0,)),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_a_bias_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    x = gt.constant(rng.standard_normal((300, 3)))
    w, b = rng.standard_normal((3, 8)), rng.standard_normal(8)
    for compile_ in (False, True):
        with gt.config(compile=compile_, compile_after=1):
            bv = gt.Variable(b)
            with gt.GradientTape() as tape:
                loss = _dense_loss(gt.constant(w), bv, x)
            grad = tape.gradient(loss, bv).numpy()
        eps = 1e-6
        fd = np.array([(float(_dense_loss(gt.constant(w), gt.constant(b + eps * e), x))
                        - float(_dense_loss(gt.constant(w), gt.constant(b - eps * e), x)))
                       / (2 * eps) for e in np.eye(8)])
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)
