"""@gt.function tells gradient drops as the same code does eagerly.

NumPy (or SciPy) converting a watched tensor warns (``GradientDroppedWarning``), raises
(``on_gradient_drop="raise"``, SciPy's ``TypeError``) or stays silent eagerly; a traced
function called under an outer tape, accumulator or jacobian must do the same, naming
the line inside the function, on every call (the trace is reused whatever tape it was
made under).
"""

import warnings

import numpy as np
import pytest

import gradtape as gt

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")
scipy_signal = pytest.importorskip("scipy.signal")


def f64(value):
    return gt.constant(np.asarray(value, dtype=np.float64))


# Each converts its argument on the line after its ``def``.
def asarray_times(t):
    return gt.reduce_sum(np.asarray(t) * t)


def array_times(t):
    return gt.reduce_sum(np.array(t) * t)


def r_of_two(t):
    return gt.reduce_sum(np.r_[t, t])


def c_of_two(t):
    return gt.reduce_sum(np.c_[t, t])


def mean_of_list(t):
    return np.mean([t, t + 2.0]) * t


def polygamma(t):
    return gt.reduce_sum(scipy_special.polygamma(1, t))


def multigammaln(t):
    return gt.reduce_sum(scipy_special.multigammaln(t, 1))


def norm_pdf(t):
    return gt.reduce_sum(scipy_stats.norm.pdf(t))


def detrend(t):  # no gt.scipy route: the message says so
    return gt.reduce_sum(scipy_signal.detrend(t) * t)


WARNING_CASES = [asarray_times, array_times, r_of_two, c_of_two, mean_of_list]
SCIPY_CASES = [polygamma, multigammaln, norm_pdf, detrend]


def the_line(function):
    return f"{__file__}:{function.__code__.co_firstlineno + 1}"


