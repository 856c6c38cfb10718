"""Logistic regression trained with SGD (momentum) on generated data.

Two Gaussian blobs in 3-D, labels 0/1. The model is ``p = sigmoid(X w + b)`` and the loss
the mean binary cross-entropy, written as ``softplus(z) - y z`` (the stable form of
``-y log p - (1 - y) log(1 - p)``). Each step opens a fresh ``GradientTape``; the tape
records the same structure every time, so the backward is built once and reused.

Run: python examples/logistic_regression.py
"""

from __future__ import annotations

import numpy as np

import gradtape as gt


def make_data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(np.float64)
    centers = np.where(y[:, None] == 1.0, [1.0, 1.0, -0.5], [-1.0, -0.5, 0.5])
    x = centers + rng.standard_normal((n, 3))
    return x, y


def logits(x: gt.Tensor, w: gt.Variable, b: gt.Variable) -> gt.Tensor:
    return gt.reduce_sum(x * w, axis=1) + b


def cross_entropy(z: gt.Tensor, y: gt.Tensor) -> gt.Tensor:
    return gt.reduce_mean(gt.softplus(z) - y * z)


def train(steps: int = 200, learning_rate: float = 0.05, log_every: int = 25) -> dict:
    x_np, y_np = make_data()
    x, y = gt.constant(x_np), gt.constant(y_np)
    w = gt.Variable(np.zeros(3), name="w")
    b = gt.Variable(0.0, dtype=np.float64, name="b")
    opt = gt.optimizers.SGD(learning_rate, momentum=0.9)
    losses = []
    for step in range(steps):
        with gt.GradientTape() as tape:
            loss = cross_entropy(logits(x, w, b), y)
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        losses.append(float(loss))
        if step % log_every == 0:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    z = logits(x, w, b).numpy()
    accuracy = float(np.mean((z > 0) == (y_np == 1.0)))
    final = float(cross_entropy(logits(x, w, b), y))
    print(f"final loss {final:.4f}  accuracy {accuracy:.3f}  (initial loss {losses[0]:.4f})")
    print(f"w = {np.array2string(w.numpy(), precision=3)}  b = {float(b.numpy()):.3f}")
    return {"losses": losses, "final_loss": final, "accuracy": accuracy}


if __name__ == "__main__":
    train()
