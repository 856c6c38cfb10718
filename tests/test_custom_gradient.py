"""gt.custom_gradient and gt.stop_gradient, with TensorFlow's semantics.

Expected values are worked out by hand in the comments (and match TensorFlow 2.21).
"""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ad.reverse import vjp_program
from gradtape.ir import interpreter
from gradtape.ir.builder import Builder
from gradtape.ir.nodes import Aval, Literal, Var


def value(t):
    return None if t is None else t.numpy()


@gt.custom_gradient
def log1pexp(x):
    e = gt.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return gt.log(1 + e), grad


@gt.custom_gradient
def cube(x):
    def grad(upstream):
        return upstream * 3.0 * x * x

    return x * x * x, grad


def grad_of(f, *xs):
    xs = [gt.constant(x) for x in xs]
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [value(g) for g in tape.gradient(y, xs)]


# --- first order -------------------------------------------------------------------------

def test_the_custom_gradient_replaces_the_computed_one():
    # log(1 + e^x) overflows in float32 at x = 100; the custom gradient 1 - 1/(1+e^x) = 1.
    with np.errstate(over="ignore"):
        assert grad_of(log1pexp, 100.0) == [1.0]


def test_the_result_is_the_function_value():
    y = log1pexp(gt.constant(0.0))
    assert np.isclose(value(y), np.log(2.0))


def test_several_inputs_get_one_gradient_each():
    @gt.custom_gradient
    def f(a, b):
        return a * b, lambda up: (up * 10.0, up * 100.0)

    assert grad_of(f, 2.0, 3.0) == [10.0, 100.0]


def test_gradients_may_be_returned_as_a_list():
    @gt.custom_gradient
    def f(a, b):
        return a * b, lambda up: [up * 10.0, up * 100.0]

    assert grad_of(f, 2.0, 3.0) == [10.0, 100.0]


def test_a_none_gradient_is_a_zero_gradient():
    @gt.custom_gradient
    def f(a, b):
        return a * b, lambda up: (None, up * 100.0)

    assert grad_of(f, 2.0, 3.0) == [0.0, 100.0]


def test_list_arguments_are_flattened_into_inputs():
    @gt.custom_gradient
    def f(xs):
        return xs[0] + xs[1], lambda up: [up * 2.0, up * 3.0]

    a, b = gt.constant(1.0), gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        y = f([a, b])
    assert [value(g) for g in tape.gradient(y, [a, b])] == [2.0, 3.0]


def test_python_number_arguments_count_as_inputs():
    @gt.custom_gradient
    def f(x, k):
        return x * k, lambda up: (up * k, None)

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x, 3.0)
    assert value(tape.gradient(y, x)) == 3.0


def test_keyword_arguments_are_not_inputs():
    @gt.custom_gradient
    def f(x, scale=2.0):
        return x * scale, lambda up: up * scale

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x, scale=5.0)
    assert value(tape.gradient(y, x)) == 5.0


def test_vector_function_with_output_gradients():
    @gt.custom_gradient
    def double(x):
        return x * 2.0, lambda up: up * 2.0

    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = double(x)
    g = tape.gradient(y, x, output_gradients=gt.constant([3.0, 4.0]))
    np.testing.assert_array_equal(value(g), [6.0, 8.0])


def test_the_gradient_takes_the_input_dtype():
    @gt.custom_gradient
    def f(x):
        return x * 2.0, lambda up: gt.constant(2.0)  # float32 for a float64 input

    x = gt.constant(1.0, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x)
    assert g.dtype == np.float64 and value(g) == 2.0


def test_outside_a_tape_it_just_computes():
    y = cube(gt.constant(2.0))
    assert value(y) == 8.0


def test_the_result_is_a_new_tensor():
    @gt.custom_gradient
    def same(x):
        return x, lambda up: up

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = same(x)
    assert y is not x
    assert value(tape.gradient(y, x)) == 1.0


def test_decorating_keeps_the_name_and_works_on_methods():
    class Model:
        scale = 4.0

        @gt.custom_gradient
        def apply(self, x):
            return x * self.scale, lambda up: up * self.scale

    assert Model.apply.__name__ == "apply"
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = Model().apply(x)
    assert value(y) == 4.0 and value(tape.gradient(y, x)) == 4.0


# --- several results -------------------------------------------------------------------

@gt.custom_gradient
def two_results(x):
    def grad(u1, u2):
        return u1 * 10.0 + u2 * 100.0

    return (x * 2.0, x * 3.0), grad


def test_several_results_get_one_upstream_each():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y1, y2 = two_results(x)
    assert value(y1) == 6.0 and value(y2) == 9.0
    assert value(tape.gradient(y1, x)) == 10.0  # the upstream of y2 is zero
    assert value(tape.gradient([y1, y2], x)) == 110.0


def test_results_keep_their_structure_and_unused_upstreams_are_zeros():
    seen = []

    @gt.custom_gradient
    def f(x):
        def grad(*upstream):
            seen.append([value(u) for u in upstream])
            return upstream[0] + upstream[1]

        return [x * 2.0, x * 3.0], grad

    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        ys = f(x)
    assert isinstance(ys, list)
    assert value(tape.gradient(ys[1], x)) == 1.0
    assert seen == [[0.0, 1.0]]


