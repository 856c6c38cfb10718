"""When a compiled @gt.function raises, the runner used to run the program again in the
interpreter (to tell a wrong generated function from a user error), so every gt.print
line of a loop and every py_function call before the error ran twice. Now a failed call
that ran an effect raises its error at once, with a note naming the user's line; a
generated function that fails before any effect still falls back to the interpreter."""

import io
import sys
import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler import runner as runner_module


def _printing_gather(stream):
    @gt.function
    def f(x, idx):
        i = gt.constant(0)
        while i < 3:
            gt.print("step", i, output_stream=stream)
            x = x * 2.0
            i += 1
        return gt.gather(x, idx)
    return f


def test_a_failing_call_prints_the_loop_lines_once():
    stream = io.StringIO()
    f = _printing_gather(stream)
    x = gt.constant(np.arange(3.0))
    np.testing.assert_array_equal(f(x, gt.constant([0, 2])).numpy(), [0.0, 16.0])
    assert stream.getvalue() == "step 0\nstep 1\nstep 2\n"
    stream.seek(0)
    stream.truncate()
    with pytest.raises(IndexError) as raised:
        f(x, gt.constant([1, 7]))  # index 7 of 3 rows
    assert stream.getvalue() == "step 0\nstep 1\nstep 2\n"  # was printed twice
    if sys.version_info >= (3, 11):
        note = "\n".join(raised.value.__notes__)
        assert "return gt.gather(x, idx)" in note and "test_effects_run_once.py" in note
    stream.seek(0)
    stream.truncate()
    # The generated code stays in use: the next good call prints once and is right.
    np.testing.assert_array_equal(f(x, gt.constant([1])).numpy(), [8.0])
    assert stream.getvalue() == "step 0\nstep 1\nstep 2\n"


def test_a_failing_call_under_a_tape_prints_once():
    stream = io.StringIO()
    f = _printing_gather(stream)
    x = gt.constant(np.arange(3.0))
    for idx, fails in (([0, 2], False), ([0, 5], True)):  # one shape: no retrace
        stream.seek(0)
        stream.truncate()
        with gt.GradientTape() as tape:
            tape.watch(x)
            if fails:
                with pytest.raises(IndexError):
                    f(x, gt.constant(idx))
            else:
                y = gt.reduce_sum(f(x, gt.constant(idx)))
                np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [8.0, 0.0, 8.0])
        assert stream.getvalue() == "step 0\nstep 1\nstep 2\n"


@pytest.mark.parametrize("wrap", ["py_function", "numpy_function"])
def test_a_failing_call_runs_the_users_python_once(wrap):
    calls = []

    def record(v):
        calls.append(float(np.asarray(v)))
        return np.asarray(v, np.float64) + 1.0

    def python_step(v):
        if wrap == "py_function":
            return gt.py_function(lambda t: record(t.numpy()), [v], gt.float64)
        return gt.numpy_function(record, [v], gt.float64)

    @gt.function
    def f(x, idx):
        y = python_step(x[0])
        return gt.gather(x * y, idx)

    x = gt.constant(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(f(x, gt.constant([1])).numpy(), [4.0])
    calls.clear()
    with pytest.raises(IndexError):
        f(x, gt.constant([9]))
    assert calls == [1.0]  # was [1.0, 1.0]: the interpreter called it again


def test_generated_code_failing_before_any_effect_still_falls_back(monkeypatch):
    stream = io.StringIO()
    f = _printing_gather(stream)
    x = gt.constant(np.arange(3.0))
    f(x, gt.constant([0]))
    cf = f.get_concrete_function(x, gt.constant([0]))
    runner = cf.forward
    program = runner._compiled_program

    def broken(*args):  # a generated function that is wrong: raises before printing
        raise ValueError("wrong generated code")

    runner.compiled = runner_module._with_effects_told(
        runner.compiled._replace(function=broken), program)
    stream.seek(0)
    stream.truncate()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = f(x, gt.constant([2]))
    np.testing.assert_array_equal(got.numpy(), [16.0])
    assert stream.getvalue() == "step 0\nstep 1\nstep 2\n"  # the interpreter's, once
    assert any("raised where the interpreter does not" in str(w.message) for w in caught)


def test_programs_without_effects_run_their_generated_function_unwrapped():
    @gt.function
    def f(x):
        return gt.reduce_sum(x * x)

    x = gt.constant(np.arange(3.0))
    assert float(f(x)) == 5.0
    cf = f.get_concrete_function(x)
    assert cf.forward.compiled.function.__name__ == "forward"  # no per-call wrapper


def test_a_failed_calls_waiting_lines_do_not_print_in_the_next_call():
    # A gt.print before the loop prints after the call, so the loop's lines wait for
    # it; a call that fails prints none of them, and the next call only its own.
    stream = io.StringIO()

    @gt.function
    def f(x, idx):
        gt.print("start", output_stream=stream)
        i = gt.constant(0)
        while i < 2:
            gt.print("step", i, output_stream=stream)
            x = x * 2.0
            i += 1
        return gt.gather(x, idx)

    x = gt.constant(np.arange(3.0))
    f(x, gt.constant([0]))
    assert stream.getvalue() == "start\nstep 0\nstep 1\n"
    for mode in (True, False):
        with gt.config(compile=mode):
            stream.seek(0)
            stream.truncate()
            with pytest.raises(IndexError):
                f(x, gt.constant([7]))
            assert stream.getvalue() == ""
            np.testing.assert_array_equal(f(x, gt.constant([1])).numpy(), [4.0])
            assert stream.getvalue() == "start\nstep 0\nstep 1\n"  # was the failed call's too


def test_a_trace_whose_guard_fails_prints_nothing():
    # A Python read of a value is a guard, checked after the trace ran: a run whose
    # guard fails is not the call, and the trace that is prints the lines once.
    stream = io.StringIO()

    @gt.function
    def f(x, flag):
        i = gt.constant(0)
        while i < 2:
            gt.print("step", i, output_stream=stream)
            x = x * 2.0
            i += 1
        if float(flag) > 0:  # a guard
            return x + 1.0
        return x - 1.0

    x = gt.constant(np.arange(3.0))
    for flag, want in ((1.0, [1.0, 5.0, 9.0]), (-1.0, [-1.0, 3.0, 7.0]),
                       (1.0, [1.0, 5.0, 9.0]), (-1.0, [-1.0, 3.0, 7.0])):
        stream.seek(0)
        stream.truncate()
        np.testing.assert_array_equal(f(x, gt.constant(flag)).numpy(), want)
        assert stream.getvalue() == "step 0\nstep 1\n"  # was printed twice
    assert f.experimental_get_tracing_count() == 2
    stream.seek(0)
    stream.truncate()
    f.get_concrete_function(x, gt.constant(1.0))  # finds the trace: prints nothing
    assert stream.getvalue() == ""
