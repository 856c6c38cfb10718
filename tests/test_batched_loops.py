"""The batching rule of ``loop`` (jacobian rows, batched programs): one loop over
batched carries when the trip count does not depend on the batched values (it ran one
loop per batch element), and "run until every element is done, keep each element's
carry where it stopped" when the condition reads a batched value. Values against eager
Python control flow, per-element runs and finite differences in float64."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ad import batching, control_flow_batching
from gradtape.codegen import compile_program
from gradtape.ir import interpreter
from gradtape.ir.nodes import Eqn, Program
from gradtape.ops import control_flow


@pytest.fixture
def per_element_loops(monkeypatch):
    """How many times the rule fell back to one loop per element."""
    count = []
    fallback = control_flow_batching.batch_by_loop

    def counting(prim, *args, **params):
        count.append(prim.name)
        return fallback(prim, *args, **params)

    monkeypatch.setattr(control_flow_batching, "batch_by_loop", counting)
    return count


def _fd_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        cols.append(((f(x + d) - f(x - d)) / (2 * eps)).ravel())
    return np.stack(cols, axis=-1)


def rnn(x, w, h0):
    def body(t, h):
        return t + 1, gt.tanh(x[t] * w + h * w[::-1])
    return gt.while_loop(lambda t, h: t < x.shape[0], body, (gt.constant(0), h0))[1]


def newton(x, a):
    return gt.while_loop(lambda x: gt.reduce_max(gt.abs(x * x - a) - 1e-12 * a) > 0,
                         lambda x: (x + a / x) / 2, [x])[0]


def cumulative(elems, w):
    return gt.scan(lambda acc, e: gt.sin(acc * w) + e, elems, initializer=gt.zeros_like(w))


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(6, 3)), rng.normal(size=3) * 0.7, rng.normal(size=3) * 0.3)


@pytest.mark.parametrize("pfor", [True, False])
def test_jacobian_of_a_compiled_rnn_is_one_batched_loop(pfor, per_element_loops):
    xv, wv, hv = _data()
    x, h0 = gt.constant(xv), gt.constant(hv)
    f = gt.function(rnn)
    for _ in range(2):  # the traced call, then the compiled one
        w = gt.constant(wv)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(w)
            y = f(x, w, h0)
        got = tape.jacobian(y, w, experimental_use_pfor=pfor).numpy()
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(w)
        eager = rnn(x, w, h0)
    np.testing.assert_allclose(got, tape.jacobian(eager, w).numpy(), rtol=1e-10, atol=1e-12)
    want = _fd_jacobian(lambda v: rnn(x, gt.constant(v), h0).numpy(), wv)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert per_element_loops == []


def test_jacobian_of_a_scan_stacks_rows_of_batched_cotangents(per_element_loops):
    xv, wv, _ = _data(1)
    w = gt.constant(wv)
    f = gt.function(cumulative)
    for _ in range(2):
        elems = gt.constant(xv)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([elems, w])
            y = f(elems, w)
        j_elems, j_w = tape.jacobian(y, [elems, w])
    want = _fd_jacobian(lambda v: cumulative(gt.constant(v), w).numpy(), xv)
    np.testing.assert_allclose(j_elems.numpy().reshape(18, 18), want, rtol=1e-6, atol=1e-9)
    want_w = _fd_jacobian(lambda v: cumulative(elems, gt.constant(v)).numpy(), wv)
    np.testing.assert_allclose(j_w.numpy().reshape(18, 3), want_w, rtol=1e-6, atol=1e-9)
    assert per_element_loops == []


def _program(fn, *args):
    return gt.function(fn).get_concrete_function(*args).program


def _run_both(program, args):
    """The batched program interpreted and as generated code; both must agree."""
    interpreted = interpreter.run(program, args)
    unlocated = Program(program.inputs, [Eqn(e.prim, e.inputs, e.outs, e.params, None)
                                         for e in program.eqns], program.outputs)
    compiled = compile_program(unlocated, kind="forward").function(*args)
    for a, b in zip(interpreted, compiled):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return interpreted


def _loops(program):
    return sum(1 for e in program.eqns if e.prim is control_flow.loop_p)


def test_a_batched_counted_loop_over_batched_rows_and_invariants(per_element_loops):
    xv, wv, hv = _data(2)
    program = _program(rnn, gt.constant(xv), gt.constant(wv), gt.constant(hv))
    size = 4
    rng = np.random.default_rng(3)
    xs, ws = rng.normal(size=(size, 6, 3)), rng.normal(size=(size, 3))
    batched = batching.batch_program(program, [True, True, False], size)
    assert _loops(batched) == 1 and per_element_loops == []
    got = _run_both(batched, [xs, ws, hv])[0]
    want = np.stack([rnn(gt.constant(xs[k]), gt.constant(ws[k]), gt.constant(hv)).numpy()
                     for k in range(size)])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_batched_predicate_runs_until_every_element_is_done(per_element_loops):
    a0 = gt.constant(np.array([2.0, 3.0]))
    program = _program(newton, a0, a0)
    targets = np.array([[2.0, 9.0], [100.0, 1e4], [0.25, 7.0]])  # different trip counts
    starts = np.ones_like(targets)
    batched = batching.batch_program(program, [True, True], len(targets))
    assert _loops(batched) == 1 and per_element_loops == []
    got = _run_both(batched, [starts, targets])[0]
    want = np.stack([newton(gt.constant(s), gt.constant(t)).numpy()
                     for s, t in zip(starts, targets)])
    np.testing.assert_array_equal(got, want)  # each element stopped where it stops alone
    np.testing.assert_allclose(got, np.sqrt(targets), rtol=1e-12)


@pytest.mark.parametrize("bound", [None, 4])
def test_a_batched_predicate_counts_each_elements_iterations(bound, per_element_loops):
    def halvings(x):  # how many halvings bring x under 1 (at most ``bound``)
        return gt.while_loop(lambda x, k: x > 1.0, lambda x, k: (x / 2, k + 1),
                             [x, gt.constant(0)], maximum_iterations=bound)

    program = _program(halvings, gt.constant(5.0, gt.float64))
    values = np.array([5.0, 0.5, 1000.0, 2.0])
    batched = batching.batch_program(program, [True], len(values))
    assert per_element_loops == []
    x, k = _run_both(batched, [values])[:2]
    counts = np.minimum([3, 0, 10, 1], 100 if bound is None else bound)
    np.testing.assert_array_equal(k, counts)
    np.testing.assert_allclose(x, values / 2.0 ** counts)


def test_a_batched_predicate_with_stacks_and_the_reversed_loop(per_element_loops):
    # The forward of a gradient stacks rows, as many as each element's own trip count:
    # one batched loop; its reversed loop runs that count per element (a batched bound).
    def residual_forward(x, a):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = newton(x, a)
        return tape.gradient(y, x), y

    a0 = gt.constant(np.array([2.0, 3.0]))
    program = _program(residual_forward, a0 * 0 + 1, a0)
    targets = np.array([[2.0, 9.0], [100.0, 1e4]])
    batched = batching.batch_program(program, [True, True], len(targets))
    got = _run_both(batched, [np.ones_like(targets), targets])
    for k, t in enumerate(targets):
        g, y = residual_forward(gt.constant(np.ones(2)), gt.constant(t))
        np.testing.assert_allclose(got[1][k], y.numpy(), rtol=1e-12)
        np.testing.assert_allclose(got[0][k], g.numpy(), rtol=1e-10, atol=1e-300)
    assert per_element_loops == ["loop"]  # the reversed loop only
    assert _loops(batched) == 1 + len(targets)
