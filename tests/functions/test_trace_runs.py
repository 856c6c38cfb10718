"""The call right after a trace takes the outputs of the loops the trace ran instead of
running them again (functions/trace_runs.py), unless its run could differ from the
trace's: a random draw, a Python call. Its values and gradients are the ones every
later call and eager execution give; guards, draws and Python reads keep their rules."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.functions import call

R = gt.random


@pytest.fixture(autouse=True)
def _unseed():
    yield
    R.set_seed(None)


@pytest.fixture
def runs(monkeypatch):
    """How many times a call ran its whole traced program (``execute``/``try_execute``,
    or ``run_plain``: the warm call's path)."""
    counted = {"n": 0}
    for name in ("execute", "try_execute", "run_plain"):
        original = getattr(call.ConcreteFunction, name)

        def spy(self, *a, _original=original, **k):
            counted["n"] += 1
            return _original(self, *a, **k)

        monkeypatch.setattr(call.ConcreteFunction, name, spy)
    return counted


def _rnn(x, h0, wx, wh):
    def body(t, h):
        return t + 1, gt.tanh(x[t] @ wx + h @ wh)

    _, h = gt.while_loop(lambda t, h: t < gt.shape(x)[0], body, (gt.constant(0), h0))
    return gt.reduce_sum(h * h)


def _problem(T=7, dtype=np.float64):
    rng = np.random.default_rng(0)
    x = gt.constant(rng.normal(size=(T, 1, 3)).astype(dtype))
    h0 = gt.constant(rng.normal(size=(1, 4)).astype(dtype))
    wx = gt.Variable(rng.normal(size=(3, 4)).astype(dtype) * 0.5)
    wh = gt.Variable(rng.normal(size=(4, 4)).astype(dtype) * 0.5)
    return x, h0, wx, wh


def _loss_and_grads(f, x, h0, wx, wh):
    with gt.GradientTape() as tape:
        loss = f(x, h0)
    return float(loss), [g.numpy() for g in tape.gradient(loss, [wx, wh])]


def _finite_difference(x, h0, wx, wh, eps=1e-6):
    grads = []
    for w in (wx, wh):
        base = w.numpy().copy()
        grad = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            for sign in (1, -1):
                moved = base.copy()
                moved[i] += sign * eps
                w.assign(moved)
                grad[i] += sign * float(_rnn(x, h0, wx, wh)) / (2 * eps)
        w.assign(base)
        grads.append(grad)
    return grads


def test_the_first_call_does_not_run_the_loop_again(runs):
    """Before: the trace ran the loop and the first call ran the whole program again."""
    x, h0, wx, wh = _problem()
    f = gt.function(lambda x, h0: _rnn(x, h0, wx, wh))
    _loss_and_grads(f, x, h0, wx, wh)
    assert runs["n"] == 0
    _loss_and_grads(f, x, h0, wx, wh)  # later calls run the program
    assert runs["n"] == 1


def test_first_call_values_and_gradients_are_every_calls(compile_mode):
    x, h0, wx, wh = _problem()
    eager = float(_rnn(x, h0, wx, wh))
    f = gt.function(lambda x, h0: _rnn(x, h0, wx, wh))
    first_loss, first_grads = _loss_and_grads(f, x, h0, wx, wh)
    second_loss, second_grads = _loss_and_grads(f, x, h0, wx, wh)
    assert first_loss == pytest.approx(eager, rel=1e-12)
    assert first_loss == second_loss
    fd = _finite_difference(x, h0, wx, wh)
    for first, second, numeric in zip(first_grads, second_grads, fd):
        np.testing.assert_allclose(first, second, rtol=1e-12)
        np.testing.assert_allclose(first, numeric, rtol=1e-6, atol=1e-8)


def test_first_call_without_a_tape_returns_the_loops_result():
    x, h0, wx, wh = _problem()
    f = gt.function(lambda x, h0: _rnn(x, h0, wx, wh))
    assert float(f(x, h0)) == pytest.approx(float(_rnn(x, h0, wx, wh)), rel=1e-12)


def test_a_draw_in_the_body_is_drawn_by_the_call_not_reused(runs):
    """Each iteration draws, on the call, as eagerly: the trace's draws are given back and
    drawn again by the first call, so the second call draws the next ones."""
    def noisy(x):
        return gt.while_loop(lambda t, s: t < 4,
                             lambda t, s: (t + 1, s + x * R.uniform([])),
                             (gt.constant(0), gt.constant(0.0)))[1]

    x = gt.constant(1.0)
    R.set_seed(5)
    eager = [float(noisy(x)) for _ in range(3)]
    R.set_seed(5)
    f = gt.function(noisy)
    traced = [float(f(x)) for _ in range(3)]
    assert traced == eager
    assert len(set(traced)) == 3
    assert runs["n"] == 3  # the first call ran its program: its loop draws


def test_a_draw_outside_the_loop_runs_the_program(runs):
    def shifted(x):
        u = R.uniform([])
        return gt.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s * 2.0 + x),
                             (gt.constant(0), u))[1]

    x = gt.constant(1.0)
    R.set_seed(2)
    eager = [float(shifted(x)) for _ in range(3)]
    R.set_seed(2)
    f = gt.function(shifted)
    assert [float(f(x)) for _ in range(3)] == eager
    assert runs["n"] == 3


