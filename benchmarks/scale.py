"""Issue [5/5]: a logistic-regression gradient on Dask arrays, against the hand-written
Dask gradient of the same loss (Dask-GLM's formulation), measured in one run.

The loss is Dask-GLM's logistic negative log-likelihood,
``sum(softplus(X @ w)) - y @ (X @ w)``, whose gradient Dask-GLM writes by hand as
``X.T @ (sigmoid(X @ w) - y)``. gradtape derives it from the loss with a tape.

Three measurements:

1. **Cluster**: ``X`` (``--rows`` × ``--cols`` float64 in ``--chunks`` row chunks) and
   ``y``, generated and persisted on a two-worker ``LocalCluster`` (one thread each, as
   processes). Timed side by side, interleaved: gradtape's tape, the same gradient under
   ``@gt.function``, and the hand-written Dask gradient. Each time is from building the
   graph to the gradient's values in this process.
2. **In memory**: the same data as NumPy arrays in this process, gradtape against the
   hand-written NumPy gradient.
3. **Out of core**: data generated lazily with ``da.random`` (``--out-of-core-gb``, more
   than the machine's memory), never stored. Each gradient runs in a fresh process on
   Dask's threaded scheduler, which reports its time and its peak resident memory.

``python benchmarks/scale.py --quick`` is a smoke run on small data (seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads

_threads.limit_from_argv()

import numpy as np  # noqa: E402

import gradtape as gt  # noqa: E402

SECTION = "scale"
TARGET = 1.1  # gradtape ÷ hand-written Dask, on the cluster


# --- the loss and its gradients --------------------------------------------------------

def gradtape_gradient(X, y, w: gt.Variable):
    """The gradient of Dask-GLM's logistic loss, by gradtape: any array library."""
    with gt.GradientTape() as tape:
        z = gt.linalg.matvec(X, w)
        loss = gt.reduce_sum(gt.math.softplus(z) - y * z)
    return tape.gradient(loss, w)


def natural_gradient(X, y, w: gt.Variable):
    """The same gradient with the loss as users write it: a matmul with a column and
    ``log1p(exp(z))``. The passes differentiate it as ``matvec`` and ``softplus``."""
    with gt.GradientTape() as tape:
        z = gt.matmul(X, gt.expand_dims(w, 1))[:, 0]
        loss = gt.reduce_sum(gt.math.log1p(gt.exp(z)) - y * z)
    return tape.gradient(loss, w)


def hand_written_dask_gradient(X, y, w: np.ndarray):
    """Dask-GLM's hand-written gradient of the same loss (``families.Logistic``)."""
    import dask.array as da

    p = 1.0 / (1.0 + da.exp(-X.dot(w)))
    return X.T.dot(p - y)


def hand_written_numpy_gradient(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y)


def hand_written_numpy_loss_and_gradient(X: np.ndarray, y: np.ndarray, w: np.ndarray
                                         ) -> tuple[float, np.ndarray]:
    """What a tape computes eagerly on NumPy: the loss too."""
    z = X @ w
    loss = np.sum(np.logaddexp(0.0, z) - y * z)
    return loss, X.T @ (1.0 / (1.0 + np.exp(-z)) - y)


def lazy_data(rows: int, cols: int, chunk_rows: int, seed: int = 0):
    """``X`` (standard normal) and labels ``y`` drawn from a logistic model, as lazy Dask
    arrays: each chunk is generated where and when it is needed."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, cols), chunks=(chunk_rows, cols))
    w_true = np.linspace(-1.0, 1.0, cols)
    u = rng.random(rows, chunks=chunk_rows)
    y = (u < 1.0 / (1.0 + da.exp(-X.dot(w_true)))).astype(np.float64)
    return X, y


def start_weights(cols: int) -> np.ndarray:
    return np.linspace(0.2, -0.2, cols)


# --- timing ------------------------------------------------------------------------------

def timed_rounds(fns: dict[str, Callable[[], np.ndarray]], repeats: int
                 ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Median seconds per call of each function, timed in interleaved rounds (every
    function once per round, after one warm-up call each), and each one's result."""
    results = {name: fn() for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) for name, s in samples.items()}, results


def check_equal(results: dict[str, np.ndarray], reference: str) -> None:
    expected = results[reference]
    for name, value in results.items():
        np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max(),
                                   err_msg=f"{name} differs from {reference}")


