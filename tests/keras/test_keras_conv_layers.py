"""Keras 3's convolution layers: constructor defaults, weight names and shapes, output
shapes, get_config, and values against Keras 3's written definition (a NumPy
cross-correlation over sliding windows, TF's SAME arithmetic), with their gradients
against finite differences in float64."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras
from layer_checks import assert_gradients_match_differences

RNG = np.random.default_rng(3)


def correlate(x, w, strides=(1, 1), pads=((0, 0), (0, 0)), dilation=(1, 1)):
    """Keras's conv (a cross-correlation), channels-last, in NumPy: the reference."""
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    kh, kw = w.shape[:2]
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (eh, ew), axis=(1, 2))
    win = win[:, ::strides[0], ::strides[1], :, ::dilation[0], ::dilation[1]]
    return np.einsum("nhwcij,ijco->nhwo", win, w)


def same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def test_conv2d_defaults_weights_and_values():
    layer = keras.layers.Conv2D(4, 3)
    x = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    y = layer(x)
    assert layer.name.startswith("conv2d") and layer.padding == "valid"
    assert layer.strides == (1, 1) and layer.dilation_rate == (1, 1) and layer.groups == 1
    assert [w.name for w in layer.weights] == ["kernel", "bias"]
    assert layer.kernel.shape == (3, 3, 3, 4) and layer.bias.shape == (4,)
    limit = np.sqrt(6 / (3 * 3 * 3 + 3 * 3 * 4))  # glorot_uniform: receptive field * channels
    kernel = layer.kernel.numpy()
    assert np.all(np.abs(kernel) <= limit) and np.abs(kernel).max() > 0.8 * limit
    np.testing.assert_array_equal(layer.bias.numpy(), 0)
    assert y.shape == (2, 5, 4, 4)
    np.testing.assert_allclose(y.numpy(), correlate(x, kernel), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides", [1, 2, 3])
def test_conv2d_same_strides_dilation_activation_and_bias(strides):
    layer = keras.layers.Conv2D(3, (3, 2), strides=strides, padding="same",
                                activation="relu", bias_initializer="ones", dtype="float64")
    x = RNG.normal(size=(2, 7, 8, 2))
    y = layer(x).numpy()
    pads = (same_pads(7, 3, strides), same_pads(8, 2, strides))
    want = np.maximum(correlate(x, layer.kernel.numpy(), (strides,) * 2, pads) + 1, 0)
    assert y.shape == (2, -(-7 // strides), -(-8 // strides), 3)
    np.testing.assert_allclose(y, want, atol=1e-12)
    dilated = keras.layers.Conv2D(2, 3, dilation_rate=2, dtype="float64")
    np.testing.assert_allclose(dilated(x).numpy(), correlate(
        x, dilated.kernel.numpy(), dilation=(2, 2)) + 0, atol=1e-12)


def test_conv2d_groups_and_channels_first():
    layer = keras.layers.Conv2D(6, 3, groups=2, dtype="float64")
    x = RNG.normal(size=(1, 5, 5, 4))
    y = layer(x).numpy()
    k = layer.kernel.numpy()
    assert k.shape == (3, 3, 2, 6)
    want = np.concatenate([correlate(x[..., :2], k[..., :3]), correlate(x[..., 2:], k[..., 3:])],
                          axis=-1)
    np.testing.assert_allclose(y, want, atol=1e-12)
    first = keras.layers.Conv2D(6, 3, groups=2, data_format="channels_first", dtype="float64")
    first.build((None, 4, 5, 5))
    first.kernel.assign(k)
    np.testing.assert_allclose(first(x.transpose(0, 3, 1, 2)).numpy(), y.transpose(0, 3, 1, 2),
                               atol=1e-12)


def test_conv1d_causal_and_conv3d_shapes():
    layer = keras.layers.Conv1D(1, 3, padding="causal", dilation_rate=2,
                                kernel_initializer="ones", use_bias=False)
    x = np.arange(8, dtype=np.float32).reshape(1, 8, 1)
    y = layer(x).numpy()[0, :, 0]
    # causal, dilation 2: y[t] = x[t] + x[t-2] + x[t-4] (zeros before the start)
    np.testing.assert_allclose(y, [sum(v for v in (t, t - 2, t - 4) if v >= 0)
                                   for t in range(8)])
    conv3 = keras.layers.Conv3D(2, (2, 3, 3), strides=(1, 2, 2), padding="same")
    assert conv3(np.zeros((1, 4, 7, 7, 3), np.float32)).shape == (1, 4, 4, 4, 2)
    assert conv3.kernel.shape == (2, 3, 3, 3, 2)


@pytest.mark.parametrize("padding,strides,output_padding,size,expected", [
    ("valid", 2, None, 4, 9), ("same", 2, None, 4, 8), ("valid", 1, None, 4, 6),
    ("same", 2, 1, 4, 8), ("valid", 3, 2, 4, 14), ("valid", 2, None, 5, 11)])
def test_conv2d_transpose_output_lengths_as_keras_3(padding, strides, output_padding, size,
                                                    expected):
    layer = keras.layers.Conv2DTranspose(2, 3, strides=strides, padding=padding,
                                         output_padding=output_padding)
    y = layer(np.zeros((1, size, size, 5), np.float32))
    assert y.shape == (1, expected, expected, 2)
    assert layer.kernel.shape == (3, 3, 2, 5)  # (kh, kw, filters, in_channels)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(padding):
    t = keras.layers.Conv2DTranspose(3, 3, strides=2, padding=padding, use_bias=False,
                                     dtype="float64")
    y = RNG.normal(size=(2, 4, 4, 5))
    out = t(y).numpy()
    k = t.kernel.numpy()                       # (3, 3, 3, 5): a conv from 3 to 5 channels
    x = RNG.normal(size=out.shape)
    pads = ((same_pads(out.shape[1], 3, 2),) * 2 if padding == "same" else ((0, 0), (0, 0)))
    forward = correlate(x, k, (2, 2), pads)
    assert forward.shape == y.shape
    np.testing.assert_allclose(np.vdot(forward, y), np.vdot(x, out), rtol=1e-12)
    ones = keras.layers.Conv2DTranspose(1, 2, strides=2, kernel_initializer="ones",
                                        use_bias=False)
    np.testing.assert_allclose(ones(np.ones((1, 3, 3, 1), np.float32)).numpy(),
                               np.ones((1, 6, 6, 1)))


def test_conv1d_and_conv3d_transpose():
    t1 = keras.layers.Conv1DTranspose(2, 3, strides=2)
    assert t1(np.zeros((1, 5, 4), np.float32)).shape == (1, 11, 2)
    assert t1.kernel.shape == (3, 2, 4)
    t3 = keras.layers.Conv3DTranspose(2, 2, strides=2, padding="same")
    assert t3(np.zeros((1, 2, 3, 2, 4), np.float32)).shape == (1, 4, 6, 4, 2)


def test_depthwise_and_separable_conv2d():
    dw = keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                                      bias_initializer="ones", dtype="float64")
    x = RNG.normal(size=(2, 5, 5, 3))
    y = dw(x).numpy()
    k = dw.kernel.numpy()
    assert [w.name for w in dw.weights] == ["kernel", "bias"]
    assert k.shape == (3, 3, 3, 2) and dw.bias.shape == (6,) and y.shape == (2, 5, 5, 6)
    for c in range(3):
        for m in range(2):
            want = correlate(x[..., c:c + 1], k[:, :, c:c + 1, m:m + 1], pads=((1, 1), (1, 1)))
            np.testing.assert_allclose(y[..., c * 2 + m], want[..., 0] + 1, atol=1e-12)
    sep = keras.layers.SeparableConv2D(4, 3, depth_multiplier=2, dtype="float64")
    ys = sep(x).numpy()
    assert [w.name for w in sep.weights] == ["depthwise_kernel", "pointwise_kernel", "bias"]
    assert sep.depthwise_kernel.shape == (3, 3, 3, 2)
    assert sep.pointwise_kernel.shape == (1, 1, 6, 4)
    d = sep.depthwise_kernel.numpy()
    depthwise = np.stack([correlate(x[..., c:c + 1], d[:, :, c:c + 1, m:m + 1])[..., 0]
                          for c in range(3) for m in range(2)], axis=-1)
    np.testing.assert_allclose(ys, depthwise @ sep.pointwise_kernel.numpy()[0, 0], atol=1e-12)
    sep1 = keras.layers.SeparableConv1D(2, 3, padding="same")
    assert sep1(np.zeros((1, 6, 3), np.float32)).shape == (1, 6, 2)
    assert sep1.pointwise_kernel.shape == (1, 3, 2)


@pytest.mark.parametrize("make,shape", [
    (lambda: keras.layers.Conv2D(2, 3, strides=2, padding="same", dtype="float64"),
     (2, 5, 5, 2)),
    (lambda: keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same", dtype="float64"),
     (1, 3, 3, 2)),
    (lambda: keras.layers.DepthwiseConv2D(2, depth_multiplier=2, dtype="float64"),
     (1, 4, 4, 2)),
    (lambda: keras.layers.SeparableConv1D(3, 2, padding="same", dtype="float64"), (2, 5, 2)),
    (lambda: keras.layers.Conv1D(2, 3, padding="causal", dtype="float64"), (2, 6, 2)),
    (lambda: keras.layers.Conv3D(2, 2, dtype="float64"), (1, 3, 3, 3, 1))])
def test_layer_gradients_match_finite_differences(make, shape):
    layer = make()
    x = RNG.normal(size=shape)
    layer(gt.constant(x))
    if layer.bias is not None:  # a nonzero bias, so its gradient is checked at a general point
        layer.bias.assign(RNG.normal(size=layer.bias.shape))
    assert_gradients_match_differences(layer, x, layer.trainable_weights)


def test_get_config_round_trips():
    layer = keras.layers.Conv2D(8, (3, 5), strides=2, padding="same", groups=2,
                                activation="relu", use_bias=False)
    config = layer.get_config()
    assert {k: config[k] for k in ("filters", "kernel_size", "strides", "padding",
                                   "data_format", "dilation_rate", "groups", "activation",
                                   "use_bias")} == {
        "filters": 8, "kernel_size": (3, 5), "strides": (2, 2), "padding": "same",
        "data_format": "channels_last", "dilation_rate": (1, 1), "groups": 2,
        "activation": "relu", "use_bias": False}
    again = keras.layers.Conv2D(**{k: v for k, v in config.items() if k != "name"})
    assert again(np.zeros((1, 6, 6, 4), np.float32)).shape == (1, 3, 3, 8)
    t = keras.layers.Conv2DTranspose(4, 3, strides=2, output_padding=1).get_config()
    assert t["output_padding"] == (1, 1) and "groups" not in t
    assert keras.layers.DepthwiseConv2D(3, depth_multiplier=3).get_config()[
        "depth_multiplier"] == 3


def test_keras_3_errors():
    with pytest.raises(ValueError, match="strides > 1` not supported in conjunction"):
        keras.layers.Conv2D(4, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        keras.layers.Conv2D(5, 3, groups=2)
    with pytest.raises(ValueError, match="input channels must be evenly divisible"):
        keras.layers.Conv2D(4, 3, groups=2)(np.zeros((1, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="Strides must be greater than output padding"):
        keras.layers.Conv2DTranspose(4, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="`padding` argument must be"):
        keras.layers.Conv2D(4, 3, padding="causal")
    with pytest.raises(ValueError, match="strictly positive"):
        keras.layers.Conv2D(0, 3)


def test_default_names_are_keras_3s():
    """Keras 3 names layers by its own snake case (``conv2d``), not tf.Module's
    (``conv2_d``): the names every layer with a digit before a capital got wrong."""
    keras.backend.clear_session()
    assert keras.layers.Conv2D(1, 1).name == "conv2d"
    assert keras.layers.Conv2DTranspose(1, 1).name == "conv2d_transpose"
    assert keras.layers.DepthwiseConv2D(1).name == "depthwise_conv2d"
    assert keras.layers.SeparableConv1D(1, 1).name == "separable_conv1d"
    assert keras.layers.ZeroPadding2D().name == "zero_padding2d"
    assert keras.layers.UpSampling3D().name == "up_sampling3d"
    assert keras.layers.Cropping1D().name == "cropping1d"
    assert keras.layers.BatchNormalization().name == "batch_normalization"
    assert keras.layers.PReLU().name == "p_re_lu"
    assert keras.layers.MultiHeadAttention(1, 1).name == "multi_head_attention"


def test_a_functional_subclass_is_named_by_keras_3s_rule_too():
    class Encoder2D(keras.Model):
        pass

    keras.backend.clear_session()
    inputs = keras.Input((3,))
    assert Encoder2D(inputs, keras.layers.Dense(2)(inputs)).name == "encoder2d"


def test_keras_3_aliases_are_the_same_classes():
    layers = keras.layers
    assert layers.Convolution2D is layers.Conv2D and layers.Convolution1D is layers.Conv1D
    assert layers.Convolution3D is layers.Conv3D
    assert layers.Convolution2DTranspose is layers.Conv2DTranspose
    assert layers.SeparableConvolution2D is layers.SeparableConv2D


def test_keras_ops_convolutions_equal_the_layers_and_take_keras_tensors():
    ops = keras.ops
    x = RNG.normal(size=(2, 7, 7, 3))
    conv = keras.layers.Conv2D(4, 3, strides=2, padding="same", use_bias=False, dtype="float64")
    t = keras.layers.Conv2DTranspose(2, 3, strides=2, output_padding=1, use_bias=False,
                                     dtype="float64")
    dw = keras.layers.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False, dtype="float64")
    sep = keras.layers.SeparableConv2D(5, 3, use_bias=False, dtype="float64")
    expected = [layer(x).numpy() for layer in (conv, t, dw, sep)]  # also builds them
    got = [ops.conv(x, conv.kernel, strides=2, padding="same"),
           ops.conv_transpose(x, t.kernel, strides=2, output_padding=1),
           ops.depthwise_conv(x, dw.kernel),
           ops.separable_conv(x, sep.depthwise_kernel, sep.pointwise_kernel)]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.numpy(), b, atol=1e-12)
    assert ops.nn.conv is ops.conv
    inputs = keras.Input((7, 7, 3))
    out = ops.conv(inputs, np.ones((3, 3, 3, 2), np.float32), padding="same")
    assert out.shape == (None, 7, 7, 2)
    model = keras.Model(inputs, out)
    np.testing.assert_allclose(model(x.astype(np.float32)).numpy()[0, 3, 3],
                               np.full(2, x[0, 2:5, 2:5].sum()), rtol=1e-5)


def test_depthwise_conv1d():
    layer = keras.layers.DepthwiseConv1D(3, depth_multiplier=2, padding="same", dtype="float64")
    x = RNG.normal(size=(2, 6, 3))
    y = layer(x).numpy()
    k = layer.kernel.numpy()
    assert k.shape == (3, 3, 2) and layer.bias.shape == (6,) and y.shape == (2, 6, 6)
    xp = np.pad(x, [(0, 0), (1, 1), (0, 0)])
    for c in range(3):
        for m in range(2):
            want = sum(xp[:, t:t + 6, c] * k[t, c, m] for t in range(3))
            np.testing.assert_allclose(y[..., c * 2 + m], want, atol=1e-12)
    assert layer.name.startswith("depthwise_conv1d")