def test_python_read_of_a_loop_output_is_a_guard_on_the_first_call_too():
    """``float(h)`` after the loop: the trace read the loop's value (a guard); a call on
    values with the other outcome traces again and takes the other branch."""
    def f(x):
        s = gt.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s + x), (0, x * 0.0))[1]
        return s * 10.0 if float(s) > 0 else s - 1.0

    g = gt.function(f, autograph=False)
    assert float(g(gt.constant(1.0))) == 30.0
    assert float(g(gt.constant(-1.0))) == -4.0
    assert g.experimental_get_tracing_count() == 2


def test_a_variable_assigned_before_the_loop_is_read_by_it():
    """The trace gives the variable its value back; the first call assigns it again and
    its loop reads the assigned value, as eagerly."""
    v = gt.Variable(1.0)

    def f(x):
        v.assign_add(x)
        return gt.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s * v), (0, x))[1]

    g = gt.function(f)
    assert float(g(gt.constant(2.0))) == 2.0 * 3.0 ** 3
    assert float(v) == 3.0
    assert float(g(gt.constant(2.0))) == 2.0 * 5.0 ** 3
    assert float(v) == 5.0


def test_get_concrete_function_then_call_runs_the_loop_on_the_calls_values():
    x, h0, wx, wh = _problem()
    f = gt.function(lambda x, h0: _rnn(x, h0, wx, wh))
    f.get_concrete_function(x, h0)
    wh.assign(wh.numpy() * 0.5)  # changed after the trace: no value of the trace is used
    assert float(f(x, h0)) == pytest.approx(float(_rnn(x, h0, wx, wh)), rel=1e-12)


def test_a_second_signature_is_traced_and_reused_on_its_own_values():
    x, h0, wx, wh = _problem(T=5)
    f = gt.function(lambda x, h0: _rnn(x, h0, wx, wh))
    for T in (5, 9):
        x = gt.constant(np.random.default_rng(T).normal(size=(T, 1, 3)))
        loss, grads = _loss_and_grads(f, x, h0, wx, wh)
        assert loss == pytest.approx(float(_rnn(x, h0, wx, wh)), rel=1e-12)
        with gt.GradientTape() as tape:
            eager = _rnn(x, h0, wx, wh)
        for got, want in zip(grads, tape.gradient(eager, [wx, wh])):
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)


@pytest.fixture
def first_run_programs(monkeypatch):
    """The programs the call right after a trace ran (the rest of its program)."""
    from gradtape.ir import interpreter

    seen = []
    original = interpreter.run

    def spy(program, args, *rest):
        seen.append(program)
        return original(program, args, *rest)

    monkeypatch.setattr(call.interpreter, "run", spy)
    return seen


def _loops(program):
    return [e for e in program.eqns if e.prim.name == "loop"]


