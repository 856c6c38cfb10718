"""Programs whose generated backward source is pinned in tests/golden/.

Kept apart from the tests so that editing a test does not move the ``file:line``
comments in the generated code. Each records a computation and returns ``(tape, target,
sources)``, and the source it inspects where its tensors have their names (as users do);
the tape is persistent, so it can be differentiated. Inputs are seeded: values too.
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
    return tape, loss, [w1, b1, w2, b2], tape.inspect(loss, [w1, b1, w2, b2]).source


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
    return tape, loss, [w], tape.inspect(loss, [w]).source


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
    return tape, loss, [x], tape.inspect(loss, [x]).source


def nested_tapes():
    """Second derivative: the outer tape records the inner gradient computation."""
    x = gt.Variable(np.array([0.5, -1.0, 2.0]))
    with gt.GradientTape(persistent=True) as outer:
        with gt.GradientTape() as inner:
            y = gt.reduce_sum(gt.tanh(x) * x)
        dy = inner.gradient(y, x)
        curvature = gt.reduce_sum(dy * dy)
    return outer, curvature, [x]


def fourier():
    """np.fft on tensors: the backward of a transform is its adjoint transform."""
    rng = _rng()
    x = gt.Variable(rng.standard_normal((4, 6)))
    lowpass = np.exp(-np.arange(4.0))
    with gt.GradientTape(persistent=True) as tape:
        smooth = np.fft.irfft(np.fft.rfft(x, axis=1) * lowpass, n=6, axis=1)
        spectrum = np.fft.fftshift(np.fft.fft2(x, norm="ortho"))
        loss = gt.reduce_sum(smooth * smooth) + gt.reduce_sum(gt.abs(spectrum))
    return tape, loss, [x]


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


def tensor_array_rnn():
    """TF's loop idiom: each step's state written to a TensorArray, then stacked."""
    rng = _rng()
    x = gt.constant(rng.standard_normal((3, 4)).astype(np.float32))
    w = gt.Variable(rng.standard_normal((4, 4)).astype(np.float32) * 0.5)
    with gt.GradientTape(persistent=True) as tape:
        states = gt.TensorArray(gt.float32, size=3)
        state = gt.zeros([4])
        for i in range(3):
            state = gt.tanh(gt.linalg.matvec(w, state) + x[i])
            states = states.write(i, state)
        loss = gt.reduce_sum(gt.square(states.stack()))
    return tape, loss, [w]


def decompositions():
    """Singular values, gauge-invariant |u| and eigenvalues of a Gram matrix."""
    rng = _rng()
    a = gt.Variable(rng.standard_normal((4, 3)))
    with gt.GradientTape(persistent=True) as tape:
        s, u, v = gt.linalg.svd(a)
        e, w = gt.linalg.eigh(gt.linalg.matmul(a, a, transpose_a=True))
        loss = gt.reduce_sum(s) + gt.reduce_sum(gt.abs(u)) + gt.reduce_sum(e * e)
    return tape, loss, [a]


def remainders_and_padding():
    """fmod, mod, clip, abs and a reflect pad: rounding ops in the backward are constants."""
    x = gt.Variable(np.array([[0.35, -1.25, 2.45], [-0.7, 1.15, 0.6]]))
    y = gt.Variable(np.array([0.7, 1.3, -0.9]))
    with gt.GradientTape(persistent=True) as tape:
        rem = np.fmod(x * x, y) + np.mod(x, y)
        padded = np.pad(np.clip(rem, -0.5, 0.5), (1, 2), mode="reflect")
        loss = gt.reduce_sum(np.abs(padded) * padded)
    return tape, loss, [x, y]


def numpy_functions():
    """NumPy functions that gradtape composes from its primitives (ops/numpy_extra.py)."""
    rng = _rng()
    x = gt.Variable(rng.standard_normal(6))
    m = gt.Variable(rng.standard_normal((2, 3)))
    with gt.GradientTape(persistent=True) as tape:
        roughness = np.sum(np.diff(x, n=2) ** 2)
        spread = np.ptp(x) + np.median(x)
        blocks = np.sum(np.sinc(np.kron(m, np.eye(2))))
        normal = np.cross(m[0], m[1])
        loss = roughness + spread + blocks + np.sum(normal * normal)
    return tape, loss, [x, m]


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


# --- the programs of the issue "generated code in the user's words" -------------------
# Each takes its gradient where the user would, so the names it holds reach the code;
# the fourth element is that inspected source.

def mlp_classifier():
    """The eager MLP: named Variables, a relu layer, sparse softmax cross-entropy."""
    rng = _rng()
    x = gt.constant(rng.standard_normal((32, 4)).astype(np.float32))
    labels = gt.constant(rng.integers(0, 3, 32))
    weights = gt.Variable(rng.standard_normal((4, 8)).astype(np.float32), name="weights")
    bias = gt.Variable(np.zeros(8, np.float32), name="bias")
    w_out = gt.Variable(rng.standard_normal((8, 3)).astype(np.float32), name="w_out")
    with gt.GradientTape(persistent=True) as tape:
        hidden = gt.nn.relu(x @ weights + bias)
        logits = hidden @ w_out
        loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    sources = [weights, bias, w_out]
    return tape, loss, sources, tape.inspect(loss, sources).source


def logistic_regression():
    """sigmoid cross-entropy: its backward is sigmoid(z) - y."""
    rng = _rng()
    features = gt.constant(rng.standard_normal((16, 3)).astype(np.float32))
    y = gt.constant((rng.random(16) > 0.5).astype(np.float32))
    w = gt.Variable(np.full(3, 0.1, np.float32), name="w")
    with gt.GradientTape(persistent=True) as tape:
        z = gt.linalg.matvec(features, w)
        loss = gt.reduce_mean(gt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
    return tape, loss, [w], tape.inspect(loss, [w]).source


def hessian():
    """The backward of a gradient: an outer tape over an inner one."""
    x = gt.Variable(np.array([0.5, -1.0, 2.0]), name="x")
    with gt.GradientTape(persistent=True) as outer:
        with gt.GradientTape() as inner:
            energy = gt.reduce_sum(x * x * x + gt.sin(x))
        force = inner.gradient(energy, x)
        work = gt.reduce_sum(force * force)
    return outer, work, [x], outer.inspect(work, [x]).source


def compiler_docs():
    """docs/compiler.md's example (its listings are this golden file's)."""
    x = gt.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
    w = gt.Variable(np.full((3, 2), 0.5, np.float32), name="w")
    b = gt.Variable(np.zeros(2, np.float32), name="b")
    with gt.GradientTape(persistent=True) as tape:
        h = gt.tanh(x @ w + b)
        loss = gt.reduce_mean(h * h)
    return tape, loss, [w, b], tape.inspect(loss, [w, b]).source


def compiler_docs_fusion():
    """docs/compiler.md's fusion and buffer-reuse example (``big.py``)."""
    x = gt.Variable(np.linspace(-1.0, 1.0, 100_000), name="x")
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(gt.tanh(x) * x + gt.exp(-x * x))
    return tape, y, [x], tape.inspect(y, [x]).source


