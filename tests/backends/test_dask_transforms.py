"""Forward mode, jacobians, Hessians and custom gradients on Dask arrays.

Each result is compared with the same computation on the same data in NumPy (to
1e-12), checked to be a lazy ``dask.array.Array`` and to have computed nothing, in
both compile modes.
"""

import numpy as np
import pytest

import gradtape as gt

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask_testing import CountComputes  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

RNG = np.random.default_rng(2)
X = RNG.normal(size=(8, 3))
W0 = np.array([0.3, -0.1, 0.2])
ROWS = np.array([1, 7, 1, 4])  # a repeated row: its derivatives accumulate



def lazy(array):
    return da.from_array(array, chunks=tuple(max(1, d // 2) for d in array.shape))


def flatten(results):
    if isinstance(results, (list, tuple)):
        return [leaf for r in results for leaf in flatten(r)]
    return [results]


def check_lazy_and_equal(run, *arrays):
    """``run(*arrays)`` on Dask and on NumPy: lazy, nothing computed, equal values."""
    expected = run(*arrays)
    with CountComputes() as computes:
        got = run(*[lazy(a) for a in arrays])
    assert computes.count == 0
    flat_got, flat_expected = flatten(got), flatten(expected)
    assert len(flat_got) == len(flat_expected)
    for g, e in zip(flat_got, flat_expected):
        assert isinstance(g._value, da.Array), type(g._value)
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def model(x, w):
    """A small loss with fancy indexing, so derivatives scatter-add on Dask."""
    z = gt.linalg.matvec(x, w)
    return gt.reduce_sum(gt.math.softplus(z)) + gt.reduce_sum(gt.square(gt.gather(z, ROWS)))


def test_forward_accumulator(compile_mode):
    def run(x):
        w = gt.constant(W0)
        xt = gt.constant(x)
        with gt.autodiff.ForwardAccumulator(xt, gt.constant(x * 0.5)) as acc:
            y = gt.tanh(xt * w)[ROWS]
            total = model(xt, w)
        return y, acc.jvp(y), acc.jvp(total)
    check_lazy_and_equal(run, X)


def test_jvp_transform(compile_mode):
    def run(x):
        return gt.jvp(lambda t: gt.sin(t) * gt.reduce_sum(t, axis=0), (gt.constant(x),),
                      (gt.constant(np.cos(X)),))
    check_lazy_and_equal(run, X)


def test_forward_over_backward_hessian_vector_product(compile_mode):
    def run(x):
        xt, w = gt.constant(x), gt.constant(W0)
        with gt.autodiff.ForwardAccumulator(w, gt.constant(np.ones(3))) as acc:
            with gt.GradientTape() as tape:
                tape.watch(w)
                loss = model(xt, w)
            grad = tape.gradient(loss, w)
        return grad, acc.jvp(grad)
    check_lazy_and_equal(run, X)


def test_gradient_of_a_dask_source_through_fancy_indexing_second_order(compile_mode):
    def run(x):
        xt = gt.constant(x)
        with gt.GradientTape() as outer:
            outer.watch(xt)
            with gt.GradientTape() as inner:
                inner.watch(xt)
                loss = gt.reduce_sum(gt.sin(xt[ROWS, 1:]) * xt[ROWS, :2])
            grad = inner.gradient(loss, xt)
            norm = gt.reduce_sum(grad * grad)
        return grad, outer.gradient(norm, xt)
    check_lazy_and_equal(run, X)


def test_jacobian_and_batch_jacobian(compile_mode):
    def run(x):
        xt = gt.constant(x)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(xt)
            y = gt.nn.softmax(xt * gt.constant(W0))
            picked = y[ROWS]
        return tape.jacobian(picked, xt), tape.batch_jacobian(y, xt)
    check_lazy_and_equal(run, X)


def test_jacobian_without_pfor(compile_mode):
    def run(x):
        xt = gt.constant(x)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(xt)
            y = gt.reduce_sum(gt.exp(xt), axis=1)
        return tape.jacobian(y, xt, experimental_use_pfor=False)
    check_lazy_and_equal(run, X)


def test_hessian_transform(compile_mode):
    def run(x):
        return gt.hessian(lambda w: model(gt.constant(x), w))(gt.constant(W0))
    check_lazy_and_equal(run, X)


def test_grad_and_vjp_transforms(compile_mode):
    def run(x):
        g = gt.grad(lambda t: gt.reduce_sum(gt.tanh(t) ** 2))(gt.constant(x))
        out, vjp_fn = gt.vjp(lambda t: gt.exp(t) * 2.0, gt.constant(x))
        return g, out, vjp_fn(gt.constant(np.sin(X)))
    check_lazy_and_equal(run, X)


@gt.custom_gradient
def clipped_square(x):
    def grad(upstream):
        return gt.clip_by_value(upstream * 2.0 * x, -1.0, 1.0)
    return gt.square(x), grad


def test_custom_gradient(compile_mode):
    def run(x):
        xt = gt.constant(x)
        with gt.GradientTape() as tape:
            tape.watch(xt)
            loss = gt.reduce_sum(clipped_square(xt) * gt.constant(np.cos(X)))
        return loss, tape.gradient(loss, xt)
    check_lazy_and_equal(run, X)


def test_unconnected_zero_gradients_are_lazy_and_chunked_like_the_source(compile_mode):
    x = lazy(X)
    xt, other = gt.constant(x), gt.constant(lazy(X[:2]))
    with gt.GradientTape() as tape:
        tape.watch([xt, other])
        loss = gt.reduce_sum(xt)
    with CountComputes() as computes:
        grad, zeros = tape.gradient(loss, [xt, other], unconnected_gradients="zero")
    assert computes.count == 0
    assert isinstance(grad._value, da.Array) and grad._value.chunks == x.chunks
    assert isinstance(zeros._value, da.Array) and zeros._value.chunks == other._value.chunks
    np.testing.assert_array_equal(grad.numpy(), np.ones_like(X))
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((2, 3)))


def test_numpy_variable_gradient_through_dask_data_is_lazy(compile_mode):
    w = gt.Variable(W0)
    with gt.GradientTape() as tape:
        loss = model(gt.constant(lazy(X)), w)
    with CountComputes() as computes:
        grad = tape.gradient(loss, w)
    assert computes.count == 0 and isinstance(grad._value, da.Array)
    with gt.GradientTape() as tape:
        expected_loss = model(gt.constant(X), w)
    expected = tape.gradient(expected_loss, w)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
