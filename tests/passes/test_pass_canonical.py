"""Canonical forms before differentiation: a product with a column is ``matvec``, with a
row ``vecmat``; ``log1p(exp(u))`` is ``softplus(u)``. Same values, the cheaper and more
accurate derivative, on the tape and under ``@gt.function``."""

import numpy as np
import pytest
from pass_testing import build, prims, var

import gradtape as gt
from gradtape.ops import elementwise as ew
from gradtape.ops import shape as sh
from gradtape.ops.linalg import products as pr
from gradtape.passes.canonical import canonicalize

RNG = np.random.default_rng(7)
X = RNG.standard_normal((9, 4))
Y = np.sign(RNG.standard_normal(9))
W = RNG.standard_normal(4)


def canonical_prims(fn, *inputs):
    return prims(canonicalize(build(fn, *inputs)))


# --- which forms are rewritten -------------------------------------------------------

@pytest.mark.parametrize("form", [
    lambda a, w: gt.matmul(a, gt.expand_dims(w, 1))[:, 0],
    lambda a, w: gt.matmul(a, gt.expand_dims(w, -1))[..., 0],
    lambda a, w: gt.matmul(a, w[:, None])[:, -1],
    lambda a, w: gt.squeeze(gt.matmul(a, gt.reshape(w, (-1, 1))), -1),
])
def test_a_product_with_a_column_becomes_matvec(form):
    got = canonical_prims(form, var((9, 4), np.float64), var((4,), np.float64))
    assert got[-1] == "matvec"


@pytest.mark.parametrize("form", [
    lambda a, w: gt.matmul(gt.expand_dims(w, 0), a)[0],
    lambda a, w: gt.matmul(w[None, :], a)[0, :],
    lambda a, w: gt.reshape(gt.matmul(gt.reshape(w, (1, -1)), a), (-1,)),
])
def test_a_product_with_a_row_becomes_vecmat(form):
    got = canonical_prims(form, var((9, 4), np.float64), var((9,), np.float64))
    assert got[-1] == "vecmat"


def test_a_transposed_matrix_swaps_matvec_and_vecmat():
    a, w = var((4, 9), np.float64), var((4,), np.float64)
    column = canonical_prims(lambda a, w: gt.matmul(gt.transpose(a), w[:, None])[:, 0], a, w)
    row = canonical_prims(lambda a, w: gt.matmul(w[None], a)[0],
                          var((4, 9), np.float64), w)
    assert column[-1] == "vecmat" and row[-1] == "vecmat"
    b = var((9, 4), np.float64)
    assert canonical_prims(lambda b, w: gt.matmul(w[None], gt.transpose(b))[0],
                           b, w)[-1] == "matvec"


@pytest.mark.parametrize("form", [
    # another column of a two-column product: not a no-op
    lambda a, m: gt.matmul(a, m)[:, 1],
    # column 0 of a genuine matrix product
    lambda a, m: gt.matmul(a, m)[:, 0],
    # a column broadcast to two columns first
    lambda a, m: gt.matmul(a, gt.broadcast_to(m[:, :1], (4, 2)))[:, 0],
])
def test_lookalikes_stay_products(form):
    got = canonical_prims(form, var((9, 4), np.float64), var((4, 2), np.float64))
    assert "matvec" not in got and "vecmat" not in got
    assert got[-1] == "getitem"


def test_log1p_of_exp_and_its_spellings_become_softplus():
    u = var((5,), np.float64)
    for form in (lambda u: gt.math.log1p(gt.exp(u)), lambda u: gt.math.log(1.0 + gt.exp(u)),
                 lambda u: gt.math.log(gt.exp(u) + 1.0)):
        assert canonical_prims(form, u)[-1] == "softplus"


def test_softplus_lookalikes_stay():
    u = var((5,), np.float64)
    for form in (lambda u: gt.math.log1p(gt.sin(u)), lambda u: gt.math.log(2.0 + gt.exp(u)),
                 lambda u: gt.math.log(gt.exp(u) * 1.0 + gt.exp(u))):
        assert "softplus" not in canonical_prims(form, u)
    # ones that broadcast the sum to a larger shape: not softplus of the scalar
    s, ones = var((), np.float64), var((3,), np.float64)
    got = canonical_prims(lambda s, ones: gt.math.log(ones + gt.exp(s)), s, ones)
    assert "softplus" not in got


