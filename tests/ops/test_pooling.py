"""gt.nn's pooling ops against TF's written definitions: ``SAME`` gives ``ceil(n/s)``
outputs with the padding split odd-after, max pooling never picks padding, average
pooling divides by the valid elements; gradients against finite differences in float64
(to second order), the JVP, the batching rules, compiled against eager."""

import itertools

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

RNG = np.random.default_rng(0)


def _reference(x, kind, window, strides, padding, channels_first=False, dilations=None):
    """The definition, one output at a time: windows over the spatial axes, the padded
    taps left out (TF's SAME: the odd pad after)."""
    if channels_first:
        x = np.moveaxis(x, 1, -1)
    spatial = x.shape[1:-1]
    dilations = dilations or (1,) * len(spatial)
    pads, outs = [], []
    for n, k, s, d in zip(spatial, window, strides, dilations):
        extent = (k - 1) * d + 1
        if padding == "SAME":
            out = -(-n // s)
            total = max((out - 1) * s + extent - n, 0)
            pads.append(total // 2)
        else:
            out = (n - extent) // s + 1
            pads.append(0)
        outs.append(out)
    result = np.zeros((x.shape[0], *outs, x.shape[-1]), x.dtype)
    for pos in itertools.product(*(range(o) for o in outs)):
        taps = []
        for offset in itertools.product(*(range(k) for k in window)):
            idx = [p * s - lo + o * d for p, s, lo, o, d
                   in zip(pos, strides, pads, offset, dilations)]
            if all(0 <= i < n for i, n in zip(idx, spatial)):
                taps.append(x[(slice(None), *idx, slice(None))])
        taps = np.stack(taps)
        result[(slice(None), *pos, slice(None))] = taps.max(0) if kind == "max" \
            else taps.mean(0)
    return np.moveaxis(result, -1, 1) if channels_first else result


def test_max_pool2d_and_avg_pool2d_on_a_4x4_image_by_hand():
    x = np.arange(16.0).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(gt.nn.max_pool2d(x, 2, 2, "VALID").numpy()[0, ..., 0],
                                  [[5, 7], [13, 15]])
    # 3x3 windows every 2, SAME: one row/column of padding after; the corner window
    # averages its 4 valid elements (10, 11, 14, 15), not 9.
    np.testing.assert_array_equal(gt.nn.avg_pool2d(x, 3, 2, "SAME").numpy()[0, ..., 0],
                                  [[5.0, 6.5], [11.0, 12.5]])
    # SAME max pooling of negative numbers: the padding (-inf) is never the maximum.
    np.testing.assert_array_equal(
        gt.nn.max_pool2d(-x - 1, 3, 2, "SAME").numpy()[0, ..., 0], [[-1, -3], [-9, -11]])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("stride", [1, 2, 3, (2, 3)])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_2d_pooling_matches_the_definition_on_odd_sizes(kind, stride, padding, data_format):
    first = data_format == "NCHW"
    x = RNG.standard_normal((2, 3, 7, 5) if first else (2, 7, 5, 3))
    f = gt.nn.max_pool2d if kind == "max" else gt.nn.avg_pool2d
    got = f(x, (3, 2), stride, padding, data_format=data_format).numpy()
    strides = stride if isinstance(stride, tuple) else (stride, stride)
    np.testing.assert_allclose(got, _reference(x, kind, (3, 2), strides, padding, first),
                               rtol=1e-12)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("channels_first", [False, True])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_every_rank_and_data_format(rank, channels_first, kind):
    shape = (2, 3, *([5] * rank)) if channels_first else (2, *([5] * rank), 3)
    x = RNG.standard_normal(shape)
    fmt = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank]
    fmt = fmt[int(channels_first)]
    named = getattr(gt.nn, f"{kind}_pool{rank}d")
    expected = _reference(x, kind, (2,) * rank, (2,) * rank, "SAME", channels_first)
    np.testing.assert_allclose(named(x, 2, 2, "SAME", data_format=fmt).numpy(), expected,
                               rtol=1e-12)
    generic = gt.nn.max_pool if kind == "max" else gt.nn.avg_pool
    np.testing.assert_allclose(generic(x, [2] * rank, [2] * rank, "SAME",
                                       data_format=fmt).numpy(), expected, rtol=1e-12)
    pooled = gt.nn.pool(x, [2] * rank, kind.upper(), strides=[2] * rank, padding="SAME",
                        data_format=fmt)
    np.testing.assert_allclose(pooled.numpy(), expected, rtol=1e-12)


def test_ksize_of_length_n_plus_2_and_explicit_padding():
    x = RNG.standard_normal((1, 5, 5, 2))
    np.testing.assert_array_equal(gt.nn.max_pool2d(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                                  gt.nn.max_pool2d(x, 2, 2, "VALID"))
    explicit = gt.nn.max_pool2d(x, 2, 2, [[0, 0], [1, 0], [1, 0], [0, 0]]).numpy()
    padded = np.pad(x, [(0, 0), (1, 0), (1, 0), (0, 0)], constant_values=-np.inf)
    np.testing.assert_array_equal(explicit, _reference(padded, "max", (2, 2), (2, 2),
                                                       "VALID"))


def test_bad_arguments_raise_what_tf_raises():
    x = np.zeros((1, 4, 4, 1))
    with pytest.raises(ValueError, match="length 1, 2 or 4"):
        gt.nn.max_pool2d(x, [2, 2, 2], 2, "VALID")
    with pytest.raises(gt.errors.InvalidArgumentError, match="batch or channel"):
        gt.nn.max_pool2d(x, [2, 2, 2, 2], 2, "VALID")
    with pytest.raises(ValueError, match="4-d input"):
        gt.nn.max_pool2d(np.zeros((4, 4)), 2, 2, "VALID")
    with pytest.raises(ValueError, match="'SAME' or 'VALID'"):
        gt.nn.avg_pool2d(x, 2, 2, "FULL")
    with pytest.raises(gt.errors.InvalidArgumentError, match="larger than the padded"):
        gt.nn.max_pool2d(x, 5, 1, "VALID")
    with pytest.raises(ValueError, match="MAX' or 'AVG"):
        gt.nn.pool(x, [2, 2], "MIN")
    with pytest.raises(gt.errors.NotFoundError, match="cast them first"):
        gt.nn.avg_pool2d(np.ones((1, 4, 4, 1), np.int32), 2, 2, "VALID")
    with pytest.raises(gt.errors.NotFoundError, match="real and imaginary"):
        gt.nn.max_pool2d(np.ones((1, 4, 4, 1), np.complex64), 2, 2, "VALID")


def test_max_pool_gradient_goes_to_the_first_maximum_in_scan_order():
    # Every element ties: TF's MaxPoolGrad routes each window's gradient to its first
    # tap (row-major), so overlapping 2x2 windows (stride 1) credit the top-left taps.
    x = gt.constant(np.ones((1, 3, 3, 1)))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.nn.max_pool2d(x, 2, 1, "VALID")
    g = tape.gradient(y, x).numpy()[0, ..., 0]
    np.testing.assert_array_equal(g, [[1, 1, 0], [1, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_gradients_to_second_order(kind, stride, padding):
    x = RNG.permutation(70).reshape(1, 7, 5, 2) / 7.0  # distinct: max is differentiable
    f = gt.nn.max_pool2d if kind == "max" else gt.nn.avg_pool2d
    check_grads(lambda t: f(t, (3, 2), stride, padding), [x], order=2)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_jvp_and_channels_first_gradients(kind, check_jvp):
    x = RNG.permutation(2 * 3 * 5 * 5).reshape(2, 3, 5, 5) / 10.0
    f = gt.nn.max_pool2d if kind == "max" else gt.nn.avg_pool2d
    check_jvp(lambda t: f(t, 3, 2, "SAME", data_format="NCHW"), [x])
    check_grads(lambda t: f(t, 3, 2, "SAME", data_format="NCHW"), [x], order=2)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_1d_and_3d_gradients(kind):
    x1 = RNG.permutation(2 * 9 * 2).reshape(2, 9, 2) / 5.0
    x3 = RNG.permutation(1 * 5 * 4 * 3 * 2).reshape(1, 5, 4, 3, 2) / 9.0
    f1 = gt.nn.max_pool1d if kind == "max" else gt.nn.avg_pool1d
    f3 = gt.nn.max_pool3d if kind == "max" else gt.nn.avg_pool3d
    check_grads(lambda t: f1(t, 3, 2, "SAME"), [x1], order=2)
    check_grads(lambda t: f3(t, 2, [2, 1, 2], "SAME"), [x3], order=2)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_batching_rules(kind, check_batching):
    from gradtape.ops import pooling

    params = dict(axes=(1, 2), window=(3, 2), strides=(2, 1), dilations=(1, 1),
                  pads=((1, 1), (0, 1)))
    prim = pooling.max_pool_p if kind == "max" else pooling.avg_pool_p
    x = RNG.standard_normal((2, 5, 4, 3))
    check_batching(lambda t: pooling.pool(t, kind, **params), [x])
    # the VJP's own primitives (argmax taps, scatter, the transposed box), with the
    # cotangent batched or not, and their VJPs (gather, the box filter)
    c = RNG.standard_normal((2, 3, 4, 3))
    vjp = lambda t, g: prim.vjp(g, pooling.pool(t, kind, **params), t, **params)[0]  # noqa: E731
    check_batching(vjp, [x, c])
    check_batching(vjp, [x, c], batched=[True, False])
    check_batching(vjp, [x, c], batched=[False, True])
    second = lambda t, g, h: vjp(t, g) * h  # noqa: E731
    check_batching(lambda t, g, h: gt.reduce_sum(second(t, g, h)), [x, c, x])


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_jacobian_uses_the_batched_backward(kind):
    x = RNG.permutation(18).reshape(1, 3, 3, 2) / 3.0
    f = gt.nn.max_pool2d if kind == "max" else gt.nn.avg_pool2d
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt, 2, 1, "SAME")
    jac = tape.jacobian(y, xt).numpy().reshape(y.numpy().size, x.size)
    eps = 1e-6
    numeric = np.stack([(f(x + eps * e, 2, 1, "SAME").numpy()
                         - f(x - eps * e, 2, 1, "SAME").numpy()).ravel() / (2 * eps)
                        for e in np.eye(x.size).reshape(x.size, *x.shape)], axis=1)
    np.testing.assert_allclose(jac, numeric, atol=1e-8)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_compiled_equals_eager(kind):
    x = RNG.standard_normal((2, 6, 7, 3)).astype(np.float32)
    f = gt.nn.max_pool2d if kind == "max" else gt.nn.avg_pool2d

    def loss(t):
        return gt.reduce_sum(f(t, 3, 2, "SAME") ** 2)

    @gt.function
    def step(t):
        with gt.GradientTape() as tape:
            tape.watch(t)
            value = loss(t)
        return value, tape.gradient(value, t)

    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        value = loss(xt)
    eager = tape.gradient(value, xt)
    for _ in range(3):  # interpreted, then generated code
        v, g = step(xt)
        np.testing.assert_allclose(v.numpy(), value.numpy(), rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), eager.numpy(), rtol=1e-6)


def test_integer_max_pool_keeps_its_dtype():
    x = np.arange(-8, 8, dtype=np.int32).reshape(1, 4, 4, 1)
    y = gt.nn.max_pool2d(x, 3, 2, "SAME")
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y.numpy()[0, ..., 0], [[2, 3], [6, 7]])


@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax_uses_tfs_flattened_index(include_batch):
    x = RNG.permutation(2 * 4 * 5 * 3).reshape(2, 4, 5, 3).astype(np.float32)
    out, argmax = gt.nn.max_pool_with_argmax(x, 2, 2, "SAME",
                                             include_batch_in_index=include_batch)
    assert argmax.dtype == np.int64 and argmax.shape == (2, 2, 3, 3)
    flat = x.reshape(-1) if include_batch else x.reshape(2, -1)
    picked = flat[argmax.numpy()] if include_batch else np.stack(
        [flat[b][argmax.numpy()[b]] for b in range(2)])
    np.testing.assert_array_equal(picked, out.numpy())
    np.testing.assert_array_equal(out.numpy(), _reference(x, "max", (2, 2), (2, 2), "SAME"))
    # (y * width + x) * channels + c: batch 1's window (0, 0) of channel 2, by hand
    window = x[1, 0:2, 0:2, 2]
    y0, x0 = np.unravel_index(window.argmax(), (2, 2))
    expected = (y0 * 5 + x0) * 3 + 2 + (60 if include_batch else 0)
    assert argmax.numpy()[1, 0, 0, 2] == expected


def test_pool_with_dilations():
    x = RNG.standard_normal((1, 9, 8, 2))
    got = gt.nn.pool(x, [2, 3], "MAX", padding="VALID", dilations=[2, 2]).numpy()
    np.testing.assert_allclose(got, _reference(x, "max", (2, 3), (1, 1), "VALID",
                                               dilations=(2, 2)), rtol=1e-12)
    # TF's dilated SAME pool pads with zeros (with_space_to_batch) and counts them.
    xs = RNG.standard_normal((1, 7, 2))
    got = gt.nn.pool(xs, [3], "AVG", padding="SAME", dilations=[2]).numpy()
    padded = np.pad(xs, [(0, 0), (2, 2), (0, 0)])
    np.testing.assert_allclose(got, _reference(padded, "avg", (3,), (1,), "VALID",
                                               dilations=(2,)), rtol=1e-12)
    with pytest.raises(ValueError, match="strides > 1"):
        gt.nn.pool(x, [2, 2], "MAX", strides=[2, 2], dilations=[2, 2])
    check_grads(lambda t: gt.nn.pool(t, [2, 3], "MAX", dilations=[2, 2]),
                [RNG.permutation(144).reshape(1, 9, 8, 2) / 9.0], order=2)


def test_max_pool_with_argmax_output_is_differentiable():
    x = RNG.permutation(2 * 4 * 4 * 2).reshape(2, 4, 4, 2) / 7.0
    check_grads(lambda t: gt.nn.max_pool_with_argmax(t, 2, 2, "VALID").output, [x], order=2)
