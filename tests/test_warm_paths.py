"""The warm paths follow the layers (issue [2/6]): how many of gradtape's Python
functions a warm call runs, and in how many files. Calls are counted, not timed, so
the pins are exact: a refactor that threads the warm path through one more module or
helper fails here, and the numbers move down only on purpose.

The ceilings the issue set are 24 calls in 9 files for a warm ``tape.gradient`` and 18
calls in 6 files for a warm ``@gt.function`` step; the pins below are today's counts,
under them.
"""

from __future__ import annotations

import gc
import os
import sys
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

import gradtape as gt

ROOT = os.path.dirname(os.path.abspath(gt.__file__)) + os.sep

# (calls, files) per path, measured on this workload: see the module docstring.
FRESH_TAPE = (18, 8)
PERSISTENT_TAPE = (9, 4)
FUNCTION_STEP = (9, 5)  # the call key's capture probe is its own module (functions/call_key.py)


def gradtape_calls(fn: Callable[[], object]) -> Counter:
    """``(file, function) -> calls`` of gradtape's Python code while ``fn()`` runs."""
    calls: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(ROOT):
            code = frame.f_code
            calls[(os.path.relpath(code.co_filename, ROOT), code.co_name)] += 1

    gc.disable()  # a collection inside the window could run a finalizer of ours
    try:
        sys.setprofile(profile)
        try:
            fn()
        finally:
            sys.setprofile(None)
    finally:
        gc.enable()
    return calls


def check_within(calls: Counter, pinned: tuple[int, int], path: str) -> None:
    n_calls, n_files = sum(calls.values()), len({f for f, _ in calls})
    detail = ", ".join(f"{f}:{name} x{n}" for (f, name), n in sorted(calls.items()))
    assert n_calls <= pinned[0] and n_files <= pinned[1], (
        f"a warm {path} now runs {n_calls} gradtape calls in {n_files} files (pinned: "
        f"{pinned[0]} in {pinned[1]}): {detail}. Keep the warm path in its layers, or "
        "lower the pin in tests/test_warm_paths.py if it got shorter.")


@pytest.fixture
def mlp():
    rng = np.random.default_rng(0)
    w = gt.Variable(rng.standard_normal((64, 64)) * 0.1, name="w")
    b = gt.Variable(np.zeros(64), name="b")
    data = rng.standard_normal((32, 64))
    return w, b, data


def test_fresh_tape_per_step(mlp):
    w, b, data = mlp

    def record():
        with gt.GradientTape() as tape:
            h = gt.tanh(data @ w + b)
            loss = gt.reduce_mean(gt.square(h @ w))
        return tape, loss

    for _ in range(4):  # build, prepare, compile, warm
        tape, loss = record()
        tape.gradient(loss, [w, b])
    tape, loss = record()
    out = []
    calls = gradtape_calls(lambda: out.append(tape.gradient(loss, [w, b])))
    assert [g.shape for g in out[0]] == [(64, 64), (64,)]
    assert ("tape/gradient_tape.py", "_known_gradient") in calls  # the whole-tape rung
    check_within(calls, FRESH_TAPE, "tape.gradient on a fresh tape")


def test_persistent_tape_repeat(mlp):
    w, b, data = mlp
    with gt.GradientTape(persistent=True) as tape:
        h = gt.tanh(data @ w + b)
        loss = gt.reduce_mean(gt.square(h @ w))
    for _ in range(4):
        expected = tape.gradient(loss, [w, b])
    out = []
    calls = gradtape_calls(lambda: out.append(tape.gradient(loss, [w, b])))
    np.testing.assert_array_equal(out[0][0].numpy(), expected[0].numpy())
    assert ("tape/gradient_tape.py", "_repeat") in calls
    check_within(calls, PERSISTENT_TAPE, "tape.gradient repeated on a persistent tape")


def test_function_train_step(mlp):
    w, b, data = mlp

    @gt.function
    def step():
        with gt.GradientTape() as tape:
            h = gt.tanh(data @ w + b)
            loss = gt.reduce_mean(gt.square(h @ w))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.01 * gw)
        return loss

    for _ in range(4):
        step()
    before = w.numpy().copy()
    calls = gradtape_calls(step)
    assert not np.array_equal(w.numpy(), before)  # the step ran and updated w
    check_within(calls, FUNCTION_STEP, "@gt.function step")
