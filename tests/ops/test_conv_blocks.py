"""The convolution kernels build their window rows a block at a time
(``ops/conv/kernels.py``, ``BLOCK_BYTES``): with blocks of one row, of a few images, of
slabs of one image, the values equal the direct loop of TF's definition, derivatives
up to second order equal finite differences in float64, compiled equals eager, and a
large convolution never holds its whole window matrix (tracemalloc)."""

import tracemalloc

import numpy as np
import pytest
from test_conv import loop_conv

import gradtape as gt
from gradtape.ops.conv import kernels
from gradtape.ops.conv.general import conv_general
from gradtape.testing import check_grads

RNG = np.random.default_rng(11)

# Bytes per block: under one window row (every row its own block), a few rows, a slab
# of one image, several images.
BLOCKS = [1, 200, 3000, 40000]


def _conv(x, w, strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
          rhs_dilation=(1, 1), fg=1, bg=1):
    return kernels.conv_general_impl(
        x, w, strides=strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, feature_group_count=fg, batch_group_count=bg)


# name -> (lhs shape, rhs shape, params): one case per kernel and layout.
CASES = {
    "im2col": ((5, 7, 6, 3), (3, 3, 3, 4), {}),
    "im2col strided, dilated, cropped": (
        (3, 9, 8, 2), (2, 3, 2, 3),
        {"strides": (2, 1), "padding": ((2, -1), (0, 1)), "rhs_dilation": (2, 1)}),
    "im2col feature groups": ((4, 6, 6, 4), (3, 3, 2, 6), {"fg": 2}),
    "im2col 1-d": ((3, 11, 2), (3, 2, 4), {"padding": ((1, 1),), "strides": (1,),
                                           "lhs_dilation": (1,), "rhs_dilation": (1,)}),
    "col2im (input dilation)": ((3, 4, 5, 3), (3, 3, 3, 2),
                                {"padding": ((2, 2), (2, 3)), "lhs_dilation": (2, 2)}),
    "col2im feature groups": ((2, 4, 4, 4), (2, 2, 2, 4),
                              {"padding": ((1, 1), (1, 1)), "lhs_dilation": (2, 1),
                               "fg": 2}),
    "window sums (a kernel gradient)": ((6, 8, 7, 5), (8, 7, 5, 3),
                                        {"padding": ((1, 1), (1, 0))}),
    "window sums dilated": ((4, 9, 9, 2), (4, 4, 2, 3), {"padding": ((0, 0), (0, 0)),
                                                          "rhs_dilation": (2, 2)}),
}


def _one_block(lhs, rhs, params):
    saved = kernels.BLOCK_BYTES
    kernels.BLOCK_BYTES = 1 << 40
    try:
        return _conv(lhs, rhs, **params)
    finally:
        kernels.BLOCK_BYTES = saved


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_blocked_kernels_equal_one_block_and_the_definition(case, block, monkeypatch):
    lhs_shape, rhs_shape, params = CASES[case]
    lhs, rhs = RNG.standard_normal(lhs_shape), RNG.standard_normal(rhs_shape)
    whole = _one_block(lhs, rhs, params)
    monkeypatch.setattr(kernels, "BLOCK_BYTES", block)
    blocked = _conv(lhs, rhs, **params)
    np.testing.assert_allclose(blocked, whole, rtol=1e-12, atol=1e-12)
    if params.get("lhs_dilation", (1,))[0] == 1 and all(
            lo >= 0 and hi >= 0 for lo, hi in params.get("padding", ((1, 1), (1, 1)))):
        nd = lhs.ndim - 2
        expected = loop_conv(lhs, rhs, params.get("strides", (1,) * nd),
                             params.get("padding", ((1, 1), (1, 1))),
                             params.get("rhs_dilation", (1,) * nd), params.get("fg", 1))
        np.testing.assert_allclose(blocked, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("block", [1, 3000])
@pytest.mark.parametrize("strides,ld,fg", [((1, 1), (1, 1), 1), ((2, 1), (1, 2), 2)])
def test_second_order_through_blocked_kernels(strides, ld, fg, block, monkeypatch):
    """Every derivative is a conv_general again (input and kernel gradients go through
    col2im and window sums): blocked, the second order still equals finite differences."""
    monkeypatch.setattr(kernels, "BLOCK_BYTES", block)

    def f(a, b):
        return gt.nn.relu(conv_general(a, b, strides=strides, padding=((1, 1), (1, 0)),
                                       lhs_dilation=ld, feature_group_count=fg))
    check_grads(f, (RNG.normal(size=(3, 5, 4, 4)), RNG.normal(size=(3, 2, 4 // fg, 4))),
                order=2)


def test_compiled_equals_eager_with_blocks(monkeypatch):
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 500)
    x = gt.constant(RNG.standard_normal((4, 6, 6, 2)))
    k1 = gt.Variable(RNG.standard_normal((3, 3, 2, 3)))
    k2 = gt.Variable(RNG.standard_normal((3, 3, 3, 2)))

    def step():
        with gt.GradientTape() as tape:
            a = gt.nn.relu(gt.nn.conv2d(x, k1, 1, "SAME"))
            b = gt.nn.avg_pool2d(gt.nn.conv2d(a, k2, 2, "SAME"), 2, 1, "VALID")
            loss = gt.reduce_sum(gt.square(b))
        return tape.gradient(loss, [k1, k2])
    eager = step()
    compiled = gt.function(step)()
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12)


def test_a_large_convolution_never_holds_its_window_matrix(monkeypatch):
    """A 3x3 convolution's window matrix is 9x its input: the kernels' peak stays near
    the output's size, for the forward (im2col), the input gradient (im2col of the
    cotangent) and the kernel gradient (window sums)."""
    x = RNG.standard_normal((16, 32, 32, 8)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 8, 16)).astype(np.float32)
    window_matrix = x.size * 9 * x.itemsize  # 4.5 MiB
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 1 << 18)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        y = _conv(x, w)
        forward = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.reset_peak()
        gw = _conv(x.transpose(3, 1, 2, 0), y.transpose(1, 2, 0, 3))   # (8, 3, 3, 16)
        kernel_gradient = tracemalloc.get_traced_memory()[1] - before - y.nbytes
    finally:
        tracemalloc.stop()
    assert gw.shape == (8, 3, 3, 16)
    blocks = 4 * kernels.BLOCK_BYTES
    assert forward < y.nbytes + blocks, f"im2col peak {forward / 2**20:.1f} MiB"
    assert kernel_gradient < blocks, f"window sums peak {kernel_gradient / 2**20:.1f} MiB"
    assert blocks < window_matrix / 4
