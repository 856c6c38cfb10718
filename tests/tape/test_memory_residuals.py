"""A tape keeps only what the recorded ops' derivative rules read (``Primitive.residuals``).

For each op family, an intermediate no rule reads is freed as soon as the user drops it,
before ``gradient``: checked through ``weakref`` on the array and through ``tracemalloc``
on the bytes the recording holds. The gradients stay right (finite differences in
float64), eagerly, persistent, nested and as jacobians.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradtape as gt

RNG = np.random.default_rng(7)
A = RNG.standard_normal((6, 5))
B = RNG.standard_normal((5, 4))
# Arrays of at least MIN_RELEASE_SIZE elements: a tape keeps smaller ones whole.
BIG = RNG.standard_normal((96, 64))
BIG_W = RNG.standard_normal((64, 64)) / 8
IMAGES = (6, 16, 16, 4)
CONV_W = gt.constant(np.random.default_rng(8).standard_normal((3, 3, 4, 4)) / 6)


def _sum(t):
    return gt.reduce_sum(t)


# name -> (make the dropped intermediate from x, then the op reading it).
# The first op's output is read by no rule of the second op.
FAMILIES = {
    "tanh after add": (lambda x: x + 1.0, gt.tanh),
    "exp after subtract": (lambda x: x - 2.0, gt.exp),
    "sigmoid after negative": (lambda x: -x, gt.sigmoid),
    "sqrt after multiply": (lambda x: x * x + 1.0, gt.sqrt),
    "sum of a product": (lambda x: x * 2.0, _sum),
    "matmul then tanh": (lambda x: gt.matmul(x, gt.constant(BIG_W)), gt.tanh),
    "reshape of a sum": (lambda x: x + x, lambda t: gt.tanh(gt.reshape(t, (-1,)))),
    "transpose": (lambda x: x + 0.5, lambda t: gt.exp(gt.transpose(t))),
    "broadcast_to": (lambda x: x + 1.0,
                     lambda t: gt.tanh(gt.broadcast_to(t, (2,) + BIG.shape))),
    "getitem": (lambda x: x + 3.0, lambda t: gt.tanh(t[1:90, ::2])),
    "softmax": (lambda x: x * 2.0, lambda t: gt.nn.softmax(t) * gt.constant(BIG)),
    "log_softmax": (lambda x: x - 1.0, lambda t: gt.nn.log_softmax(t) * gt.constant(BIG)),
    # Convolution and pooling on BIG seen as 6 images of 16x16x4: relu reads its output,
    # not the convolution's; avg_pool's rules read shapes only.
    "relu of a conv": (lambda x: gt.nn.conv2d(gt.reshape(x, IMAGES), CONV_W, 1, "SAME"),
                       gt.nn.relu),
    "conv of a relu's input": (
        lambda x: gt.reshape(x, IMAGES) * 2.0,
        lambda t: gt.nn.conv2d(gt.nn.relu(t), CONV_W, 1, "SAME")),
    "avg_pool": (lambda x: gt.reshape(x, IMAGES) + 1.0,
                 lambda t: gt.tanh(gt.nn.avg_pool2d(t, 3, 1, "SAME"))),
    "tanh of an avg_pool": (lambda x: gt.nn.avg_pool2d(gt.reshape(x, IMAGES), 2, 1, "SAME"),
                            gt.tanh),
    "max_pool of a relu": (lambda x: gt.reshape(x, IMAGES) - 0.5,
                           lambda t: gt.nn.max_pool2d(gt.nn.relu(t), 2, 2, "VALID")),
    "sparse cross-entropy": (
        lambda x: x + 1.0,
        lambda t: gt.nn.sparse_softmax_cross_entropy_with_logits(
            labels=np.arange(96) % 64, logits=t - 1.0)),
}


def _numpy_value(first, second, x: np.ndarray) -> float:
    return float(gt.reduce_sum(second(first(gt.constant(x)))).numpy())


def _finite_difference(first, second, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (_numpy_value(first, second, up) - _numpy_value(first, second, down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_dropped_intermediate_no_rule_reads_is_freed_before_gradient(family):
    first, second = FAMILIES[family]
    x = gt.Variable(BIG)
    with gt.GradientTape() as tape:
        middle = first(x)
        alive = weakref.ref(middle._value)
        loss = gt.reduce_sum(second(middle))
        del middle
    gc.collect()
    assert alive() is None, f"{family}: the tape still holds an array no rule reads"
    _check_directional(tape.gradient(loss, x).numpy(), first, second, BIG)


def _check_directional(grad: np.ndarray, first, second, x: np.ndarray) -> None:
    """The gradient along three random directions against central differences (float64):
    an elementwise finite difference of a 6,144-element input would take minutes."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        v = rng.standard_normal(x.shape)
        eps = 1e-6
        slope = (_numpy_value(first, second, x + eps * v)
                 - _numpy_value(first, second, x - eps * v)) / (2 * eps)
        np.testing.assert_allclose(np.sum(grad * v), slope, rtol=1e-6, atol=1e-6)


# The families whose ops work on any 2-d input (the others are written for BIG's shape).
SHAPE_FREE = ["tanh after add", "exp after subtract", "sigmoid after negative",
              "sqrt after multiply", "sum of a product", "reshape of a sum", "transpose"]


