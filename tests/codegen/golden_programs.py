"""Programs whose generated backward source is pinned in tests/golden/.

Kept apart from the tests so that editing a test does not move the ``file:line``
comments in the generated code. Each function records a computation and returns
``(tape, target, sources)``; the tape is persistent, so it can be inspected and
differentiated. Inputs are seeded: values are deterministic too.
"""

import numpy as np

import gradtape as gt


def _rng():
    return np.random.default_rng(0)


def mlp():
    rng = _rng()
    x = gt.constant(rng.standard_normal((8, 5)).astype(np.float32))
    labels = gt.constant(rng.standard_normal((8, 3)).astype(np.float32))
    w1 = gt.Variable(rng.standard_normal((5, 16)).astype(np.float32) * 0.3)
    b1 = gt.Variable(np.zeros(16, np.float32))
    w2 = gt.Variable(rng.standard_normal((16, 3)).astype(np.float32) * 0.3)
    b2 = gt.Variable(np.zeros(3, np.float32))
    with gt.GradientTape(persistent=True) as tape:
        h = gt.tanh(x @ w1 + b1)
        y = h @ w2 + b2
        loss = gt.reduce_mean(gt.square(y - labels))
    return tape, loss, [w1, b1, w2, b2]


def softmax_cross_entropy():
    rng = _rng()
    x = gt.constant(rng.standard_normal((4, 6)).astype(np.float32))
    labels = gt.constant(np.eye(5, dtype=np.float32)[[0, 3, 1, 4]])
    w = gt.Variable(rng.standard_normal((6, 5)).astype(np.float32) * 0.5)
    with gt.GradientTape(persistent=True) as tape:
        logits = x @ w
        shifted = logits - gt.reduce_max(logits, axis=1, keepdims=True)
        log_probs = shifted - gt.log(gt.reduce_sum(gt.exp(shifted), axis=1, keepdims=True))
        loss = -gt.reduce_mean(gt.reduce_sum(labels * log_probs, axis=1))
    return tape, loss, [w]


def broadcasting():
    rng = _rng()
    a = gt.Variable(rng.standard_normal((3, 1, 4)))
    b = gt.Variable(rng.standard_normal((5, 1)))
    c = gt.Variable(rng.standard_normal(()))
    with gt.GradientTape(persistent=True) as tape:
        y = gt.sin(a * b) + c * gt.exp(-b) / (1.0 + a * a)
        loss = gt.reduce_sum(y * y)
    return tape, loss, [a, b, c]


def indexing():
    rng = _rng()
    x = gt.Variable(rng.standard_normal((6, 4)).astype(np.float32))
    rows = np.array([0, 2, 2, 5])
    with gt.GradientTape(persistent=True) as tape:
        picked = x[rows, 1:3]
        corner = x[0, ::2]
        loss = gt.reduce_sum(picked * picked) + gt.reduce_sum(gt.sigmoid(corner))
    return tape, loss, [x]


def nested_tapes():
    """Second derivative: the outer tape records the inner gradient computation."""
    x = gt.Variable(np.array([0.5, -1.0, 2.0]))
    with gt.GradientTape(persistent=True) as outer:
        with gt.GradientTape() as inner:
            y = gt.reduce_sum(gt.tanh(x) * x)
        dy = inner.gradient(y, x)
        curvature = gt.reduce_sum(dy * dy)
    return outer, curvature, [x]


def special_functions():
    import pytest  # here, not above: the line numbers of the other programs are pinned

    pytest.importorskip("scipy")
    import scipy.special as sp

    rng = _rng()
    x = gt.constant(rng.uniform(0.5, 2.0, (4, 3)))
    w = gt.Variable(rng.uniform(0.5, 2.0, (3,)))
    with gt.GradientTape(persistent=True) as tape:
        h = gt.nn.gelu(x * w)
        loss = gt.reduce_sum(sp.gammaln(h + 1.0) + sp.xlogy(x, w) + gt.math.log_ndtr(x))
    return tape, loss, [w]


def convolution():
    """A 1-d smoothing: np.convolve on tensors (the convolve primitive), both inputs
    differentiated."""
    rng = _rng()
    signal = gt.Variable(rng.standard_normal(8))
    kernel = gt.Variable(rng.standard_normal(3))
    with gt.GradientTape(persistent=True) as tape:
        smoothed = np.convolve(signal, kernel, "same")
        loss = gt.reduce_sum(gt.square(smoothed))
    return tape, loss, [signal, kernel]


PROGRAMS = {
    "mlp": mlp,
    "softmax_cross_entropy": softmax_cross_entropy,
    "broadcasting": broadcasting,
    "indexing": indexing,
    "nested_tapes": nested_tapes,
    "special_functions": special_functions,
    "convolution": convolution,
}
