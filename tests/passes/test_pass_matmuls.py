"""Matrix products NumPy runs off BLAS: outer products become broadcast multiplies, and a
product with a broadcast fill becomes sums of the other operand."""

import numpy as np
import pytest
from pass_testing import args_for, assert_same_results, build, prims, raw, var

import gradtape as gt
from gradtape.ir.verifier import verify
from gradtape.ops import shape as sh
from gradtape.passes.dce import eliminate_dead_code
from gradtape.passes.simplify import simplify


def fill(shape, value, dtype=np.float32):
    """A broadcast fill, as autodiff seeds and folds them."""
    return raw(sh.broadcast_to_p, np.dtype(dtype).type(value), shape=shape)


def optimized(program):
    out = eliminate_dead_code(simplify(program))
    verify(out)
    return out


@pytest.mark.parametrize("a_shape, b_shape", [
    ((50, 1), (1, 7)), ((3, 50, 1), (1, 7)), ((50, 1), (4, 1, 7)), ((2, 5, 1), (2, 1, 3))])
def test_a_product_over_a_size_one_axis_is_a_broadcast_multiply(a_shape, b_shape):
    before = build(lambda a, b: a @ b, var(a_shape), var(b_shape))
    after = optimized(before)
    assert prims(after) == ["multiply"]
    assert_same_results(before, after, args_for(before))  # one product per element


def test_a_ones_seed_times_a_row_is_a_broadcast_view():
    """The seed of gradient(u, x) meets a (1, n) kernel row: no work at all."""
    before = build(lambda w: fill((50, 1), 1) @ w, var((1, 7)))
    after = optimized(before)
    assert prims(after) == ["broadcast_to"]
    assert_same_results(before, after, args_for(before))


@pytest.mark.parametrize("c", [1.0, -2.5])
@pytest.mark.parametrize("rows", [1, 3])
def test_a_fill_times_a_matrix_is_its_column_sums(c, rows):
    before = build(lambda h: fill((rows, 40), c) @ h, var((40, 6)))
    after = optimized(before)
    assert "matmul" not in prims(after) and "sum" in prims(after)
    # c == 1 sums the rows in the order NumPy's loop does; a scale rounds once more
    assert_same_results(before, after, args_for(before), exact=(c == 1.0))


@pytest.mark.parametrize("c", [1.0, 0.5])
def test_a_matrix_times_a_fill_is_its_row_sums(c):
    before = build(lambda h: h @ fill((40, 2), c, np.float64), var((9, 40), np.float64))
    after = optimized(before)
    assert "matmul" not in prims(after)
    assert_same_results(before, after, args_for(before), exact=False)


def test_ordinary_products_vectors_and_integers_are_left_alone():
    for make, shapes, dtype in [
        (lambda a, b: a @ b, ((5, 3), (3, 4)), np.float32),
        (lambda a, b: a @ b, ((5, 1), (1, 4)), np.int64),
        (lambda a, b: gt.linalg.matvec(a, b), ((5, 3), (3,)), np.float32),
        (lambda a, b: fill((2, 5, 3), 1) @ b, ((1,), (3, 4)), np.float32),
    ]:
        before = build(make, *(var(s, dtype) for s in shapes))
        assert "matmul" in prims(before) or "matvec" in prims(before)
        assert prims(optimized(before)) == prims(before)


def test_second_derivatives_through_the_rewritten_products_match_finite_differences():
    """u_x and u_xx of a tanh layer in x (the PINN's nested tapes, whose seeds of ones
    meet the kernels in outer products and fill products), compiled, against central
    differences and the interpreted function, and a loss gradient in the kernel against
    central differences of the closed form, all in float64."""
    rng = np.random.default_rng(5)
    w1, b1 = rng.standard_normal((2, 8)), rng.standard_normal(8)
    w2, b2 = rng.standard_normal((8, 1)), rng.standard_normal(1)
    w2v = gt.Variable(w2)
    x0, t0 = rng.uniform(-1, 1, (6, 1)), rng.uniform(0, 1, (6, 1))

    @gt.function
    def derivatives(x, t):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as second:
                second.watch(x)
                with gt.GradientTape(persistent=True) as first:
                    first.watch([x, t])
                    u = gt.tanh(gt.concat([x, t], axis=1) @ w1 + b1) @ w2v + b2
                u_x = first.gradient(u, x)
            u_xx = second.gradient(u_x, x)
            loss = gt.reduce_sum(u_xx * u_x)
        return u_x, u_xx, outer.gradient(loss, w2v)

    def closed_form(w):
        """u, u_x and u_xx of the layer with output kernel ``w``, by hand."""
        y = np.tanh(np.hstack([x0, t0]) @ w1 + b1)
        dy = 1 - y * y
        return y @ w + b2, (dy * w1[0]) @ w, (-2 * y * dy * w1[0] ** 2) @ w

    x, t = gt.constant(x0), gt.constant(t0)
    source = derivatives.get_concrete_function(x, t).source
    assert "@ broadcast_to(" not in source and "broadcast_to(float64_1p0, (1," not in source
    h = 1e-4

    def u_at(dx):
        return closed_form(w2)[0] if dx == 0 else (
            np.tanh(np.hstack([x0 + dx, t0]) @ w1 + b1) @ w2 + b2)

    u_x_fd = (u_at(h) - u_at(-h)) / (2 * h)
    u_xx_fd = (u_at(h) - 2 * u_at(0) + u_at(-h)) / h**2
    eager = derivatives.python_function(x, t)
    for _ in range(2):  # traced, then compiled
        compiled = derivatives(x, t)
        np.testing.assert_allclose(compiled[0].numpy(), u_x_fd, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(compiled[1].numpy(), u_xx_fd, rtol=1e-4, atol=1e-6)
        for c, e in zip(compiled, eager):
            np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)

    def loss_at(w):
        _, u_x, u_xx = closed_form(w)
        return np.sum(u_xx * u_x)

    eps = 1e-6
    for i in range(8):
        step = np.zeros_like(w2)
        step[i, 0] = eps
        expected = (loss_at(w2 + step) - loss_at(w2 - step)) / (2 * eps)
        np.testing.assert_allclose(compiled[2].numpy()[i, 0], expected, rtol=1e-6, atol=1e-8)
