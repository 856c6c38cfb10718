"""gt.print: TF's tf.print. Eagerly at once; inside @gt.function on every call, with the
values of that call, without changing results or gradients."""

import io
import sys
import warnings

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences


@pytest.fixture(params=[True, False], ids=["compiled", "interpreted"])
def compile_mode(request):
    with gt.config(compile=request.param, compile_after=1):
        yield request.param


def printed(*inputs, **options):
    stream = io.StringIO()
    gt.print(*inputs, output_stream=stream, **options)
    return stream.getvalue()


@pytest.mark.parametrize("value, text", [
    (gt.constant([1, 2, 3]), "[1 2 3]"),
    (gt.constant([[1.5, 2.0], [3.0, -4.25]]), "[[1.5 2]\n [3 -4.25]]"),
    (gt.constant(1 / 3), "0.333333343"),            # float32: 9 digits when 6 do not round-trip
    (gt.constant(0.1), "0.1"),
    (gt.constant(np.float64(1 / 3)), "0.33333333333333331"),
    (gt.constant([True, False]), "[1 0]"),
    (gt.range(10), "[0 1 2 ... 7 8 9]"),
    ("text", "text"),
    (3, "3"),
])
def test_formats_values_as_tf_print(value, text):
    assert printed(value) == text + "\n"


def test_summarize_sep_end_and_two_dimensions_as_tf_strings_format():
    matrix = gt.reshape(gt.range(100), [10, 10])
    assert printed(matrix).startswith("[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n")
    assert " ...\n [70 71 72 ... 77 78 79]" in printed(matrix)
    assert printed(gt.range(10), summarize=-1) == "[0 1 2 3 4 5 6 7 8 9]\n"
    assert printed(gt.range(10), summarize=2) == "[0 1 ... 8 9]\n"
    assert printed("a", gt.constant(1), sep=", ", end="!") == "a, 1!"


def test_prints_to_stderr_by_default(capsys):
    gt.print("loss:", gt.constant(2.5))
    assert capsys.readouterr().err == "loss: 2.5\n"
    gt.print("out", output_stream=sys.stdout)
    assert capsys.readouterr().out == "out\n"


@pytest.mark.parametrize("options, error", [
    ({"summarize": -2}, ValueError), ({"summarize": 1.5}, ValueError),
    ({"output_stream": "stdout"}, ValueError), ({"sep": 1}, TypeError),
])
def test_bad_options_raise(options, error):
    with pytest.raises(error):
        gt.print(gt.constant(1.0), **options)


def test_prints_on_every_call_inside_a_function(compile_mode):
    stream = io.StringIO()
    w = gt.Variable(10.0)

    @gt.function
    def step(x):
        y = x * 2.0
        gt.print("x", x, "y", y, "w", w, "c", gt.constant(7), output_stream=stream)
        w.assign_add(1.0)
        return y

    for i in range(3):
        np.testing.assert_array_equal(step(gt.constant([float(i), 1.0])).numpy(),
                                      [2.0 * i, 2.0])
    assert stream.getvalue().splitlines() == [
        "x [0 1] y [0 2] w 10 c 7", "x [1 1] y [2 2] w 11 c 7", "x [2 1] y [4 2] w 12 c 7"]
    assert step.experimental_get_tracing_count() == 1


def test_nothing_is_printed_while_tracing_only_when_running():
    stream = io.StringIO()
    f = gt.function(lambda x: gt.print(x, output_stream=stream) or x + 1.0)
    f.get_concrete_function(gt.constant([1.0]))  # traces without running
    assert stream.getvalue() == ""
    f(gt.constant([1.0]))
    assert stream.getvalue() == "[1]\n"


def test_prints_inside_a_nested_function_and_on_the_branch_taken():
    stream = io.StringIO()

    @gt.function
    def inner(x):
        gt.print("inner", x, output_stream=stream)
        return x * 3.0

    @gt.function
    def outer(x):
        if gt.reduce_sum(x) > 0:
            gt.print("positive", output_stream=stream)
        return inner(x)

    outer(gt.constant([1.0]))
    outer(gt.constant([-1.0]))
    outer(gt.constant([2.0]))
    assert stream.getvalue().splitlines() == [
        "positive", "inner [1]", "inner [-1]", "positive", "inner [2]"]


def test_a_branch_that_only_prints_is_compiled_not_interpreted():
    """A branch that only prints is a switch without outputs; the buffer planner read
    its first output and failed, so the whole function fell back to the interpreter
    with a "could not generate code" warning."""
    stream = io.StringIO()

    @gt.function
    def f(x):
        if gt.reduce_sum(x) > 0:  # a branch that returns nothing: a switch of no outputs
            gt.print("positive", output_stream=stream)
        return x * 3.0

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        y = f(gt.constant(np.full(8192, 2.0)))
    np.testing.assert_array_equal(y.numpy(), np.full(8192, 6.0))
    assert stream.getvalue() == "positive\n"
    assert "def forward" in f.get_concrete_function(gt.constant(np.full(8192, 2.0))).source


def _prints_only_in_a_branch(stream):
    def positive(x):
        if gt.reduce_sum(x) > 0:  # a switch with no outputs: the branch only prints
            gt.print("positive", x, output_stream=stream)
        return x * 3.0

    def in_a_loop(x):
        i = gt.constant(0)
        while i < 3:
            if gt.reduce_sum(x) > 1.0:
                gt.print("big", i, output_stream=stream)
            x = x * 1.5
            i += 1
        return x

    def explicit(x):
        gt.cond(gt.reduce_sum(x) > 0, lambda: gt.print("p", output_stream=stream),
                lambda: None)
        return x * x

    return [positive, in_a_loop, explicit]


@pytest.mark.parametrize("k", range(3))
def test_a_branch_that_only_prints_compiles(k):
    # Its switch has no outputs, which the buffer-reuse planner read as outs[0]: the
    # function warned "could not generate code" (IndexError) and ran interpreted.
    stream = io.StringIO()
    fn = _prints_only_in_a_branch(stream)[k]
    eager_stream = io.StringIO()
    eager_fn = _prints_only_in_a_branch(eager_stream)[k]
    f = gt.function(fn)
    for v in ([1.0, 2.0], [-1.0, -2.0], [0.5, 0.25]):
        x = gt.constant(np.array(v))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = gt.reduce_sum(f(x))
            g = tape.gradient(y, x)
        with gt.GradientTape() as tape:
            tape.watch(x)
            want = gt.reduce_sum(eager_fn(x))
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), tape.gradient(want, x).numpy(), rtol=1e-12)
    assert stream.getvalue() == eager_stream.getvalue() and stream.getvalue()
    assert "if " in f.get_concrete_function(gt.constant([1.0, 2.0])).source


def test_a_concrete_function_prints_too():
    stream = io.StringIO()
    f = gt.function(lambda x: gt.print(x, output_stream=stream) or x)
    concrete = f.get_concrete_function(gt.constant([0.0]))
    concrete(gt.constant([5.0]))
    assert stream.getvalue() == "[5]\n"


def test_print_changes_no_gradient(compile_mode):
    stream = io.StringIO()

    def loss(x):
        return gt.reduce_sum(gt.sin(x) * x)

    @gt.function
    def traced(x):
        gt.print("sin", gt.sin(x), output_stream=stream)
        return loss(x)

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(3)]
    x = gt.constant(arrays[0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = traced(x)
    grad = tape.gradient(y, x)
    assert_vjp_matches_differences(loss, arrays, np.array(1.0), [grad], rng)
    assert stream.getvalue().startswith("sin [")