def test_a_gradient_inside_the_function_is_not_run_again(first_run_programs):
    """A training step (the tape inside the function): the trace ran the forward loop and
    the reversed loop of the inner gradient; the first call runs neither again, and its
    gradients are finite differences'."""
    x, h0, wx, wh = _problem()

    @gt.function
    def step(x, h0):
        with gt.GradientTape() as tape:
            loss = _rnn(x, h0, wx, wh)
        return loss, tape.gradient(loss, [wx, wh])

    loss, grads = step(x, h0)
    assert len(first_run_programs) == 1 and not _loops(first_run_programs[0])
    assert float(loss) == pytest.approx(float(_rnn(x, h0, wx, wh)), rel=1e-12)
    for got, numeric in zip(grads, _finite_difference(x, h0, wx, wh)):
        np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-6, atol=1e-8)
    again = step(x, h0)
    for got, want in zip(again[1], grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_scan_and_nested_loops_are_reused_with_their_values(first_run_programs):
    """tf.scan is a loop too; a loop in a loop's body comes with the outer one."""
    def f(x):
        cumulative = gt.scan(lambda acc, row: acc * 0.5 + row, x)
        def inner(s):
            return gt.while_loop(lambda k, s: k < 3, lambda k, s: (k + 1, s * 1.1), (0, s))[1]

        nested = gt.while_loop(lambda t, s: t < 4, lambda t, s: (t + 1, inner(s) + 1.0),
                               (0, x[0]))[1]
        return gt.reduce_sum(cumulative) + gt.reduce_sum(nested)

    x = gt.constant(np.arange(12.0).reshape(4, 3))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.function(f)(x)
    assert len(first_run_programs) == 1 and not _loops(first_run_programs[0])
    assert float(y) == pytest.approx(float(f(x)), rel=1e-12)
    with gt.GradientTape() as tape2:
        tape2.watch(x)
        eager = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), tape2.gradient(eager, x).numpy(),
                               rtol=1e-12)


def test_keras_gru_first_compiled_step_is_one_loop_each_way_and_eager_values():
    """keras.layers.GRU compiles as loops (not unrolled); its first compiled step gives
    the eager step's loss and gradients."""
    x = gt.constant(np.random.default_rng(0).standard_normal((4, 6, 3)).astype(np.float32))
    layer = gt.keras.layers.GRU(5)
    layer(x)

    def step(inputs):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(layer(inputs) ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    compiled = gt.function(step)
    first, eager = compiled(x), step(x)
    assert len(_loops(compiled.get_concrete_function(x).program)) == 2
    assert float(first[0]) == pytest.approx(float(eager[0]), rel=1e-6)
    for got, want in zip(first[1], eager[1]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-7)


def test_a_cond_with_a_loop_inside_is_reused_and_its_gradient_is_right(first_run_programs):
    """A switch is kept like a loop: the branch the trace ran is not run again."""
    def f(x):
        def loop():
            return gt.while_loop(lambda t, s: t < 5, lambda t, s: (t + 1, gt.sin(s) * x),
                                 (0, x))[1]
        return gt.cond(x > 0, loop, lambda: x * x)

    g = gt.function(f)
    for value in (0.7, -0.4):  # a branch each: the predicate is no guard, one trace
        x = gt.constant(np.float64(value))
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = g(x)
        grad = float(tape.gradient(y, x))
        assert float(y) == pytest.approx(float(f(x)), rel=1e-12)
        eps = 1e-6
        numeric = (float(f(gt.constant(np.float64(value + eps))))
                   - float(f(gt.constant(np.float64(value - eps))))) / (2 * eps)
        assert grad == pytest.approx(numeric, rel=1e-6)
    assert g.experimental_get_tracing_count() == 1
    assert len(first_run_programs) == 1
    assert not [e for e in first_run_programs[0].eqns if e.prim.name in ("switch", "loop")]


def test_a_drawing_loop_beside_a_pure_one_runs_the_whole_program(runs):
    def f(x):
        pure = gt.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s * 2.0), (0, x))[1]
        noisy = gt.while_loop(lambda t, s: t < 3, lambda t, s: (t + 1, s + R.uniform([])),
                              (0, x))[1]
        return pure + noisy

    x = gt.constant(1.0)
    R.set_seed(9)
    eager = [float(f(x)) for _ in range(3)]
    R.set_seed(9)
    g = gt.function(f)
    assert [float(g(x)) for _ in range(3)] == eager
    assert runs["n"] == 3
