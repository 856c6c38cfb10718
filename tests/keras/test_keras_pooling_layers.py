"""Keras 3's pooling layers against their written definition: ``pool_size=2``,
``strides=None`` -> the pool size, ``padding="valid"``, channels last; output shapes
``(n - k) // s + 1`` (valid) and ``(n - 1) // s + 1`` (same), in the functional API
too; global pooling with ``keepdims``; gradients against finite differences."""

import numpy as np
import pytest

import gradtape as gt
from layer_checks import assert_gradients_match_differences

layers = gt.keras.layers
RNG = np.random.default_rng(3)


def test_max_pooling2d_defaults_halve_height_and_width():
    x = np.arange(2 * 5 * 4 * 3, dtype=np.float32).reshape(2, 5, 4, 3)
    layer = layers.MaxPooling2D()
    y = layer(x).numpy()
    assert y.shape == (2, 2, 2, 3)  # (5 - 2) // 2 + 1 rows: the odd last row is dropped
    np.testing.assert_array_equal(y, x[:, :4].reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4)))
    config = layer.get_config()
    assert (config["pool_size"], config["strides"], config["padding"],
            config["data_format"]) == ((2, 2), (2, 2), "valid", "channels_last")
    clone = layers.MaxPooling2D(**{k: v for k, v in config.items() if k != "name"})
    np.testing.assert_array_equal(clone(x).numpy(), y)


@pytest.mark.parametrize("name,rank", [("MaxPooling1D", 1), ("MaxPooling2D", 2),
                                       ("MaxPooling3D", 3), ("AveragePooling1D", 1),
                                       ("AveragePooling2D", 2), ("AveragePooling3D", 3)])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_pooling_layers_equal_gt_nn_and_their_output_shapes(name, rank, padding,
                                                            data_format):
    spatial = (7, 5, 6)[:rank]
    shape = (2, 3, *spatial) if data_format == "channels_first" else (2, *spatial, 3)
    x = RNG.standard_normal(shape).astype(np.float32)
    layer = getattr(layers, name)(pool_size=3, strides=2, padding=padding,
                                  data_format=data_format)
    y = layer(x)
    fmt = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank]
    fn = gt.nn.max_pool if name.startswith("Max") else gt.nn.avg_pool
    expected = fn(x, 3, 2, padding.upper(),
                  data_format=fmt[int(data_format == "channels_first")])
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-6)
    sizes = [(n - 3) // 2 + 1 if padding == "valid" else (n - 1) // 2 + 1 for n in spatial]
    out = (2, 3, *sizes) if data_format == "channels_first" else (2, *sizes, 3)
    assert y.shape == out
    symbolic = layer(gt.keras.Input(shape[1:]))
    assert tuple(symbolic.shape) == (None, *out[1:])


def test_average_pooling_same_divides_by_the_valid_elements():
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 5, 1)
    y = layers.AveragePooling1D(pool_size=2, padding="same")(x).numpy().ravel()
    np.testing.assert_allclose(y, [1.5, 3.5, 5.0])  # the last window holds 5 alone


@pytest.mark.parametrize("kind", ["Max", "Average"])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_global_pooling_and_keepdims(kind, rank):
    x = RNG.standard_normal((2, *([4] * rank), 3)).astype(np.float32)
    layer = getattr(layers, f"Global{kind}Pooling{rank}D")
    reduce = np.max if kind == "Max" else np.mean
    axes = tuple(range(1, rank + 1))
    np.testing.assert_allclose(layer()(x).numpy(), reduce(x, axis=axes), rtol=1e-6)
    kept = layer(keepdims=True)(x)
    assert kept.shape == (2, *([1] * rank), 3)
    first = layer(data_format="channels_first")(np.moveaxis(x, -1, 1))
    np.testing.assert_allclose(first.numpy(), reduce(x, axis=axes), rtol=1e-6)
    assert tuple(layer()(gt.keras.Input(x.shape[1:])).shape) == (None, 3)
    assert layer(keepdims=True).get_config()["keepdims"] is True


def test_global_average_pooling1d_averages_the_unmasked_steps():
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[True, True, False], [True, False, False]])
    y = layers.GlobalAveragePooling1D()(x, mask=mask).numpy()
    np.testing.assert_allclose(y, [[1, 2], [6, 7]])


@pytest.mark.parametrize("name", ["MaxPooling2D", "AveragePooling2D",
                                  "GlobalMaxPooling2D", "GlobalAveragePooling2D"])
def test_layer_gradients(name):
    x = RNG.permutation(2 * 5 * 5 * 2).reshape(2, 5, 5, 2) / 10.0
    kwargs = {"padding": "same"} if "Global" not in name else {}
    layer = getattr(layers, name)(**kwargs, dtype="float64")
    assert_gradients_match_differences(layer, x)


def test_bad_arguments():
    with pytest.raises(ValueError, match="padding"):
        layers.MaxPooling2D(padding="full")
    with pytest.raises(ValueError, match="data_format"):
        layers.MaxPooling2D(data_format="NHWC")
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.MaxPooling2D()(np.zeros((2, 4, 4), np.float32))


def test_a_small_cnn_trains_with_max_pooling():
    model = gt.keras.Sequential([gt.keras.Input((8, 8, 1)), layers.MaxPooling2D(),
                                 layers.Flatten(), layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    x = RNG.standard_normal((16, 8, 8, 1)).astype(np.float32)
    y = x[:, ::4, ::4, 0].reshape(16, 4)[:, :2]
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < first


def test_default_names_follow_keras_3s_snake_case():
    # Keras 3's to_snake_case: a digit does not start a word ("max_pooling2d", not TF's
    # module rule "max_pooling2_d"), so weight paths and summaries match Keras's.
    gt.keras.backend.clear_session()
    names = [layers.MaxPooling2D().name, layers.GlobalAveragePooling1D().name,
             layers.UpSampling2D().name, layers.ZeroPadding3D().name,
             layers.Cropping1D().name, layers.PReLU().name, layers.MaxPooling2D().name]
    assert names == ["max_pooling2d", "global_average_pooling1d", "up_sampling2d",
                     "zero_padding3d", "cropping1d", "p_re_lu", "max_pooling2d_1"]


def test_keras_3s_aliases_are_the_same_classes():
    assert (layers.MaxPool2D, layers.AvgPool1D, layers.GlobalMaxPool3D,
            layers.GlobalAvgPool2D) == (layers.MaxPooling2D, layers.AveragePooling1D,
                                        layers.GlobalMaxPooling3D,
                                        layers.GlobalAveragePooling2D)