def test_dict_results():
    @gt.custom_gradient
    def f(x):
        return {"a": x * 2.0}, lambda up: up

    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert value(y["a"]) == 6.0 and value(tape.gradient(y, x)) == 1.0


# --- variables -------------------------------------------------------------------------

def test_variables_read_inside_get_gradients_from_grad_fn():
    v = gt.Variable(5.0, name="v")
    passed = []

    @gt.custom_gradient
    def f(x):
        def grad(up, variables=None):
            passed.append(variables)
            return up * 2.0, [up * 7.0]

        return x * v, grad

    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert [value(g) for g in tape.gradient(y, [x, v])] == [2.0, 7.0]
    assert len(passed[0]) == 1 and passed[0][0] is v


def test_a_variable_only_function_is_watched_through_the_variable():
    v = gt.Variable(2.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up, variables: (up * 0.0 + 1.0, [up * 0.0 + 42.0])

    with gt.GradientTape() as tape:
        y = f(gt.constant(3.0))
    assert value(tape.gradient(y, v)) == 42.0
    assert tape.watched_variables()[0] is v


def test_variables_not_watched_by_the_tape_get_none():
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up, variables=None: (up * v, [up * x])

    x = gt.constant(3.0)
    with gt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = f(x)
    gx, gv = tape.gradient(y, [x, v])
    assert value(gx) == 5.0 and gv is None
    assert tape.watched_variables() == ()


def test_variables_passed_as_arguments_are_inputs_not_variables():
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(w):
        return w * 2.0, lambda up: up * 2.0  # no `variables`: v is an argument

    with gt.GradientTape() as tape:
        y = f(v)
    assert value(tape.gradient(y, v)) == 2.0


def test_grad_fn_with_a_variables_parameter_but_no_variable_read():
    passed = []

    @gt.custom_gradient
    def f(x):
        def grad(up, variables=None):
            passed.append(variables)
            return up * 2.0

        return x * 3.0, grad

    assert grad_of(f, 3.0) == [2.0]
    assert passed == [None]


# --- errors, as TF raises them ---------------------------------------------------------

def test_too_few_gradients():
    @gt.custom_gradient
    def f(a, b):
        return a * b, lambda up: up * 10.0

    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1 "
                       "instead.*one gradient .* per positional argument"):
        grad_of(f, 2.0, 3.0)


def test_too_many_gradients():
    @gt.custom_gradient
    def f(a):
        return a * 2.0, lambda up: (up * 10.0, up)

    with pytest.raises(ValueError, match="expected to return 1 gradients, but returned 2"):
        grad_of(f, 2.0)


def test_python_arguments_need_a_gradient_too():
    @gt.custom_gradient
    def f(x, k):
        return x * k, lambda up: up * k

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x, 3.0)
    with pytest.raises(ValueError, match="expected to return 2 gradients"):
        tape.gradient(y, x)


def test_reading_a_variable_needs_a_variables_parameter():
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up: up * 2.0

    with pytest.raises(TypeError, match="must accept keyword argument 'variables'.*"
                       "grad_fn\\(\\*upstream, variables=None\\)"):
        f(gt.constant(3.0))


def test_one_gradient_per_variable():
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up, variables=None: (up * 2.0, [up * 7.0, up])

    with pytest.raises(ValueError, match="Must return gradient for each variable.*reads 1"):
        grad_of(f, 3.0)


def test_input_and_variable_gradients_must_come_as_a_pair():
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up, variables=None: up * 2.0

    with pytest.raises(TypeError, match=r"must return \(input_gradients, variable_gradients\)"):
        grad_of(f, 3.0)


def test_a_gradient_of_the_wrong_shape():
    @gt.custom_gradient
    def f(x):
        return x * 2.0, lambda up: gt.constant([1.0, 1.0, 1.0])

    with pytest.raises(ValueError, match=r"shape \(3,\) for input 0, which has shape \(\)"):
        grad_of(f, 3.0)


def test_the_function_must_return_a_result_and_grad_fn():
    @gt.custom_gradient
    def f(x):
        return x * 2.0

    with pytest.raises(TypeError, match=r"must return \(result, grad_fn\)"):
        f(gt.constant(1.0))


def _asks_its_own_tape(calls, persistent):
    """A custom-gradient function whose grad_fn calls ``gradient`` on the tape that is
    computing through it (``calls`` holds that tape's method to call)."""

    @gt.custom_gradient
    def double(x):
        def grad_fn(dy):
            calls[0]()  # the tape differentiating through double, re-entered
            return dy * 2.0
        return x * 2.0, grad_fn

    x = gt.constant([1.0, 3.0], dtype="float64")
    tape = gt.GradientTape(persistent=persistent)
    with tape:
        tape.watch(x)
        y = double(x)
    return tape, x, y


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("method", ["gradient", "jacobian"])
def test_grad_fn_calling_the_tape_computing_it_raises(persistent, method):
    calls = [None]
    tape, x, y = _asks_its_own_tape(calls, persistent)
    calls[0] = lambda: tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="computing a gradient already") as info:
        getattr(tape, method)(y, x)
    assert "separate GradientTape" in str(info.value)
    if persistent:  # the tape is usable again afterwards: a grad_fn that behaves works
        calls[0] = lambda: None
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0])
        np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag([2.0, 2.0]))


