"""On Dask, a logistic regression's gradient builds the graph of the gradient written by
hand (Dask-GLM's ``X.T.dot(sigmoid(X.dot(w)) - y)``), however the model is written:
``linalg.matvec`` with ``softplus``, or ``matmul`` with a column and ``log1p(exp)``.

The count checked is of the graph Dask runs (``dask.optimize``: blockwise layers fused,
linear chains of tasks fused), eagerly (the interpreted backward, then the compiled one)
and under ``@gt.function``. Deterministic: no timing."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import gradtape as gt  # noqa: E402

RNG = np.random.default_rng(11)
ROWS, COLS, CHUNK_ROWS = 48, 5, 12  # four chunks of rows
X_NP = RNG.standard_normal((ROWS, COLS))
LABELS = (RNG.random(ROWS) < 0.5).astype(np.float64)  # Dask-GLM's y in {0, 1}
SIGNS = 2.0 * LABELS - 1.0  # the same labels as y in {-1, 1}
W0 = np.linspace(0.3, -0.3, COLS)


def submitted_tasks(array) -> int:
    """The number of tasks Dask runs to compute ``array``."""
    (optimized,) = dask.optimize(array)
    return len(dict(optimized.__dask_graph__()))


def sigmoid(u):
    return 1.0 / (1.0 + np.exp(-u))


# Dask-GLM's loss, sum(softplus(z) - y z), and the signed one, sum(log1p(exp(-s z))):
# each as users write it, as the best form, by hand on Dask and in NumPy.
def natural_dask_glm(X, y, w):
    z = gt.matmul(X, gt.expand_dims(w, 1))[:, 0]
    return gt.reduce_sum(gt.math.log1p(gt.exp(z)) - y * z)


def best_dask_glm(X, y, w):
    z = gt.linalg.matvec(X, w)
    return gt.reduce_sum(gt.math.softplus(z) - y * z)


FORMS = {
    "dask-glm": dict(
        labels=LABELS,
        natural=natural_dask_glm,
        best=best_dask_glm,
        by_hand=lambda X, y, w: X.T.dot(1.0 / (1.0 + da.exp(-X.dot(w))) - y),
        numpy=lambda X, y, w: X.T @ (sigmoid(X @ w) - y),
    ),
    "signed": dict(
        labels=SIGNS,
        natural=lambda X, s, w: gt.reduce_sum(
            gt.math.log1p(gt.exp(-s * gt.matmul(X, gt.expand_dims(w, 1))[:, 0]))),
        best=lambda X, s, w: gt.reduce_sum(gt.math.softplus(-s * gt.linalg.matvec(X, w))),
        by_hand=lambda X, s, w: X.T.dot(-s / (1.0 + da.exp(s * X.dot(w)))),
        numpy=lambda X, s, w: X.T @ (-s * sigmoid(-s * (X @ w))),
    ),
}


def tape_gradient(loss, X, y, w):
    with gt.GradientTape() as tape:
        value = loss(X, y, w)
    return tape.gradient(value, w)


def dask_data(labels):
    return (da.from_array(X_NP, chunks=(CHUNK_ROWS, COLS)),
            da.from_array(labels, chunks=CHUNK_ROWS))


def gradients(loss, X, y):
    """The gradient's Dask array, eagerly three times (the first call's backward is
    interpreted, later ones compiled) and under ``@gt.function`` twice."""
    w = gt.Variable(W0)
    Xt, yt = gt.constant(X), gt.constant(y)
    traced = gt.function(lambda X, y: tape_gradient(loss, X, y, w))
    out = [tape_gradient(loss, Xt, yt, w) for _ in range(3)]
    out += [traced(Xt, yt) for _ in range(2)]
    return [g._value for g in out]


@pytest.mark.parametrize("name", FORMS)
@pytest.mark.parametrize("written", ["natural", "best"])
def test_the_gradient_runs_the_hand_written_graph(name, written):
    form = FORMS[name]
    X, y = dask_data(form["labels"])
    by_hand = form["by_hand"](X, y, W0)
    expected = form["numpy"](X_NP, form["labels"], W0)
    np.testing.assert_allclose(by_hand.compute(), expected, rtol=1e-12)
    for grad in gradients(form[written], X, y):
        assert isinstance(grad, da.Array)
        np.testing.assert_allclose(grad.compute(), expected, rtol=1e-12)
        assert submitted_tasks(grad) == submitted_tasks(by_hand)


@pytest.mark.parametrize("name", FORMS)
def test_natural_and_best_forms_give_one_gradient(name):
    form = FORMS[name]
    X, y = dask_data(form["labels"])
    natural = [g.compute() for g in gradients(form["natural"], X, y)]
    best = [g.compute() for g in gradients(form["best"], X, y)]
    np.testing.assert_allclose(natural, best, rtol=1e-14)
    # and on NumPy arrays, where the tape computes with NumPy
    w = gt.Variable(W0)
    on_numpy = tape_gradient(form["natural"], gt.constant(X_NP), gt.constant(form["labels"]), w)
    np.testing.assert_allclose(on_numpy.numpy(), best[0], rtol=1e-12)


# --- matvec and vecmat on Dask: tensordot for a matrix, matmul for a batch -----------

@pytest.mark.parametrize("shape", [(ROWS, COLS), (3, ROWS, COLS)])
def test_matvec_and_vecmat_and_their_gradients_on_dask(shape):
    a_np = RNG.standard_normal(shape)
    x_np, v_np = RNG.standard_normal(COLS), RNG.standard_normal(ROWS)
    a = gt.constant(da.from_array(a_np, chunks=(1,) * (len(shape) - 2) + (CHUNK_ROWS, COLS)))
    weights = RNG.standard_normal(shape[:-1])
    weights_t = RNG.standard_normal(shape[:-2] + (COLS,))

    def loss(a, x, v):
        return (gt.reduce_sum(weights * gt.tanh(gt.linalg.matvec(a, x)))
                + gt.reduce_sum(weights_t * gt.tanh(gt.linalg.matvec(a, v, transpose_a=True))))

    def grads(a, x, v):
        with gt.GradientTape() as tape:
            value = loss(a, x, v)
        return [value, *tape.gradient(value, [x, v])]

    x, v = gt.Variable(x_np), gt.Variable(v_np)
    expected = [t.numpy() for t in grads(gt.constant(a_np), x, v)]
    traced = gt.function(grads)
    for run in (grads, grads, traced, traced):
        got = run(a, x, v)
        assert all(isinstance(t._value, da.Array) for t in got)
        for t, e in zip(got, expected):
            np.testing.assert_allclose(t.numpy(), e, rtol=1e-12)
    # A matrix's products are Dask's tensordot (a batch's stay matmul)
    layers = {k.rsplit("-", 1)[0] for t in got for k in t._value.__dask_graph__().layers}
    assert "tensordot" in layers and ("matmul" in layers) == (len(shape) == 3)
