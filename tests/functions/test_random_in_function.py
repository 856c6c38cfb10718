"""gt.random and nn.dropout inside @gt.function: fresh values on every call (TF's stateful
random ops), in the order eager calls draw them; gradients use the call's own values.
Every test runs compiled and interpreted (``compile_mode``)."""

import numpy as np
import pytest

import gradtape as gt

R = gt.random


@pytest.fixture(autouse=True)
def _unseed():
    yield
    R.set_seed(None)


def _calls(fn, count, *args):
    """The results of ``count`` calls, each as a list of arrays."""
    results = []
    for _ in range(count):
        out = fn(*args)
        results.append([t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])])
    return results


def _assert_same_sequence(got, expected):
    assert len(got) == len(expected)
    for got_call, expected_call in zip(got, expected):
        for g, e in zip(got_call, expected_call):
            np.testing.assert_array_equal(g, e)


def _eager_and_traced(body, count, *args, seed=0):
    """``count`` calls of ``body`` run eagerly, then as a @gt.function, after the same
    ``set_seed``."""
    R.set_seed(seed)
    eager = _calls(body, count, *args)
    R.set_seed(seed)
    traced = _calls(gt.function(body), count, *args)
    return eager, traced


def test_dropout_draws_a_new_mask_on_every_call_as_eager_calls_do(compile_mode):
    x = gt.constant(np.arange(1.0, 41.0, dtype=np.float32).reshape(5, 8))

    def step(x):
        return gt.nn.dropout(x, rate=0.5)

    eager, traced = _eager_and_traced(step, 4, x)
    _assert_same_sequence(traced, eager)
    masks = [call[0] != 0 for call in traced]
    assert not any(np.array_equal(masks[0], m) for m in masks[1:])
    np.testing.assert_array_equal(traced[0][0][masks[0]], 2 * x.numpy()[masks[0]])


def test_the_generated_code_draws_when_it_runs(compile_mode):
    step = gt.function(lambda x: gt.nn.dropout(x, 0.5, seed=3))
    x = gt.ones([6, 6])
    source = step.get_source(x)
    assert "random_draw_impl(stream=3, distribution='uniform', shape=(6, 6)" in source
    R.set_seed(1)
    first = step(x).numpy()
    assert not np.array_equal(step(x).numpy(), first)


def _dropout_step(x, w):
    """A training step's core: the loss of a dropped-out layer and its gradient, taken
    inside the function."""
    with gt.GradientTape() as tape:
        dropped = gt.nn.dropout(x * w, rate=0.4)
        loss = gt.reduce_sum(gt.sin(dropped))
    return dropped, loss, tape.gradient(loss, w)


def _loss_with_mask(x, w, kept):
    return np.sum(np.sin(np.where(kept, x * w / 0.6, 0.0)))


def _finite_differences(f, w, eps=1e-6):
    grad = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        grad[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return grad


def test_the_gradient_inside_a_function_uses_that_calls_mask(compile_mode):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (4, 3))
    w = gt.Variable(rng.uniform(0.5, 1.5, (4, 3)))
    step = gt.function(_dropout_step)
    R.set_seed(2)
    masks = []
    for _ in range(3):
        dropped, loss, grad = step(gt.constant(x), w)
        kept = dropped.numpy() != 0
        masks.append(kept)
        w0 = w.numpy()
        np.testing.assert_allclose(float(loss), _loss_with_mask(x, w0, kept), rtol=1e-12)
        expected = _finite_differences(lambda v: _loss_with_mask(x, v, kept), w0)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6, atol=1e-9)
    assert not np.array_equal(masks[0], masks[1]) or not np.array_equal(masks[1], masks[2])
    R.set_seed(2)
    eager = [(_dropout_step(gt.constant(x), w)[0].numpy() != 0) for _ in range(3)]
    _assert_same_sequence([[m] for m in masks], [[m] for m in eager])


def test_a_tape_outside_the_call_differentiates_with_that_calls_mask(compile_mode):
    x = gt.constant(np.linspace(0.5, 2.0, 12).reshape(3, 4))

    @gt.function
    def noisy(x):
        return gt.nn.dropout(x * x, rate=0.5), gt.random.normal([3, 4], dtype=gt.float64)

    R.set_seed(4)
    for _ in range(3):
        with gt.GradientTape() as tape:
            tape.watch(x)
            dropped, noise = noisy(x)
            loss = gt.reduce_sum(dropped * noise)
        kept = dropped.numpy() != 0
        xs, n = x.numpy(), noise.numpy()

        def f(v, kept=kept, n=n):
            return np.sum(np.where(kept, v * v * 2.0, 0.0) * n)

        np.testing.assert_allclose(tape.gradient(loss, x).numpy(),
                                   _finite_differences(f, xs), rtol=1e-6, atol=1e-9)


def test_forward_mode_through_a_call_uses_that_calls_mask(compile_mode):
    """The JVP of a call reruns its program: on the values that call drew, not new ones."""
    x = gt.constant(np.linspace(0.5, 2.0, 12))
    direction = np.linspace(-1.0, 1.0, 12)

    @gt.function
    def f(x):
        dropped = gt.nn.dropout(x, rate=0.5)
        return gt.reduce_sum(gt.square(dropped)), dropped

    R.set_seed(6)
    for _ in range(3):
        with gt.autodiff.ForwardAccumulator(x, gt.constant(direction)) as acc:
            y, dropped = f(x)
        kept = dropped.numpy() != 0
        expected = np.sum(np.where(kept, 8 * x.numpy() * direction, 0.0))
        np.testing.assert_allclose(float(acc.jvp(y)), expected, rtol=1e-12)
