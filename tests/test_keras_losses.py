"""``gt.keras.losses``: Keras's formulas, reductions and gradients (float64 differences)."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences

losses = gt.keras.losses
Y_TRUE = np.array([[0.0, 1.0], [0.0, 0.0]])
Y_PRED = np.array([[1.0, 1.0], [1.0, 0.0]])


def test_mean_squared_error_per_sample_and_reduced():
    # Keras's documented example: per sample [0.5, 0.5]; the class gives 0.5.
    np.testing.assert_allclose(losses.mean_squared_error(Y_TRUE, Y_PRED).numpy(), [0.5, 0.5])
    mse = losses.MeanSquaredError()
    out = mse(gt.constant(Y_TRUE, gt.float32), gt.constant(Y_PRED, gt.float32))
    assert out.dtype == gt.float32 and out.numpy() == 0.5
    np.testing.assert_allclose(mse(Y_TRUE, Y_PRED, sample_weight=[0.7, 0.3]).numpy(), 0.25)
    assert losses.MeanSquaredError(reduction="sum")(Y_TRUE, Y_PRED).numpy() == 1.0
    np.testing.assert_allclose(
        losses.MeanSquaredError(reduction="none")(Y_TRUE, Y_PRED).numpy(), [0.5, 0.5])
    assert losses.mse is losses.MSE is losses.mean_squared_error


def test_mean_absolute_error():
    np.testing.assert_allclose(losses.mean_absolute_error(Y_TRUE, Y_PRED).numpy(), [0.5, 0.5])
    assert losses.MeanAbsoluteError()(Y_TRUE, Y_PRED).numpy() == 0.5


def test_binary_crossentropy_probabilities_and_logits():
    y_true = np.array([[0.0, 1.0], [0.0, 0.0]])
    y_pred = np.array([[0.6, 0.4], [0.4, 0.6]])
    # Keras's documented value for these: 0.815.
    expected = np.mean(-(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred)))
    got = losses.BinaryCrossentropy()(y_true, y_pred).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(got, 0.815, atol=5e-4)
    logits = np.log(y_pred / (1 - y_pred))
    np.testing.assert_allclose(losses.BinaryCrossentropy(from_logits=True)(y_true, logits),
                               expected, rtol=1e-6)
    # A certain wrong prediction is clipped to a finite loss, as Keras's.
    assert np.isfinite(losses.binary_crossentropy([1.0], [0.0]).numpy())


def test_categorical_and_sparse_crossentropy():
    y_true = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    y_pred = np.array([[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]])
    # Keras's documented per-sample values: [0.0513, 2.303].
    per_sample = losses.categorical_crossentropy(y_true, y_pred).numpy()
    np.testing.assert_allclose(per_sample, [-np.log(0.95), -np.log(0.1)], rtol=1e-6)
    np.testing.assert_allclose(losses.CategoricalCrossentropy()(y_true, y_pred).numpy(),
                               1.177, atol=5e-4)
    np.testing.assert_allclose(losses.sparse_categorical_crossentropy([1, 2], y_pred).numpy(),
                               per_sample, rtol=1e-6)
    logits = np.log(np.array([[0.05, 0.9, 0.05], [0.1, 0.8, 0.1]]))
    scce = losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(scce(gt.constant([1, 2]), logits).numpy(),
                               np.mean([-np.log(0.9), -np.log(0.1)]), rtol=1e-6)
    cce = losses.CategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(cce(y_true, logits).numpy(),
                               np.mean([-np.log(0.9), -np.log(0.1)]), rtol=1e-6)


def test_bad_reduction_raises():
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="mean")


@pytest.mark.parametrize("make", [
    lambda: losses.MeanSquaredError(),
    lambda: losses.MeanAbsoluteError(),
    lambda: losses.BinaryCrossentropy(from_logits=True),
    lambda: losses.CategoricalCrossentropy(),
    lambda: losses.CategoricalCrossentropy(from_logits=True),
])
def test_gradients_match_finite_differences(make):
    rng = np.random.default_rng(0)
    y_true = rng.uniform(0.1, 0.9, (4, 3))
    y_pred = rng.uniform(0.2, 0.8, (4, 3))
    loss = make()
    x = gt.constant(y_pred)
    with gt.GradientTape() as tape:
        tape.watch(x)
        out = loss(y_true, x)
    grads = [tape.gradient(out, x)]
    assert_vjp_matches_differences(lambda p: loss(y_true, p), [y_pred], np.array(1.0),
                                   grads, rng)


# Labels of shape (batch,) against predictions of shape (batch, 1), as `fit(x, y)` with a
# 1-d y and a Dense(1) model gives them: Keras pairs them sample by sample (a plain
# elementwise op would broadcast to (batch, batch) and average every pair).
LABELS_1D = np.array([0.0, 1.0, 1.0])
PROBS_COLUMN = np.array([[0.2], [0.7], [0.9]])


def test_regression_losses_pair_1d_labels_with_a_prediction_column():
    residual = PROBS_COLUMN[:, 0] - LABELS_1D
    np.testing.assert_allclose(losses.mean_squared_error(LABELS_1D, PROBS_COLUMN).numpy(),
                               residual ** 2)
    np.testing.assert_allclose(losses.mean_absolute_error(LABELS_1D, PROBS_COLUMN).numpy(),
                               np.abs(residual))
    np.testing.assert_allclose(losses.MeanSquaredError()(LABELS_1D, PROBS_COLUMN).numpy(),
                               np.mean(residual ** 2))
    np.testing.assert_allclose(losses.MeanSquaredError()(PROBS_COLUMN, LABELS_1D).numpy(),
                               np.mean(residual ** 2))


def test_crossentropy_classes_match_ranks_and_the_functions_raise():
    expected = -np.mean(np.log([0.8, 0.7, 0.9]))
    np.testing.assert_allclose(
        losses.BinaryCrossentropy()(LABELS_1D, PROBS_COLUMN).numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="must have the same shape"):
        losses.binary_crossentropy(LABELS_1D, PROBS_COLUMN)
    with pytest.raises(ValueError, match="must have the same shape"):
        losses.categorical_crossentropy([0.0, 1.0], [[0.3, 0.7], [0.6, 0.4]])


def test_binary_accuracy_pairs_1d_labels_with_a_prediction_column():
    hits = gt.keras.metrics.binary_accuracy(LABELS_1D, np.array([[0.2], [0.7], [0.1]]))
    np.testing.assert_array_equal(hits.numpy(), [1.0, 1.0, 0.0])


def test_fit_with_1d_labels_steps_on_the_per_sample_loss():
    keras = gt.keras
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal(5)
    model = keras.Sequential([keras.layers.Dense(1, dtype="float64")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    model(x)
    residual = model.predict(x)[:, 0] - y
    loss, mae = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose([loss, mae], [np.mean(residual ** 2),
                                             np.mean(np.abs(residual))], rtol=1e-12)
    kernel = model.layers[0].kernel.numpy()
    model.fit(x, y, batch_size=5, shuffle=False, verbose=0)
    expected = kernel - 0.1 * 2 * x.T @ residual[:, None] / 5
    # (rtol: the optimizer keeps its learning rate in float32)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), expected, rtol=1e-7)
