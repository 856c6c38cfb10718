"""Scans and products (ops/scan.py): prod and cumprod exact with zeros to third order,
cumsum and cumprod values against NumPy and TensorFlow, forward mode and the batching
rules of cumprod's derivative (shift and linear recurrence)."""

import numpy as np
import pytest
from test_reduce import _distinct, rng

import gradtape as gt
from gradtape.testing import check_grads

# --- prod and cumprod with zeros ---------------------------------------------------------

ZEROS = {
    "one zero": np.array([[2.0, 0.0, -1.5, 0.5], [1.0, 3.0, -2.0, 0.25]]),
    "two zeros": np.array([[0.0, 2.0, 0.0, -1.5], [1.0, 0.0, 3.0, 0.0]]),
    "all zero": np.zeros((2, 4)),
}


@pytest.mark.parametrize("case", list(ZEROS))
@pytest.mark.parametrize("axis", [None, 1, 0, (0, 1)], ids=str)
def test_prod_with_zeros_third_order(case, axis):
    check_grads(lambda t: gt.prod(t, axis=axis), [ZEROS[case]], order=3)


def test_prod_gradient_with_one_zero_is_product_of_the_others():
    x = gt.constant(np.array([2.0, 0.0, 3.0, 4.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.prod(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 24.0, 0.0, 0.0])


@pytest.mark.parametrize("case", list(ZEROS))
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_with_zeros_third_order(case, exclusive, reverse):
    check_grads(lambda t: gt.cumprod(t, 1, exclusive=exclusive, reverse=reverse),
                [ZEROS[case]], order=3)


@pytest.mark.parametrize("op,reference", [(gt.cumsum, np.cumsum), (gt.cumprod, np.cumprod)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
def test_scans_values_and_second_order(op, reference, axis):
    x = rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4))
    np.testing.assert_allclose(op(gt.constant(x), axis).numpy(), reference(x, axis), rtol=1e-12)
    npfunc = getattr(np, reference.__name__)
    np.testing.assert_allclose(npfunc(gt.constant(x), axis=axis).numpy(), reference(x, axis))
    check_grads(lambda t: op(t, axis), [x], order=2)


@pytest.mark.parametrize("op", [gt.cumsum, gt.cumprod])
def test_scans_exclusive_and_reverse_values_match_tensorflow(op):
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    t = gt.constant(x)
    if op is gt.cumsum:
        expected = {(False, False): [[1, 3, 6], [4, 9, 15]], (True, False): [[0, 1, 3], [0, 4, 9]],
                    (False, True): [[6, 5, 3], [15, 11, 6]], (True, True): [[5, 3, 0], [11, 6, 0]]}
    else:
        expected = {(False, False): [[1, 2, 6], [4, 20, 120]],
                    (True, False): [[1, 1, 2], [1, 4, 20]],
                    (False, True): [[6, 6, 3], [120, 30, 6]],
                    (True, True): [[6, 3, 1], [30, 6, 1]]}
    for (exclusive, reverse), want in expected.items():
        out = op(t, axis=1, exclusive=exclusive, reverse=reverse)
        np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("op", [gt.cumsum, gt.cumprod])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_forward_mode(op, exclusive, reverse, check_jvp):
    x = ZEROS["one zero"] if op is gt.cumprod else _distinct((2, 4))
    check_jvp(lambda t: op(t, 1, exclusive=exclusive, reverse=reverse), [x])


def test_cumprod_second_order_at_zero_is_exact():
    # y = x0 * x1 * x2 (the last cumprod entry): d2y/dx0dx1 = x2, nonzero even at x0 = 0.
    x = gt.constant(np.array([0.0, 0.0, 5.0]))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.cumprod(x)[2]
        g = inner.gradient(y, x)
        g1 = g[1]
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(outer.gradient(g1, x).numpy(), [5.0, 0.0, 0.0])


def test_batching_rules_of_the_cumprod_derivative(check_batching):
    # The backward of cumprod holds the shift and linear-recurrence primitives.
    from gradtape.ops import scan

    x, g = _distinct((3, 4)), _distinct((3, 4))
    check_batching(lambda t, c: scan.cumprod_p.vjp(c, None, t, axis=1, exclusive=True,
                                                   reverse=False)[0], [x, g], [True, False])
    check_batching(lambda t, c: scan.cumprod_p.vjp(c, None, t, axis=0, exclusive=False,
                                                   reverse=True)[0], [x, g], [False, True])
