"""Tensors are Dask collections: ``dask.compute(loss, *grads)`` computes a step's loss
and gradients in one pass and gives NumPy-valued tensors; ``dask.persist`` gives tensors
of persisted Dask arrays; a NumPy-valued tensor passes through Dask unchanged."""

import numpy as np
import pytest

import gradtape as gt

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from dask_testing import CountComputes  # noqa: E402 - after the importorskip


def loss_and_gradients(x):
    w = gt.Variable(np.array([0.3, -0.2, 0.1]))
    b = gt.Variable(0.5, dtype="float64")
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.math.softplus(gt.linalg.matvec(gt.constant(x), w) + b))
    return (loss, *tape.gradient(loss, [w, b]))


@pytest.fixture
def data():
    x = np.random.default_rng(3).normal(size=(30, 3))
    return x, da.from_array(x, chunks=(7, 3))


@pytest.mark.parametrize("compile_mode", [True, False], ids=["compiled", "interpreted"])
def test_compute_gives_loss_and_gradients_in_one_pass(data, compile_mode):
    x, xd = data
    with gt.config(compile=compile_mode):
        lazy = loss_and_gradients(xd)
        expected = loss_and_gradients(x)
    assert all(isinstance(t._value, da.Array) for t in lazy)
    with CountComputes() as computes:
        computed = dask.compute(*lazy)
    assert computes.count == 1
    for got, want in zip(computed, expected):
        assert isinstance(got, gt.Tensor) and isinstance(got._value, (np.ndarray, np.generic))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_persist_keeps_a_dask_tensor(data):
    _, xd = data
    grad = loss_and_gradients(xd)[1]
    (persisted,) = dask.persist(grad)
    assert isinstance(persisted, gt.Tensor) and isinstance(persisted._value, da.Array)
    with CountComputes() as computes:
        values = persisted.numpy()
    assert computes.count == 1  # a graph of the persisted chunks only
    np.testing.assert_allclose(values, grad.numpy(), rtol=1e-15)


def test_numpy_tensors_are_not_collections():
    t = gt.constant([1.0, 2.0])
    assert not dask.is_dask_collection(t)
    assert dask.compute(t)[0] is t
    assert dask.is_dask_collection(gt.constant(da.ones(3, chunks=2)))


def test_compute_inside_function_is_guarded_not_baked_in():
    # dask.compute inside @gt.function reads the values: a later call with other data
    # must not return the numbers of the traced call (Dask finalizes in a worker thread).
    w = gt.Variable(np.ones(4))

    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.sin(gt.linalg.matvec(x, w)))
        return dask.compute(loss, tape.gradient(loss, w))

    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.normal(size=(6, 4))
        loss, grad = step(gt.constant(da.from_array(x, chunks=(2, 2))))
        np.testing.assert_allclose(float(loss), np.sin(x.sum(axis=1)).sum(), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(grad.numpy()),
                                   np.cos(x.sum(axis=1)) @ x, rtol=1e-12)
