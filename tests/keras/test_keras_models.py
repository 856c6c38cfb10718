"""keras.Sequential / Model / functional models: summary, compile, fit, evaluate,
predict."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras


@pytest.fixture(autouse=True)
def fresh_names():
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)


def test_functional_model_runs_its_layers_in_order():
    inputs = keras.Input(shape=(3,))
    assert inputs.shape == (None, 3)
    hidden = keras.layers.Dense(4, activation="relu")(inputs)
    outputs = keras.layers.Concatenate()([hidden, keras.layers.Dense(2)(inputs)])
    model = keras.Model(inputs=inputs, outputs=outputs)
    assert isinstance(model, keras.Model) and model.name == "functional"
    assert [layer.name for layer in model.layers] == ["input_layer", "dense", "dense_1",
                                                     "concatenate"]
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    d0, d1 = model.layers[1], model.layers[2]
    expected = np.concatenate(
        [np.maximum(x @ d0.kernel.numpy() + d0.bias.numpy(), 0),
         x @ d1.kernel.numpy() + d1.bias.numpy()], axis=1)
    np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-6)


def test_summary_text(capsys):
    model = keras.Sequential([keras.Input(shape=(4,)),
                              keras.layers.Dense(64, activation="relu"),
                              keras.layers.BatchNormalization(),
                              keras.layers.Dense(3)])
    model.summary()
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == 'Model: "sequential"'
    assert "Layer (type)" in lines[2] and "Output Shape" in lines[2] and "Param #" in lines[2]
    assert any("dense (Dense)" in line and "(None, 64)" in line and line.rstrip(" │")
               .endswith("320") for line in lines)
    assert any("batch_normalization (BatchNormalization)" in line and "256" in line
               for line in lines)
    assert " Total params: 771 (3.01 KB)" in lines
    assert " Trainable params: 643 (2.51 KB)" in lines
    assert " Non-trainable params: 128 (512.00 B)" in lines
    captured = []
    model.summary(print_fn=captured.append)
    assert captured == lines
    assert model.count_params() == 771


def _regression_data(n=64):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)
    return x, y


def test_fit_reports_the_sample_mean_loss_and_trains():
    x, y = _regression_data()
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse",
                  metrics=["mae"])
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert set(history.history) == {"loss", "mae"} and len(history.history["loss"]) == 20
    assert history.epoch == list(range(20))
    assert history.history["loss"][-1] < 1e-3 < before[0]
    loss, mae = model.evaluate(x, y, verbose=0)
    prediction = model.predict(x, batch_size=10)
    assert prediction.shape == (64, 1)
    np.testing.assert_allclose(loss, np.mean((prediction - y) ** 2), rtol=1e-4)
    np.testing.assert_allclose(mae, np.mean(np.abs(prediction - y)), rtol=1e-4)


def test_one_full_batch_epoch_is_one_gradient_step():
    x, y = _regression_data(10)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    kernel, bias = [w.copy() for w in model.get_weights()]
    history = model.fit(x, y, epochs=1, batch_size=10, verbose=0, shuffle=False)
    residual = x @ kernel + bias - y
    np.testing.assert_allclose(history.history["loss"][0], np.mean(residual ** 2), rtol=1e-5)
    # SGD's default learning rate is 0.01; d mean(r^2) / dW = 2 x^T r / n.
    np.testing.assert_allclose(model.get_weights()[0], kernel - 0.01 * 2 * x.T @ residual / 10,
                               rtol=1e-5)


def test_fit_is_reproducible_with_set_random_seed():
    x, y = _regression_data()

    def train():
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.layers.Dense(3, activation="tanh"),
                                  keras.layers.Dropout(0.3), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=keras.losses.MeanSquaredError())
        return model.fit(x, y, epochs=3, batch_size=8, verbose=0).history["loss"]

    assert train() == train()


def test_classification_accuracy_and_validation_data(capsys):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((120, 2)).astype(np.float32)
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    model = keras.Sequential([keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x[:100], labels[:100], epochs=15, batch_size=20,
                        validation_data=(x[100:], labels[100:]))
    out = capsys.readouterr().out
    assert "Epoch 15/15" in out and "accuracy:" in out
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert history.history["accuracy"][-1] > 0.9
    loss, accuracy = model.evaluate(x[100:], labels[100:], verbose=0)
    assert accuracy == history.history["val_accuracy"][-1]
    predicted = np.argmax(model.predict(x[100:]), axis=1)
    np.testing.assert_allclose(accuracy, np.mean(predicted == labels[100:]))


def test_regularization_losses_are_added_to_the_fit_loss():
    x, y = _regression_data(8)
    model = keras.Sequential([keras.layers.Dense(
        1, kernel_initializer="ones", kernel_regularizer=keras.regularizers.L2(0.5))])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    history = model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    residual = x @ np.ones((2, 1)) - y
    np.testing.assert_allclose(history.history["loss"][0],
                               np.mean(residual ** 2) + 0.5 * 2.0, rtol=1e-5)


def test_fit_without_compile_raises():
    model = keras.Sequential([keras.layers.Dense(1)])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.ones((2, 2)), np.ones((2, 1)), verbose=0)
    with pytest.raises(ValueError, match="optimizer identifier"):
        model.compile(optimizer="adamw", loss="mse")
    with pytest.raises(ValueError, match="loss identifier"):
        model.compile(optimizer="sgd", loss="hinge_loss")


def test_sequential_rejects_non_layers_and_model_get_layer():
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        keras.Sequential([lambda x: x])
    model = keras.Sequential([keras.layers.Dense(2, name="first"), keras.layers.Dense(1)])
    assert model.get_layer("first") is model.layers[0]
    assert model.get_layer(index=1) is model.layers[1]
    with pytest.raises(ValueError, match="No such layer"):
        model.get_layer("second")


def test_keras_tensors_are_symbolic():
    inputs = keras.Input(shape=(2,))
    with pytest.raises(ValueError, match="symbolic"):  # Keras 3's type
        np.asarray(inputs)
    assert "KerasTensor shape=(None, 2)" in repr(inputs)


def test_checkpoint_restores_into_a_model_built_later(tmp_path):
    from gradtape import train

    model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,)),
                              keras.layers.BatchNormalization()])
    model(np.ones((4, 2), np.float32), training=True)  # moves the moving statistics
    path = train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    keys = [name for name, _ in train.list_variables(path)]
    assert "model/_sequential_layers/0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    fresh = keras.Sequential([keras.layers.Dense(3), keras.layers.BatchNormalization()])
    train.Checkpoint(model=fresh).restore(path)
    fresh(np.ones((1, 2), np.float32))  # builds: the restored values are assigned
    for saved, restored in zip(model.get_weights(), fresh.get_weights()):
        np.testing.assert_array_equal(saved, restored)


def test_fit_runs_an_overridden_train_step_and_sample_weights():
    class CustomModel(keras.Sequential):
        steps = 0

        def train_step(self, data):
            x, y = data
            with gt.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            CustomModel.steps += 1
            return {"loss": loss}

    x, y = _regression_data(32)
    model = CustomModel([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=keras.losses.MeanSquaredError())
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert CustomModel.steps == 8 and len(history.history["loss"]) == 2

    weights = np.zeros(32, np.float32)
    weights[:4] = 1.0
    loss = model.evaluate(x, y, sample_weight=weights, batch_size=32, verbose=0)
    residual = model.predict(x) - y
    np.testing.assert_allclose(loss, np.sum(residual[:4] ** 2) / 32, rtol=1e-5)


@pytest.mark.parametrize("loss", ["mse", keras.losses.mean_squared_error,
                                  keras.losses.MeanSquaredError()],
                         ids=["name", "function", "object"])
def test_sample_weight_of_shape_batch_by_1_weights_each_sample_once(loss):
    # Keras squeezes (batch, 1) weights against (batch,) losses; a plain product would
    # broadcast them to (batch, batch) and weight every sample by every weight.
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 1))
    weights = rng.uniform(size=6)
    model = keras.Sequential([keras.layers.Dense(1, dtype="float64")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    model(x)
    residual = model.predict(x) - y
    expected = np.mean(residual[:, 0] ** 2 * weights)
    for shaped in (weights, weights[:, None]):
        np.testing.assert_allclose(model.evaluate(x, y, sample_weight=shaped, verbose=0),
                                   expected, rtol=1e-12)
    kernel = model.layers[0].kernel.numpy()
    model.fit(x, y, sample_weight=weights[:, None], batch_size=6, shuffle=False, verbose=0)
    # One SGD step on the weighted mean of squares: d/dW = 2 x^T (w * r) / n.
    expected_kernel = kernel - 0.1 * 2 * x.T @ (weights[:, None] * residual) / 6
    # (rtol: the optimizer keeps its learning rate in float32)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), expected_kernel, rtol=1e-7)
