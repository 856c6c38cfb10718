"""Instructions per step, counted by valgrind's callgrind: a measure that does not move
with the load of a shared machine (wall-clock ratios there drift by tens of percent).

    python benchmarks/instruction_counts.py                      # this checkout's src
    python benchmarks/instruction_counts.py --src BEFORE/src --src AFTER/src  # side by side
    python benchmarks/instruction_counts.py --only function_train_step --jobs 2
    python benchmarks/instruction_counts.py --only pinn_step --steps 5  # benchmarks/pinn.py's

Each workload (``_instruction_workloads.py``) runs in a process of its own under callgrind
(``PYTHONHASHSEED=0``, one BLAS thread, the same environment for every tree), so no
workload warms a cache or grows the heap for another. After a warm-up it runs ``--windows``
windows of ``--steps`` steps; callgrind counts each window alone (a dump at a marker call
on either side), so the interpreter's start and ``import gradtape`` (most of the
process's instructions) are not in the number. A cell is the median window divided by
the steps; ``--verbose`` shows every window and the collections the garbage collector
made in it. Needs ``valgrind`` on the PATH; ``--jobs`` runs processes side by side (the
counts do not depend on the machine's load).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "_instruction_workloads.py"
WORKLOADS = ["scalar_chain", "mlp_step", "sparse_cross_entropy", "function_train_step",
             "hessian", "function_scalar_chain", "hand_scalar_chain"]
# Counted only when asked for (--only pinn_step --steps 5): a PINN step takes about a
# second under callgrind.
ON_REQUEST = ["pinn_step"]
# Only what the count may depend on: an inherited PYTHON* variable (PYTHONOPTIMIZE,
# PYTHONDEVMODE, PYTHONMALLOC, ...) would change what runs.
KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")


@dataclass
class Count:
    """One workload on one tree: instructions per window and collections per window."""

    windows: list[int]
    collections: list[str]
    steps: int

    @property
    def per_step(self) -> int:
        return int(statistics.median(self.windows)) // self.steps

    @property
    def spread(self) -> float:
        """(largest - smallest window) / median: how far the windows of one process agree."""
        return (max(self.windows) - min(self.windows)) / statistics.median(self.windows)


def environment(src: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in KEPT_VARIABLES}
    env.update(PYTHONPATH=src, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def count(src: str, kind: str, steps: int, windows: int) -> Count:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=os_getppid",
             f"--callgrind-out-file={tmp}/cg.out", sys.executable, str(SCRIPT), kind,
             str(steps), str(windows)],
            env=environment(src), capture_output=True, text=True, cwd=tmp)
        if out.returncode != 0:
            sys.exit(f"{kind} on {src} failed:\n{out.stderr[-3000:]}")
        # Dump 1 is the start up to the first marker; then a window, the pause between
        # windows (print, gc.collect), the next window, ...: the windows are the even dumps.
        counts = [_summary(Path(tmp, f"cg.out.{2 * (i + 1)}")) for i in range(windows)]
    return Count(counts, out.stdout.split("\n")[:windows], steps)


def _summary(dump: Path) -> int:
    return int(re.search(r"^summary: (\d+)", dump.read_text(), re.M).group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", action="append", help="a source tree to measure (repeatable)")
    p.add_argument("--steps", type=int, default=30, help="steps per window")
    p.add_argument("--windows", type=int, default=3, help="counted windows per process")
    p.add_argument("--only", nargs="*", default=WORKLOADS, choices=WORKLOADS + ON_REQUEST)
    p.add_argument("--jobs", type=int, default=1, help="processes run side by side")
    p.add_argument("--verbose", action="store_true", help="print every window")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: nothing to count.")
    sources = args.src or [str(HERE.parent / "src")]
    for src in sources:  # bytecode first: else the first run of a fresh tree compiles it
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True,
                       capture_output=True)
    print("| workload | " + " | ".join(sources) + " |")
    print("|---|" + "---:|" * len(sources), flush=True)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        pending = {(src, kind): pool.submit(count, src, kind, args.steps, args.windows)
                   for kind in args.only for src in sources}
        for kind in args.only:  # a row as soon as its counts are in
            row = [pending[src, kind].result() for src in sources]
            print(f"| {kind} | " + " | ".join(_cells(row)) + " |", flush=True)
    if args.verbose:
        for (src, kind), job in pending.items():
            c = job.result()
            print(f"{kind} {src}: windows {c.windows} (spread {c.spread:.3%}), "
                  f"collections per generation {c.collections}")


def _cells(counts: list[Count]) -> list[str]:
    base = counts[0].per_step
    return [f"{c.per_step:,}" + ("" if i == 0 else f" ({(c.per_step - base) / base:+.1%})")
            for i, c in enumerate(counts)]


if __name__ == "__main__":
    main()
