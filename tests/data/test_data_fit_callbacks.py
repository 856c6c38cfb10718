"""[3/6]'s "done when": fit over a Dataset with validation_data and Keras's callbacks
together (History, EarlyStopping, ModelCheckpoint on gradtape's checkpoint format); the
Dataset's get_single_element, and TF's Dataset methods gradtape lacks saying so."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import keras
from gradtape.data import Dataset


def _data(seed: int, n: int = 32):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)).astype(np.float32)
    return x, y


def _model() -> keras.Model:
    model = keras.Sequential([keras.layers.Dense(1, kernel_initializer="zeros")])
    # A step too large for this problem: the loss grows every epoch after the first
    # steps, so early stopping has something to stop and restore.
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=1.5), loss="mse")
    return model


def test_fit_on_a_dataset_with_validation_and_callbacks(tmp_path):
    x, y = _data(0)
    xv, yv = _data(1, 16)
    train = Dataset.from_tensor_slices((x, y)).shuffle(32, seed=3).batch(8)
    validation = Dataset.from_tensor_slices((xv, yv)).batch(8)
    path = str(tmp_path / "best.weights.h5")
    model = _model()
    history = model.fit(
        train, validation_data=validation, epochs=10, verbose=0,
        callbacks=[keras.callbacks.EarlyStopping(monitor="val_loss", patience=2,
                                                 restore_best_weights=True),
                   keras.callbacks.ModelCheckpoint(path, monitor="val_loss",
                                                   save_best_only=True,
                                                   save_weights_only=True)])
    assert isinstance(history, keras.callbacks.History) and history is model.history
    val_losses = history.history["val_loss"]
    assert set(history.history) == {"loss", "val_loss"}
    assert len(history.history["loss"]) == len(val_losses) == history.epoch[-1] + 1
    best = int(np.argmin(val_losses))
    assert len(val_losses) == best + 3 < 10  # stopped two epochs after the best one

    # restore_best_weights: the model holds the best epoch's weights again ...
    restored = model.evaluate(validation, verbose=0)
    np.testing.assert_allclose(restored, val_losses[best], rtol=1e-5)
    # ... and the checkpoint on disk is that epoch's too, in gradtape's format.
    fresh = _model()
    fresh.build((None, 4))
    fresh.load_weights(path)
    for saved, kept in zip(fresh.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(saved, kept)
    np.testing.assert_allclose(fresh.evaluate(validation, verbose=0), val_losses[best],
                               rtol=1e-5)
    # the validation loss is the mean squared error over the whole validation set
    predictions = xv @ model.get_weights()[0] + model.get_weights()[1]
    np.testing.assert_allclose(restored, np.mean((predictions - yv) ** 2), rtol=1e-5)


def test_get_single_element_as_tf():
    assert int(Dataset.range(5).skip(2).take(1).get_single_element()) == 2
    x, y = Dataset.from_tensors((np.ones(2), 3)).get_single_element()
    assert x.shape == (2,) and int(y) == 3
    with pytest.raises(gt.errors.InvalidArgumentError, match="more than one element"):
        Dataset.range(2).get_single_element()
    with pytest.raises(gt.errors.InvalidArgumentError, match="empty"):
        Dataset.range(0).get_single_element()


@pytest.mark.parametrize("missing", [lambda: Dataset.range(4).shard(2, 0),
                                     lambda: Dataset.range(4).batch(2).rebatch(1),
                                     lambda: Dataset.list_files("*.csv"),
                                     lambda: Dataset.counter()])
def test_a_tf_dataset_method_gradtape_lacks_says_so(missing):
    """Item 6 for Dataset: TF's method names raise an AttributeError naming what to use
    (before: Python's bare "'Range' object has no attribute 'shard'")."""
    with pytest.raises(AttributeError, match="is TensorFlow's, and gradtape's Dataset "
                                             "does not have it; use "):
        missing()


def test_other_missing_names_stay_plain_attribute_errors():
    with pytest.raises(AttributeError) as info:
        Dataset.range(2).no_such_method  # noqa: B018
    assert str(info.value) == "'Range' object has no attribute 'no_such_method'"
    assert not hasattr(Dataset.range(2), "shard") and hasattr(Dataset, "batch")
