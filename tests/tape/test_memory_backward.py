"""A residual dies at its last use in the backward, not when ``gradient`` returns.

A used-up (non-persistent) tape empties its records once the backward has read its
arguments, and the generated backward takes them in one list it empties, deleting each
name after its last use (``codegen/liveness.py``). A probe primitive, identity forward
and backward, looks at a ``weakref`` to a residual when the backward reaches it: the
residual (a tanh output, read only by tanh's rule, earlier in the backward) must be
gone by then. Persistent, nested and jacobian gradients keep what later calls read,
and stay right (finite differences in float64).
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradtape as gt
from gradtape.ir.primitive import Primitive
from gradtape.ops.registry import bind

RNG = np.random.default_rng(11)
X = RNG.standard_normal((96, 64))  # above the tape's release size (4,096 elements)
W = RNG.standard_normal((64, 64)) / 8

_watched: list[weakref.ref] = []
_seen: list[bool] = []  # per backward probe: was the watched residual freed by then?


def _probe(x):
    if _watched:
        gc.collect()
        _seen.append(_watched[0]() is None)
    return x


probe_p = Primitive("probe_residual", _probe, vjp=lambda g, y, x: (bind(probe_p, g),),
                    shape_rule=lambda x: x, residuals=())


def _loss(x, w):
    """``sum(tanh(probe(x) @ w))``, and a weakref to the tanh output (a residual)."""
    t = gt.tanh(gt.matmul(bind(probe_p, x), w))
    alive = weakref.ref(t._value)
    return gt.reduce_sum(t), alive


def _expected_gradient(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (1.0 - np.tanh(x @ w) ** 2) @ w.T


def _finite_difference_check(gradient: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    direction = np.random.default_rng(3).standard_normal(x.shape)
    eps = 1e-6
    value = lambda v: np.tanh(v @ w).sum()  # noqa: E731
    numeric = (value(x + eps * direction) - value(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.sum(gradient * direction), numeric, rtol=1e-6)


def _step(x, w, persistent=False):
    with gt.GradientTape(persistent=persistent) as tape:
        tape.watch([x, w])
        loss, alive = _loss(x, w)
    _watched[:] = [alive]
    _seen.clear()
    try:
        gradient = tape.gradient(loss, x)
    finally:
        _watched.clear()
    return (tape, loss), gradient.numpy(), list(_seen)


@pytest.mark.parametrize("compile_after", [1, 2])
def test_a_residual_dies_in_the_backward_before_gradient_returns(compile_after):
    gt.clear_cache()
    x, w = gt.constant(X), gt.constant(W)
    with gt.config(compile_after=compile_after):
        # Compiled from the first or second call; later calls take the whole-tape rung.
        for call in range(4):
            _, gradient, seen = _step(x, w)
            np.testing.assert_allclose(gradient, _expected_gradient(X, W), rtol=1e-12)
            if call + 1 >= compile_after:  # the generated backward ran
                assert seen == [True], f"call {call}: the tanh output outlived its last use"
    assert gt.cache_info().compiled >= 1
    _finite_difference_check(gradient, X, W)


def test_a_persistent_tape_keeps_its_residuals_for_the_next_call():
    gt.clear_cache()
    x, w = gt.constant(X), gt.constant(W)
    with gt.config(compile_after=1):
        for _ in range(2):
            (tape, loss), first, seen = _step(x, w, persistent=True)
            assert seen == [False]  # the tape holds it for later calls
            again = tape.gradient(loss, x).numpy()  # the repeat rung: the same arguments
            other = tape.gradient(loss, w).numpy()
    np.testing.assert_allclose(first, _expected_gradient(X, W), rtol=1e-12)
    np.testing.assert_array_equal(again, first)
    np.testing.assert_allclose(other, X.T @ (1.0 - np.tanh(X @ W) ** 2), rtol=1e-12)


def test_nested_tapes_give_the_second_derivative():
    gt.clear_cache()
    x0 = RNG.standard_normal((64, 64)) * 0.3
    x = gt.constant(x0)
    with gt.config(compile_after=1):
        for _ in range(3):
            with gt.GradientTape() as outer:
                outer.watch(x)
                with gt.GradientTape() as inner:
                    inner.watch(x)
                    y = gt.reduce_sum(gt.tanh(x) * x)
                g = inner.gradient(y, x)  # (1 - tanh^2) x + tanh
                z = gt.reduce_sum(g * g)
            hess = outer.gradient(z, x).numpy()
    t = np.tanh(x0)
    first = (1 - t ** 2) * x0 + t
    second = -2 * t * (1 - t ** 2) * x0 + 2 * (1 - t ** 2)
    np.testing.assert_allclose(hess, 2 * first * second, rtol=1e-10)


def test_a_non_persistent_jacobian_is_unchanged():
    gt.clear_cache()
    x0 = RNG.standard_normal(80)
    a = RNG.standard_normal((80, 80)) / 9
    x = gt.constant(x0)
    with gt.config(compile_after=1):
        for _ in range(3):
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = gt.tanh(gt.matmul(gt.constant(a), gt.reshape(x, (80, 1))))[:, 0]
            jac = tape.jacobian(y, x).numpy()
    want = (1 - np.tanh(a @ x0) ** 2)[:, None] * a
    np.testing.assert_allclose(jac, want, rtol=1e-12)


def _stack_step(h0, ws):
    """A 4-layer tanh stack's gradient: the bytes it allocated at its peak above what
    was allocated when it started (tracemalloc from before the forward)."""
    tracemalloc.start()
    try:
        with gt.GradientTape() as tape:
            h = h0
            for w in ws:
                h = gt.tanh(gt.matmul(h, w))
            loss = gt.reduce_mean(h)
            del h
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        grads = tape.gradient(loss, ws)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return grads, peak


def test_the_backward_frees_the_residuals_as_it_goes():
    """tracemalloc: the gradient of a 4-layer tanh stack frees each layer's output
    once its rule has read it, two layers less at the peak than holding them all."""
    gt.clear_cache()
    rng = np.random.default_rng(5)
    h0 = gt.constant(rng.standard_normal((512, 256)))
    ws = [gt.Variable(rng.standard_normal((256, 256)) / 16) for _ in range(4)]
    layer = 512 * 256 * 8  # one layer's output, float64
    with gt.config(compile_after=1):
        for _ in range(3):
            grads, peak = _stack_step(h0, ws)
    # Each residual held to the end, it peaked 5.5 layers above; freed at its last use,
    # 3.5 (the rest is the cotangents and the fused expressions' temporaries).
    assert peak < 4.5 * layer, f"the backward peaked {peak / layer:.2f} layers above"
    outs = [h0.numpy()]
    for w in ws:
        outs.append(np.tanh(outs[-1] @ w.numpy()))
    g = np.full(outs[-1].shape, 1 / outs[-1].size)
    for k in reversed(range(4)):
        g = g * (1 - outs[k + 1] ** 2)
        np.testing.assert_allclose(grads[k].numpy(), outs[k].T @ g, rtol=1e-10)
        g = g @ ws[k].numpy().T


def test_a_float32_backward_computes_in_its_temporaries():
    """tracemalloc: in float32 (Python floats are float64 to NumPy 2, so ``1.0 - t``
    cannot be computed in ``t``) the tanh rule is written ``-square(y) + float32(1.0)``
    and no dead cotangent is held for a later ``out=``: the backward peaks about one
    layer above the residuals (three before), as PyTorch's does."""
    gt.clear_cache()
    rng = np.random.default_rng(5)
    h0 = gt.constant(rng.standard_normal((2048, 256)).astype(np.float32))
    ws = [gt.Variable((rng.standard_normal((256, 256)) / 16).astype(np.float32))
          for _ in range(4)]
    layer = 2048 * 256 * 4  # 2 MiB: above NumPy's 256 KiB for computing in temporaries
    with gt.config(compile_after=1):
        for _ in range(3):
            grads, peak = _stack_step(h0, ws)
    assert peak < 1.5 * layer, f"the backward peaked {peak / layer:.2f} layers above"
    outs = [h0.numpy().astype(np.float64)]
    for w in ws:
        outs.append(np.tanh(outs[-1] @ w.numpy()))
    g = np.full(outs[-1].shape, 1 / outs[-1].size)
    for k in reversed(range(4)):
        g = g * (1 - outs[k + 1] ** 2)
        np.testing.assert_allclose(grads[k].numpy(), outs[k].T @ g, rtol=2e-4, atol=1e-9)
        g = g @ ws[k].numpy().T.astype(np.float64)


