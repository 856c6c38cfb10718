"""Instructions per step, counted by valgrind's callgrind: a measure that does not move
with the load of a shared machine (wall-clock ratios there drift by tens of percent).

    python benchmarks/instruction_counts.py                      # this checkout's src
    python benchmarks/instruction_counts.py --src BEFORE/src --src AFTER/src  # side by side

Each workload runs ``--steps`` and ``3 * --steps`` steps after a warm-up in a fresh
process under callgrind (``PYTHONHASHSEED=0``, one BLAS thread); the difference divided
by the extra steps is the cost of one step, without imports and first calls. Run to run
it still moves by about 3% at the default 30 steps; at 10, the Hessian and the
``@gt.function`` step moved by up to 12% between runs of the same tree (a collection or
a cache eviction inside the counted steps weighs three times more). Needs ``valgrind``
on the PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOAD = r'''
import sys
import numpy as np
import gradtape as gt

steps, kind = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
x = gt.Variable(np.float64(0.5))
w = gt.Variable(rng.standard_normal((64, 64)) * 0.1)
b = gt.Variable(np.zeros(64))
data = rng.standard_normal((32, 64))
labels = rng.integers(0, 64, 32)


def scalar_chain():
    with gt.GradientTape() as tape:
        y = x
        for _ in range(20):
            y = gt.sin(y) * y + gt.cos(y) * 0.5
    return tape.gradient(y, x)


def mlp_step():
    with gt.GradientTape() as tape:
        h = gt.tanh(data @ w + b)
        loss = gt.reduce_mean(gt.square(h @ w))
    return tape.gradient(loss, [w, b])


def sparse_cross_entropy():
    with gt.GradientTape() as tape:
        logits = data @ w + b
        loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    return tape.gradient(loss, [w, b])


@gt.function
def function_train_step():
    with gt.GradientTape() as tape:
        h = gt.tanh(data @ w + b)
        loss = gt.reduce_mean(gt.square(h @ w))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.01 * gw)
    return loss


@gt.function
def function_scalar_chain(v):
    with gt.GradientTape() as tape:
        tape.watch(v)
        y = v
        for _ in range(20):
            y = gt.sin(y) * y + gt.cos(y) * 0.5
    return tape.gradient(y, v)


def hand_scalar_chain(v):
    """The scalar chain's gradient written with NumPy on float64 scalars (the bench's
    hand-written NumPy), counted beside the compiled one."""
    ys = []
    y = v
    for _ in range(20):
        ys.append(y)
        y = np.sin(y) * y + np.cos(y) * 0.5
    g = np.float64(1.0)
    for y in reversed(ys):
        s = np.sin(y)
        g = g * (np.cos(y) * y + s - 0.5 * s)
    return g


def hessian():
    return gt.hessian(lambda v: gt.reduce_sum(gt.sin(v) * v ** 2))(np.linspace(0, 1, 8))


step = globals()[kind]
if kind in ("function_scalar_chain", "hand_scalar_chain"):
    v = gt.constant(np.float64(0.5)) if kind == "function_scalar_chain" else np.float64(0.5)
    step = (lambda s: lambda: s(v))(step)
    # A step of a few hundred thousand instructions: one full collection of the heap
    # (gradtape's modules) would outweigh it, so the heap so far is not collected.
    import gc
    gc.collect()
    gc.freeze()
for _ in range(5):
    step()
for _ in range(steps):
    step()
'''

WORKLOADS = ["scalar_chain", "mlp_step", "sparse_cross_entropy", "function_train_step",
             "hessian", "function_scalar_chain", "hand_scalar_chain"]


def count(src: str, steps: int, kind: str, script: str) -> int:
    env = dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, script, str(steps), kind],
            env=env, capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))


def main() -> None:
    here = Path(__file__).resolve().parents[1] / "src"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", action="append", help="a source tree to measure (repeatable)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--only", nargs="*", default=WORKLOADS)
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: nothing to count.")
    sources = args.src or [str(here)]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKLOAD)
    for src in sources:  # bytecode first: else the first run of a fresh tree compiles it
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True,
                       capture_output=True)
    try:
        print("| workload | " + " | ".join(sources) + " |")
        print("|---|" + "---:|" * len(sources))
        for kind in args.only:
            per_step = [(count(s, 3 * args.steps, kind, f.name)
                         - count(s, args.steps, kind, f.name)) // (2 * args.steps)
                        for s in sources]
            base = per_step[0]
            cells = [f"{n:,}" + ("" if i == 0 else f" ({(n - base) / base:+.1%})")
                     for i, n in enumerate(per_step)]
            print(f"| {kind} | " + " | ".join(cells) + " |")
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
