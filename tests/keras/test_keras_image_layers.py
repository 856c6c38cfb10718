"""Keras 3's Resizing, RandomFlip and SpatialDropout1D/2D/3D against their written
definitions (keras/src/layers/preprocessing and regularization): shapes in the
functional API, get_config, training-only randomness, gradients."""

import numpy as np
import pytest

import gradtape as gt
from layer_checks import assert_gradients_match_differences

layers = gt.keras.layers
RNG = np.random.default_rng(4)


def test_resizing_is_tf_image_resize_and_infers_its_shape():
    x = RNG.standard_normal((2, 6, 8, 3)).astype(np.float32)
    layer = layers.Resizing(3, 5, interpolation="bicubic")
    np.testing.assert_allclose(layer(x).numpy(),
                               gt.image.resize(x, [3, 5], method="bicubic").numpy())
    assert tuple(layer(gt.keras.Input((6, 8, 3))).shape) == (None, 3, 5, 3)
    first = layers.Resizing(3, 5, data_format="channels_first")
    np.testing.assert_allclose(first(np.moveaxis(x, -1, 1)).numpy(),
                               np.moveaxis(gt.image.resize(x, [3, 5]).numpy(), -1, 1),
                               rtol=1e-6)
    config = layer.get_config()
    assert (config["height"], config["width"], config["interpolation"]) == (3, 5, "bicubic")
    assert layers.Resizing(2, 2)(np.ones((4, 4, 1), np.uint8)).dtype == np.float32


def test_resizing_crop_and_pad_to_aspect_ratio_by_keras_arithmetic():
    x = np.arange(4 * 8, dtype=np.float32).reshape(1, 4, 8, 1)
    # crop to 1:1: the central 4x4 box (columns 2..5), then resized to 2x2
    cropped = layers.Resizing(2, 2, crop_to_aspect_ratio=True)(x).numpy()
    np.testing.assert_allclose(cropped, gt.image.resize(x[:, :, 2:6], [2, 2]).numpy())
    # pad to 1:1: two rows of fill above and below, then resized to 4x4
    padded = layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1.0)(x).numpy()
    box = np.pad(x, [(0, 0), (2, 2), (0, 0), (0, 0)], constant_values=-1.0)
    np.testing.assert_allclose(padded, gt.image.resize(box, [4, 4]).numpy())
    with pytest.raises(ValueError, match="Only one of"):
        layers.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="interpolation"):
        layers.Resizing(2, 2, interpolation="cubic")


def test_resizing_gradient():
    layer = layers.Resizing(3, 7, interpolation="area")
    x = gt.constant(RNG.standard_normal((1, 6, 7, 2)).astype(np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(layer(x))
    # area 6 -> 3 rows: each input row counts 1/2 toward one output, 7 -> 7 columns
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 0.5, rtol=1e-6)


@pytest.mark.parametrize("mode", ["horizontal", "vertical", "horizontal_and_vertical"])
def test_random_flip_flips_whole_images_while_training_only(mode):
    x = RNG.standard_normal((16, 3, 4, 2)).astype(np.float32)
    layer = layers.RandomFlip(mode, seed=11)
    out = layer(x, training=True).numpy()
    flipped = x
    if mode != "vertical":
        flipped = flipped[:, :, ::-1]
    if mode != "horizontal":
        flipped = flipped[:, ::-1]
    kinds = [np.array_equal(o, f) for o, f in zip(out, flipped)]
    assert all(np.array_equal(o, i) or k for o, i, k in zip(out, x, kinds))
    assert 0 < sum(kinds) < 16  # some flipped, some not (probability 1/2 each)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert layer.get_config()["mode"] == mode
    with pytest.raises(ValueError, match="unknown mode"):
        layers.RandomFlip("diagonal")


def test_random_flip_in_a_model_is_inactive_in_predict():
    model = gt.keras.Sequential([gt.keras.Input((2, 3, 1)), layers.RandomFlip(seed=1)])
    x = RNG.standard_normal((8, 2, 3, 1)).astype(np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


@pytest.mark.parametrize("rank,data_format", [  # SpatialDropout1D has no data_format
    (1, "channels_last"), (2, "channels_last"), (2, "channels_first"),
    (3, "channels_last"), (3, "channels_first")])
def test_spatial_dropout_drops_whole_channels(rank, data_format):
    shape = (4, 6, *([3] * rank)) if data_format == "channels_first" else (4, *([3] * rank), 6)
    x = np.ones(shape, np.float32)
    kwargs = {} if rank == 1 else {"data_format": data_format}
    layer = getattr(layers, f"SpatialDropout{rank}D")(0.5, seed=2, **kwargs)
    out = layer(x, training=True).numpy()
    channel_axis = 1 if data_format == "channels_first" else -1
    per_channel = np.moveaxis(out, channel_axis, 1).reshape(4, 6, -1)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}  # kept ones scaled by 1 / (1 - rate)
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()  # whole channels
    assert 0 < (per_channel[:, :, 0] == 0).sum() < 24
    np.testing.assert_array_equal(layer(x).numpy(), x)  # inference: the identity
    assert layer.get_config()["rate"] == 0.5
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(layers, f"SpatialDropout{rank}D")(1.5)


def test_spatial_dropout_gradient_uses_the_same_mask():
    gt.random.set_seed(3)
    layer = layers.SpatialDropout2D(0.3, seed=5, dtype="float64")
    x = RNG.standard_normal((2, 3, 3, 4))
    gt.random.set_seed(3)
    assert_gradients_match_differences(lambda t: layer(t, training=False), x)
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, training=True)
        total = gt.reduce_sum(y)
    g = tape.gradient(total, xt).numpy()
    np.testing.assert_allclose(g, (y.numpy() != 0) / 0.7)


def test_upsampling2d_interpolations_are_resize():
    x = RNG.standard_normal((1, 3, 4, 2)).astype(np.float32)
    for interpolation in ("bilinear", "bicubic", "lanczos3", "lanczos5"):
        out = layers.UpSampling2D((2, 3), interpolation=interpolation)(x).numpy()
        np.testing.assert_allclose(out, gt.image.resize(x, [6, 12],
                                                        method=interpolation).numpy())
    config = layers.UpSampling2D(interpolation="bicubic").get_config()
    assert config["interpolation"] == "bicubic" and config["size"] == (2, 2)
