"""The parts of ``python -m gradtape`` after the seed examples: the generated backward
code of a small model, and a short side-by-side timing of compiled gradients."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import gradtape as gt


def _small_mlp(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = gt.constant(rng.standard_normal((32, 64)).astype(np.float32))
    weights = [gt.Variable(rng.standard_normal((64, 64)).astype(np.float32) * 0.1,
                           name=f"w{i}") for i in range(2)]
    biases = [gt.Variable(np.zeros(64, np.float32), name=f"b{i}") for i in range(2)]
    return x, weights, biases


def _record_mlp_loss(tape: gt.GradientTape, x, weights, biases):
    with tape:
        h = x
        for w, b in zip(weights, biases):
            h = gt.tanh(h @ w + b)
        loss = gt.reduce_mean(h * h)
    return loss, [h]


def show_generated_code() -> None:
    """Print the backward function gradtape generates for a 2-layer tanh MLP loss."""
    x, weights, biases = _small_mlp()
    tape = gt.GradientTape()
    loss, _ = _record_mlp_loss(tape, x, weights, biases)
    print("loss = reduce_mean(h * h), h = tanh(tanh(x @ w0 + b0) @ w1 + b1)")
    print(tape.inspect(loss, weights + biases).source)


def _best_time(fn: Callable[[], object], budget: float = 0.3) -> float:
    fn()
    best, spent, calls = float("inf"), 0.0, 0
    while spent < budget or calls < 5:
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best, spent, calls = min(best, elapsed), spent + elapsed, calls + 1
    return best


def _hand_written_backward(x, weights, biases):
    """The same gradient written out in NumPy: the floor for any NumPy-based tool."""
    xs = [x.numpy()]
    for w, b in zip(weights, biases):
        xs.append(np.tanh(xs[-1] @ w.numpy() + b.numpy()))
    ws = [w.numpy() for w in weights]

    def backward():
        g = xs[-1] * np.float32(2.0 / xs[-1].size)
        grads_w, grads_b = [], []
        for i in reversed(range(len(ws))):
            g = g * (1 - xs[i + 1] ** 2)
            grads_w.append(xs[i].T @ g)
            grads_b.append(g.sum(axis=0))
            if i:
                g = g @ ws[i].T
        return grads_w[::-1] + grads_b[::-1]

    return backward


def speed_comparison() -> None:
    """Time repeated gradients on one persistent tape: compiled, interpreted, NumPy."""
    x, weights, biases = _small_mlp()
    tape = gt.GradientTape(persistent=True)
    loss, _ = _record_mlp_loss(tape, x, weights, biases)
    sources = weights + biases
    hand = _hand_written_backward(x, weights, biases)
    expected = hand()
    got = tape.gradient(loss, sources)
    for g, e in zip(got, expected):  # a timing of a wrong gradient would mean nothing
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-6)
    compiled = _best_time(lambda: tape.gradient(loss, sources))
    with gt.config(compile=False):
        interpreted = _best_time(lambda: tape.gradient(loss, sources))
    floor = _best_time(hand)
    print("Repeated gradient of the MLP loss on a persistent tape (best of several calls):")
    rows = [("hand-written NumPy backward", floor), ("gradtape, compiled", compiled),
            ("gradtape, interpreted", interpreted)]
    for name, seconds in rows:
        print(f"  {name:<28} {seconds * 1e6:9.1f} µs   {seconds / floor:5.2f}× hand-written")
    print("  (one shared machine: ratios mean more than times; see docs/performance.md)")