PROGRAMS = {
    "compiler_docs_fusion": compiler_docs_fusion,
    "mlp_classifier": mlp_classifier,
    "logistic_regression": logistic_regression,
    "hessian": hessian,
    "compiler_docs": compiler_docs,
    "mlp": mlp,
    "softmax_cross_entropy": softmax_cross_entropy,
    "broadcasting": broadcasting,
    "indexing": indexing,
    "nested_tapes": nested_tapes,
    "fourier": fourier,
    "special_functions": special_functions,
    "tensor_array_rnn": tensor_array_rnn,
    "decompositions": decompositions,
    "remainders_and_padding": remainders_and_padding,
    "numpy_functions": numpy_functions,
    "convolution": convolution,
}


# --- @gt.function forwards: each returns (function, args); the forward source is pinned --

def dropout_step():
    """A training step with dropout and noise: the generated forward draws the mask and
    the noise when it runs (``random_draw``), so every call has its own."""
    rng = _rng()
    x = gt.constant(rng.standard_normal((4, 5)).astype(np.float32))
    y = gt.constant(rng.standard_normal((4, 3)).astype(np.float32))
    w = gt.Variable(rng.standard_normal((5, 3)).astype(np.float32) * 0.3)

    @gt.function
    def train_step(x, y):
        with gt.GradientTape() as tape:
            h = gt.nn.dropout(x, rate=0.25, seed=1)
            noisy = h @ w + gt.random.normal([4, 3], stddev=0.1)
            loss = gt.reduce_mean(gt.square(noisy - y))
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    return train_step, (x, y)


def keras_fit_step():
    """A Keras model's training step under @gt.function: the forward, the gradient and
    the update in one generated function."""
    rng = _rng()
    images = gt.constant(rng.standard_normal((8, 4)).astype(np.float32))
    targets = gt.constant(rng.standard_normal((8, 2)).astype(np.float32))
    init = gt.keras.initializers.GlorotUniform(seed=0)  # the same weights every time
    model = gt.keras.Sequential([
        gt.keras.layers.Dense(5, activation="relu", name="hidden", kernel_initializer=init),
        gt.keras.layers.Dense(2, name="head", kernel_initializer=init)])
    model.build((None, 4))
    optimizer = gt.optimizers.SGD(0.1)

    @gt.function
    def train_step(images, targets):
        with gt.GradientTape() as tape:
            predictions = model(images)
            loss = gt.reduce_mean(gt.square(predictions - targets))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step, (images, targets)


def pooled_step():
    """A training step on (512, 32) float32 activations (64 KiB): the generated forward
    keeps their buffers between calls and writes into them with ``out=``, the fused
    expressions' temporaries too; what it returns and assigns gets arrays of its own."""
    rng = _rng()
    x = gt.constant(rng.standard_normal((512, 2)).astype(np.float32))
    y = gt.constant(rng.standard_normal((512, 1)).astype(np.float32))
    w1 = gt.Variable(rng.standard_normal((2, 32)).astype(np.float32))
    w2 = gt.Variable(rng.standard_normal((32, 1)).astype(np.float32) * 0.2)

    @gt.function
    def train_step(x, y):
        with gt.GradientTape() as tape:
            hidden = gt.tanh(x @ w1)
            loss = gt.reduce_mean(gt.square(hidden @ w2 - y))
        d_w1, d_w2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.1 * d_w1)
        w2.assign_sub(0.1 * d_w2)
        return loss

    return train_step, (x, y)


def scalar_chain_on_floats():
    """A descent step on a chain of float64 scalar ops: the forward, its gradient and the
    update run on Python floats (codegen/floats.py), NumPy behind them where a value is
    not finite."""
    w = gt.Variable(np.float64(0.7))

    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            y = w * x
            for _ in range(3):
                y = gt.sin(y) * y + gt.cos(y) * 0.5
            loss = y / 2.0
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    return step, (gt.constant(np.float64(1.5)),)


FORWARD_PROGRAMS = {
    "dropout_step": dropout_step,
    "keras_fit_step": keras_fit_step,
    "pooled_step": pooled_step,
    "scalar_chain_on_floats": scalar_chain_on_floats,
}