@dataclass
class Rows:
    title: str
    times: dict[str, float]
    reference: str
    tasks: dict[str, int] | None = None  # tasks submitted per gradient

    def table(self) -> str:
        base = self.times[self.reference]
        tasks = self.tasks
        head = f"| implementation | time per gradient | ÷ {self.reference} |"
        rule = "|---|---:|---:|"
        if tasks is not None:
            head, rule = head + " tasks |", rule + "---:|"
        lines = [f"### {self.title}", "", head, rule]
        for name, seconds in self.times.items():
            row = f"| {name} | {seconds:.3f} s | {seconds / base:.2f}× |"
            lines.append(row + (f" {tasks[name]} |" if tasks is not None else ""))
        return "\n".join(lines) + "\n"


# --- 1. the cluster ----------------------------------------------------------------------

GRADTAPE = "gradtape (tape)"
FUNCTION = "gradtape (@gt.function)"
NATURAL = "gradtape (tape), matmul with a column and log1p(exp)"
NATURAL_FUNCTION = "gradtape (@gt.function), matmul with a column and log1p(exp)"
HAND_DASK = "hand-written Dask (Dask-GLM)"
HAND_NUMPY = "hand-written NumPy"
HAND_NUMPY_BOTH = "hand-written NumPy, loss and gradient"


def dask_graphs(X, y, cols: int) -> dict[str, int]:
    """The number of tasks each gradient submits (its graph after Dask's optimization:
    blockwise layers and linear chains fused), built as the timed calls build it (after
    a first call: the compiled backward)."""
    import dask

    w_np = start_weights(cols)
    w = gt.Variable(w_np)
    Xt, yt = gt.constant(X), gt.constant(y)
    traced = gt.function(lambda X, y: gradtape_gradient(X, y, w))
    traced_natural = gt.function(lambda X, y: natural_gradient(X, y, w))
    builders = {
        GRADTAPE: lambda: gradtape_gradient(Xt, yt, w)._value,
        FUNCTION: lambda: traced(Xt, yt)._value,
        NATURAL: lambda: natural_gradient(Xt, yt, w)._value,
        NATURAL_FUNCTION: lambda: traced_natural(Xt, yt)._value,
        HAND_DASK: lambda: hand_written_dask_gradient(X, y, w_np),
    }
    counts = {}
    for name, build in builders.items():
        build()
        (optimized,) = dask.optimize(build())
        counts[name] = len(dict(optimized.__dask_graph__()))
    return counts


def dask_implementations(X, y, cols: int) -> dict[str, Callable[[], np.ndarray]]:
    """The three gradients of the same lazy data, each computed to a NumPy array."""
    w_np = start_weights(cols)
    w = gt.Variable(w_np)
    Xt, yt = gt.constant(X), gt.constant(y)
    traced = gt.function(lambda X, y: gradtape_gradient(X, y, w))
    traced_natural = gt.function(lambda X, y: natural_gradient(X, y, w))
    return {
        GRADTAPE: lambda: gradtape_gradient(Xt, yt, w).numpy(),
        FUNCTION: lambda: traced(Xt, yt).numpy(),
        NATURAL: lambda: natural_gradient(Xt, yt, w).numpy(),
        NATURAL_FUNCTION: lambda: traced_natural(Xt, yt).numpy(),
        HAND_DASK: lambda: hand_written_dask_gradient(X, y, w_np).compute(),
    }


def on_cluster(args: argparse.Namespace) -> Rows:
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X, y = lazy_data(args.rows, args.cols, args.rows // args.chunks)
        X, y = client.persist([X, y])
        from dask.distributed import wait

        wait([X, y])
        tasks = dask_graphs(X, y, args.cols)
        times, results = timed_rounds(dask_implementations(X, y, args.cols), args.repeats)
        check_equal(results, HAND_DASK)
    title = (f"Logistic-regression gradient, {args.rows:,} × {args.cols} float64 in "
             f"{args.chunks} chunks, two-worker LocalCluster")
    return Rows(title, times, HAND_DASK, tasks)


# --- 2. in memory ------------------------------------------------------------------------

def in_memory(args: argparse.Namespace) -> Rows:
    import dask

    # The same data, computed in this process. (Arrays fetched from the cluster's
    # workers made NumPy's own matrix products several times slower: not measured.)
    X, y = dask.compute(*lazy_data(args.rows, args.cols, args.rows // args.chunks),
                        scheduler="threads")
    w_np = start_weights(args.cols)
    w = gt.Variable(w_np)
    Xt, yt = gt.constant(X), gt.constant(y)
    fns = {
        GRADTAPE: lambda: gradtape_gradient(Xt, yt, w).numpy(),
        HAND_NUMPY_BOTH: lambda: hand_written_numpy_loss_and_gradient(X, y, w_np)[1],
        HAND_NUMPY: lambda: hand_written_numpy_gradient(X, y, w_np),
    }
    times, results = timed_rounds(fns, args.repeats)
    check_equal(results, HAND_NUMPY)
    title = f"The same gradient on in-memory NumPy arrays ({args.rows:,} × {args.cols})"
    return Rows(title, times, HAND_NUMPY)


# --- 3. out of core ----------------------------------------------------------------------

def out_of_core_child(which: str, rows: int, cols: int, chunk_rows: int) -> dict:
    """One gradient over lazily generated data on the threaded scheduler (2 threads)."""
    import dask

    X, y = lazy_data(rows, cols, chunk_rows, seed=1)
    start = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=2):
        if which == "gradtape":
            w = gt.Variable(start_weights(cols))
            grad = gradtape_gradient(gt.constant(X), gt.constant(y), w).numpy()
        else:
            grad = hand_written_dask_gradient(X, y, start_weights(cols)).compute()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_rss_gib": peak_rss_kib() / 2**20,
            "gradient": grad.tolist()}


