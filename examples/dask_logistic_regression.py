"""Logistic regression on a chunked Dask array, on a Dask cluster.

The data is a Dask array that lives on the cluster's workers; the parameters are small
NumPy variables in this process. The training loop is the one you would write for NumPy
data: each step records the loss on a tape, and ``apply_gradients`` computes the step's
gradients in one ``dask.compute`` on the workers. The data never comes to this process.

Run (needs ``pip install -e '.[dask]'`` in the clone):

    python examples/dask_logistic_regression.py                    # a two-worker LocalCluster
    python examples/dask_logistic_regression.py --rows 20000000    # 3.2 GB of data
    python examples/dask_logistic_regression.py --scheduler tcp://scheduler:8786
"""

from __future__ import annotations

import argparse
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import gradtape as gt


def make_data(rows: int, cols: int, chunks: int, seed: int = 0):
    """Features ``X`` and 0/1 labels ``y`` drawn from a logistic model with weights
    ``w_true``, generated chunk by chunk where they are needed (lazy Dask arrays)."""
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, cols), chunks=(max(1, rows // chunks), cols))
    w_true = np.linspace(-1.0, 1.0, cols)
    y = (rng.random(rows, chunks=X.chunks[0]) < 1.0 / (1.0 + da.exp(-X @ w_true)))
    return X, y.astype(np.float64), w_true


def cross_entropy(X: gt.Tensor, y: gt.Tensor, w: gt.Variable, b: gt.Variable) -> gt.Tensor:
    """Mean binary cross-entropy of ``sigmoid(X w + b)``, in its stable form."""
    z = gt.linalg.matvec(X, w) + b
    return gt.reduce_mean(gt.math.softplus(z) - y * z)


def train(X, y, steps: int = 30, learning_rate: float = 0.2, log_every: int = 10) -> dict:
    """Fit ``w`` and ``b`` with Adam. ``X`` and ``y`` may be NumPy or Dask arrays: the
    code is the same, and so are the results."""
    X, y = gt.constant(X), gt.constant(y)
    w = gt.Variable(np.zeros(X.shape[1]), name="w")
    b = gt.Variable(0.0, dtype=np.float64, name="b")
    optimizer = gt.keras.optimizers.Adam(learning_rate=learning_rate)
    losses = {}
    for step in range(steps):
        with gt.GradientTape() as tape:
            loss = cross_entropy(X, y, w, b)  # on Dask data: a lazy graph, nothing computed
        grads = tape.gradient(loss, [w, b])  # lazy too
        if step % log_every == 0 or step == steps - 1:
            # Tensors are Dask collections: the loss and the gradients in one pass.
            loss, *grads = dask.compute(loss, *grads)
            losses[step] = float(loss)
            print(f"step {step:4d}  loss {losses[step]:.5f}", flush=True)
        optimizer.apply_gradients(zip(grads, [w, b]))  # computes lazy gradients in one pass
    return {"w": w.numpy(), "b": float(b.numpy()), "losses": losses}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--cols", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--scheduler", help="address of your own Dask scheduler "
                        "(default: start a two-worker LocalCluster)")
    args = parser.parse_args(argv)

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    with client:
        X, y, w_true = make_data(args.rows, args.cols, args.chunks)
        X, y = dask.persist(X, y)  # generated once, kept in the workers' memory
        print(f"{args.rows:,} × {args.cols} float64 ({X.nbytes / 2**30:.2f} GiB) in "
              f"{X.numblocks[0]} chunks on {len(client.scheduler_info()['workers'])} workers")
        start = time.perf_counter()
        result = train(X, y, steps=args.steps)
        seconds = time.perf_counter() - start
        error = np.abs(result["w"] - w_true).max()
        print(f"{args.steps} steps in {seconds:.1f} s; largest |w - w_true| = {error:.3f}")
    if not args.scheduler:
        cluster.close()
    return result


if __name__ == "__main__":
    main()
