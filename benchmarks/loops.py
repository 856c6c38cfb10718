"""Loops that stay loops: an RNN's loss and gradient through ``while_loop`` inside
``@gt.function``, against TF's ``tf.function`` (the same program, only the import
differs), cold (a fresh process: trace, build, first call) and warm; and how many times
a Newton loop over five values traces.

    python benchmarks/loops.py [--tf PYTHON] [--lengths 100 2000 10000] [--src A/src ...]

Each figure comes from a fresh process (``--one LIBRARY T``); TF runs from the Python
given by ``--tf`` (or ``$GRADTAPE_TF_PYTHON``) when it is there. ``--src`` (repeatable)
runs gradtape from each source tree in turn, one row per tree and length, the trees'
processes alternating (so a load on the machine falls on all of them alike).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N_HIDDEN, N_IN = 32, 16


def _one(library: str, T: int) -> dict:
    start = time.perf_counter()
    if library == "tf":
        import tensorflow as tf
    else:
        import gradtape as tf
    import numpy as np

    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(T, 1, N_IN)).astype(np.float32))
    h0 = tf.constant(np.zeros((1, N_HIDDEN), np.float32))
    wx = tf.Variable(rng.normal(size=(N_IN, N_HIDDEN)).astype(np.float32) * 0.1)
    wh = tf.Variable(rng.normal(size=(N_HIDDEN, N_HIDDEN)).astype(np.float32) * 0.1)

    @tf.function
    def loss_fn(x, h0):
        def body(t, h):
            return t + 1, tf.tanh(x[t] @ wx + h @ wh)
        _, h = tf.while_loop(lambda t, h: t < tf.shape(x)[0], body, (tf.constant(0), h0))
        return tf.reduce_sum(h * h)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(x, h0)
        return tape.gradient(loss, [wx, wh])

    imported = time.perf_counter()
    step()
    cold = time.perf_counter() - imported
    warm = []
    for _ in range(5 if T <= 2000 else 3):
        t0 = time.perf_counter()
        grads = step()
        warm.append(time.perf_counter() - t0)
    result = {"cold_s": cold, "warm_s": statistics.median(warm),
              "import_s": imported - start, "grad_sum": float(np.sum(grads[1].numpy()))}
    if T == 100:
        @tf.function
        def newton(a):
            return tf.while_loop(lambda x: tf.abs(x * x - a) > 1e-4 * a,
                                 lambda x: (x + a / x) / 2, [tf.constant(1.0)])[0]
        for a in (2.0, 9.0, 100.0, 5.0, 1e4):
            newton(tf.constant(a))
        result["newton_traces"] = newton.experimental_get_tracing_count()
    return result


def _run(python: str, library: str, T: int, src: str | None = None) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    if src is not None:
        env["PYTHONPATH"] = src
    done = subprocess.run([python, __file__, "--one", library, str(T)], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", nargs=2)
    parser.add_argument("--tf", default=os.environ.get("GRADTAPE_TF_PYTHON"))
    parser.add_argument("--lengths", nargs="*", type=int, default=[100, 2000, 10000])
    parser.add_argument("--src", action="append", help="a gradtape source tree")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]))))
        return
    trees = args.src or [None]
    rows, peers = [], {}
    for T in args.lengths:
        for src in trees:
            rows.append((T, src, _run(sys.executable, "gradtape", T, src)))
        peers[T] = _run(args.tf, "tf", T) if args.tf and os.path.exists(args.tf) else None
    label = max(len(src or "") for src in trees)
    print(f"{'T':>6} {'tree':<{label}} | {'gradtape cold':>13} {'warm':>9} | "
          f"{'tf cold':>8} {'warm':>9} | warm ratio")

    def cell(r, k):
        return f"{r[k]:.3f}s" if r else "-"
    for T, src, ours in rows:
        peer = peers[T]
        ratio = f"{ours['warm_s'] / peer['warm_s']:.2f}x" if ours and peer else "-"
        print(f"{T:>6} {src or '':<{label}} | {cell(ours, 'cold_s'):>13} "
              f"{cell(ours, 'warm_s'):>9} | {cell(peer, 'cold_s'):>8} "
              f"{cell(peer, 'warm_s'):>9} | {ratio}")
    for _, _, ours in rows:
        if ours and "newton_traces" in ours:
            peer = peers[100]
            print(f"Newton over 5 values of a: gradtape {ours['newton_traces']} trace(s), "
                  f"tf {peer['newton_traces'] if peer else '-'}")


if __name__ == "__main__":
    main()
