"""Real-program workloads: a ``tf.data`` input pipeline, ``fit`` over it, a CNN step, a GRU step.

- one epoch of ``Dataset.from_tensor_slices((x, y)).shuffle(10_000).batch(64)`` over
  60,000 x 784 float32 (MNIST's size);
- one epoch of ``fit`` of a 784-256-10 MLP (SGD, sparse categorical cross-entropy) over
  that Dataset;
- one training step of a CNN on a batch of 64 28x28x1 images: Conv2D(32, 3, relu) ->
  MaxPool(2) -> Conv2D(64, 3, relu) -> MaxPool(2) -> Flatten -> Dense(10), SGD, sparse
  cross-entropy, eagerly and under ``@gt.function``/``tf.function``, beside PyTorch's
  (in this process when it imports, else in ``--torch-python``'s interpreter).
- a GRU's training step (``_gru.py``: GRU(64) over 100 steps of a 32 x 32 batch, loss and
  gradient), eager and compiled, beside TF's eager and ``tf.function`` steps (TF from
  ``--tf-python``, the interpreter of an environment that has it, when TF is not here).

gradtape and TensorFlow (when installed: it is skipped cleanly otherwise) run in the
same process, beside the floor: a plain NumPy loop (an index permutation and slicing;
for ``fit``, the hand-written forward and backward of the same MLP). Each round runs
every implementation's epoch once, in turn; a time is the best of the rounds;
docs/performance.md reports the ratios.

Every library is pinned to ``--threads`` threads (1 by default, as the other scripts:
on the shared 2-core machine OpenBLAS's two threads made one 64x784x256 matmul up to
70x slower than one thread while other jobs ran, and TF's pool far less so).
``--compare-threads`` runs the whole script at one thread and at the libraries'
defaults, in fresh processes taking turns (``--processes`` of each), and prints both
settings side by side.

usage: python benchmarks/programs.py [--quick] [--no-peers] [--repeats N] [--threads N]
                                     [--torch-python PYTHON]
                                     [--tf-python PATH]
                                     [--compare-threads [--processes N]]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _threads

if __name__ == "__main__":  # before NumPy and TensorFlow load their thread pools
    _threads.limit_from_argv()

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

FULL = (60_000, 784, 10, 10_000, 64, 256)  # samples, features, classes, buffer, batch, hidden
QUICK = (600, 16, 10, 100, 32, 8)
NUMPY, GRADTAPE, TF = "NumPy loop (floor)", "gradtape", "TensorFlow"
GT_EAGER, GT_FUNCTION = "gradtape eager", "gradtape @gt.function"
TF_EAGER, TF_FUNCTION, TORCH = "TensorFlow eager", "TensorFlow tf.function", "PyTorch"
CNN_FULL, CNN_QUICK = (64, 28, 10), (4, 12, 3)  # batch, image side, classes


@dataclass
class Result:
    title: str
    times: dict[str, float] = field(default_factory=dict)  # the best epoch of each
    skipped: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)  # every epoch timed
    # The process's CPU seconds in each epoch (all its threads): the work done, which a
    # loaded machine's share of the cores does not change (a spinning thread's adds).
    cpu: dict[str, list[float]] = field(default_factory=dict)

    def add(self, samples: dict[str, list[float]], cpu: dict[str, list[float]]) -> None:
        for name, seconds in samples.items():
            self.samples.setdefault(name, []).extend(seconds)
            self.cpu.setdefault(name, []).extend(cpu[name])
            self.times[name] = min(self.samples[name])

    def median(self, name: str, of: str = "samples") -> float:
        return float(np.median(getattr(self, of)[name]))


def make_data(n: int, d: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random((n, d), dtype=np.float32), rng.integers(0, classes, n).astype(np.int64)


# --- one epoch of iteration ---------------------------------------------------------------
def numpy_epoch(x: np.ndarray, y: np.ndarray, batch: int) -> int:
    """The floor: a permutation, then slices of it."""
    order = np.random.default_rng().permutation(len(x))
    batches = 0
    for start in range(0, len(x), batch):
        index = order[start:start + batch]
        x[index], y[index]
        batches += 1
    return batches


def dataset_epoch(data_module: object, x: np.ndarray, y: np.ndarray, buffer: int,
                  batch: int) -> Callable[[], int]:
    """``from_tensor_slices((x, y)).shuffle(buffer).batch(batch)``, one pass (gradtape's
    gt.data or TF's tf.data: the same program)."""
    dataset = data_module.Dataset.from_tensor_slices((x, y)).shuffle(buffer).batch(batch)

    def epoch() -> int:
        return sum(1 for _ in dataset)
    return epoch


# --- one epoch of fit ---------------------------------------------------------------------
def mlp(keras: object, d: int, hidden: int, classes: int) -> object:
    model = keras.Sequential([keras.layers.Dense(hidden, activation="relu"),
                              keras.layers.Dense(classes)])
    model.build((None, d))
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def fit_epoch(tf_like: object, x: np.ndarray, y: np.ndarray, buffer: int, batch: int,
              hidden: int, classes: int) -> Callable[[], object]:
    model = mlp(tf_like.keras, x.shape[1], hidden, classes)
    dataset = tf_like.data.Dataset.from_tensor_slices((x, y)).shuffle(buffer).batch(batch)
    return lambda: model.fit(dataset, epochs=1, verbose=0)


def numpy_fit_epoch(x: np.ndarray, y: np.ndarray, batch: int, hidden: int,
                    classes: int) -> Callable[[], float]:
    """The floor: the same MLP's forward, backward and SGD step written in NumPy."""
    rng = np.random.default_rng(1)
    w1 = rng.normal(0, 0.05, (x.shape[1], hidden)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = rng.normal(0, 0.05, (hidden, classes)).astype(np.float32)
    b2 = np.zeros(classes, np.float32)

    def epoch() -> float:
        nonlocal w1, b1, w2, b2
        order = rng.permutation(len(x))
        loss = 0.0
        for start in range(0, len(x), batch):
            index = order[start:start + batch]
            xb, yb = x[index], y[index]
            h = np.maximum(xb @ w1 + b1, 0)
            logits = h @ w2 + b2
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            loss = -np.mean(np.log(p[np.arange(len(yb)), yb]))
            g = p
            g[np.arange(len(yb)), yb] -= 1
            g /= len(yb)
            gh = (g @ w2.T) * (h > 0)
            w2 -= 0.01 * (h.T @ g)
            b2 -= 0.01 * g.sum(0)
            w1 -= 0.01 * (xb.T @ gh)
            b1 -= 0.01 * gh.sum(0)
        return float(loss)
    return epoch


# --- one CNN training step --------------------------------------------------------------
def cnn_data(batch: int, side: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    return (rng.random((batch, side, side, 1), dtype=np.float32),
            rng.integers(0, classes, batch).astype(np.int64))


def cnn_model(keras: object, side: int, classes: int) -> object:
    layers = keras.layers
    return keras.Sequential([
        keras.Input((side, side, 1)),
        layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2),
        layers.Flatten(), layers.Dense(classes)])


def cnn_step(tf_like: object, size: tuple, compiled: bool) -> Callable[[], object]:
    """The tape step TF's guides write (gradtape's and TF's: the same program)."""
    batch, side, classes = size
    x, y = cnn_data(batch, side, classes)
    model = cnn_model(tf_like.keras, side, classes)
    loss_fn = tf_like.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf_like.keras.optimizers.SGD(0.01)

    def step(x: object, y: object) -> object:
        with tf_like.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    run = tf_like.function(step) if compiled else step
    x, y = tf_like.constant(x), tf_like.constant(y)
    run(x, y)  # trace (compiled) and build the backward once
    return lambda: run(x, y)


def torch_cnn_step(size: tuple) -> Callable[[], object]:
    import torch

    if _threads.THREADS > 0:
        torch.set_num_threads(_threads.THREADS)
    batch, side, classes = size
    x, y = cnn_data(batch, side, classes)
    flat = 64 * (((side - 2) // 2 - 2) // 2) ** 2
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(flat, classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    xt, yt = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous(), torch.from_numpy(y)

    def step() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        optimizer.step()
        return loss
    step()
    return step


def _torch_seconds(size: tuple, repeats: int, torch_python: str | None) -> float | str:
    """PyTorch's best step here, or in ``torch_python``'s interpreter; a reason if neither."""
    if importlib.util.find_spec("torch") is not None:
        return best_of(torch_cnn_step(size), repeats)
    if not torch_python:
        return "not installed (see --torch-python)"
    child = subprocess.run(
        [torch_python, __file__, "--torch-child", json.dumps([list(size), repeats]),
         "--threads", str(_threads.THREADS)], capture_output=True, text=True, check=True)
    return float(child.stdout.strip().splitlines()[-1])


def cnn(size: tuple, repeats: int, tf: object | None, why: str,
        torch_python: str | None, peers: bool) -> Result:
    import gradtape as gt

    batch, side, classes = size
    result = Result(f"one CNN training step, batch {batch} of {side}x{side}x1 "
                    "(Conv2D 32 -> MaxPool -> Conv2D 64 -> MaxPool -> Dense)")
    result.times[GT_EAGER] = best_of(cnn_step(gt, size, compiled=False), repeats)
    result.times[GT_FUNCTION] = best_of(cnn_step(gt, size, compiled=True), repeats)
    for name, compiled in ((TF_EAGER, False), (TF_FUNCTION, True)):
        if tf is None:
            result.skipped[name] = why
        else:
            result.times[name] = best_of(cnn_step(tf, size, compiled), repeats)
    torch_time = _torch_seconds(size, repeats, torch_python) if peers else "--no-peers"
    if isinstance(torch_time, str):
        result.skipped[TORCH] = torch_time
    else:
        result.times[TORCH] = torch_time
    return result


# --- running ------------------------------------------------------------------------------
def best_of(fn: Callable[[], object], repeats: int) -> float:
    """The best of ``repeats`` calls (the CNN and GRU steps: one implementation at a time)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def interleaved(fns: dict[str, Callable[[], object]],
                repeats: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each function once per round, in turn (a change of machine load hits them all
    alike); every function's wall times and CPU times over ``repeats`` rounds."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            samples[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return samples, cpu


def _tensorflow() -> object | None:
    if importlib.util.find_spec("tensorflow") is None:
        return None
    import tensorflow as tf
    return tf


def run(size: tuple, repeats: int, peers: bool) -> list[Result]:
    import gradtape as gt

    n, d, classes, buffer, batch, hidden = size
    x, y = make_data(n, d, classes)
    tf = _tensorflow() if peers else None
    iteration = Result(f"one epoch of from_tensor_slices((x, y)).shuffle({buffer})"
                       f".batch({batch}) over {n} x {d} float32")
    fitting = Result(f"one epoch of fit, a {d}-{hidden}-{classes} MLP over that Dataset")
    epochs = {NUMPY: lambda: numpy_epoch(x, y, batch),
              GRADTAPE: dataset_epoch(gt.data, x, y, buffer, batch)}
    fits = {NUMPY: numpy_fit_epoch(x, y, batch, hidden, classes),
            GRADTAPE: fit_epoch(gt, x, y, buffer, batch, hidden, classes)}
    if tf is None:
        for result in (iteration, fitting):
            result.skipped[TF] = "not installed" if peers else "--no-peers"
    else:
        epochs[TF] = dataset_epoch(tf.data, x, y, buffer, batch)
        fits[TF] = fit_epoch(tf, x, y, buffer, batch, hidden, classes)
    iteration.add(*interleaved(epochs, repeats))
    fitting.add(*interleaved(fits, repeats))
    return [iteration, fitting]


def gru_result(repeats: int, quick: bool, peers: bool, tf_python: str | None,
               threads: int) -> Result:
    """The GRU step: gradtape's here, TF's in this process or from ``tf_python``."""
    import _gru

    import gradtape as gt

    result = Result(f"a GRU({_gru.UNITS}) training step over {_gru.STEPS} steps, batch "
                    f"{_gru.BATCH}, {_gru.FEATURES} features (milliseconds)")
    for name, seconds in _gru.time_steps(gt, 5 * repeats, quick).items():
        result.times[f"gradtape {name}"] = seconds
    if not peers:
        result.skipped[TF] = "--no-peers"
        return result
    tf = _tensorflow()
    if tf is not None:
        found = _gru.time_steps(tf, 5 * repeats, quick)
    elif tf_python:
        found = _gru_in(tf_python, 5 * repeats, quick, threads)
    else:
        result.skipped[TF] = "not installed (pass --tf-python)"
        return result
    for name, seconds in found.items():
        result.times[f"TF {name}"] = seconds
    return result


def _gru_in(python: str, repeats: int, quick: bool, threads: int) -> dict[str, float]:
    import json
    import subprocess

    threads_env = {k: str(max(threads, 1)) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                     "MKL_NUM_THREADS")}
    command = [python, str(Path(__file__).resolve().parent / "_gru.py"), "--worker",
               "--repeats", str(repeats)] + (["--quick"] if quick else [])
    out = subprocess.run(command, capture_output=True, text=True, check=True,
                         env={**os.environ, **threads_env}).stdout
    return json.loads(out.strip().splitlines()[-1])


def report_gru(result: Result) -> str:
    lines = [f"### {result.title}", "", "| implementation | ms | × TF eager | × tf.function |",
             "|---|---|---|---|"]
    eager, compiled = result.times.get("TF eager"), result.times.get("TF compiled")
    for name, seconds in result.times.items():
        ratios = [f"{seconds / t:.2f}" if t else "—" for t in (eager, compiled)]
        lines.append(f"| {name} | {seconds * 1e3:.2f} | {ratios[0]} | {ratios[1]} |")
    lines += [f"| {name} | skipped: {why} | | |" for name, why in result.skipped.items()]
    return "\n".join(lines + [""])


def compare_threads(argv: list[str], processes: int) -> list[tuple[str, list[Result]]]:
    """This script at ``--threads 1`` and ``--threads 0`` (the libraries' defaults), each
    in ``processes`` fresh processes taking turns; the epochs of all of them."""
    settings = {"1 thread": "1", "default threads": "0"}
    best: dict[str, list[Result]] = {}
    for _ in range(processes):
        for label, threads in settings.items():
            out = subprocess.run([sys.executable, __file__, *argv, "--threads", threads,
                                  "--json"], check=True, capture_output=True, text=True)
            results = [Result(**r) for r in json.loads(out.stdout.splitlines()[-1])]
            if label not in best:
                best[label] = results
                continue
            for kept, new in zip(best[label], results, strict=True):
                kept.add(new.samples, new.cpu)
    return list(best.items())


def report(results: list[Result]) -> str:
    lines = []
    for result in results:
        floor = result.times.get(NUMPY)
        lines += [f"### {result.title}", "", "| implementation | seconds | × NumPy floor "
                  "| × TensorFlow |", "|---|---|---|---|"]
        tf_time = result.times.get(TF) or result.times.get(TF_EAGER)
        for name, seconds in result.times.items():
            versus_tf = f"{seconds / tf_time:.2f}" if tf_time else "—"
            versus_floor = f"{seconds / floor:.2f}" if floor else "—"
            lines.append(f"| {name} | {seconds:.4f} | {versus_floor} | {versus_tf} |")
        lines += [f"| {name} | skipped: {why} | | |" for name, why in result.skipped.items()]
        lines.append("")
    return "\n".join(lines)


def report_settings(settings: list[tuple[str, list[Result]]]) -> str:
    """Both thread settings side by side per implementation: the best and the median
    epoch, the best's ratio to TF's best (— without TF), and the median CPU seconds."""
    labels = [label for label, _ in settings]
    lines = []
    for i, result in enumerate(settings[0][1]):
        counts = ", ".join(f"{label}: {len(results[i].samples[NUMPY])}"
                           for label, results in settings)
        lines += [f"### {result.title}", "", f"Epochs timed per implementation: {counts}.",
                  "", "| implementation | " + " | ".join(
                      f"{label}: best s | median s | best × TF | median CPU s"
                      for label in labels) + " |",
                  "|---|" + "---|---|---|---|" * len(labels)]
        for name in result.times:
            cells = []
            for _, results in settings:
                times = results[i].times
                versus = f"{times[name] / times[TF]:.2f}" if TF in times else "—"
                cells += [f"{times[name]:.3f}", f"{results[i].median(name):.3f}", versus,
                          f"{results[i].median(name, 'cpu'):.3f}"]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[Result]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny size (smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="skip TensorFlow")
    parser.add_argument("--repeats", type=int, default=None, help="rounds in a process")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per library (default 1; 0: library defaults)")
    parser.add_argument("--torch-python", default=None,
                        help="a Python with PyTorch, for its CNN step (when this one has none)")
    parser.add_argument("--torch-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--tf-python", default=os.environ.get("TF_PYTHON"),
                        help="a Python with TensorFlow, for the GRU step (or $TF_PYTHON)")
    parser.add_argument("--compare-threads", action="store_true",
                        help="run at 1 thread and at the defaults, processes taking turns")
    parser.add_argument("--processes", type=int, default=3,
                        help="processes of each setting for --compare-threads")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.torch_child:  # the child --torch-python runs: PyTorch's best step, printed
        size, repeats = json.loads(args.torch_child)
        print(best_of(torch_cnn_step(tuple(size)), repeats))
        return []
    repeats = args.repeats or (1 if args.quick else 3)
    if args.compare_threads:
        passed = [*(["--quick"] if args.quick else []),
                  *(["--no-peers"] if args.no_peers else []), "--repeats", str(repeats)]
        settings = compare_threads(passed, args.processes)
        print(report_settings(settings))
        return [result for _, results in settings for result in results]
    results = run(QUICK if args.quick else FULL, repeats, not args.no_peers)
    if args.json:
        print(json.dumps([vars(r) for r in results]))
        return results
    peers = not args.no_peers
    tf = _tensorflow() if peers else None
    why = "not installed" if peers else "--no-peers"
    cnn_size = CNN_QUICK if args.quick else CNN_FULL
    results.append(cnn(cnn_size, max(repeats, 1 if args.quick else 20), tf, why,
                       args.torch_python, peers))
    print(report(results))
    gru = gru_result(repeats, args.quick, peers, args.tf_python, args.threads)
    print(report_gru(gru))
    return results + [gru]


if __name__ == "__main__":
    main()
