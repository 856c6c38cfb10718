"""Pin every library to the same number of threads before any of them is imported.

On a small shared machine, thread pools of several libraries in one process (OpenBLAS,
PyTorch's OpenMP, TensorFlow's and XLA's Eigen pools) spin and fight over the cores; a
peer measured right after another library can slow down tenfold. One thread each (the
default, ``--threads 1``) gives stable ratios; ``--threads 0`` keeps library defaults.
Import this module and call ``limit_from_argv()`` before importing NumPy.
"""

from __future__ import annotations

import os
import sys

THREADS = 1  # the number in effect after limit_from_argv (0: library defaults)


def limit_from_argv(argv: list[str] | None = None) -> int:
    global THREADS
    argv = sys.argv[1:] if argv is None else argv
    n = 1
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            n = int(argv[i + 1])
        elif arg.startswith("--threads="):
            n = int(arg.split("=", 1)[1])
    THREADS = n
    if n <= 0:
        return n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
                "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1").strip()
    return n
