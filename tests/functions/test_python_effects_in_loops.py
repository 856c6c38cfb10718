"""Python effects inside compiled control flow: a numpy_function/py_function in a
while_loop body runs once per iteration as eagerly (the body is given up before the
call, not after), and gt.print in a loop body or a branch is an op that prints on every
iteration at run time, in program order, with the body traced once."""

import numpy as np
import pytest

import gradtape as gt


class Counter:
    """A stateful Python step: ``done`` once it was called three times."""

    def __init__(self):
        self.calls = 0

    def step(self, x):
        self.calls += 1
        return np.asarray(x + 1.0), np.asarray(self.calls % 3 == 0)


def _episode(counter, wrap):
    def run(x):
        def body(x, done):
            y, d = wrap(counter.step, [x], [gt.float64, gt.bool])
            y = gt.cond(d, lambda: y * 10.0, lambda: y)
            return y, d
        return gt.while_loop(lambda x, done: gt.logical_not(done), body,
                             [x, gt.constant(False)])
    return run


def _py(func, inp, tout):
    return gt.py_function(lambda x: func(x.numpy()), inp, tout)


@pytest.mark.parametrize("wrap", [gt.numpy_function, _py], ids=["numpy", "py"])
def test_python_call_in_a_while_body_gives_the_eager_result(wrap):
    eager_counter, counter = Counter(), Counter()
    eager = _episode(eager_counter, wrap)
    f = gt.function(_episode(counter, wrap), autograph=False)
    for start in [0.0, 5.0, 1.0]:
        want = [t.numpy() for t in eager(gt.constant(start, gt.float64))]
        got = [t.numpy() for t in f(gt.constant(start, gt.float64))]
        assert got[0] == want[0] == (start + 3) * 10
        assert bool(got[1]) and counter.calls == eager_counter.calls


def _lines(capsys):
    return capsys.readouterr().err.splitlines()


def test_print_in_a_loop_prints_every_iteration_and_traces_once(capsys):
    traced = []

    @gt.function
    def fizzbuzz(n):
        for i in gt.range(1, n + 1):
            traced.append("loop")
            if i % 15 == 0:
                gt.print("fizzbuzz")
            elif i % 3 == 0:
                gt.print("fizz")
            elif i % 5 == 0:
                gt.print("buzz")
            else:
                gt.print(i)

    fizzbuzz(gt.constant(5))
    assert _lines(capsys) == ["1", "2", "fizz", "4", "buzz"]
    fizzbuzz(gt.constant(16))
    assert _lines(capsys)[-3:] == ["14", "fizzbuzz", "16"]
    assert fizzbuzz.experimental_get_tracing_count() == 1
    assert traced == ["loop"]


def test_prints_keep_program_order_around_a_loop_and_its_gradient(capsys):
    @gt.function(autograph=False)
    def f(x):
        gt.print("start", x)

        def body(i, x):
            gt.print("iteration", i, x)
            return i + 1, x * 2.0
        _, y = gt.while_loop(lambda i, x: i < 2, body, (0, x))
        gt.print("end", y)
        return y

    x = gt.constant(1.5, gt.float64)
    for _ in range(2):  # the trace's first call, then a compiled one
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert tape.gradient(y, x).numpy() == 4.0
        assert _lines(capsys) == ["start 1.5", "iteration 0 1.5", "iteration 1 3", "end 6"]


def test_print_in_a_branch_traces_the_branch_once_and_prints_per_call(capsys):
    ran = []

    @gt.function(autograph=False)
    def f(x):
        def big():
            ran.append("big")
            gt.print("big", x)
            return x - 1.0

        def small():
            ran.append("small")
            gt.print("small", x)
            return x * 3.0
        return gt.cond(x > 2.0, big, small)

    assert f(gt.constant(1.0)).numpy() == 3.0
    assert f(gt.constant(5.0)).numpy() == 4.0
    assert _lines(capsys) == ["small 1", "big 5"]
    assert ran == ["big", "small"]  # each branch traced once, true_fn first (TF's order)
    assert f.experimental_get_tracing_count() == 1


def test_scan_and_map_fn_bodies_print_and_call_python_once_per_element(capsys):
    calls = []

    def square(v):
        calls.append(float(v))
        return np.asarray(v * v)

    @gt.function
    def squares(xs):
        return gt.map_fn(lambda x: gt.numpy_function(square, [x], gt.float32), xs)

    @gt.function
    def running(xs):
        return gt.scan(lambda a, x: (gt.print("acc", a), a + x)[1], xs)

    np.testing.assert_array_equal(squares(gt.constant([1.0, 2.0, 3.0])).numpy(), [1, 4, 9])
    assert calls == [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(running(gt.constant([1.0, 2.0, 3.0])).numpy(), [1, 3, 6])
    np.testing.assert_array_equal(running(gt.constant([2.0, 2.0, 2.0])).numpy(), [2, 4, 6])
    assert _lines(capsys) == ["acc 1", "acc 3", "acc 2", "acc 4"]
    assert running.experimental_get_tracing_count() == 1


def test_a_loop_print_before_an_error_has_printed_and_does_not_leak_into_the_next_call(
        capsys):
    @gt.function
    def until_too_far(n):
        ta = gt.TensorArray(gt.float32, size=2)
        for i in gt.range(n):
            gt.print("writing", i)
            ta = ta.write(i, gt.cast(i, gt.float32))
        return ta.stack()

    until_too_far(gt.constant(1))  # traced here; the trip count is a run-time value
    assert _lines(capsys) == ["writing 0"]
    with pytest.raises(gt.errors.OutOfRangeError):
        until_too_far(gt.constant(3))
    # Printed as the op ran, before the error, as TF does. (The compiled runner then
    # re-runs the program in the interpreter to tell a user's error from a code
    # generator's, which prints them once more: compiler/runner.py's fall-back.)
    assert _lines(capsys)[:3] == ["writing 0", "writing 1", "writing 2"]
    until_too_far(gt.constant(1))
    assert _lines(capsys) == ["writing 0"]
    assert until_too_far.experimental_get_tracing_count() == 1
