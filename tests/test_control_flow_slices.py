"""Eager ``scan``/``foldl``/``foldr``/``map_fn`` and ``gt.unstack`` slice a sequence
with one ``unstack`` op, whose gradient stacks the slices' cotangents once: a getitem
per element made each element's cotangent a zero array the size of the whole sequence
(O(T^2) in the backward). Gradients checked against finite differences in float64."""
from __future__ import annotations

import numpy as np
import pytest

import gradtape as gt
from gradtape.ir.lower import PRIM
from gradtape.testing import check_grads


def _recorded(fn, x):
    with gt.GradientTape() as tape:
        tape.watch(x)
        out = fn(x)
    return [rec[PRIM].name for rec in tape._records], tape, out


LOOPS = {
    "foldl": lambda x: gt.foldl(lambda a, e: a * gt.sin(e) + e, x),
    "foldl_init": lambda x: gt.foldl(lambda a, e: a + e * e, x,
                                     initializer=gt.zeros(x.shape[1:], x.dtype)),
    "foldr": lambda x: gt.foldr(lambda a, e: a * 0.5 + gt.tanh(e), x),
    "scan": lambda x: gt.scan(lambda a, e: a * e + 1.0, x),
    "scan_reverse": lambda x: gt.scan(lambda a, e: a - e ** 2, x, reverse=True),
    "map_fn": lambda x: gt.map_fn(lambda e: gt.reduce_sum(e * e), x),
    "scan_nested": lambda x: gt.scan(lambda a, e: (a[0] + e[0] * e[1], a[1] * e[1]),
                                     (x, x * 2.0))[0],
    "unstack": lambda x: gt.stack(gt.unstack(x, axis=1)[::-1]),
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_one_slicing_op_and_no_getitem_per_element(name):
    x = gt.constant(np.random.default_rng(0).standard_normal((6, 3, 2)))
    names, _, _ = _recorded(LOOPS[name], x)
    assert "getitem" not in names
    assert 1 <= names.count("unstack") <= 2  # one per leaf of elems


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_gradients_match_finite_differences(name):
    x = np.random.default_rng(1).standard_normal((5, 3, 2)) * 0.7
    check_grads(LOOPS[name], [x], order=2)


def test_unstack_forward_mode_batching_and_compiled_backward():
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((4, 3))
    x = gt.Variable(xv)
    for _ in range(3):  # interpreted, then the generated backward
        with gt.GradientTape() as tape:
            rows = gt.unstack(x)
            loss = gt.reduce_sum(rows[0] * rows[2] ** 2) + gt.reduce_sum(gt.sin(rows[3]))
        grad = tape.gradient(loss, x).numpy()
        expected = np.zeros_like(xv)
        expected[0], expected[2] = xv[2] ** 2, 2 * xv[0] * xv[2]
        expected[3] = np.cos(xv[3])
        np.testing.assert_allclose(grad, expected, rtol=1e-12)
    with gt.GradientTape() as tape:
        rows = gt.unstack(x * x)
        y = rows[1] + rows[3]
    jacobian = tape.jacobian(y, x).numpy()  # the batching rule
    expected = np.zeros((3, 4, 3))
    for j in range(3):
        expected[j, 1, j], expected[j, 3, j] = 2 * xv[1, j], 2 * xv[3, j]
    np.testing.assert_allclose(jacobian, expected, rtol=1e-12)
    with gt.autodiff.ForwardAccumulator(x, gt.ones_like(x)) as acc:
        column = gt.unstack(x * x, axis=1)[2]
    np.testing.assert_allclose(acc.jvp(column).numpy(), 2 * xv[:, 2], rtol=1e-12)


def test_unstack_inside_function_and_empty():
    @gt.function
    def grad_of_products(v):
        with gt.GradientTape() as tape:
            tape.watch(v)
            rows = gt.unstack(v)
            loss = gt.reduce_sum(rows[0] * rows[1])
        return tape.gradient(loss, v)

    xv = np.random.default_rng(3).standard_normal((3, 2))
    grad = grad_of_products(gt.constant(xv)).numpy()
    np.testing.assert_allclose(grad, np.stack([xv[1], xv[0], np.zeros(2)]))
    assert gt.unstack(gt.zeros((0, 2))) == []
    with pytest.raises(ValueError, match="num=3"):
        gt.unstack(gt.zeros((2, 2)), num=3)
