"""Mixing a library that takes no NumPy arrays (``array_api_strict`` here, CuPy on a
GPU) with a NumPy array in a user's op raises ``InvalidArgumentError`` naming the fix,
as TF does for tensors on two devices. Scalars mix; gradtape's own NumPy constants (the
backward's ones seed, a program's constants, index arrays) keep working; Dask follows
Dask's rules (it wraps NumPy arrays)."""

import numpy as np
import pytest

import gradtape as gt

xp = pytest.importorskip("array_api_strict")

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

X = np.random.default_rng(2).normal(size=(4, 3))
W = np.array([0.5, -1.0, 2.0])


def is_strict(t):
    return type(t._value).__module__.startswith("array_api_strict")


def test_an_eager_op_mixing_strict_and_numpy_arrays_raises_naming_the_fix():
    with pytest.raises(gt.errors.InvalidArgumentError) as info:
        gt.constant(xp.asarray(X)) * gt.constant(X)
    message = str(info.value)
    assert "array_api_strict.asarray(x)" in message and ".numpy()" in message
    assert isinstance(info.value, ValueError)  # TF's InvalidArgumentError is one
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.matmul(gt.constant(xp.asarray(X)), X.T)  # a raw NumPy array too


@pytest.mark.parametrize("scalar", [2.0, 3, np.float64(2.0), np.array(2.0)],
                         ids=["float", "int", "numpy-scalar", "0-d-array"])
def test_scalars_mix(scalar):
    got = gt.constant(xp.asarray(X)) * scalar
    assert is_strict(got)
    np.testing.assert_array_equal(got.numpy(), X * scalar)
    got = gt.constant(xp.asarray(X)) - gt.constant(scalar, dtype="float64")
    np.testing.assert_array_equal(got.numpy(), X - scalar)


def test_a_numpy_variable_used_with_strict_data_raises_under_a_tape():
    w = gt.Variable(W)
    with gt.GradientTape() as tape:
        with pytest.raises(gt.errors.InvalidArgumentError, match="array_api_strict.asarray"):
            gt.linalg.matvec(gt.constant(xp.asarray(X)), w)
    # The fix the message names: the variable in the same library. Its gradient (the
    # backward's ones seed is gradtape's own NumPy constant) equals NumPy's.
    w = gt.Variable(xp.asarray(W))
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.tanh(gt.linalg.matvec(gt.constant(xp.asarray(X)), w)))
    grad = tape.gradient(loss, w)
    assert is_strict(grad)
    expected = X.T @ (1 - np.tanh(X @ W) ** 2)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)


def test_inside_a_function_a_captured_numpy_array_raises():
    @gt.function
    def scaled(x):
        return gt.reduce_sum(x * W)

    with pytest.raises(gt.errors.InvalidArgumentError, match="array_api_strict"):
        scaled(gt.constant(xp.asarray(X)))


def test_inside_a_function_numpy_constants_of_gradtape_keep_working(compile_mode):
    @gt.function
    def loss(x, w):
        z = gt.linalg.matvec(x, w) * 2.0 + gt.constant(0.5, dtype="float64")
        return gt.reduce_mean(gt.math.softplus(z)) + gt.reduce_sum(x[[0, 2], 1:])

    x, w = gt.constant(xp.asarray(X)), gt.Variable(xp.asarray(W))
    for _ in range(2):
        with gt.GradientTape() as tape:
            value = loss(x, w)
        grad = tape.gradient(value, w)
        assert is_strict(value) and is_strict(grad)
    with gt.GradientTape() as tape:
        expected_value = loss(gt.constant(X), v := gt.Variable(W))
    expected = tape.gradient(expected_value, v)
    assert float(value) == pytest.approx(float(expected_value), abs=1e-12)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12)


def test_index_arrays_are_not_the_users_data():
    t = gt.constant(xp.asarray(X))
    np.testing.assert_array_equal(t[[0, 2]].numpy(), X[[0, 2]])
    np.testing.assert_array_equal(t[np.array([3, 1]), 0].numpy(), X[[3, 1], 0])


def test_dask_mixes_with_numpy_as_dask_does():
    da = pytest.importorskip("dask.array")
    got = gt.constant(da.from_array(X, chunks=2)) * gt.constant(X)
    assert isinstance(got._value, da.Array)
    np.testing.assert_array_equal(got.numpy(), X * X)
