"""Every name of [3/6] "Real TF programs, part 1", called once with Keras 3's / TF's
signature (keyword names as Keras and TF spell them), checked by the shape or the
number Keras's and TF's docs give. The families have their own value and gradient
tests; this walk keeps the list complete and the signatures TF's."""

import numpy as np
import pytest

import gradtape as tf

keras = tf.keras
L = keras.layers
X4 = np.random.default_rng(0).standard_normal((2, 4, 4, 3)).astype(np.float32)
X3, X2, X5 = X4[:, :, :, 0], X4[:, 0, 0, :], X4[:, None]

LAYERS = {
    "Reshape": (lambda: L.Reshape((-1, 3))(X4), (2, 16, 3)),
    "Permute": (lambda: L.Permute((2, 1))(X3), (2, 4, 4)),
    "RepeatVector": (lambda: L.RepeatVector(3)(X2), (2, 3, 3)),
    "ZeroPadding1D": (lambda: L.ZeroPadding1D(padding=1)(X3), (2, 6, 4)),
    "ZeroPadding2D": (lambda: L.ZeroPadding2D(padding=((1, 0), (2, 1)))(X4), (2, 5, 7, 3)),
    "ZeroPadding3D": (lambda: L.ZeroPadding3D(padding=1)(X5), (2, 3, 6, 6, 3)),
    "Cropping1D": (lambda: L.Cropping1D(cropping=(1, 1))(X3), (2, 2, 4)),
    "Cropping2D": (lambda: L.Cropping2D(cropping=((1, 0), (0, 1)))(X4), (2, 3, 3, 3)),
    "Cropping3D": (lambda: L.Cropping3D(cropping=((0, 0), (1, 1), (1, 1)))(X5),
                   (2, 1, 2, 2, 3)),
    "UpSampling1D": (lambda: L.UpSampling1D(size=2)(X3), (2, 8, 4)),
    "UpSampling2D": (lambda: L.UpSampling2D(size=(2, 2), interpolation="bilinear")(X4),
                     (2, 8, 8, 3)),
    "UpSampling3D": (lambda: L.UpSampling3D(size=(1, 2, 2))(X5), (2, 1, 8, 8, 3)),
    "LeakyReLU": (lambda: L.LeakyReLU(negative_slope=0.2)(X2), (2, 3)),
    "ReLU": (lambda: L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.0)(X2), (2, 3)),
    "PReLU": (lambda: L.PReLU(alpha_initializer="zeros", shared_axes=[1])(X3), (2, 4, 4)),
    "ELU": (lambda: L.ELU(alpha=1.0)(X2), (2, 3)),
    "Softmax": (lambda: L.Softmax(axis=-1)(X2, mask=np.array([[1, 1, 0]] * 2, bool)),
                (2, 3)),
    "Activation": (lambda: L.Activation("relu")(X2), (2, 3)),
    "Concatenate": (lambda: L.Concatenate(axis=-1)([X2, X2]), (2, 6)),
    "Add": (lambda: L.Add()([X2, X2]), (2, 3)),
    "Subtract": (lambda: L.Subtract()([X2, X2]), (2, 3)),
    "Multiply": (lambda: L.Multiply()([X2, X2]), (2, 3)),
    "Average": (lambda: L.Average()([X2, X2]), (2, 3)),
    "Maximum": (lambda: L.Maximum()([X2, X2]), (2, 3)),
    "Dot": (lambda: L.Dot(axes=1, normalize=True)([X2, X2]), (2, 1)),
    "LayerNormalization": (lambda: L.LayerNormalization(axis=-1, epsilon=1e-3)(X2), (2, 3)),
    "GroupNormalization": (lambda: L.GroupNormalization(groups=3, axis=-1)(X4), (2, 4, 4, 3)),
    "GaussianNoise": (lambda: L.GaussianNoise(0.1, seed=1)(X2, training=True), (2, 3)),
    "GaussianDropout": (lambda: L.GaussianDropout(0.1, seed=1)(X2, training=True), (2, 3)),
    "Embedding": (lambda: L.Embedding(10, 4, embeddings_initializer="uniform",
                                      mask_zero=True)(np.array([[1, 0, 2]])), (1, 3, 4)),
    "MultiHeadAttention": (lambda: L.MultiHeadAttention(num_heads=2, key_dim=2)(
        X3, X3, return_attention_scores=True)[1], (2, 2, 4, 4)),
    "Input": (lambda: keras.Input(shape=(3,), batch_size=None, dtype="float32"), (None, 3)),
    "InputLayer": (lambda: L.InputLayer(shape=(3,)).output, (None, 3)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer(name):
    build, shape = LAYERS[name]
    assert tuple(build().shape) == shape


# Keras 3's docstring examples: y_true, y_pred, the value printed.
A_TRUE, A_PRED = [[0.0, 1.0], [0.0, 0.0]], [[0.6, 0.4], [0.4, 0.6]]
LOSSES = {
    "Huber": (keras.losses.Huber(delta=1.0), A_TRUE, A_PRED, 0.155),
    "LogCosh": (keras.losses.LogCosh(), A_TRUE, [[1.0, 1.0], [0.0, 0.0]], 0.108),
    "KLDivergence": (keras.losses.KLDivergence(), A_TRUE, A_PRED, 0.458),
    "Poisson": (keras.losses.Poisson(), A_TRUE, [[1.0, 1.0], [0.0, 0.0]], 0.5),
    "CosineSimilarity": (keras.losses.CosineSimilarity(axis=1), [[0.0, 1.0], [1.0, 1.0]],
                         [[1.0, 0.0], [1.0, 1.0]], -0.5),
    "CategoricalHinge": (keras.losses.CategoricalHinge(), A_TRUE, A_PRED, 1.4),
    "Hinge": (keras.losses.Hinge(), A_TRUE, A_PRED, 1.3),
    "SquaredHinge": (keras.losses.SquaredHinge(), A_TRUE, A_PRED, 1.86),
    "MeanSquaredLogarithmicError": (keras.losses.MeanSquaredLogarithmicError(), A_TRUE,
                                    [[1.0, 1.0], [1.0, 0.0]], 0.240),
    "MeanAbsolutePercentageError": (keras.losses.MeanAbsolutePercentageError(),
                                    [[2.0, 1.0], [2.0, 3.0]], [[1.0, 1.0], [1.0, 0.0]], 50.0),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_keras_doc_value(name):
    loss, y_true, y_pred, value = LOSSES[name]
    np.testing.assert_allclose(float(loss(y_true, y_pred)), value, atol=1e-3)


def test_schedules_metrics_and_initializers():
    schedules = keras.optimizers.schedules
    poly = schedules.PolynomialDecay(0.1, 100, end_learning_rate=0.01, power=1.0, cycle=False)
    np.testing.assert_allclose(float(poly(50)), 0.055, rtol=1e-6)
    restarts = schedules.CosineDecayRestarts(0.1, 10, t_mul=2.0, m_mul=1.0, alpha=0.0)
    np.testing.assert_allclose(float(restarts(15)), 0.05 * (1 + np.cos(np.pi * 5 / 20)),
                               rtol=1e-6)
    rmse = keras.metrics.RootMeanSquaredError()
    rmse.update_state([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(float(rmse.result()), 0.5, rtol=1e-6)  # Keras's example
    total = keras.metrics.Sum()
    total.update_state([1, 3, 5, 7])
    assert float(total.result()) == 16.0
    precision, recall = keras.metrics.Precision(thresholds=0.5), keras.metrics.Recall()
    precision.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    recall.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    np.testing.assert_allclose([float(precision.result()), float(recall.result())],
                               [2 / 3, 2 / 3], rtol=1e-6)
    auc = keras.metrics.AUC(num_thresholds=3, curve="ROC")
    auc.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    np.testing.assert_allclose(float(auc.result()), 0.75, rtol=1e-6)  # Keras's example
    assert tf.metrics.AUC is keras.metrics.AUC
    q = keras.initializers.Orthogonal(gain=1.0, seed=1)((3, 3)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-6)
    for name in ("random_uniform_initializer", "random_normal_initializer",
                 "zeros_initializer", "ones_initializer", "glorot_uniform_initializer"):
        assert getattr(tf, name)()(shape=(2, 2), dtype=tf.float32).shape == (2, 2)
    values = tf.random_uniform_initializer(minval=-0.05, maxval=0.05, seed=1)((50,)).numpy()
    assert values.min() >= -0.05 and values.max() < 0.05
    np.testing.assert_array_equal(tf.constant_initializer(value=3.0)(shape=(2,)), [3, 3])


def test_tensor_names():
    assert tf.constant([1.0, 2.0])[tf.newaxis, :].shape == (1, 2)
    tf.constant([[1.0, 2.0]]).set_shape([None, 2])

    @tf.numpy_function(Tout=tf.float32, stateful=False)
    def doubled(a):
        return (a * 2).astype(np.float32)

    @tf.py_function(Tout=tf.float32)
    def tripled(a):
        return a * 3

    np.testing.assert_array_equal(doubled(tf.constant([1.0])).numpy(), [2.0])
    np.testing.assert_array_equal(tripled(tf.constant([1.0])).numpy(), [3.0])


def _generated():
    for i in range(3):
        yield i, np.full(2, float(i))


def test_dataset_methods_with_tfs_signatures():
    D = tf.data.Dataset
    assert tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE == -1
    pairs = D.from_tensor_slices((np.arange(4), np.arange(4) * 2))
    assert [tuple(p) for p in pairs.as_numpy_iterator()][1] == (1, 2)
    assert D.from_tensors([1, 2]).element_spec.shape == (2,)
    signature = (tf.TensorSpec(shape=(), dtype=tf.int32),
                 tf.TensorSpec(shape=(2,), dtype=tf.float64))
    assert len(list(D.from_generator(_generated, output_signature=signature))) == 3
    assert list(D.range(1, 7, 2).as_numpy_iterator()) == [1, 3, 5]
    assert list(D.zip((D.range(2), D.range(2))).as_numpy_iterator()) == [(0, 0), (1, 1)]
    assert list(D.range(2).concatenate(D.range(2)).as_numpy_iterator()) == [0, 1, 0, 1]
    batches = D.range(5).batch(2, drop_remainder=True).as_numpy_iterator()
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3]]
    shuffled = D.range(5).shuffle(5, seed=1, reshuffle_each_iteration=True)
    assert sorted(shuffled.as_numpy_iterator()) == [0, 1, 2, 3, 4]
    mapped = D.range(3).map(lambda v: v * 2, num_parallel_calls=tf.data.AUTOTUNE)
    assert list(mapped.filter(lambda v: v > 0).as_numpy_iterator()) == [2, 4]
    assert list(D.range(3).repeat(2).skip(1).take(3).as_numpy_iterator()) == [1, 2, 0]
    cached = D.range(3).cache().prefetch(buffer_size=tf.data.experimental.AUTOTUNE)
    assert list(cached.as_numpy_iterator()) == [0, 1, 2]
    assert list(D.range(4).batch(2).unbatch().as_numpy_iterator()) == [0, 1, 2, 3]
    assert list(D.range(2).enumerate(start=5).as_numpy_iterator()) == [(5, 0), (6, 1)]
    padded = D.range(1, 4).map(lambda v: tf.fill([v], v)).padded_batch(
        2, padded_shapes=[None], padding_values=np.int64(-1))
    assert [b.tolist() for b in padded.as_numpy_iterator()] == [[[1, -1], [2, 2]], [[3, 3, 3]]]
    windows = D.range(5).window(2, shift=1, stride=1, drop_remainder=True)
    assert [list(w.as_numpy_iterator()) for w in windows][-1] == [3, 4]
    spec = D.from_tensor_slices((np.zeros((4, 2), np.float32), np.arange(4))).batch(2)
    assert spec.element_spec[0] == tf.TensorSpec(shape=(None, 2), dtype=tf.float32)
    assert int(D.range(10).batch(3).cardinality()) == 4
    assert int(D.range(3).repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(D.range(5).filter(lambda v: v > 1).cardinality()) == \
        tf.data.UNKNOWN_CARDINALITY
