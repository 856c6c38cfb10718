"""fit/evaluate/predict over a gt.data.Dataset, and TF's custom-training walkthrough
loop over a Dataset."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras

Dataset = gt.data.Dataset


def _data(n=40):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.1).astype(np.float32)
    return x, y


def _model(seed=1):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(1)])
    model.build((None, 3))
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    return model


def test_fit_on_a_dataset_equals_fit_on_the_arrays():
    x, y = _data()
    by_arrays, by_dataset = _model(), _model()
    h1 = by_arrays.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    h2 = by_dataset.fit(Dataset.from_tensor_slices((x, y)).batch(8), epochs=3, verbose=0)
    for a, b in zip(by_arrays.get_weights(), by_dataset.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(h1.history["loss"], h2.history["loss"], rtol=1e-6)
    assert h2.params["steps"] == 5


def test_fit_with_validation_data_a_dataset_and_sample_weights():
    x, y = _data()
    w = np.linspace(0.5, 1.5, len(x)).astype(np.float32)
    model = _model()
    history = model.fit(Dataset.from_tensor_slices((x, y, w)).batch(10), epochs=2,
                        validation_data=Dataset.from_tensor_slices((x, y)).batch(10),
                        verbose=0)
    assert set(history.history) == {"loss", "mae", "val_loss", "val_mae"}
    evaluated = model.evaluate(x, y, batch_size=10, verbose=0, return_dict=True)
    assert history.history["val_loss"][-1] == pytest.approx(evaluated["loss"], rel=1e-6)
    half = model.evaluate(Dataset.from_tensor_slices((x, y)).batch(10), steps=2,
                          verbose=0, return_dict=True)
    assert half["loss"] == pytest.approx(model.evaluate(x[:20], y[:20], verbose=0,
                                                        return_dict=True)["loss"], rel=1e-6)


def test_predict_on_a_dataset_takes_x_of_each_batch():
    x, y = _data(13)
    model = _model()
    expected = model.predict(x, batch_size=4, verbose=0)
    np.testing.assert_allclose(
        model.predict(Dataset.from_tensor_slices((x, y)).batch(4), verbose=0), expected,
        rtol=1e-6)
    np.testing.assert_allclose(
        model.predict(Dataset.from_tensor_slices(x).batch(4), verbose=0), expected, rtol=1e-6)
    assert model.predict(Dataset.from_tensor_slices(x).batch(4), steps=2).shape == (8, 1)


def test_steps_per_epoch_keeps_one_iterator_across_epochs():
    x, y = _data(12)
    seen = []

    class Recording(keras.Sequential):
        def train_step(self, data):
            seen.append(data[0].numpy()[0, 0])
            return super().train_step(data)

    keras.utils.set_random_seed(0)
    model = Recording([keras.layers.Dense(1)])
    model.build((None, 3))
    # Eager: the step reads `.numpy()` and appends to a list (Keras 3 needs it too).
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    ds = Dataset.from_tensor_slices((x, y)).batch(3).repeat()
    model.fit(ds, epochs=3, steps_per_epoch=2, verbose=0)
    starts = [x[i, 0] for i in (0, 3, 6, 9, 0, 3)]  # Keras 3: the iterator carries on
    np.testing.assert_array_equal(seen, starts)


def test_a_dataset_that_runs_out_stops_fit_with_keras_warning():
    x, y = _data(6)
    model = _model()
    with pytest.warns(UserWarning, match="ran out of data"):
        history = model.fit(Dataset.from_tensor_slices((x, y)).batch(3), epochs=5,
                            steps_per_epoch=4, verbose=0)
    assert len(history.history["loss"]) == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 8}, "batch_size"), ({"y": np.zeros(3)}, "`y` must be None"),
    ({"validation_split": 0.2}, "validation_split")])
def test_fit_refuses_what_a_dataset_already_holds(kwargs, match):
    x, y = _data(8)
    with pytest.raises(ValueError, match=match):
        _model().fit(Dataset.from_tensor_slices((x, y)).batch(4), verbose=0, **kwargs)


def test_the_custom_training_walkthrough_loop_over_a_dataset():
    """TF's custom-training walkthrough: for x, y in train_dataset, a tape, apply_gradients,
    the epoch loss by keras.metrics.Mean; checked against the same loop in NumPy."""
    rng = np.random.default_rng(3)
    features = rng.normal(size=(24, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=24).astype(np.int32)
    train_dataset = Dataset.from_tensor_slices((features, labels)).batch(8)

    keras.utils.set_random_seed(2)
    model = keras.Sequential([keras.layers.Dense(3)])
    model.build((None, 4))
    kernel0, bias0 = (w.copy() for w in model.get_weights())
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    epoch_losses = []
    for _ in range(2):
        epoch_loss_avg = keras.metrics.Mean()
        for x, y in train_dataset:
            with gt.GradientTape() as tape:
                loss_value = loss_object(y, model(x, training=True))
            grads = tape.gradient(loss_value, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
        epoch_losses.append(float(epoch_loss_avg.result()))

    kernel, bias = kernel0.astype(np.float64), bias0.astype(np.float64)
    expected = []
    for _ in range(2):
        batch_losses = []
        for start in range(0, 24, 8):
            xb, yb = features[start:start + 8].astype(np.float64), labels[start:start + 8]
            logits = xb @ kernel + bias
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            batch_losses.append(-np.mean(np.log(p[np.arange(8), yb])))
            d_logits = (p - np.eye(3)[yb]) / 8
            kernel -= 0.1 * xb.T @ d_logits
            bias -= 0.1 * d_logits.sum(0)
        expected.append(np.mean(batch_losses))
    np.testing.assert_allclose(epoch_losses, expected, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], kernel, rtol=1e-4, atol=1e-6)