def test_the_output_var_is_kept():
    a, w = var((9, 4), np.float64), var((4,), np.float64)
    program = build(lambda a, w: gt.math.log1p(gt.exp(gt.matmul(a, w[:, None])[:, 0])), a, w)
    canonical = canonicalize(program)
    assert canonical.outputs[0] is program.outputs[0]
    assert canonical.eqns[-1].prim is ew.softplus.primitive
    assert [e.prim for e in canonical.eqns][:3] == [
        program.eqns[0].prim, pr.matmul_p, pr.matvec_p]
    assert program.eqns[0].prim in (sh.reshape_p, canonical.eqns[0].prim)


# --- the gradients: natural forms against the canonical one and finite differences ---

def natural_loss(w, X=X, Y=Y):
    z = gt.matmul(X, gt.expand_dims(w, 1))[:, 0]
    return gt.reduce_sum(gt.math.log1p(gt.exp(-Y * z)))


def canonical_loss(w, X=X, Y=Y):
    return gt.reduce_sum(gt.math.softplus(-Y * gt.linalg.matvec(X, w)))


def loss_numpy(w):
    return np.sum(np.log1p(np.exp(-Y * (X @ w))))


def finite_differences(f, w, eps=1e-6):
    grad = np.zeros_like(w)
    for i in range(w.size):
        step = np.zeros_like(w)
        step[i] = eps
        grad[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return grad


def tape_gradient(loss, w0):
    w = gt.Variable(w0)
    with gt.GradientTape() as tape:
        value = loss(w)
    return value.numpy(), tape.gradient(value, w).numpy()


def test_the_natural_form_has_the_canonical_values_and_gradient():
    expected = finite_differences(loss_numpy, W)
    value, grad = tape_gradient(natural_loss, W)
    np.testing.assert_allclose(value, loss_numpy(W), rtol=1e-12)
    np.testing.assert_allclose(grad, expected, rtol=1e-7)
    np.testing.assert_allclose(grad, tape_gradient(canonical_loss, W)[1], rtol=1e-12)


def test_the_rewrite_holds_under_function_and_at_second_order():
    w = gt.Variable(W)

    @gt.function
    def step():
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                value = natural_loss(w)
            grad = inner.gradient(value, w)
            norm = gt.reduce_sum(grad * grad)
        return grad, outer.gradient(norm, w)

    def norm_numpy(w0):
        return np.sum(finite_differences(loss_numpy, w0, 1e-5) ** 2)

    grad, second = step()
    np.testing.assert_allclose(grad.numpy(), finite_differences(loss_numpy, W), rtol=1e-7)
    np.testing.assert_allclose(second.numpy(), finite_differences(norm_numpy, W, 1e-4),
                               rtol=1e-4)


def test_log1p_of_exp_has_a_finite_gradient_where_exp_overflows():
    u0 = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    u = gt.Variable(u0)
    with gt.GradientTape() as tape, np.errstate(over="ignore"):  # exp(800): the user's inf
        y = gt.math.log1p(gt.exp(u))
    # the forward is what the user wrote (inf where exp overflows, as in TF) ...
    assert np.isinf(y.numpy()[-1])
    # ... its gradient is softplus's: sigmoid(u), not inf / inf
    expected = np.array([0.0, 1.0 / (1.0 + np.exp(30.0)), 0.5, 1.0 / (1.0 + np.exp(-30.0)), 1.0])
    np.testing.assert_allclose(tape.gradient(y, u).numpy(), expected, rtol=1e-15)


def exp_of_an_intermediate(u0, second=False):
    """log1p(exp(u)) of an intermediate u (a tape keeps exp's output, not u: the
    canonical form read from exp's output), its gradient and, with ``second``, the
    gradient of the gradient's sum (nested tapes)."""
    v = gt.Variable(u0)
    with gt.GradientTape() as outer, np.errstate(over="ignore"):
        with gt.GradientTape() as tape:
            u = v * 1.0 + 0.0
            y = gt.math.log1p(gt.exp(u))
        grad = tape.gradient(y, v)
        total = gt.reduce_sum(grad)
    return y, grad, outer.gradient(total, v) if second else None


def test_an_intermediate_argument_has_a_finite_gradient_where_exp_overflows():
    u0 = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    for _ in range(2):  # built, then the cached backward
        y, grad, _ = exp_of_an_intermediate(u0)
        assert np.isinf(y.numpy()[-1])
        np.testing.assert_allclose(grad.numpy(), 1.0 / (1.0 + np.exp(-u0)), rtol=1e-15)
    # sigmoid'(u) = e / (1 + e)**2, where exp is finite
    finite = u0[1:-1]
    tail = np.exp(-np.abs(finite))  # e / (1 + e)**2 without cancellation
    np.testing.assert_allclose(exp_of_an_intermediate(finite, second=True)[2].numpy(),
                               tail / (1.0 + tail) ** 2, rtol=1e-12)


def test_an_intermediate_argument_matches_finite_differences_at_two_orders():
    u0 = np.linspace(-3.0, 3.0, 7)
    _, grad, second = exp_of_an_intermediate(u0, second=True)
    f = lambda u: np.sum(np.log1p(np.exp(u)))  # noqa: E731
    np.testing.assert_allclose(grad.numpy(), finite_differences(f, u0), rtol=1e-8)
    g = lambda u: np.sum(finite_differences(f, u, 1e-5))  # noqa: E731
    np.testing.assert_allclose(second.numpy(), finite_differences(g, u0, 1e-4), rtol=1e-5)


def test_float32_keeps_its_dtype():
    w = gt.Variable(W.astype(np.float32))
    with gt.GradientTape() as tape:
        loss = natural_loss(w, X.astype(np.float32), Y.astype(np.float32))
    grad = tape.gradient(loss, w)
    assert grad.dtype == gt.float32
    np.testing.assert_allclose(grad.numpy(), finite_differences(loss_numpy, W), rtol=1e-4)


# --- Dask: the natural form's graph is the canonical form's ---------------------------

def test_the_natural_form_builds_the_canonical_dask_graph():
    da = pytest.importorskip("dask.array")
    Xd = gt.constant(da.from_array(X, chunks=(3, 4)))
    Yd = gt.constant(da.from_array(Y, chunks=3))

    def tasks(loss, traced):
        w = gt.Variable(W)

        def grad(Xd, Yd):
            with gt.GradientTape() as tape:
                value = loss(w, Xd, Yd)
            return tape.gradient(value, w)
        g = gt.function(grad)(Xd, Yd) if traced else grad(Xd, Yd)
        np.testing.assert_allclose(g.numpy(), finite_differences(loss_numpy, W), rtol=1e-7)
        return len(dict(g._value.__dask_graph__()))

    # The gradient is read from exp's output (a tape keeps that, not its argument), so
    # its graph also holds the user's exp: one task per chunk of Y (3).
    for traced in (False, True):
        assert tasks(natural_loss, traced) <= tasks(canonical_loss, traced) + 3


A3 = RNG.standard_normal((2, 9, 4))  # a batch of matrices


@pytest.mark.parametrize("form, numpy_form", [
    (lambda w: gt.matmul(X, gt.expand_dims(w, 1))[:, 0], lambda w: X @ w),
    (lambda w: gt.matmul(A3, w[:, None])[..., 0], lambda w: A3 @ w),
    (lambda w: gt.squeeze(gt.matmul(X, gt.reshape(w, (-1, 1))), -1), lambda w: X @ w),
    (lambda w: gt.matmul(gt.expand_dims(w, 0), X.T)[0], lambda w: w @ X.T),
    (lambda w: gt.matmul(w[None], gt.constant(X), transpose_b=True)[0, :],
     lambda w: w @ X.T),
    (lambda w: gt.matmul(X, gt.expand_dims(w, 1), transpose_a=False)[:, -1], lambda w: X @ w),
])
def test_every_rewritten_form_has_the_right_gradient(form, numpy_form):
    """Each form's gradient (eagerly and under @gt.function) against central
    differences of the same product in float64."""
    weights = np.linspace(-1.0, 1.0, numpy_form(W).size).reshape(numpy_form(W).shape)

    def loss_numpy(w):
        return np.sum(weights * np.tanh(numpy_form(w)))

    w = gt.Variable(W)

    def grad():
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(weights * gt.tanh(form(w)))
        return tape.gradient(loss, w)

    expected = finite_differences(loss_numpy, W)
    np.testing.assert_allclose(grad().numpy(), expected, rtol=1e-7, atol=1e-10)
    traced = gt.function(grad)
    for _ in range(2):
        np.testing.assert_allclose(traced().numpy(), expected, rtol=1e-7, atol=1e-10)


def test_a_function_called_under_a_tape_differentiates_the_canonical_form():
    """The backward of a @gt.function's call (build.differentiate) too, every call."""
    u = gt.Variable(np.array([-800.0, 0.0, 800.0]))
    f = gt.function(lambda u: gt.math.log1p(gt.exp(u)))
    for _ in range(3):  # interpreted, then compiled
        with gt.GradientTape() as tape, np.errstate(over="ignore"):
            y = f(u)
        np.testing.assert_array_equal(tape.gradient(y, u).numpy(), [0.0, 0.5, 1.0])
