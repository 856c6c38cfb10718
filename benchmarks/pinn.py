"""Issue [6/6]: a physics-informed network's training step, gradtape against TensorFlow.

The keras-io style PINN of Burgers' equation: a Keras MLP ``u(x, t)`` (2 -> 32 -> 32 ->
32 -> 1, tanh), the residual ``u_t + u u_x - nu u_xx`` at ``--points`` collocation
points, whose derivatives come from nested tapes inside the step, the mean squared
residual as loss, and one Adam update. Each implementation runs in a fresh process,
pinned to one thread, timed as the median of ``--repeats`` rounds of ``--steps`` steps:
the step under ``@gt.function`` with glibc's default allocator settings and with
``GRADTAPE_HOLD_MEMORY=1`` (``gt.config(hold_freed_memory=True)``: freed blocks kept for
reuse, as TensorFlow's own allocator does), and under ``tf.function`` (in ``--tf-python``,
an interpreter with TensorFlow, when this one has none). Each row also reports the CPU
time (the process's own: on a shared machine the wall time counts other processes' turns)
and the minor page faults per step.

usage: python benchmarks/pinn.py [--quick] [--points N] [--steps N] [--repeats N]
                                 [--tf-python PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads

if __name__ == "__main__":
    _threads.limit_from_argv()

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

NU = 0.01 / np.pi
GT_DEFAULT = "gradtape @gt.function"
GT_HOLD = "gradtape @gt.function, hold_freed_memory"
TF = "TensorFlow tf.function"
WIDTH, DEPTH = 32, 3


def collocation(points: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, (points, 1)).astype(np.float32)
    t = rng.uniform(0.0, 1.0, (points, 1)).astype(np.float32)
    return x, t


def make_step(tf: object) -> tuple[Callable[[object, object], object], object]:
    """The compiled PINN step of ``tf`` (``tensorflow`` or ``gradtape``) and its model."""
    keras = tf.keras
    keras.utils.set_random_seed(0)
    layers = [keras.Input((2,))] + [keras.layers.Dense(WIDTH, activation="tanh")
                                     for _ in range(DEPTH)] + [keras.layers.Dense(1)]
    model = keras.Sequential(layers)
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, t):
        with tf.GradientTape() as tape:
            with tf.GradientTape() as second:
                second.watch(x)
                with tf.GradientTape(persistent=True) as first:
                    first.watch([x, t])
                    u = model(tf.concat([x, t], axis=1))
                u_x = first.gradient(u, x)
                u_t = first.gradient(u, t)
            u_xx = second.gradient(u_x, x)
            residual = u_t + u * u_x - NU * u_xx
            loss = tf.reduce_mean(tf.square(residual))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step, model


def seconds_per_step(tf: object, points: int, steps: int, repeats: int) -> dict:
    x_np, t_np = collocation(points)
    x, t = tf.constant(x_np), tf.constant(t_np)
    step, _ = make_step(tf)
    first_loss = float(step(x, t))
    for _ in range(3):  # warm: traced, compiled
        step(x, t)
    rounds, cpu_rounds = [], []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step(x, t)
        rounds.append((time.perf_counter() - start) / steps)
        cpu_rounds.append((time.process_time() - cpu_start) / steps)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    # CPU time too: on a shared machine the wall time also counts other processes' turns.
    return {"seconds": statistics.median(rounds), "cpu": statistics.median(cpu_rounds),
            "first_loss": first_loss, "faults": faults / (repeats * steps)}


def run_child(python: str, lib: str, args: argparse.Namespace, env: dict | None = None
              ) -> dict:
    """One implementation's timing in a fresh process (its own allocator state)."""
    child = subprocess.run(
        [python, __file__, "--child", lib, "--points", str(args.points),
         "--steps", str(args.steps), "--repeats", str(args.repeats),
         "--threads", str(args.threads)],
        capture_output=True, text=True, check=True, env={**os.environ, **(env or {})})
    return json.loads(child.stdout.strip().splitlines()[-1])


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run (seconds)")
    p.add_argument("--points", type=int, default=2_000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tf-python", help="an interpreter with TensorFlow, if not this one")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.points, args.steps, args.repeats = 64, 2, 1
    return args


def main(argv: list[str] | None = None) -> str:
    args = parse(argv)
    if args.child:
        lib = __import__(args.child)
        print(json.dumps(seconds_per_step(lib, args.points, args.steps, args.repeats)))
        return ""
    rows = {
        GT_DEFAULT: run_child(sys.executable, "gradtape", args, {"GRADTAPE_HOLD_MEMORY": "0"}),
        GT_HOLD: run_child(sys.executable, "gradtape", args, {"GRADTAPE_HOLD_MEMORY": "1"}),
    }
    tf_python = sys.executable if importlib.util.find_spec("tensorflow") else args.tf_python
    if tf_python:
        rows[TF] = run_child(tf_python, "tensorflow", args)
    lines = [f"### PINN step (Burgers), {args.points} collocation points, MLP 2-"
             f"{'-'.join([str(WIDTH)] * DEPTH)}-1 tanh, Adam", "",
             "| implementation | time per step | CPU time per step | minor page faults per step |",
             "|---|---:|---:|---:|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['seconds'] * 1e3:.2f} ms | {row['cpu'] * 1e3:.2f} ms "
                     f"| {row['faults']:.0f} |")
    if TF in rows:
        for name in (GT_DEFAULT, GT_HOLD):
            ratio = rows[name]["seconds"] / rows[TF]["seconds"]
            cpu_ratio = rows[name]["cpu"] / rows[TF]["cpu"]
            lines.append(f"\n{name} ÷ TensorFlow: {ratio:.2f}× (CPU time {cpu_ratio:.2f}×; "
                         "target ≤ 1.0×)")
    report = "\n".join(lines)
    print(report)
    return report


if __name__ == "__main__":
    main()
