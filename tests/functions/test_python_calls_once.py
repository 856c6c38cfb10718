"""A numpy_function / py_function inside @gt.function runs exactly once per call, as in
TF, whatever the tracing does: a trace whose guards fail stops before the next Python
call, and a retrace (or another trace) replays the calls this call already made. The
shape of the TF docs' actor-critic: a loop that breaks on the result of a
numpy_function stepping an environment. Every test runs compiled and interpreted."""

import logging

import numpy as np
import pytest

import gradtape as gt


@pytest.fixture(autouse=True)
def _unseed():
    yield
    gt.random.set_seed(None)


class Env:
    """Episodes of the given lengths; ``steps`` counts every step() (the side effect)."""

    def __init__(self, lengths):
        self.lengths = list(lengths)
        self.episode, self.t, self.steps, self.actions = -1, 0, 0, []

    def reset(self):
        self.episode += 1
        self.t = 0
        return np.zeros(2, np.float32)

    def step(self, action):
        self.t += 1
        self.steps += 1
        self.actions.append(int(action))
        done = self.t >= self.lengths[self.episode]
        return (np.full(2, self.t, np.float32), np.array(1, np.int32),
                np.array(done, np.int32))


def _run_episode_function(env, wrap, autograph=True):
    weights = gt.Variable(np.ones((2, 3), np.float32))

    def tf_env_step(action):
        return wrap(env.step, [action], [gt.float32, gt.int32, gt.int32])

    @gt.function(autograph=autograph)
    def run_episode(initial_state, max_steps):
        rewards, actions = [], []
        state = initial_state
        for _ in gt.range(max_steps):
            logits = gt.reshape(state, [1, 2]) @ weights
            action = gt.random.categorical(logits, 1)[0, 0]
            state, reward, done = tf_env_step(action)
            rewards.append(reward)
            actions.append(action)
            if gt.cast(done, gt.bool):
                break
        return gt.stack(rewards), gt.stack(actions)

    return run_episode


def _numpy_function(func, inp, tout):
    return gt.numpy_function(func, inp, tout)


def _py_function(func, inp, tout):
    return gt.py_function(lambda a: func(a.numpy()), inp, tout)


@pytest.mark.parametrize("wrap", [_numpy_function, _py_function], ids=["numpy", "py"])
def test_episode_lengths_and_steps_are_the_environments(compile_mode, wrap):
    """Lengths 4, 2, 5, 3 came back as 4, 1, 4, 1, the env stepped 22 times for 14."""
    env = Env([4, 2, 5, 3])
    gt.random.set_seed(0)
    # autograph=False: the loop appends to Python lists, so it must stay a Python loop
    # (converted, it is a tensor loop and the lists would see one trace's appends).
    run_episode = _run_episode_function(env, wrap, autograph=False)
    lengths, actions = [], []
    for _ in range(4):
        rewards, taken = run_episode(gt.constant(env.reset()), gt.constant(100))
        lengths.append(int(rewards.shape[0]))
        actions += taken.numpy().tolist()
    assert lengths == [4, 2, 5, 3]
    assert env.steps == 14
    assert actions == env.actions  # the draws the env saw are the ones returned


def test_a_repeated_retrace_warns_naming_the_read(caplog):
    env = Env([6, 5, 4, 3, 2, 1])  # each break is a step before the traced one
    # autograph=False: the Python ``if`` stays a bool(t) read, the guard this names.
    run_episode = _run_episode_function(env, _numpy_function, autograph=False)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for _ in range(6):
            run_episode(gt.constant(env.reset()), gt.constant(100))
    assert env.steps == 21
    warnings = [r.getMessage() for r in caplog.records if "retracing" in r.getMessage()]
    assert len(warnings) == 1
    assert "bool(t) at " + __file__ in warnings[0]
    assert "checked before a py_function call" in warnings[0]
    assert "it was False when traced, True now (checked before a py_function call)" \
        in warnings[0]


def test_a_call_made_before_a_failing_guard_on_an_argument_runs_once(compile_mode):
    log = []

    @gt.function
    def f(x):
        gt.numpy_function(lambda a: log.append(float(a)), [x], [])
        return x * 2.0 if x > 0 else -x

    for value in (1.0, -2.0, 3.0, -4.0):
        f(gt.constant(value))
    assert log == [1.0, -2.0, 3.0, -4.0]


def test_a_first_trace_that_makes_variables_calls_python_once(compile_mode):
    """The first trace of a function creating a variable is made twice (as TF)."""
    log = []
    made = []

    @gt.function
    def f(x):
        if not made:
            made.append(gt.Variable(2.0))
        y = gt.py_function(lambda a: (log.append(float(a)), a * 3.0)[1], [x], gt.float32)
        return y * made[0]

    assert float(f(gt.constant(1.0))) == 6.0
    assert float(f(gt.constant(2.0))) == 12.0
    assert log == [1.0, 2.0]


def test_a_concrete_function_falling_back_calls_python_once(compile_mode):
    log = []

    @gt.function
    def f(x):
        y = gt.numpy_function(lambda a: (log.append(float(a)), a + 1.0)[1], [x], gt.float32)
        return y * 2.0 if y > 0 else -y

    concrete = f.get_concrete_function(gt.constant(1.0))
    log.clear()  # tracing ran it: only calls count from here
    assert float(concrete(gt.constant(1.0))) == 4.0
    assert float(concrete(gt.constant(-5.0))) == 4.0  # its guard fails: f retraces
    assert log == [1.0, -5.0]


def test_float_of_an_impure_numpy_function_result_runs_it_once(caplog):
    """Its value changes on every call: each call retraces (and the warning says why),
    calls it once, and returns the branch of the value it returns."""
    rng = np.random.default_rng(0)
    calls = []

    def noisy():
        calls.append(rng.random())
        return np.float32(calls[-1])

    @gt.function
    def f(x):
        u = gt.numpy_function(noisy, [], gt.float32)
        return u, (x * 10.0 if float(u) > 0.5 else x - 10.0)

    with caplog.at_level(logging.WARNING, logger="gradtape"):
        results = [f(gt.constant(1.0)) for _ in range(10)]
    assert len(calls) == 10
    for (u, y), drawn in zip(results, calls):
        assert float(u) == np.float32(drawn)
        assert float(y) == (10.0 if float(u) > 0.5 else -9.0)
    assert any("float(t) at " + __file__ in r.getMessage() for r in caplog.records)
