"""The cold first call of a structure: ``tape.gradient`` on tapes whose structures are
all new, so each call lowers, differentiates, optimizes and names a backward.

    python benchmarks/cold_build.py                          # this checkout's src
    python benchmarks/cold_build.py --src BEFORE/src --src AFTER/src
    python benchmarks/cold_build.py --instructions --src BEFORE/src --src AFTER/src

Each tree runs ``--runs`` fresh processes, interleaved; each process times 40 gradients
of MLPs of depth 1 to 8 with distinct constants (a Python scalar is part of the
structure), and prints the median per call. The table shows every process's median, in
milliseconds: compare the trees' columns, not one number.

``--instructions`` counts instead (valgrind's callgrind, ``PYTHONHASHSEED=0``): the
instructions of 40 and of 120 cold gradients in two fresh processes, the difference per
extra gradient, so imports and the first reads of the source drop out. It does not move
with the load of a shared machine (a collection inside the counted calls still moves
it by a percent or two).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

WORKLOAD = r'''
import sys
import time
import numpy as np
import gradtape as gt

rng = np.random.default_rng(0)
w = gt.Variable(rng.standard_normal((16, 16)), name="w")
b = gt.Variable(np.zeros(16), name="b")
x = gt.constant(rng.standard_normal((8, 16)))
times = []
count = int(sys.argv[1]) if len(sys.argv) > 1 else 40
for structure in range(1, count + 1):
    start = time.perf_counter()
    with gt.GradientTape() as tape:
        h = x
        for _ in range(structure % 8 + 1):
            h = gt.tanh(h @ w + b)
        loss = gt.reduce_mean(h * h) * float(structure)  # a new constant: a new structure
    tape.gradient(loss, [w, b])
    times.append(time.perf_counter() - start)
print(np.median(times) * 1e3)
'''


def cold_build_ms(src: str | None) -> float:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    out = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def cold_build_instructions(src: str | None) -> int:
    """Instructions per cold gradient (callgrind): 120 structures minus 40, per extra one."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    counts = []
    for structures in (40, 120):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                 sys.executable, "-c", WORKLOAD, str(structures)],
                env=env, capture_output=True, text=True, check=True)
        counts.append(int(re.search(r"Collected : (\d+)", out.stderr).group(1)))
    return (counts[1] - counts[0]) // 80


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", action="append", help="a source tree to measure (repeatable)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--instructions", action="store_true",
                   help="count instructions per cold gradient (callgrind) instead")
    args = p.parse_args()
    trees = args.src or [None]
    if args.instructions:
        if shutil.which("valgrind") is None:
            sys.exit("valgrind is not installed: nothing to count.")
        print("| tree | instructions per cold gradient |")
        print("|---|---:|")
        for tree in trees:
            print(f"| {tree or 'this checkout'} | {cold_build_instructions(tree):,} |")
        return
    results: dict[str | None, list[float]] = {tree: [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            results[tree].append(cold_build_ms(tree))
    print("| tree | median ms per cold gradient, one per process (sorted) |")
    print("|---|---|")
    for tree, values in results.items():
        print(f"| {tree or 'this checkout'} | {' '.join(f'{v:.3f}' for v in sorted(values))} |")


if __name__ == "__main__":
    main()
