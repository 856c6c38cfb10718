"""Pooling and resizing on Dask arrays chunked along the batch (and channels): values
and gradients equal NumPy's to 1e-12, stay lazy (nothing computes until read), and keep
the batch chunks (one task a block, the spatial axes whole in each). On CuPy and
array-API libraries they refuse clearly."""

import numpy as np
import pytest

import gradtape as gt

da = pytest.importorskip("dask.array")
from dask_testing import CountComputes  # noqa: E402 - after the importorskip

RNG = np.random.default_rng(2)
X = RNG.permutation(4 * 7 * 6 * 4).reshape(4, 7, 6, 4) / 10.0  # distinct: a unique max

CASES = [
    ("max_pool2d_same", lambda t: gt.nn.max_pool2d(t, 3, 2, "SAME")),
    ("max_pool2d_tiles", lambda t: gt.nn.max_pool2d(t, 2, 2, "VALID")),
    ("avg_pool2d_same", lambda t: gt.nn.avg_pool2d(t, 3, 2, "SAME")),
    ("avg_pool_nchw", lambda t: gt.nn.avg_pool2d(t, 2, 1, "VALID", data_format="NCHW")),
    ("max_pool1d", lambda t: gt.nn.max_pool1d(gt.reshape(t, (4, 42, 4)), 3, 2, "SAME")),
    ("resize_bilinear", lambda t: gt.image.resize(t, [5, 9])),
    ("resize_area", lambda t: gt.image.resize(t, [3, 4], method="area")),
]


def _value_and_gradient(fn, array):
    x = gt.constant(array)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        w = np.cos(np.arange(np.prod(y.shape))).reshape(y.shape)
        loss = gt.reduce_sum(gt.cast(y, np.float64) * w)
    return y, tape.gradient(loss, x)


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_pooling_and_resize_on_dask_match_numpy(name, fn, compile_mode):
    expected, expected_grad = _value_and_gradient(fn, X)
    tol = 1e-6 if name.startswith("resize") else 1e-12  # resize computes in float32
    for _ in range(2):
        lazy = da.from_array(X, chunks=(2, 7, 6, 2))
        with CountComputes() as computes:
            got, grad = _value_and_gradient(fn, lazy)
        assert computes.count == 0
        assert isinstance(got._value, da.Array) and isinstance(grad._value, da.Array)
        assert got._value.numblocks[0] == 2  # still chunked along the batch
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["max_pool", "resize_transpose"])
def test_cupy_refuses_the_window_primitives_clearly(name):
    from gradtape.core.backends import ArrayKind
    from gradtape.ops.backends.rules import _LIBRARY_RULES

    refuse = _LIBRARY_RULES["cupy"][name](ArrayKind("cupy", np, protocols=True))
    with pytest.raises(NotImplementedError, match=f"'{name}' op does not run on cupy"):
        refuse(X)


def test_array_api_strict_refuses_pooling_clearly():
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(NotImplementedError, match="does not run on array_api_strict"):
        gt.nn.max_pool2d(gt.constant(xp.asarray(X)), 2, 2, "VALID")
