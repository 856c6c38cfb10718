"""The same gradient code on Dask's distributed scheduler: a LocalCluster of two worker
processes, as a user's own cluster would run it (``Client("tcp://scheduler:8786")``)."""

import numpy as np
import pytest

import gradtape as gt

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow  # starting two worker processes takes seconds


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def fit(x, y, steps=3):
    w = gt.Variable(np.zeros(x.shape[1]), name="w")
    b = gt.Variable(0.0, dtype="float64", name="b")
    optimizer = gt.keras.optimizers.Adam(learning_rate=0.1)
    xt, yt = gt.constant(x), gt.constant(y)
    losses = []
    for _ in range(steps):
        with gt.GradientTape() as tape:
            z = gt.linalg.matvec(xt, w) + b
            loss = gt.reduce_mean(gt.math.softplus(z) - yt * z)
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b]))
        losses.append(float(loss))
    return w.numpy(), b.numpy(), losses


def test_logistic_regression_on_a_local_cluster(client):
    rng = np.random.default_rng(2)
    xn = rng.normal(size=(400, 4))
    yn = (xn @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(size=400) > 0).astype(float)
    x = da.from_array(xn, chunks=(100, 4))
    y = da.from_array(yn, chunks=100)
    w, b, losses = fit(x, y)
    expected_w, expected_b, expected_losses = fit(xn, yn)
    np.testing.assert_allclose(w, expected_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, expected_b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-12, atol=1e-12)
    assert losses[-1] < losses[0]
    # The gradient graphs ran on the two workers (each logged task transitions).
    processed = client.run(lambda dask_worker: len(dask_worker.state.log))
    assert len(processed) == 2 and all(n > 0 for n in processed.values())
