"""A small CNN on synthetic digits, written as TF 2 code with the import changed.

Each image is one of ten 5x3 digit glyphs drawn at a random place on a 12x12 canvas,
with pixel noise. The model is TF's "advanced quickstart" shape, small: Conv2D(8, 3,
relu) -> MaxPooling2D(2) -> Conv2D(16, 3, relu) -> Flatten -> Dense(10); the training
step is a ``GradientTape`` under ``@tf.function`` (traced once, then one generated
function per step: the convolutions' forward and backward on NumPy's BLAS).

Run: python examples/cnn_training.py
"""

from __future__ import annotations

import numpy as np

import gradtape as tf  # was: import tensorflow as tf

GLYPHS = [  # 5 rows of 3 pixels per digit
    "111101101101111", "010110010010111", "111001111100111", "111001111001111",
    "101101111001001", "111100111001111", "111100111101111", "111001001001001",
    "111101111101111", "111101111001111",
]
SIDE = 12


def make_digits(n: int, seed: int = 0, noise: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy images ``(n, 12, 12, 1)`` in [0, 1] and their labels (int64)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0, noise, (n, SIDE, SIDE, 1))
    for i, label in enumerate(labels):
        glyph = np.array([int(c) for c in GLYPHS[label]], float).reshape(5, 3)
        r, c = rng.integers(0, SIDE - 5 + 1), rng.integers(0, SIDE - 3 + 1)
        images[i, r:r + 5, c:c + 3, 0] = np.maximum(images[i, r:r + 5, c:c + 3, 0], glyph)
    return images.astype(np.float32), labels.astype(np.int64)


def make_model() -> tf.keras.Model:
    return tf.keras.Sequential([
        tf.keras.Input((SIDE, SIDE, 1)),
        tf.keras.layers.Conv2D(8, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10),
    ])


def train(epochs: int = 8, batch: int = 32, seed: int = 0, log: bool = True) -> dict:
    tf.random.set_seed(seed)
    tf.keras.utils.set_random_seed(seed)
    x_train, y_train = make_digits(1024, seed=seed)
    x_test, y_test = make_digits(256, seed=seed + 1)
    model = make_model()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(0.01)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = []
    for epoch in range(epochs):
        total = 0.0
        for start in range(0, len(x_train), batch):
            total += float(train_step(tf.constant(x_train[start:start + batch]),
                                      tf.constant(y_train[start:start + batch])))
        losses.append(total / (len(x_train) // batch))
        predictions = np.argmax(model(tf.constant(x_test)).numpy(), axis=1)
        accuracy = float(np.mean(predictions == y_test))
        if log:
            print(f"epoch {epoch + 1}: loss={losses[-1]:.4f} test accuracy={accuracy:.3f}")
    return {"model": model, "losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    train()
