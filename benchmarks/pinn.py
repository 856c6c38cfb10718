"""Issue [6/6]: a physics-informed network's training step, gradtape against TensorFlow.

The keras-io style PINN of Burgers' equation: a Keras MLP ``u(x, t)`` (2 -> 32 -> 32 ->
32 -> 1, tanh), the residual ``u_t + u u_x - nu u_xx`` at ``--points`` collocation
points, whose derivatives come from nested tapes inside the step, the mean squared
residual as loss, and one Adam update. The implementations are the step under
``@gt.function`` with glibc's default allocator settings and with
``GRADTAPE_HOLD_MEMORY=1`` (``gt.config(hold_freed_memory=True)``: freed blocks kept for
reuse, as TensorFlow's own allocator does), and under ``tf.function`` (in ``--tf-python``,
an interpreter with TensorFlow, when this one has none).

Each implementation lives in a fresh process of its own (its own allocator state), built
and warmed once; then the processes take turns: ``--repeats`` rounds, each running
``--steps`` steps in every process one after the other, the order rotated from round to
round, the others idle meanwhile. So every round measures the implementations under the
same load, and a ratio is taken within a round, never across runs. The report gives the
median and the range over the rounds of the time per step, of the process's own CPU
time per step (on a shared machine the wall time also counts other processes' turns)
and of the per-round ratios to TensorFlow, the minor page faults per step, the thread
setting (``--threads``: 1 for every library by default, 0 for each one's default) and
the load average before and after.

``--also-src SRC`` adds a row for gradtape imported from another tree's ``src`` (a
base commit's), run in the same rounds: a before-and-after under the same load.

usage: python benchmarks/pinn.py [--quick] [--points N] [--steps N] [--repeats N]
                                 [--threads N] [--tf-python PATH] [--also-src SRC]
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


def warm_step(tf: object, points: int) -> tuple[Callable[[], object], float]:
    """The step of ``tf`` on the collocation points, traced and warmed, and its first loss."""
    x_np, t_np = collocation(points)
    x, t = tf.constant(x_np), tf.constant(t_np)
    step, _ = make_step(tf)
    first_loss = float(step(x, t))
    for _ in range(3):  # warm: traced, compiled
        step(x, t)
    return (lambda: step(x, t)), first_loss


def one_round(run: Callable[[], object], steps: int) -> dict:
    """Wall time, this process's CPU time and minor page faults per step over ``steps``."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(steps):
        run()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return {"seconds": seconds / steps, "cpu": cpu / steps, "faults": faults / steps}


def serve(lib_name: str, points: int) -> None:
    """A child: build and warm the step, then run one round per ``steps`` line on stdin."""
    run, first_loss = warm_step(__import__(lib_name), points)
    print(json.dumps({"first_loss": first_loss}), flush=True)
    for line in sys.stdin:
        print(json.dumps(one_round(run, int(line))), flush=True)


class Child:
    """One implementation's process, driven round by round through its pipes."""

    def __init__(self, python: str, lib: str, args: argparse.Namespace,
                 env: dict | None = None) -> None:
        self.process = subprocess.Popen(
            [python, __file__, "--child", lib, "--points", str(args.points),
             "--threads", str(args.threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})})
        self.first_loss = self._answer()["first_loss"]
        self.rounds: list[dict] = []

    def _answer(self) -> dict:
        # The last line: a library may print to stdout while it loads.
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the child exited with {self.process.wait()}")
            if line.startswith("{"):
                return json.loads(line)

    def round(self, steps: int) -> None:
        self.process.stdin.write(f"{steps}\n")
        self.process.stdin.flush()
        self.rounds.append(self._answer())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def interleaved(children: dict[str, Child], steps: int, repeats: int) -> None:
    """``repeats`` rounds, every child once per round, the order rotated each round."""
    names = list(children)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            children[name].round(steps)


def median_range(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    return (f"{statistics.median(values) * scale:.{digits}f} "
            f"({min(values) * scale:.{digits}f}–{max(values) * scale:.{digits}f})")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run (seconds)")
    p.add_argument("--points", type=int, default=2_000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tf-python", help="an interpreter with TensorFlow, if not this one")
    p.add_argument("--also-src", action="append", default=[], metavar="SRC",
                   help="a further @gt.function row importing gradtape from SRC (the src "
                        "folder of another tree: before and after, side by side)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.points, args.steps, args.repeats = 64, 2, 2
    return args


def report(args: argparse.Namespace, children: dict[str, Child],
           load: tuple[tuple[float, ...], tuple[float, ...]]) -> str:
    threads = ("every library pinned to one thread" if args.threads == 1 else
               "each library's default threads" if args.threads <= 0 else
               f"every library limited to {args.threads} threads")
    lines = [f"### PINN step (Burgers), {args.points} collocation points, MLP 2-"
             f"{'-'.join([str(WIDTH)] * DEPTH)}-1 tanh, Adam", "",
             f"{args.repeats} interleaved rounds of {args.steps} steps, {threads}; load "
             f"average {load[0][0]:.2f} before, {load[1][0]:.2f} after. Median (range) "
             "over the rounds:", "",
             "| implementation | time per step (ms) | CPU time per step (ms) "
             "| minor page faults per step |", "|---|---:|---:|---:|"]
    for name, child in children.items():
        seconds = [r["seconds"] for r in child.rounds]
        cpu = [r["cpu"] for r in child.rounds]
        faults = statistics.median(r["faults"] for r in child.rounds)
        lines.append(f"| {name} | {median_range(seconds, 1e3)} | {median_range(cpu, 1e3)} "
                     f"| {faults:.0f} |")
    if TF in children:
        tf_rounds = children[TF].rounds
        lines.append("")
        for name in (n for n in children if n != TF):
            pairs = list(zip(children[name].rounds, tf_rounds))
            wall = [g["seconds"] / t["seconds"] for g, t in pairs]
            cpu = [g["cpu"] / t["cpu"] for g, t in pairs]
            lines.append(f"- {name} ÷ TensorFlow, per round: {median_range(wall)}× "
                         f"(CPU time {median_range(cpu)}×; target ≤ 1.0×)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    args = parse(argv)
    if args.child:
        serve(args.child, args.points)
        return ""
    before = os.getloadavg()
    tf_python = sys.executable if importlib.util.find_spec("tensorflow") else args.tf_python
    starts = [(GT_DEFAULT, sys.executable, "gradtape", {"GRADTAPE_HOLD_MEMORY": "0"}),
              (GT_HOLD, sys.executable, "gradtape", {"GRADTAPE_HOLD_MEMORY": "1"})]
    starts += [(f"{GT_DEFAULT}, --also-src {n}", sys.executable, "gradtape",
                {"GRADTAPE_HOLD_MEMORY": "0", "PYTHONPATH": os.path.abspath(src)})
               for n, src in enumerate(args.also_src, 1)]
    if tf_python:
        starts.append((TF, tf_python, "tensorflow", None))
    children: dict[str, Child] = {}
    try:
        # Started one after the other: a child's build does not overlap another's.
        for name, python, lib, env in starts:
            children[name] = Child(python, lib, args, env)
        interleaved(children, args.steps, args.repeats)
    finally:
        for child in children.values():
            child.close()
    text = report(args, children, (before, os.getloadavg()))
    print(text)
    return text


if __name__ == "__main__":
    main()
