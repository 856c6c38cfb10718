"""A convolution's kernel gradient on Dask: a sum over the batch chunks of each chunk's
kernel gradient (lazy, a tree reduction), no task reading every chunk of the input;
the values equal NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import gradtape as gt

da = pytest.importorskip("dask.array")
from dask.core import get_dependencies  # noqa: E402

RNG = np.random.default_rng(0)
CHUNKS = 8


def _widest_task(array) -> int:
    """The most chunks any one task of ``array``'s graph reads directly."""
    graph = dict(array.__dask_graph__())
    return max(len(get_dependencies(graph, key)) for key in graph)


@pytest.mark.parametrize("conv, x_shape, w_shape, kwargs", [
    (gt.nn.conv2d, (16, 6, 6, 3), (3, 3, 3, 4), dict(strides=1, padding="SAME")),
    (gt.nn.conv2d, (16, 7, 7, 2), (3, 3, 2, 5), dict(strides=2, padding="VALID",
                                                      data_format="NHWC")),
    (gt.nn.conv1d, (16, 9, 3), (3, 3, 2), dict(stride=1, padding="SAME", dilations=2)),
    (gt.nn.conv3d, (8, 4, 4, 4, 2), (2, 2, 2, 2, 3), dict(strides=[1, 1, 1, 1, 1],
                                                          padding="VALID")),
])
def test_kernel_gradient_is_a_sum_over_batch_chunks(conv, x_shape, w_shape, kwargs):
    x = RNG.normal(size=x_shape)
    w = RNG.normal(size=w_shape)
    chunk = x_shape[0] // CHUNKS

    def grads(x_value):
        xv, wv = gt.Variable(x_value), gt.Variable(w)
        with gt.GradientTape() as tape:
            y = conv(xv, wv, **kwargs)
            loss = gt.reduce_sum(gt.sin(y))
        return tape.gradient(loss, [xv, wv])

    lazy_x = da.from_array(x, chunks=(chunk,) + x_shape[1:])
    gx_lazy, gw_lazy = grads(lazy_x)
    assert isinstance(gw_lazy._value, da.Array)  # still lazy
    assert gx_lazy._value.numblocks[0] == CHUNKS
    # no task gathers the batch: each reads at most a few partial kernel gradients
    assert _widest_task(gw_lazy._value) < CHUNKS
    gx, gw = grads(x)
    np.testing.assert_allclose(np.asarray(gw_lazy._value), gw.numpy(), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(gx_lazy._value), gx.numpy(), rtol=1e-11)


def test_chunked_channels_forward_equals_numpy():
    x = RNG.normal(size=(4, 5, 5, 6))
    w = RNG.normal(size=(3, 3, 6, 2))
    lazy = gt.nn.conv2d(da.from_array(x, chunks=(2, 5, 5, 1)), w, 1, "SAME")
    assert _widest_task(lazy._value) <= 4  # the six channel chunks summed as a tree
    np.testing.assert_allclose(np.asarray(lazy._value),
                               gt.nn.conv2d(x, w, 1, "SAME").numpy(), rtol=1e-12)


def test_grouped_and_depthwise_kernel_gradients_still_equal_numpy():
    x = RNG.normal(size=(8, 5, 5, 4))
    w_grouped = RNG.normal(size=(3, 3, 2, 4))  # two groups
    w_depthwise = RNG.normal(size=(3, 3, 4, 2))

    def grads(x_value):
        xv = gt.Variable(x_value)
        wg, wd = gt.Variable(w_grouped), gt.Variable(w_depthwise)
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.nn.conv2d(xv, wg, 1, "SAME") ** 2) + gt.reduce_sum(
                gt.nn.depthwise_conv2d(xv, wd, [1, 1, 1, 1], "VALID") ** 2)
        return tape.gradient(loss, [wg, wd])

    lazy = grads(da.from_array(x, chunks=(2, 5, 5, 4)))
    for lazy_grad, grad in zip(lazy, grads(x)):
        np.testing.assert_allclose(np.asarray(lazy_grad._value), grad.numpy(), rtol=1e-11)