def test_grad_fn_may_use_a_separate_tape():
    @gt.custom_gradient
    def square(x):
        def grad_fn(dy):
            with gt.GradientTape() as inner:
                inner.watch(x)
                z = x * x
            return dy * inner.gradient(z, x)
        return x * x, grad_fn

    x = gt.constant(3.0, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert float(tape.gradient(y, x)) == 6.0


# --- higher order ------------------------------------------------------------------------

def test_second_derivative_follows_grad_fns_own_ops():
    # grad_fn(up) = 3 x^2 up, differentiated again: 6 x up = 12 at x = 2, up = 1.
    x = gt.constant(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        g = inner.gradient(y, x)
    assert value(g) == 12.0
    assert value(outer.gradient(g, x)) == 12.0


def test_second_derivative_through_an_intermediate_grad_fn_closes_over():
    # grad_fn uses e = exp(x) computed inside the function: the outer tape must see
    # e's dependence on x. d/dx sigmoid(x) = s (1 - s) at x = 0.5.
    x = gt.constant(0.5)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        g = inner.gradient(y, x)
    s = 1 / (1 + np.exp(-0.5))
    assert np.isclose(value(g), s, rtol=1e-6)
    assert np.isclose(value(outer.gradient(g, x)), s * (1 - s), rtol=1e-5)


def test_stop_gradient_inside_grad_fn_stops_higher_order():
    @gt.custom_gradient
    def cube_stopped(x):
        return x ** 3, lambda up: up * 3.0 * gt.stop_gradient(x) ** 2

    x = gt.constant(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = cube_stopped(x)
        g = inner.gradient(y, x)
    assert value(g) == 12.0
    assert outer.gradient(g, x) is None


def test_higher_order_with_respect_to_a_variable_grad_fn_reads():
    # grad_fn returns up * v for x: d/dv of dy/dx = 1.
    v = gt.Variable(5.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda up, variables=None: (up * v, [up * x])

    x = gt.constant(3.0)
    with gt.GradientTape() as outer:
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        gx, gv = inner.gradient(y, [x, v])
    assert value(gx) == 5.0 and value(gv) == 3.0
    assert value(outer.gradient(gx, v)) == 1.0


def test_the_sine_custom_gradient_second_derivative():
    @gt.custom_gradient
    def sine(x):
        return gt.sin(x), lambda up: up * gt.cos(x)

    x = gt.constant(1.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = sine(x)
        g = inner.gradient(y, x)
    assert np.isclose(value(g), np.cos(1.0))
    assert np.isclose(value(outer.gradient(g, x)), -np.sin(1.0))


def test_forward_mode_goes_through_grad_fn():
    x = gt.constant(2.0)
    with gt.ForwardAccumulator(x, gt.constant(1.0)) as acc:
        y = cube(x)
    assert value(acc.jvp(y)) == 12.0  # 3 x^2

    x = gt.constant(100.0)
    with np.errstate(over="ignore", invalid="ignore"):
        with gt.ForwardAccumulator(x, gt.constant(2.0)) as acc:
            y = log1pexp(x)
    assert value(acc.jvp(y)) == 2.0  # tangent 2 times the custom derivative 1


# --- stop_gradient ---------------------------------------------------------------------

def test_stop_gradient_makes_a_constant():
    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * gt.stop_gradient(x * x)
    assert value(tape.gradient(y, x)) == 4.0  # only the first factor: x^2


def test_stop_gradient_alone_disconnects():
    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.stop_gradient(x)
    assert value(y) == 2.0
    assert tape.gradient(y, x) is None


def test_stop_gradient_converts_like_constant():
    assert gt.stop_gradient(3.0).dtype == np.float32
    assert gt.stop_gradient([1, 2]).dtype == np.int32


def test_stop_gradient_stops_forward_mode_too():
    x = gt.constant(2.0)
    with gt.ForwardAccumulator(x, gt.constant(1.0)) as acc:
        y = gt.stop_gradient(x) * x
    assert value(acc.jvp(y)) == 2.0  # only d/dx of the second factor


def test_stop_gradient_in_a_program_is_skipped_by_autodiff():
    # In IR (inside derivative rules) stop_gradient emits an equation autodiff skips:
    # d/dx [stop(x) * x] = stop(x) = 3, not 2x = 6.
    x = Var(Aval((), np.dtype(np.float32)), "x")
    with Builder() as b:
        stopped = gt.stop_gradient(x)
        y = stopped * x
        forward = b.program([x], [y])
    assert [e.prim.name for e in forward.eqns] == ["stop_gradient", "multiply"]
    backward, residuals = vjp_program(forward, [x], [Literal(np.float32(1.0))])
    args = [np.float32(3.0) for _ in residuals]
    assert interpreter.run(backward, args) == [3.0]
