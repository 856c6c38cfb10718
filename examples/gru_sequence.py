"""A GRU learns to add up a variable-length sequence, with Keras's ``fit``.

Each sequence has 4 to 16 real steps of two features, padded with zeros to 16 steps;
the target is the sum of the first feature over the real steps. A ``Masking`` layer
marks the padding, so the GRU skips it (a masked step keeps the state, as in Keras 3).
The model is TF code with the import changed: ``Masking -> GRU(32) -> Dense(1)``,
Adam, mean squared error; ``fit`` runs each step compiled with ``@gt.function``. The
GRU's time loop is ``gt.foldl`` over the steps.

Run: python examples/gru_sequence.py
"""

from __future__ import annotations

import numpy as np

import gradtape as tf

STEPS, FEATURES = 16, 2


def make_sequences(count: int = 1024, seed: int = 0):
    """Zero-padded sequences ``(count, STEPS, FEATURES)`` and their sums ``(count, 1)``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (count, STEPS, FEATURES)).astype(np.float32)
    lengths = rng.integers(4, STEPS + 1, count)
    x[np.arange(STEPS)[None, :] >= lengths[:, None]] = 0.0  # the padding
    y = x[:, :, :1].sum(axis=1)
    return x, y


def make_model() -> tf.keras.Model:
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(STEPS, FEATURES)),
        tf.keras.layers.Masking(mask_value=0.0),
        tf.keras.layers.GRU(32),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    return model


def train(epochs: int = 12, seed: int = 0) -> dict:
    tf.random.set_seed(seed)
    x, y = make_sequences(seed=seed)
    x_test, y_test = make_sequences(256, seed=seed + 1)
    model = make_model()
    baseline = float(np.mean((y_test - y.mean()) ** 2))  # always guessing the mean
    history = model.fit(x, y, batch_size=32, epochs=epochs, verbose=0)
    test_loss = float(model.evaluate(x_test, y_test, verbose=0))
    return {"losses": history.history["loss"], "test_loss": test_loss,
            "baseline": baseline, "model": model}


def main() -> None:
    result = train()
    for epoch, loss in enumerate(result["losses"], start=1):
        print(f"epoch {epoch:2d}  loss {loss:.4f}")
    print(f"test loss {result['test_loss']:.4f}  (guessing the mean: "
          f"{result['baseline']:.4f})")


if __name__ == "__main__":
    main()
