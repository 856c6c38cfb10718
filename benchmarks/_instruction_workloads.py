"""The steps ``instruction_counts.py`` counts, run as a script in a process of their own:

    python _instruction_workloads.py KIND STEPS WINDOWS

After a warm-up, each of WINDOWS windows runs STEPS steps between two calls of
``os.getppid()``, the marker: under ``valgrind --tool=callgrind --dump-before=os_getppid``
each marker writes the counts since the one before, so a window's dump holds its steps
and nothing else (no interpreter start, no import, no warm-up). ``gc.collect()`` runs
outside the windows before each one, so every window starts with the collector's counters
at zero and its collections fall at the same steps in every run of the same code. On
stdout: one line per window with the collections each generation made in it.
"""

from __future__ import annotations

import gc
import os
import sys

import numpy as np

import gradtape as gt

WARM_UP_STEPS = 5

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
def _compiled_scalar_chain(v):
    with gt.GradientTape() as tape:
        tape.watch(v)
        y = v
        for _ in range(20):
            y = gt.sin(y) * y + gt.cos(y) * 0.5
    return tape.gradient(y, v)


_v_tensor, _v_scalar = gt.constant(np.float64(0.5)), np.float64(0.5)


def function_scalar_chain():
    """The scalar chain under @gt.function (its code runs on Python floats)."""
    return _compiled_scalar_chain(_v_tensor)


def hand_scalar_chain():
    """The scalar chain's gradient written with NumPy on float64 scalars (the bench's
    hand-written NumPy), counted beside the compiled one."""
    ys = []
    y = _v_scalar
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


_pinn: list = []


def pinn_step():
    """benchmarks/pinn.py's step under @gt.function (nested tapes, Adam), 2,000 points."""
    if not _pinn:  # built on the first call, in the warm-up
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pinn  # this folder's benchmark

        x_np, t_np = pinn.collocation(2_000)
        step, _ = pinn.make_step(gt)
        _pinn.extend((step, gt.constant(x_np), gt.constant(t_np)))
    step, x_pinn, t_pinn = _pinn
    return step(x_pinn, t_pinn)


WORKLOADS = {f.__name__: f for f in (scalar_chain, mlp_step, sparse_cross_entropy,
                                     function_train_step, hessian, function_scalar_chain,
                                     hand_scalar_chain, pinn_step)}


def _collections() -> list[int]:
    return [generation["collections"] for generation in gc.get_stats()]


def run(kind: str, steps: int, windows: int) -> None:
    step = WORKLOADS[kind]
    for _ in range(WARM_UP_STEPS):
        step()
    for _ in range(windows):
        gc.collect()
        before = _collections()
        os.getppid()  # marker: the window starts
        for _ in range(steps):
            step()
        os.getppid()  # marker: the window ends
        print(" ".join(str(a - b) for a, b in zip(_collections(), before)))


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