@pytest.mark.parametrize("family", SHAPE_FREE)
def test_a_small_intermediate_is_kept_and_gives_the_same_gradient(family):
    """Below MIN_RELEASE_SIZE elements an array no rule reads stays in its record (a
    Released would cost more than it saves); the gradient is the same."""
    first, second = FAMILIES[family]
    x = gt.Variable(A)
    with gt.GradientTape() as tape:
        middle = first(x)
        alive = weakref.ref(middle._value)
        loss = gt.reduce_sum(second(middle))
        del middle
    gc.collect()
    assert alive() is not None, f"{family}: a {A.size}-element array was released"
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(),
                               _finite_difference(first, second, A), rtol=1e-6, atol=1e-8)


def test_the_recording_holds_only_residual_bytes():
    """A 4-layer tanh MLP: the tape holds the layer outputs (tanh reads its output), not
    the pre-activations (nothing reads ``h @ W``), so it holds half of what it records."""
    rng = np.random.default_rng(0)
    x = gt.constant(rng.standard_normal((256, 128)))
    ws = [gt.Variable(rng.standard_normal((128, 128)) / 12) for _ in range(4)]
    layer = 256 * 128 * 8
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with gt.GradientTape() as tape:
            h = x
            for w in ws:
                h = gt.tanh(gt.matmul(h, w))
            loss = gt.reduce_mean(h)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 4 * layer * 1.25, f"the tape holds {held / layer:.1f} layers' bytes, not 4"
    grads = tape.gradient(loss, ws)
    # The same gradient by hand.
    hs = [x.numpy()]
    for w in ws:
        hs.append(np.tanh(hs[-1] @ w.numpy()))
    g = np.full(hs[-1].shape, 1.0 / hs[-1].size)
    for k in reversed(range(4)):
        g = g * (1 - hs[k + 1] ** 2)
        np.testing.assert_allclose(grads[k].numpy(), hs[k].T @ g, rtol=1e-10)
        g = g @ ws[k].numpy().T


def test_a_raw_numpy_operand_no_rule_reads_is_not_copied():
    """``x + array``: add's rules read shapes only, so the record holds no copy of the
    array; ``x * array`` reads it, so the record holds a private copy (writing into the
    array later does not change the gradient, as in TF)."""
    big = np.ones((512, 512))
    x = gt.Variable(np.full((512, 512), 2.0))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with gt.GradientTape() as tape:
            y = x + big
            del y
        added = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert added < big.nbytes / 4, "the record copied an operand no rule reads"
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(x * big)
    big[:] = 5.0  # after recording: the gradient reads the copy
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.ones((512, 512)))


def test_a_feed_is_read_where_a_record_keeps_it():
    """``z = x + 1`` is recorded first by add (which keeps nothing), then read by
    multiply (which keeps it): the backward reads ``z`` from multiply's record."""
    x = gt.Variable(np.array([1.0, 2.0, 3.0]))
    with gt.GradientTape(persistent=True) as tape:
        z = x + 1.0
        w = gt.exp(z)  # reads its output, not z
        loss = gt.reduce_sum(w * z)
    del z
    z = np.array([2.0, 3.0, 4.0])
    expected = np.exp(z) * (1 + z)  # d/dx sum(exp(z) z) with z = x + 1
    for _ in range(3):  # interpreted, then compiled
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected, rtol=1e-12)


def _f(x):
    return gt.reduce_sum(gt.tanh(gt.matmul(x, gt.constant(B)) + 1.0) * gt.exp(x[:, :4] - 1.0))


def _f_numpy(x):
    return np.sum(np.tanh(x @ B + 1.0) * np.exp(x[:, :4] - 1.0))


def _numeric_grad(fn, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (fn(up) - fn(down)) / (2 * eps)
    return g


def test_second_order_and_jacobians_are_unchanged():
    """Nested tapes (a Hessian-vector product), a persistent tape's jacobian: the
    second derivatives read only declared residuals too."""
    x0 = RNG.standard_normal((6, 5))
    v = RNG.standard_normal((6, 5))
    x = gt.Variable(x0)
    for _ in range(3):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                y = _f(x)
            g = inner.gradient(y, x)
            gv = gt.reduce_sum(g * v)
        hvp = outer.gradient(gv, x).numpy()
        expected = _numeric_grad(
            lambda p: float(np.sum(_numeric_grad(_f_numpy, p, 1e-5) * v)), x0, 1e-4)
        np.testing.assert_allclose(hvp, expected, rtol=1e-4, atol=1e-5)
    with gt.GradientTape(persistent=True) as tape:
        rows = gt.tanh(gt.matmul(x, gt.constant(B)) + 1.0)
    jac = tape.jacobian(rows, x).numpy()
    assert jac.shape == (6, 4, 6, 5)
    for i, j in [(0, 0), (2, 3), (5, 1)]:
        def entry(p, i=i, j=j):
            return np.tanh(p @ B + 1.0)[i, j]
        np.testing.assert_allclose(jac[i, j], _numeric_grad(entry, x0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tape.gradient(rows, x).numpy(),
                               _numeric_grad(lambda p: np.sum(np.tanh(p @ B + 1.0)), x0),
                               rtol=1e-6)