def under_tape(function, x):
    """(gradient as an array or None, the drops told: (category, text, file, line))."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gt.GradientDroppedWarning)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = function(x)
        grad = tape.gradient(y, x)
    told = [(w.category, str(w.message), w.filename, w.lineno) for w in caught
            if issubclass(w.category, gt.GradientDroppedWarning)]
    return (None if grad is None else grad.numpy()), told


def assert_same_result(a, b):
    (grad_a, told_a), (grad_b, told_b) = a, b
    assert told_a == told_b
    if grad_a is None or grad_b is None:
        assert grad_a is None and grad_b is None
    else:
        np.testing.assert_allclose(grad_a, grad_b, rtol=0, atol=0)


@pytest.mark.parametrize("function", WARNING_CASES, ids=lambda f: f.__name__)
def test_a_traced_conversion_warns_as_eagerly_naming_the_users_line(function):
    x = f64([1.5, 2.5])
    eager = under_tape(function, x)
    assert eager[1], "eagerly it warns"
    assert all(the_line(function) in text and file == __file__ for _, text, file, _ in eager[1])
    traced = gt.function(function)
    assert_same_result(under_tape(traced, x), eager)
    assert_same_result(under_tape(traced, x), eager)  # the cached trace: again
    assert traced.experimental_get_tracing_count() == 1


def test_the_gradient_through_the_rest_is_still_the_eager_one():
    x = f64([1.5, 2.5])
    grad, told = under_tape(gt.function(asarray_times), x)
    # d/dx sum(c * x) with c = x held constant: c (the true gradient 2x is lost, and said)
    np.testing.assert_allclose(grad, [1.5, 2.5])
    assert len(told) == 1 and "np.asarray / np.array converted a watched tensor" in told[0][1]


@pytest.mark.parametrize("function", SCIPY_CASES, ids=lambda f: f.__name__)
def test_a_traced_scipy_call_raises_as_eagerly(function):
    x = f64([1.5, 2.5])
    with gt.GradientTape() as tape, pytest.raises(TypeError) as eager:
        tape.watch(x)
        function(x)
    assert "does not differentiate gradtape tensors" in str(eager.value)
    taped_first, plain_first = gt.function(function), gt.function(function)
    plain_first(x)  # traced with no tape: SciPy ran on the values
    for traced in (taped_first, taped_first, plain_first, plain_first):
        with gt.GradientTape() as tape, pytest.raises(TypeError) as inside:
            tape.watch(x)
            traced(x)
        assert str(inside.value) == str(eager.value)
    assert plain_first.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("function", SCIPY_CASES, ids=lambda f: f.__name__)
def test_a_traced_scipy_call_nothing_watches_runs(function):
    x = f64([1.5, 2.5])
    expected = function(x).numpy()
    np.testing.assert_allclose(gt.function(function)(x).numpy(), expected)


@pytest.mark.parametrize("first_watched", [False, True], ids=["plain-first", "taped-first"])
def test_the_trace_tells_whatever_tape_it_was_made_under(first_watched):
    x = f64([1.5, 2.5])
    traced = gt.function(asarray_times)
    expected = under_tape(asarray_times, x)
    calls = [first_watched, not first_watched, first_watched, not first_watched]
    for watched in calls:
        if watched:
            assert_same_result(under_tape(traced, x), expected)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", gt.GradientDroppedWarning)
                assert traced(x).numpy() == pytest.approx(1.5 ** 2 + 2.5 ** 2)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("first_watched", [False, True], ids=["plain-first", "taped-first"])
def test_on_gradient_drop_raise_raises_on_every_watched_call(first_watched):
    x = f64([1.5, 2.5])
    traced = gt.function(r_of_two)
    for watched in [first_watched, not first_watched, first_watched]:
        with gt.config(on_gradient_drop="raise"), gt.GradientTape() as tape:
            if watched:
                tape.watch(x)
                with pytest.raises(gt.GradientDroppedError, match=the_line(r_of_two)):
                    traced(x)
            else:
                assert traced(x).numpy() == pytest.approx(8.0)


def test_on_gradient_drop_ignore_is_silent_in_a_trace_made_while_warning():
    x = f64([1.5, 2.5])
    traced = gt.function(asarray_times)
    assert under_tape(traced, x)[1]
    with gt.config(on_gradient_drop="ignore"):
        grad, told = under_tape(traced, x)
    assert told == [] and grad == pytest.approx([1.5, 2.5])
    traced_scipy = gt.function(polygamma)
    for f in (polygamma, traced_scipy, traced_scipy):  # SciPy runs on the values
        with gt.config(on_gradient_drop="ignore"), gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert y.numpy() == pytest.approx(scipy_special.polygamma(1, [1.5, 2.5]).sum())


def test_only_inputs_the_tape_watches_are_told():
    x, y = f64([1.5, 2.5]), f64([3.0, 4.0])

    def converts_y(a, b):
        return gt.reduce_sum(a * np.asarray(b) + np.asarray(gt.stop_gradient(a)))

    traced = gt.function(converts_y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.GradientDroppedWarning)
        for f in (converts_y, traced):
            with gt.GradientTape() as tape:
                tape.watch(x)  # not y; stop_gradient(x) is not recorded
                out = f(x, y)
            np.testing.assert_allclose(tape.gradient(out, x).numpy(), [3.0, 4.0])
    with gt.GradientTape() as tape:
        tape.watch(y)
        with pytest.warns(gt.GradientDroppedWarning, match=the_line(converts_y)):
            traced(x, y)


def test_a_variable_read_inside_warns_as_eagerly():
    v = gt.Variable([1.5, 2.5], dtype=gt.float64)
    frozen = gt.Variable([1.5, 2.5], dtype=gt.float64, trainable=False)

    def reads(variable):
        return gt.reduce_sum(np.asarray(variable) * variable)

    traced = gt.function(reads)
    for f in (reads, traced, traced):
        with gt.GradientTape() as tape:
            with pytest.warns(gt.GradientDroppedWarning, match=the_line(reads)):
                y = f(v)
        np.testing.assert_allclose(tape.gradient(y, v).numpy(), [1.5, 2.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.GradientDroppedWarning)
        for f in (reads, traced):
            with gt.GradientTape():
                f(frozen)  # untrainable: no tape watches it
            with gt.GradientTape(watch_accessed_variables=False):
                f(v)


def test_a_captured_tensor_the_tape_watches_warns():
    x = f64([1.5, 2.5])

    def captures():
        return gt.reduce_sum(np.asarray(x) * x)

    traced = gt.function(captures)
    traced()  # traced without a tape: silent
    with gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(gt.GradientDroppedWarning, match=the_line(captures)):
            y = traced()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.5, 2.5])


def test_a_concrete_function_called_directly_warns():
    x = f64([1.5, 2.5])
    concrete = gt.function(asarray_times).get_concrete_function(x)
    with gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(gt.GradientDroppedWarning, match=the_line(asarray_times)):
            concrete(x)


def elementwise(t):
    return np.asarray(t) * t


def test_a_jacobian_of_a_traced_output_warns_once_as_eagerly():
    x = f64([1.5, 2.5])
    results = []
    for f in (elementwise, gt.function(elementwise)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gt.GradientDroppedWarning)
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            jacobian = tape.jacobian(y, x).numpy()
        results.append((jacobian, [str(w.message) for w in caught]))
    (eager, eager_told), (traced, traced_told) = results
    np.testing.assert_allclose(traced, eager)
    np.testing.assert_allclose(traced, np.diag([1.5, 2.5]))
    assert traced_told == eager_told and len(eager_told) == 1


def test_a_forward_accumulator_around_a_call_warns():
    x = f64([1.5, 2.5])
    traced = gt.function(elementwise)
    traced(x)  # the trace, made with nothing watching
    for f in (elementwise, traced):
        with gt.autodiff.ForwardAccumulator(x, f64([1.0, 0.0])) as acc:
            with pytest.warns(gt.GradientDroppedWarning, match=the_line(elementwise)):
                y = f(x)
        np.testing.assert_allclose(acc.jvp(y).numpy(), [1.5, 0.0])


def tape_inside(t):
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = gt.reduce_sum(np.asarray(t) * t)
    return tape.gradient(y, t)


def test_a_tape_inside_the_function_warns_on_every_call():
    x = f64([1.5, 2.5])
    traced = gt.function(tape_inside)
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gt.GradientDroppedWarning)
            grad = traced(x)
        np.testing.assert_allclose(grad.numpy(), [1.5, 2.5])
        assert len(caught) == 1
        assert f"{__file__}:{tape_inside.__code__.co_firstlineno + 3}:" in str(caught[0].message)
    assert traced.experimental_get_tracing_count() == 1


def test_a_tape_inside_raises_as_eagerly_and_keeps_no_trace():
    x = f64([1.5, 2.5])
    traced = gt.function(tape_inside)
    with gt.config(on_gradient_drop="raise"):
        for f in (tape_inside, traced, traced):
            with pytest.raises(gt.GradientDroppedError):
                f(x)
    assert traced.experimental_get_tracing_count() == 0
    with pytest.warns(gt.GradientDroppedWarning):
        traced(x)
    assert traced.experimental_get_tracing_count() == 1


def test_nested_tapes_under_an_outer_tape_warn_once_per_call():
    x = f64([1.5, 2.5])
    traced = gt.function(tape_inside)
    results = []
    for f in (tape_inside, traced, traced):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gt.GradientDroppedWarning)
            with gt.GradientTape() as outer:
                outer.watch(x)
                g = gt.reduce_sum(f(x) * x)
            second = outer.gradient(g, x)
        assert len(caught) == 1  # one conversion, told once for both tapes
        results.append(second.numpy())
    # d/dx sum(c * x) for the inner gradient c (x's value, held constant by NumPy)
    for second in results:
        np.testing.assert_allclose(second, [1.5, 2.5])


# --- conversions that are silent eagerly stay silent, with the same gradient -------------

def numpy_method(t):
    return gt.reduce_sum(t.numpy() * t)


def python_float(t):
    return float(t[0]) * gt.reduce_sum(t)


def python_int(t):
    return int(t[1]) * gt.reduce_sum(t)


def tolist(t):
    return gt.reduce_sum(gt.constant(t.tolist(), dtype=gt.float64) * t)


def concatenate_with_a_list(t):
    return gt.reduce_sum(np.concatenate([t, [1.0]]) * 2.0)


def numpy_function(t):
    return gt.reduce_sum(gt.numpy_function(lambda a: a * 2.0, [t], gt.float64))


SILENT = {
    numpy_method: [1.5, 2.5],  # .numpy() says no gradient should flow
    python_float: [1.5, 1.5],  # a Python read: TF's tape does not see it either
    python_int: [2.0, 2.0],
    tolist: [1.5, 2.5],
    concatenate_with_a_list: [2.0, 2.0],  # dispatched: it differentiates
    numpy_function: None,  # TF: no gradient, silently
}


@pytest.mark.parametrize("function", list(SILENT), ids=lambda f: f.__name__)
def test_silent_eagerly_is_silent_traced_with_the_same_gradient(function):
    x = f64([1.5, 2.5])
    eager = under_tape(function, x)
    assert eager[1] == []
    expected = SILENT[function]
    assert (eager[0] is None) if expected is None else eager[0] == pytest.approx(expected)
    traced = gt.function(function)
    assert_same_result(under_tape(traced, x), eager)
    assert_same_result(under_tape(traced, x), eager)
