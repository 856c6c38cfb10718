"""The GRU workload of ``programs.py``: ``keras.layers.GRU(64)`` over 100 steps of a
``(32, 100, 32)`` float32 batch, the loss ``mean(gru(x) ** 2)`` and its gradient with
respect to the GRU's weights, one step eagerly and one under ``@gt.function`` /
``tf.function`` (warm: after the first calls).

The same code runs on gradtape and on TensorFlow (``tf_like`` is either module). TF
usually lives in another Python environment: ``python _gru.py --worker`` times TF in that
interpreter and prints the times as JSON, which ``programs.py --tf-python PATH`` reads.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BATCH, STEPS, FEATURES, UNITS = 32, 100, 32, 64
QUICK_SIZE = (4, 6, 3, 5)
EAGER, COMPILED = "eager", "compiled"


def gru_steps(tf_like: Any, size: tuple = (BATCH, STEPS, FEATURES, UNITS)
              ) -> dict[str, Callable[[], Any]]:
    """The eager and the compiled training step (loss and gradient) of the GRU."""
    batch, steps, features, units = size
    x = tf_like.constant(np.random.default_rng(0).standard_normal(
        (batch, steps, features)).astype(np.float32))
    layer = tf_like.keras.layers.GRU(units)
    layer(x)  # build

    def step(inputs: Any) -> Any:
        with tf_like.GradientTape() as tape:
            loss = tf_like.reduce_mean(layer(inputs) ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    compiled = tf_like.function(step)
    return {EAGER: lambda: step(x), COMPILED: lambda: compiled(x)}


def best_time(fn: Callable[[], Any], repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def time_steps(tf_like: Any, repeats: int, quick: bool = False) -> dict[str, float]:
    steps = gru_steps(tf_like, QUICK_SIZE if quick else (BATCH, STEPS, FEATURES, UNITS))
    return {name: best_time(fn, repeats) for name, fn in steps.items()}


def _worker(argv: list[str]) -> None:
    """Times TensorFlow (in the interpreter that has it), one thread, as JSON."""
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 10
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    print(json.dumps(time_steps(tf, repeats, quick="--quick" in argv)))


if __name__ == "__main__" and "--worker" in sys.argv:
    _worker(sys.argv)
