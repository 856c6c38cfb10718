"""keras.callbacks: fit, evaluate and predict call them in Keras 3's order with Keras's
logs, and each built-in callback follows Keras 3's rules (before, fit ignored
`callbacks`, and there was no keras.callbacks)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras

cb = keras.callbacks


class Recorder(cb.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("on_") and name not in ("on_batch_begin", "on_batch_end"):
            calls = object.__getattribute__(self, "calls")

            def record(*args, logs=None):
                calls.append((name, *args, dict(logs) if logs else None))
                return attr(*args, logs=logs)
            return record
        return attr


def _model(lr=0.0):
    model = keras.Sequential([keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    x = np.ones((4, 2), np.float32)
    y = np.array([[1.0], [1.0], [3.0], [3.0]], np.float32)  # batch losses 1 and 9
    return model, x, y


def test_fit_calls_the_hooks_in_keras_order_with_running_logs():
    model, x, y = _model()
    recorder = Recorder()
    history = model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0,
                        validation_data=(x[:2], y[:2]), callbacks=[recorder])
    assert recorder.params == {"verbose": 0, "epochs": 2, "steps": 2}
    assert recorder.model is model
    epoch = [("on_epoch_begin", 0, None),
             ("on_train_batch_begin", 0, None), ("on_train_batch_end", 0, {"loss": 1.0}),
             ("on_train_batch_begin", 1, None), ("on_train_batch_end", 1, {"loss": 5.0}),
             ("on_test_begin", None), ("on_test_batch_begin", 0, None),
             ("on_test_batch_end", 0, {"loss": 1.0}), ("on_test_end", {"loss": 1.0}),
             ("on_epoch_end", 0, {"loss": 5.0, "val_loss": 1.0})]
    second = [(c[0], 1, *c[2:]) if c[0].startswith("on_epoch") else c for c in epoch]
    assert recorder.calls == [("on_train_begin", None), *epoch, *second,
                              ("on_train_end", {"loss": 5.0, "val_loss": 1.0})]
    assert history is model.history
    assert history.history == {"loss": [5.0, 5.0], "val_loss": [1.0, 1.0]}
    assert history.epoch == [0, 1]


def test_evaluate_and_predict_call_their_hooks():
    model, x, y = _model()
    recorder = Recorder()
    assert model.evaluate(x, y, batch_size=2, verbose=0, callbacks=[recorder]) == 5.0
    assert [c[0] for c in recorder.calls] == [
        "on_test_begin", "on_test_batch_begin", "on_test_batch_end",
        "on_test_batch_begin", "on_test_batch_end", "on_test_end"]
    recorder.calls.clear()
    model.predict(x, batch_size=3, verbose=0, callbacks=[recorder])
    ends = [c for c in recorder.calls if c[0] == "on_predict_batch_end"]
    assert [c[1] for c in ends] == [0, 1]
    assert [c[2]["outputs"].shape for c in ends] == [(3, 1), (1, 1)]
    assert recorder.calls[0][0] == "on_predict_begin"
    assert recorder.calls[-1][0] == "on_predict_end"


def test_a_history_passed_in_is_the_one_returned():
    model, x, y = _model()
    mine = cb.History()
    assert model.fit(x, y, verbose=0, callbacks=[mine]) is mine
    assert mine.history == {"loss": [5.0]}


def test_stop_training_from_a_batch_hook_ends_the_epoch_there():
    model, x, y = _model()

    def stop(batch, logs):
        model.stop_training = True

    history = model.fit(x, y, batch_size=2, epochs=3, shuffle=False, verbose=0,
                        callbacks=[cb.LambdaCallback(on_train_batch_end=stop)])
    assert history.history == {"loss": [1.0]}  # one batch of one epoch


def test_callbacks_must_be_callbacks():
    model, x, y = _model()
    with pytest.raises(TypeError, match="LambdaCallback"):
        model.fit(x, y, verbose=0, callbacks=[print])


def test_lambda_callback_rejects_unknown_hooks():
    with pytest.raises(ValueError, match="on_epoch_end"):
        cb.LambdaCallback(on_epoch_ended=print)


class Scripted(keras.Model):
    """One batch per epoch; epoch e logs ``scores[e]`` and sets the kernel to e."""

    def __init__(self, scores, key="score"):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.scores, self.key, self.epoch = list(scores), key, 0

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.dense.kernel.assign(np.full((2, 1), float(self.epoch), np.float32))
        score = self.scores[self.epoch]
        self.epoch += 1
        return {self.key: score}


def _fit(model, callback, epochs=None):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1))
    model(np.ones((1, 2), np.float32))
    return model.fit(np.ones((2, 2), np.float32), np.zeros((2, 1), np.float32),
                     batch_size=2, epochs=epochs or len(model.scores), verbose=0,
                     callbacks=[callback])


def test_early_stopping_keras_doc_example():
    # keras.callbacks.EarlyStopping's docstring: "Only 4 epochs are run."
    callback = cb.EarlyStopping(monitor="loss", patience=3)
    model = keras.Sequential([keras.layers.Dense(10)])
    model.compile(keras.optimizers.SGD(), loss="mse")
    with np.errstate(all="ignore"):
        history = model.fit(np.arange(100).reshape(5, 20), np.zeros(5), epochs=10,
                            batch_size=1, callbacks=[callback], verbose=0)
    assert len(history.history["loss"]) == 4


@pytest.mark.parametrize("kwargs, scores, epochs_run", [
    # min_delta: 4.5 and 4.2 are not 0.05 below 4; the wait reaches 2 at epoch 3.
    ({"patience": 2, "min_delta": 0.05, "mode": "min"}, [5, 4, 4.5, 4.2, 3.9, 4], 4),
    # min_delta is measured from the best: 4.4 is 0.6 below 5 (and restarts the wait).
    ({"patience": 2, "min_delta": 0.5, "mode": "min"}, [5, 4.6, 4.4, 4.2, 3.9, 4], 5),
    # An improvement that does not beat the baseline does not restart the wait.
    ({"patience": 2, "baseline": 2.0, "mode": "min"}, [5, 6, 7, 8], 2),
    ({"patience": 2, "mode": "min"}, [5, 6, 7, 8], 3),
    # No monitoring before start_from_epoch.
    ({"patience": 1, "start_from_epoch": 2, "mode": "min"}, [5, 6, 7, 8, 9], 4),
    ({"patience": 1, "mode": "min"}, [5, 6, 7, 8, 9], 2),
    ({"patience": 2, "mode": "max"}, [0.5, 0.6, 0.55, 0.58, 0.7], 4),
])
def test_early_stopping_rules(kwargs, scores, epochs_run):
    callback = cb.EarlyStopping(monitor="score", **kwargs)
    history = _fit(Scripted(scores), callback)
    assert len(history.history["score"]) == epochs_run
    assert callback.stopped_epoch == (epochs_run - 1 if epochs_run < len(scores) else 0)


def test_early_stopping_auto_mode_reads_the_direction_from_the_name():
    history = _fit(Scripted([0.5, 0.6, 0.55, 0.58, 0.7], key="accuracy"),
                   cb.EarlyStopping(monitor="accuracy", patience=2))
    assert len(history.history["accuracy"]) == 4  # max: 0.6 is the best
    with pytest.raises(ValueError, match="mode='max'"):
        _fit(Scripted([1, 2]), cb.EarlyStopping(monitor="score"))


def test_early_stopping_restores_the_best_weights(capsys):
    model = Scripted([3, 1, 2, 4, 0])
    callback = cb.EarlyStopping(monitor="score", patience=2, mode="min", verbose=1,
                                restore_best_weights=True)
    _fit(model, callback)
    np.testing.assert_array_equal(model.dense.kernel.numpy(), np.ones((2, 1)))  # epoch 1
    assert capsys.readouterr().out == ("Epoch 4: early stopping\nRestoring model weights "
                                       "from the end of the best epoch: 2.\n")


def test_early_stopping_warns_for_a_missing_metric():
    with pytest.warns(UserWarning, match="Available metrics are: score"):
        _fit(Scripted([1, 2]), cb.EarlyStopping(monitor="val_loss", mode="min"))


def test_model_checkpoint_formats_the_path_and_saves_our_format(tmp_path):
    model = Scripted([3.0, 1.0, 2.0])
    pattern = str(tmp_path / "ck-{epoch:02d}-{score:.2f}.weights.h5")
    _fit(model, cb.ModelCheckpoint(pattern, monitor="score", mode="min",
                                   save_weights_only=True))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"ck-{e:02d}-{s:.2f}.weights.h5{suffix}" for e, s in
                     [(1, 3.0), (2, 1.0), (3, 2.0)]
                     for suffix in (".data-00000-of-00001", ".index")]
    fresh = Scripted([0])
    fresh.load_weights(str(tmp_path / "ck-02-1.00.weights.h5"))  # before it is built
    fresh(np.ones((1, 2), np.float32))
    np.testing.assert_array_equal(fresh.dense.kernel.numpy(), np.ones((2, 1)))


def test_model_checkpoint_save_best_only(tmp_path, capsys):
    model = Scripted([3.0, 1.0, 2.0])
    path = str(tmp_path / "best")
    _fit(model, cb.ModelCheckpoint(path, monitor="score", mode="min", verbose=1,
                                   save_best_only=True, save_weights_only=True))
    out = capsys.readouterr().out
    assert f"\nEpoch 1: score improved from inf to 3.00000, saving model to {path}\n" in out
    assert "\nEpoch 3: score did not improve from 1.00000\n" in out
    kernel = gt.train.load_variable(path, "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    np.testing.assert_array_equal(kernel, np.ones((2, 1)))  # epoch 2's, not epoch 3's


def test_model_checkpoint_full_state_has_the_optimizer_and_batch_frequency(tmp_path):
    model, x, y = _model(lr=0.1)
    model.fit(x, y, batch_size=1, epochs=1, verbose=0, callbacks=[
        cb.ModelCheckpoint(str(tmp_path / "b{batch}"), save_freq=3)])
    assert sorted(p.name for p in tmp_path.glob("*.index")) == ["b3.index"]
    keys = [k for k, _ in gt.train.list_variables(str(tmp_path / "b3"))]
    assert "optimizer/iterations/.ATTRIBUTES/VARIABLE_VALUE" in keys
    with pytest.raises(ValueError, match="save_freq"):
        cb.ModelCheckpoint("x", save_freq="batch")
    with pytest.raises(KeyError, match="val_acc"):
        _fit(Scripted([1.0]), cb.ModelCheckpoint(str(tmp_path / "{val_acc}"), mode="min"))


def test_save_and_load_weights_round_trip_and_checks(tmp_path):
    model, x, y = _model(lr=0.1)
    model.fit(x, y, verbose=0)
    path = str(tmp_path / "w.weights.h5")
    model.save_weights(path)
    other, _, _ = _model()
    other(x)
    other.load_weights(path)
    for a, b in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    # The same files as gt.train.Checkpoint(model=...) writes and reads.
    third, _, _ = _model()
    third(x)
    gt.train.Checkpoint(model=third).restore(path).assert_existing_objects_matched()
    np.testing.assert_array_equal(third.get_weights()[0], model.get_weights()[0])
    with pytest.raises(FileExistsError, match="overwrite=True"):
        model.save_weights(path, overwrite=False)
    with pytest.raises(gt.errors.NotFoundError):
        model.load_weights(str(tmp_path / "missing"))
    bigger = keras.Sequential([keras.layers.Dense(1), keras.layers.Dense(1)])
    bigger(x)
    with pytest.raises(ValueError, match="does not match the model"):
        bigger.load_weights(path)
    wrong = keras.Sequential([keras.layers.Dense(3)])
    wrong(x)
    with pytest.raises(ValueError, match="incompatible"):  # checked before assigning
        wrong.load_weights(path)


def test_terminate_on_nan(capsys):
    model = Scripted([1.0, float("nan"), 2.0], key="loss")
    model.compile(optimizer="sgd")
    model(np.ones((1, 2), np.float32))
    history = model.fit(np.ones((6, 2), np.float32), np.zeros((6, 1), np.float32),
                        batch_size=2, epochs=3, verbose=0, callbacks=[cb.TerminateOnNaN()])
    assert capsys.readouterr().out == "Batch 1: Invalid loss, terminating training\n"
    assert model.epoch == 2 and len(history.history["loss"]) == 1


def test_learning_rate_scheduler():
    model, x, y = _model(lr=0.1)
    seen = []

    def schedule(epoch, lr):
        seen.append(lr)
        return lr * 0.5

    history = model.fit(x, y, epochs=3, verbose=0,
                        callbacks=[cb.LearningRateScheduler(schedule)])
    np.testing.assert_allclose(seen, [0.1, 0.05, 0.025], rtol=1e-6)
    np.testing.assert_allclose(history.history["learning_rate"], [0.05, 0.025, 0.0125],
                               rtol=1e-6)
    model.fit(x, y, verbose=0, callbacks=[cb.LearningRateScheduler(lambda e: 0.3)])
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 0.3, rtol=1e-6)
    with pytest.raises(ValueError, match="should be a float"):
        model.fit(x, y, verbose=0, callbacks=[cb.LearningRateScheduler(lambda e: "x")])


def test_reduce_lr_on_plateau():
    model = Scripted([3, 3, 3, 2, 2])
    history = _fit(model, cb.ReduceLROnPlateau(monitor="score", factor=0.5, patience=1,
                                               min_delta=0))
    np.testing.assert_allclose(history.history["learning_rate"],
                               [0.1, 0.1, 0.05, 0.025, 0.025], rtol=1e-6)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 0.0125, rtol=1e-6)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        cb.ReduceLROnPlateau(factor=1.0)


def test_reduce_lr_on_plateau_cooldown_and_min_lr():
    model = Scripted([3, 3, 3, 3, 3, 3])
    history = _fit(model, cb.ReduceLROnPlateau(monitor="score", factor=0.5, patience=1,
                                               cooldown=1, min_lr=0.03))
    # Keras's order: the cooldown counts down before the wait counts, so with cooldown=1
    # epoch 2 reduces again; 0.025 is raised to min_lr, which is never reduced.
    np.testing.assert_allclose(history.history["learning_rate"],
                               [0.1, 0.1, 0.05, 0.03, 0.03, 0.03], rtol=1e-6)


def test_csv_logger(tmp_path):
    model, x, y = _model()
    path = tmp_path / "log.csv"
    model.fit(x, y, epochs=2, verbose=0, validation_data=(x, y),
              callbacks=[cb.CSVLogger(str(path))])
    assert path.read_text().splitlines() == ["epoch,loss,val_loss", "0,5.0,5.0",
                                             "1,5.0,5.0"]
    model.fit(x, y, epochs=1, verbose=0, callbacks=[cb.CSVLogger(str(path), append=True)])
    assert path.read_text().splitlines()[-1] == "0,5.0"


@pytest.mark.parametrize("freq, validated", [(2, [2, 4]), ([1, 4], [1, 4])])
def test_validation_freq(freq, validated):
    model, x, y = _model()
    epochs_seen = []
    record = cb.LambdaCallback(on_epoch_end=lambda epoch, logs: epochs_seen.append(
        (epoch + 1, "val_loss" in logs)))
    history = model.fit(x, y, epochs=4, verbose=0, validation_data=(x, y),
                        validation_freq=freq, callbacks=[record])
    assert [e for e, has_val in epochs_seen if has_val] == validated
    assert history.history["val_loss"] == [5.0, 5.0]
