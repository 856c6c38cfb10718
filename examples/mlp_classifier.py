"""A small MLP classifier trained with Adam, its train step under ``@gt.function``.

Three interleaved spirals in 2-D, 3 classes, one-hot labels. The model is a two-layer
tanh MLP with a softmax cross-entropy loss. ``train_step`` opens a ``GradientTape``,
takes the gradient and applies Adam's update: ``@gt.function`` traces all of it once
(the batches all have the same shape) into one generated function, so every later step
runs that function: the forward pass, the gradient and the update of the weights and of
Adam's slots, without per-op dispatch or recording.

Labels are one-hot floats: ``sparse_softmax_cross_entropy_with_logits`` reads integer
labels' values in Python, which inside a traced function is a guard (a new trace for
every new batch of labels).

Run: python examples/mlp_classifier.py
"""

from __future__ import annotations

import numpy as np

import gradtape as gt

CLASSES = 3


def make_spirals(per_class: int = 128, noise: float = 0.3, seed: int = 0):
    """Points on three spiral arms, one per class; ``(x, one_hot_labels)``."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for k in range(CLASSES):
        r = np.linspace(0.1, 1.0, per_class)
        theta = np.linspace(0.0, 4.5, per_class) + 2 * np.pi * k / CLASSES
        theta = theta + rng.normal(scale=noise, size=per_class)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ys.append(np.full(per_class, k))
    x = np.concatenate(xs).astype(np.float32)
    labels = np.concatenate(ys)
    return x, np.eye(CLASSES, dtype=np.float32)[labels]


def make_model(hidden: int = 32, seed: int = 1) -> list[gt.Variable]:
    rng = np.random.default_rng(seed)

    def dense(n_in: int, n_out: int, name: str) -> list[gt.Variable]:
        w = rng.normal(scale=np.sqrt(1.0 / n_in), size=(n_in, n_out)).astype(np.float32)
        return [gt.Variable(w, name=f"{name}_w"),
                gt.Variable(np.zeros(n_out, np.float32), name=f"{name}_b")]

    return dense(2, hidden, "hidden1") + dense(hidden, hidden, "hidden2") + \
        dense(hidden, CLASSES, "out")


def predict(variables: list[gt.Variable], x: gt.Tensor) -> gt.Tensor:
    w1, b1, w2, b2, w3, b3 = variables
    h = gt.tanh(x @ w1 + b1)
    h = gt.tanh(h @ w2 + b2)
    return h @ w3 + b3  # logits


def loss_and_accuracy(logits: gt.Tensor, y: gt.Tensor) -> tuple[gt.Tensor, gt.Tensor]:
    loss = gt.reduce_mean(gt.nn.softmax_cross_entropy_with_logits(y, logits))
    correct = gt.equal(gt.argmax(logits, axis=-1), gt.argmax(y, axis=-1))
    return loss, gt.reduce_mean(gt.cast(correct, "float32"))


def train(epochs: int = 20, batch_size: int = 32, learning_rate: float = 0.02,
          seed: int = 0, verbose: bool = True) -> dict:
    x_all, y_all = make_spirals(seed=seed)
    variables = make_model()
    optimizer = gt.optimizers.Adam(learning_rate)

    @gt.function
    def train_step(x, y):
        with gt.GradientTape() as tape:
            logits = predict(variables, x)
            loss, accuracy = loss_and_accuracy(logits, y)
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss, accuracy

    @gt.function
    def evaluate(x, y):
        return loss_and_accuracy(predict(variables, x), y)

    rng = np.random.default_rng(seed)
    n = len(x_all) - len(x_all) % batch_size  # whole batches only: one shape, one trace
    history = []
    for epoch in range(epochs):
        order = rng.permutation(len(x_all))[:n]
        losses, accuracies = [], []
        for start in range(0, n, batch_size):
            batch = order[start:start + batch_size]
            loss, accuracy = train_step(gt.constant(x_all[batch]), gt.constant(y_all[batch]))
            losses.append(float(loss))
            accuracies.append(float(accuracy))
        history.append((float(np.mean(losses)), float(np.mean(accuracies))))
        if verbose:
            print(f"epoch {epoch + 1:3d}  loss {history[-1][0]:.4f}  "
                  f"accuracy {history[-1][1]:.3f}")
    loss, accuracy = evaluate(gt.constant(x_all), gt.constant(y_all))
    if verbose:
        print(f"full data: loss {float(loss):.4f}  accuracy {float(accuracy):.3f}  "
              f"({train_step.experimental_get_tracing_count()} trace of train_step, "
              f"{int(optimizer.iterations)} steps)")
    return {"history": history, "loss": float(loss), "accuracy": float(accuracy),
            "traces": train_step.experimental_get_tracing_count(),
            "steps": int(optimizer.iterations)}


if __name__ == "__main__":
    train()