@pytest.mark.parametrize("compile_on", [False, True])
def test_an_interpreted_backward_frees_its_values_as_it_goes(compile_on):
    """A structure's first calls, and every call with compilation off, run in the
    interpreter: it lets each value go after its last use too (``ir/walk.py``'s
    ``dead_after``), so the first step of a training loop does not peak far above the
    others (it peaked 15.5 layers above, against 3.4 now and 1.1 compiled)."""
    gt.clear_cache()
    rng = np.random.default_rng(5)
    h0 = gt.constant(rng.standard_normal((2048, 256)).astype(np.float32))
    ws = [gt.Variable((rng.standard_normal((256, 256)) / 16).astype(np.float32))
          for _ in range(4)]
    layer = 2048 * 256 * 4
    options = {"compile_after": 3} if compile_on else {"compile": False}
    with gt.config(**options):
        for _ in range(2):  # interpreted both times
            grads, peak = _stack_step(h0, ws)
    assert peak < 4 * layer, f"the interpreted backward peaked {peak / layer:.2f} layers above"
    with gt.config(compile_after=1):
        compiled, _ = _stack_step(h0, ws)
    for g, c in zip(grads, compiled):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-5, atol=1e-9)


def test_generated_code_that_raises_after_taking_its_inputs_raises_then_falls_back():
    """A used-up tape's backward empties its argument list: if it then raises, this
    call cannot be checked in the interpreter, so the error is raised as it is; the
    next call keeps its arguments, and the fallback of docs/compiler.md applies."""
    import warnings

    from gradtape.compiler.cache import backward_cache

    gt.clear_cache()
    x = gt.Variable(np.array([0.5, 1.5]))

    def gradient():
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(gt.sin(x) * x)
        return tape.gradient(y, x).numpy()

    with gt.config(compile_after=1):
        gradient()  # compiles
        (entry,) = backward_cache.entries()

        def bad(feeds):
            feeds.clear()
            raise RuntimeError("a codegen bug")

        entry.compiled = entry.compiled._replace(function=bad)
        with pytest.raises(RuntimeError, match="a codegen bug"):
            gradient()
        assert not entry.consumes
        with pytest.warns(RuntimeWarning, match="raised where the interpreter does not"):
            g = gradient()
        assert entry.compiled is None and entry.failed
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(gradient(), g)  # interpreted, no new warning
    v = x.numpy()
    np.testing.assert_allclose(g, np.cos(v) * v + np.sin(v))


def test_a_backward_that_raises_after_taking_the_records_uses_the_tape_up():
    """The records are gone once the backward runs: a second ``gradient`` on the tape
    raises TF's used-up error instead of differentiating an empty tape (``None``)."""
    x = gt.Variable(np.array([1.0, 2.0]))

    @gt.custom_gradient
    def fragile(v):
        def grad(dy):
            raise ValueError("grad_fn failed")
        return gt.identity(v), grad

    for compile_after in (1, 2):
        with gt.config(compile_after=compile_after):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(fragile(x * 2.0))
            with pytest.raises(ValueError, match="grad_fn failed"):
                tape.gradient(y, x)
            with pytest.raises(RuntimeError, match="only be used to compute one set"):
                tape.gradient(y, x)
