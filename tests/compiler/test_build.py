"""compiler/build.py is the one recipe: what ``tape.inspect`` shows is what ``gradient``
compiles and runs (issue 20, item 2)."""

import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.passes import pipeline


@pytest.fixture(autouse=True)
def _fresh_cache():
    gt.clear_cache()
    yield
    gt.clear_cache()


def _dropped_input(a, b):
    # sin(a) * 0 folds away: after the passes the backward no longer reads a.
    return gt.reduce_sum(gt.sin(a) * 0.0 + a + b * b)


def _mlp(w, b):
    x = gt.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    hidden = gt.nn.relu(x @ w + b)
    return gt.reduce_mean(hidden * hidden)


def _large(a, b):
    # From 2**16 elements the passes (and residual selection) run when the entry is built.
    return gt.reduce_sum(gt.tanh(a) * b + gt.exp(a) * 0.0)


PROGRAMS = [
    ("dropped input", _dropped_input, [np.arange(3.0), np.arange(3.0) + 1.0]),
    ("mlp", _mlp, [np.full((3, 2), 0.3), np.array([0.1, -0.2])]),
    ("large", _large, [np.linspace(-1, 1, 1 << 16), np.linspace(0, 2, 1 << 16)]),
]


def _compiled_sources(fn, values, calls=3, output_gradients=None):
    """``(inspected source, source of each backward gradient compiled, gradients)``: what
    ran is read from the compile cache's entries."""
    for _ in range(calls):
        sources = [gt.Variable(v) for v in values]
        with gt.GradientTape(persistent=True) as tape:
            y = fn(*sources)
        inspected = tape.inspect(y, sources, output_gradients=output_gradients)
        grads = tape.gradient(y, sources, output_gradients=output_gradients)
    compiled = [e.compiled.source for e in backward_cache.entries() if e.compiled is not None]
    return inspected.source, compiled, grads


def _def_line(source):
    return next(line for line in source.splitlines() if line.startswith("def "))


def _finite_difference(fn, values, k, eps=1e-6):
    """d sum(fn) / d values[k] by central differences in float64."""
    base = [np.array(v, dtype=np.float64) for v in values]
    grad = np.zeros_like(base[k])
    for i in range(base[k].size):
        up = [v.copy() for v in base]
        down = [v.copy() for v in base]
        up[k].flat[i] += eps
        down[k].flat[i] -= eps
        f_up = fn(*[gt.constant(v) for v in up]).numpy()
        f_down = fn(*[gt.constant(v) for v in down]).numpy()
        grad.flat[i] = (f_up - f_down) / (2 * eps)
    return grad


@pytest.mark.parametrize("name, fn, values", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_inspect_shows_the_source_gradient_compiles(name, fn, values):
    inspected, compiled, _ = _compiled_sources(fn, values)
    assert len(compiled) == 1, compiled
    assert inspected == compiled[0]


def test_inspect_shows_the_parameters_the_backward_reads():
    # sum(sin(a) * 0 + a + b * b): d/da is ones, d/db is 2b; the backward reads b only.
    inspected, compiled, grads = _compiled_sources(_dropped_input, PROGRAMS[0][2])
    _, b = PROGRAMS[0][2]
    np.testing.assert_allclose(grads[0].numpy(), np.ones(3))
    np.testing.assert_allclose(grads[1].numpy(), 2 * b)
    assert _def_line(inspected) == _def_line(compiled[0])
    assert inspected == compiled[0]


def test_inspect_with_output_gradients_shows_what_runs():
    seed = np.array([1.0, -2.0, 0.5])

    def fn(a, b):
        return gt.sin(a) * b + gt.cos(a) * 0.0

    values = [np.arange(3.0), np.arange(3.0) + 1.0]
    inspected, compiled, grads = _compiled_sources(fn, values, output_gradients=seed)
    assert inspected == compiled[0]
    np.testing.assert_allclose(grads[0].numpy(), seed * np.cos(values[0]) * values[1])
    np.testing.assert_allclose(grads[1].numpy(), seed * np.sin(values[0]))


@pytest.mark.parametrize("name, fn, values", PROGRAMS[:2], ids=[p[0] for p in PROGRAMS[:2]])
def test_what_runs_is_the_gradient(name, fn, values):
    _, _, grads = _compiled_sources(fn, values)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), _finite_difference(fn, values, k),
                                   rtol=1e-6, atol=1e-8)


def test_a_failing_pass_warns_and_inspect_still_shows_what_runs(monkeypatch):
    def broken(program, verify=False):
        raise RuntimeError("a broken pass")

    monkeypatch.setattr(pipeline, "optimize", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inspected, compiled, grads = _compiled_sources(_mlp, PROGRAMS[1][2])
    assert any("optimizer failed on a backward program" in str(w.message) for w in caught)
    assert inspected == compiled[0]
    np.testing.assert_allclose(grads[0].numpy(), _finite_difference(_mlp, PROGRAMS[1][2], 0),
                               rtol=1e-6, atol=1e-8)
