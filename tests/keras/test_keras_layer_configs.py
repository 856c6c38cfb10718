"""Every Keras layer gradtape has: ``get_config`` with Keras 3's keys and a
``from_config`` round trip, built with non-default arguments where they are cheap."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradtape as tf

layers = tf.keras.layers
Layer = tf.keras.layers.Layer


def _relu_plus_one(x):
    return tf.nn.relu(x) + 1.0


def _cell():
    return layers.GRUCell(3)


# Non-default arguments per class (a required argument must be given).
ARGUMENTS = {
    "Activation": dict(activation="tanh"),
    "ActivityRegularization": dict(l1=0.1, l2=0.2),
    "AveragePooling1D": dict(pool_size=3, strides=1, padding="same"),
    "AveragePooling2D": dict(pool_size=(3, 2), padding="same"),
    "AveragePooling3D": dict(pool_size=2, data_format="channels_first"),
    "BatchNormalization": dict(axis=1, momentum=0.9, epsilon=1e-4, center=False,
                               gamma_regularizer="l2"),
    "Bidirectional": dict(layer=layers.LSTM(2, return_sequences=True),
                          merge_mode="sum"),
    "Concatenate": dict(axis=1),
    "Conv1D": dict(filters=2, kernel_size=3, strides=2, padding="causal",
                   activation="relu", kernel_regularizer=tf.keras.regularizers.L2(0.1)),
    "Conv1DTranspose": dict(filters=2, kernel_size=3, strides=2),
    "Conv2D": dict(filters=4, kernel_size=(3, 2), padding="same", use_bias=False,
                   kernel_initializer="he_normal"),
    "Conv2DTranspose": dict(filters=2, kernel_size=3, output_padding=1, strides=2),
    "Conv3D": dict(filters=2, kernel_size=2, dilation_rate=2),
    "Conv3DTranspose": dict(filters=2, kernel_size=2),
    "Cropping1D": dict(cropping=(2, 1)),
    "Cropping2D": dict(cropping=((1, 2), (0, 3)), data_format="channels_first"),
    "Cropping3D": dict(cropping=2),
    "Dense": dict(units=3, activation="sigmoid", use_bias=False,
                  kernel_initializer=tf.keras.initializers.RandomNormal(stddev=0.5),
                  bias_regularizer="l1", activity_regularizer="l2"),
    "DepthwiseConv1D": dict(kernel_size=3, depth_multiplier=2),
    "DepthwiseConv2D": dict(kernel_size=3, depth_multiplier=2, padding="same"),
    "Dot": dict(axes=(1, 2), normalize=True),
    "Dropout": dict(rate=0.3, noise_shape=(None, 1), seed=7),
    "ELU": dict(alpha=0.5),
    "Embedding": dict(input_dim=10, output_dim=3, mask_zero=True,
                      embeddings_initializer="ones"),
    "GRU": dict(units=3, return_sequences=True, reset_after=False, go_backwards=True),
    "GRUCell": dict(units=3, dropout=0.1),
    "GaussianDropout": dict(rate=0.2, seed=3),
    "GaussianNoise": dict(stddev=0.4, seed=3),
    "GlobalAveragePooling1D": dict(keepdims=True),
    "GlobalAveragePooling2D": dict(data_format="channels_first"),
    "GlobalMaxPooling3D": dict(keepdims=True),
    "GroupNormalization": dict(groups=2, epsilon=1e-5, scale=False),
    "InputLayer": dict(batch_shape=(None, 4, 3), dtype="float64"),
    "Lambda": dict(function=_relu_plus_one, arguments={}),
    "LSTM": dict(units=2, return_state=True, unit_forget_bias=False),
    "LSTMCell": dict(units=2),
    "LayerNormalization": dict(axis=(1, 2), rms_scaling=True),
    "LeakyReLU": dict(negative_slope=0.1),
    "Masking": dict(mask_value=-1.0),
    "MaxPooling1D": dict(pool_size=2, strides=1),
    "MaxPooling2D": dict(pool_size=3, strides=2, padding="same"),
    "MaxPooling3D": dict(pool_size=(1, 2, 2)),
    "MultiHeadAttention": dict(num_heads=2, key_dim=3, value_dim=4, dropout=0.1,
                               use_bias=False, output_shape=5, attention_axes=(1,)),
    "PReLU": dict(shared_axes=[1], alpha_initializer="ones"),
    "Permute": dict(dims=(2, 1)),
    "RNN": dict(cell=_cell(), return_sequences=True, unroll=True),
    "RandomFlip": dict(mode="vertical", seed=5),
    "ReLU": dict(max_value=6.0, negative_slope=0.1, threshold=0.5),
    "RepeatVector": dict(n=3),
    "Reshape": dict(target_shape=(2, -1)),
    "Resizing": dict(height=5, width=6, interpolation="nearest"),
    "SeparableConv1D": dict(filters=2, kernel_size=3, depth_multiplier=2),
    "SeparableConv2D": dict(filters=2, kernel_size=3, padding="same"),
    "SimpleRNN": dict(units=2, activation="relu", stateful=False),
    "SimpleRNNCell": dict(units=2, use_bias=False),
    "Softmax": dict(axis=1),
    "SpatialDropout1D": dict(rate=0.2),
    "SpatialDropout2D": dict(rate=0.2, data_format="channels_first"),
    "SpatialDropout3D": dict(rate=0.2),
    "StackedRNNCells": dict(cells=[layers.SimpleRNNCell(2), layers.GRUCell(3)]),
    "TimeDistributed": dict(layer=layers.Dense(2)),
    "UpSampling1D": dict(size=3),
    "UpSampling2D": dict(size=(2, 3), interpolation="bilinear"),
    "UpSampling3D": dict(size=(1, 2, 3)),
    "ZeroPadding1D": dict(padding=(1, 2)),
    "ZeroPadding2D": dict(padding=((1, 2), (3, 0)), data_format="channels_first"),
    "ZeroPadding3D": dict(padding=2),
}


def _layer_classes() -> list[type]:
    found: dict[type, str] = {}
    for name in sorted(dir(layers)):
        value = getattr(layers, name)
        if inspect.isclass(value) and issubclass(value, Layer) and value is not Layer:
            found.setdefault(value, value.__name__)
    return sorted(found, key=lambda cls: cls.__name__)


CLASSES = _layer_classes()


def _comparable(config):
    """Nested layers in a config compare by their own configs."""
    if isinstance(config, Layer):
        return (type(config).__name__, _comparable(config.get_config()))
    if isinstance(config, dict):
        return {k: _comparable(v) for k, v in config.items()}
    if isinstance(config, (list, tuple)):
        return type(config)(_comparable(v) for v in config)
    return config


def test_the_table_covers_every_layer_class():
    assert len(CLASSES) > 60
    assert set(ARGUMENTS) - {cls.__name__ for cls in CLASSES} == set()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_get_config_round_trips_through_from_config(cls):
    layer = cls(**ARGUMENTS.get(cls.__name__, {}))
    config = layer.get_config()
    # Keras 3's base keys (an InputLayer, without weights, has no "trainable")
    assert {"name", "dtype"} <= set(config)
    assert "trainable" in config or cls is layers.InputLayer
    for key in ARGUMENTS.get(cls.__name__, {}):
        assert key in config, f"{cls.__name__}.get_config() lost {key}"
    rebuilt = type(layer).from_config(config)
    assert type(rebuilt) is type(layer)
    assert _comparable(rebuilt.get_config()) == _comparable(config)


BASE_KEYS = {"name", "trainable", "dtype"}


@pytest.mark.parametrize("layer, keys, values", [
    # Keras 3's get_config of each (keras/src/layers/reshaping/...), values as it keeps them
    (layers.ZeroPadding1D(padding=(1, 2)), {"padding", "data_format"},
     {"padding": (1, 2)}),
    (layers.ZeroPadding2D(padding=1), {"padding", "data_format"},
     {"padding": ((1, 1), (1, 1)), "data_format": "channels_last"}),
    (layers.ZeroPadding3D(padding=(1, 2, 3)), {"padding", "data_format"},
     {"padding": ((1, 1), (2, 2), (3, 3))}),
    (layers.Cropping1D(cropping=3), {"cropping"}, {"cropping": (3, 3)}),
    (layers.Cropping2D(cropping=((1, 2), (3, 4))), {"cropping", "data_format"},
     {"cropping": ((1, 2), (3, 4))}),
    (layers.Cropping3D(), {"cropping", "data_format"},
     {"cropping": ((1, 1), (1, 1), (1, 1))}),
    (layers.UpSampling1D(size=3), {"size"}, {"size": 3}),
    (layers.UpSampling2D(), {"size", "data_format", "interpolation"},
     {"size": (2, 2), "interpolation": "nearest"}),
    (layers.UpSampling3D(size=2), {"size", "data_format"}, {"size": (2, 2, 2)}),
    (layers.Reshape((3, -1)), {"target_shape"}, {"target_shape": (3, -1)}),
    (layers.Permute((2, 1)), {"dims"}, {"dims": (2, 1)}),
    (layers.RepeatVector(4), {"n"}, {"n": 4}),
    (layers.Flatten(), {"data_format"}, {"data_format": None}),
    (layers.Concatenate(axis=1), {"axis"}, {"axis": 1}),
    (layers.Add(), set(), {}),
    (layers.Dot(axes=1), {"axes", "normalize"}, {"axes": 1, "normalize": False}),
    (layers.Activation("relu"), {"activation"}, {"activation": "relu"}),
    (layers.ReLU(), {"max_value", "negative_slope", "threshold"},
     {"max_value": None, "negative_slope": 0.0, "threshold": 0.0}),
    (layers.LeakyReLU(), {"negative_slope"}, {"negative_slope": 0.3}),
    (layers.Softmax(), {"axis"}, {"axis": -1}),
    (layers.Dropout(0.5), {"rate", "seed", "noise_shape"},
     {"rate": 0.5, "seed": None, "noise_shape": None}),
    (layers.GaussianNoise(0.1), {"stddev", "seed"}, {"stddev": 0.1}),
    (layers.Dense(2, kernel_regularizer="l2"),
     {"units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
      "kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint"},
     {"activation": "linear", "bias_initializer": {"class_name": "Zeros", "config": {}},
      "kernel_regularizer": {"class_name": "L2", "config": {"l2": 0.01}}}),
], ids=lambda value: type(value).__name__ if isinstance(value, Layer) else "")
def test_keras3_keys_and_values(layer, keys, values):
    config = layer.get_config()
    assert set(config) == BASE_KEYS | keys
    for key, value in values.items():
        assert config[key] == value, key


@pytest.mark.parametrize("layer", [
    layers.ZeroPadding1D((2, 1)), layers.ZeroPadding2D(((1, 0), (2, 3))),
    layers.Cropping1D((1, 2)), layers.Cropping2D(((1, 0), (0, 1))),
    layers.UpSampling1D(3), layers.UpSampling2D((2, 1)), layers.Reshape((-1, 2)),
    layers.Permute((2, 1, 3)), layers.Flatten(), layers.ReLU(max_value=0.5),
], ids=lambda layer: type(layer).__name__)
def test_the_rebuilt_layer_computes_the_same(layer):
    x = np.arange(2 * 4 * 6 * 2, dtype=np.float32).reshape(2, 4, 6, 2) / 50.0 - 0.5
    if isinstance(layer, (layers.ZeroPadding1D, layers.Cropping1D, layers.UpSampling1D)):
        x = x.reshape(2, 24, 2)
    rebuilt = type(layer).from_config(layer.get_config())
    np.testing.assert_array_equal(rebuilt(x).numpy(), layer(x).numpy())


def test_a_rebuilt_dense_keeps_its_initializer_and_regularizer():
    dense = layers.Dense(3, kernel_initializer=tf.keras.initializers.Constant(0.25),
                         kernel_regularizer=tf.keras.regularizers.L1(0.5))
    rebuilt = layers.Dense.from_config(dense.get_config())
    out = rebuilt(np.ones((2, 4), np.float32))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1.0))  # 4 * 0.25
    np.testing.assert_allclose(float(rebuilt.losses[0]), 0.5 * 12 * 0.25)