def peak_rss_kib() -> int:
    """This process's peak resident memory. Linux's VmHWM: ru_maxrss would count the
    parent's memory at the fork that started this process."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def out_of_core(args: argparse.Namespace) -> str:
    cols = args.cols
    rows = int(args.out_of_core_gb * 2**30 / (8 * cols))
    chunk_rows = min(rows, 500_000)
    runs = {}
    for which in ("gradtape", "hand-written Dask"):
        child = subprocess.run(
            [sys.executable, __file__, "--out-of-core-child", which, "--rows", str(rows),
             "--cols", str(cols), "--chunk-rows", str(chunk_rows)],
            capture_output=True, text=True, check=True)
        runs[which] = json.loads(child.stdout.strip().splitlines()[-1])
    check_equal({k: np.array(v["gradient"]) for k, v in runs.items()}, "hand-written Dask")
    total_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    lines = [f"### Out of core: {rows * cols * 8 / 2**30:.1f} GiB of float64 "
             f"({rows:,} × {cols}, {chunk_rows:,}-row chunks), generated lazily by "
             f"`da.random`, on a {total_gib:.0f} GiB machine", "",
             "| implementation | time | peak RSS |", "|---|---:|---:|"]
    for which, run in runs.items():
        lines.append(f"| {which} | {run['seconds']:.1f} s | {run['peak_rss_gib']:.2f} GiB |")
    return "\n".join(lines) + "\n"


# --- command line ------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smoke run on small data")
    p.add_argument("--rows", type=int, default=20_000_000)
    p.add_argument("--cols", type=int, default=20)
    p.add_argument("--chunks", type=int, default=40)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out-of-core-gb", type=float, default=32.0,
                   help="size of the lazily generated data (0: skip the out-of-core run)")
    p.add_argument("--skip-numpy", action="store_true", help="skip the in-memory run")
    p.add_argument("--update-docs", action="store_true",
                   help="write the report into its section of docs/performance.md")
    p.add_argument("--out-of-core-child", help=argparse.SUPPRESS)
    p.add_argument("--chunk-rows", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.chunks, args.repeats = 200_000, 8, 2
        args.out_of_core_gb = min(args.out_of_core_gb, 0.05)
    return args


def main(argv: list[str] | None = None) -> str:
    args = parse(argv)
    if args.out_of_core_child:
        print(json.dumps(out_of_core_child(args.out_of_core_child, args.rows, args.cols,
                                           args.chunk_rows)))
        return ""
    from _harness import command, update_docs, versions

    cluster_rows = on_cluster(args)
    parts = [cluster_rows.table()]
    hand = cluster_rows.times[HAND_DASK]
    ratios = {name: cluster_rows.times[name] / hand
              for name in (GRADTAPE, FUNCTION, NATURAL, NATURAL_FUNCTION)}
    met = "met" if max(ratios.values()) <= TARGET else "**not met**"
    listed = ", ".join(f"{r:.2f}× ({name})" for name, r in ratios.items())
    parts.append(f"Target gradtape ÷ hand-written Dask ≤ {TARGET}×: {listed}: {met}.\n")
    if not args.skip_numpy:
        parts.append(in_memory(args).table())
    if args.out_of_core_gb > 0:
        parts.append(out_of_core(args))
    report = "\n".join(parts)
    header = (f"Measured with `{command()}` ({versions(['dask', 'distributed'])}; "
              f"{os.cpu_count()} CPU cores, shared machine: compare within one run).\n\n")
    print(header + report)
    if args.update_docs:
        update_docs(SECTION, header + report)
    return report


if __name__ == "__main__":
    main()
