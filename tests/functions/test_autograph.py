"""AutoGraph: Python control flow on tensors inside ``@gt.function`` becomes
``gt.cond``/``gt.while_loop``; values and gradients equal the eager Python run and
central finite differences in float64."""

import sys

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import directional_difference

RNG = np.random.default_rng(27)


def _value_and_gradient(fn, *args):
    """``fn(*args)`` and its gradient with respect to every argument (float64)."""
    xs = [gt.constant(np.asarray(a, np.float64)) for a in args]
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    grads = tape.gradient(y, xs)  # None (a condition only): compared as zeros
    return y.numpy(), [np.zeros(x.shape) if g is None else g.numpy() for x, g in zip(xs, grads)]


def _check_against_eager_and_differences(python_fn, *args):
    compiled = gt.function(python_fn)
    value, grads = _value_and_gradient(compiled, *args)
    eager_value, eager_grads = _value_and_gradient(python_fn, *args)
    np.testing.assert_allclose(value, eager_value, rtol=1e-12)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    arrays = [np.asarray(a, np.float64) for a in args]
    directions = [RNG.standard_normal(np.shape(a)) for a in arrays]
    numeric = directional_difference(python_fn, arrays, directions, 1e-6)
    analytic = sum(float(np.sum(g * d)) for g, d in zip(grads, directions))
    np.testing.assert_allclose(analytic, float(np.sum(numeric)), rtol=1e-6, atol=1e-8)
    return compiled


# --- if ------------------------------------------------------------------------------------

def test_tf_test_of_function_cond_gradient_at_the_untaken_branch_is_zero():
    # TF's testOfFunctionCond: the if becomes a cond, whose branch not taken gives 0.
    @gt.function
    def f(k, y):
        if k > 1:
            r = 3 * y
        else:
            r = 0.0
        return r

    y = gt.Variable(2.0)
    for k, expected in [(0.0, 0.0), (3.0, 3.0)]:
        with gt.GradientTape() as tape:
            r = f(gt.constant(k), y)
        grad = tape.gradient(r, y)
        assert grad is not None and grad.numpy() == expected
    assert f(gt.constant(3.0), y).numpy() == 6.0


@pytest.mark.parametrize("k", [-1.5, 0.5, 2.5])
def test_if_elif_else_on_a_tensor_matches_eager_and_differences(k):
    def f(k, x):
        if k > 2:
            y = gt.sin(x) * k
        elif k > 0:
            y = x * x + k
        else:
            y = gt.exp(x) - k
        return gt.reduce_sum(y)

    _check_against_eager_and_differences(f, k, [0.3, -0.7])


def test_a_variable_assigned_before_and_in_one_branch_keeps_its_value_in_the_other():
    def f(p, x):
        y = x * 2.0
        if p > 0:
            y = y * x
        return gt.reduce_sum(y)

    for p in (1.0, -1.0):
        _check_against_eager_and_differences(f, p, [1.5, 2.0])


def test_nested_ifs_in_a_loop_with_temporaries():
    def f(x):
        total = x * 0.0
        for i in gt.range(4):
            if gt.cast(i, gt.float64) > x[0]:
                t = x * 2.0
                total = total + t
            else:
                total = total - x
        return gt.reduce_sum(total)

    _check_against_eager_and_differences(f, [1.2, 0.4])


def test_and_or_not_on_tensors_in_conditions():
    def f(a, x):
        if (a > 0 and a < 2) or not a > -1:
            y = x * 3.0
        else:
            y = x * x
        return gt.reduce_sum(y)

    for a in (1.0, 3.0, -2.0):
        _check_against_eager_and_differences(f, a, [0.5, 1.5])


def test_a_conditional_expression_on_a_tensor():
    def f(a, x):
        y = x * a if a > 0 else x / 2.0
        return gt.reduce_sum(y)

    for a in (2.0, -1.0):
        _check_against_eager_and_differences(f, a, [1.0, 3.0])


def test_a_python_bool_if_stays_python():
    calls = []

    @gt.function
    def f(x, training):
        if training:
            calls.append("train")
            y = x * 2.0
        else:
            calls.append("eval")
            y = x
        return y

    assert f(gt.constant(1.0), True).numpy() == 2.0
    assert f(gt.constant(1.0), False).numpy() == 1.0
    assert calls == ["train", "eval"]  # one branch per trace, as Python runs it


# --- while ---------------------------------------------------------------------------------

def test_newton_square_root_traces_once_for_five_values():
    @gt.function
    def sqrt(a):
        x = a
        while gt.abs(x * x - a) > 1e-4 * a:
            x = (x + a / x) / 2
        return x

    for a in (2.0, 3.0, 10.0, 50.0, 1000.0):
        np.testing.assert_allclose(sqrt(gt.constant(a, gt.float64)).numpy(), np.sqrt(a),
                                   rtol=1e-4)
    assert sqrt.experimental_get_tracing_count() == 1


def test_a_while_loop_gradient_matches_eager_and_differences():
    def f(x):
        y = x
        while gt.reduce_sum(y * y) < 50.0:
            y = y * 1.5 + gt.sin(y)
        return gt.reduce_sum(y)

    _check_against_eager_and_differences(f, [0.5, 0.25])


def test_a_loop_carried_python_number_becomes_a_tensor():
    @gt.function
    def count(n):
        i = 0
        while i < n:
            i = i + 1
        return i

    assert [int(count(gt.constant(k))) for k in (0, 3, 7)] == [0, 3, 7]


# --- for -----------------------------------------------------------------------------------

def test_rnn_over_tf_range_matches_eager_and_differences():
    def rnn(x, w):
        h = x[0] * 0.0
        for t in gt.range(x.shape[0]):
            h = gt.tanh(x[t] * w + h * w)
        return gt.reduce_sum(h)

    _check_against_eager_and_differences(rnn, RNG.standard_normal((6, 3)), [0.3, -0.2, 0.5])


def test_a_range_with_a_tensor_bound_runs_its_run_time_count():
    @gt.function
    def total(n):
        s = gt.constant(0)
        for i in gt.range(1, n + 1):
            s = s + i
        return s

    assert [int(total(gt.constant(k))) for k in (0, 1, 4, 10)] == [0, 1, 10, 55]
    assert total.experimental_get_tracing_count() == 1


def test_builtin_range_of_a_tensor_is_a_tensor_loop():
    @gt.function
    def total(n):
        s = gt.constant(0)
        for i in range(n):
            s = s + i
        return s

    assert [int(total(gt.constant(k))) for k in (3, 5)] == [3, 10]


def test_for_over_a_tensor_runs_over_its_rows():
    def f(x):
        acc = x[0] * 0.0
        for row in x:
            acc = acc * 0.5 + row * row
        return gt.reduce_sum(acc)

    _check_against_eager_and_differences(f, RNG.standard_normal((4, 2)))


def test_for_over_python_values_unrolls():
    traced_iterations = []

    class Stack(gt.Module):
        def __init__(self):
            super().__init__()
            self.layers = [gt.Variable(1.5, dtype=gt.float64), gt.Variable(-0.5, dtype=gt.float64)]

        @gt.function
        def __call__(self, x):
            for w in self.layers:  # a Python list: unrolled while tracing
                traced_iterations.append(1)
                x = x * w
            for _ in range(3):
                x = x + 1.0
            return x

    model = Stack()
    assert model(gt.constant(2.0, gt.float64)).numpy() == 2.0 * 1.5 * -0.5 + 3.0
    assert len(traced_iterations) == 2
    assert "for_stmt" in gt.autograph.to_code(Stack.__call__)


# --- break, continue, return ---------------------------------------------------------------

def test_break_and_continue_in_a_tensor_loop():
    def f(x):
        s = x * 0.0
        for i in gt.range(10):
            if i > 6:
                break
            if i % 3 == 0:
                continue
            s = s + x * gt.cast(i, gt.float64)
        return gt.reduce_sum(s)

    compiled = _check_against_eager_and_differences(f, [1.0, 2.0])
    assert compiled(gt.constant([1.0, 0.0], gt.float64)).numpy() == 1 + 2 + 4 + 5


def test_break_in_a_while_loop_and_its_else_clause():
    @gt.function
    def first_power_over(limit):
        p = gt.constant(1)
        found = gt.constant(False)
        while p < 1000:
            p = p * 2
            if p > limit:
                found = gt.constant(True)
                break
        else:
            p = gt.constant(-1)
        return p, found

    p, found = first_power_over(gt.constant(20))
    assert int(p) == 32 and bool(found)
    p, found = first_power_over(gt.constant(5000))
    assert int(p) == -1 and not bool(found)


def test_return_in_both_branches_of_a_tensor_if():
    def f(x):
        if gt.reduce_sum(x) > 0:
            return gt.reduce_sum(x * x)
        else:
            return gt.reduce_sum(-x)

    for x in ([1.0, 2.0], [-1.0, -3.0]):
        _check_against_eager_and_differences(f, x)


def test_early_return_then_more_code():
    def f(x):
        if gt.reduce_sum(x) > 0:
            return gt.reduce_sum(gt.sin(x))
        y = x * 3.0
        return gt.reduce_sum(y)

    for x in ([1.0, 2.0], [-1.0, -3.0]):
        _check_against_eager_and_differences(f, x)


def test_return_inside_a_python_loop():
    @gt.function
    def second(x):
        for i in range(3):  # Python: the ifs on i stay Python
            if i == 1:
                return x[i]
        return x[0]

    assert second(gt.constant([1.0, -2.0, -3.0])).numpy() == -2.0


def test_return_in_one_branch_of_a_tensor_if_raises_tf_error():
    # TF's rule: a return inside an if on a tensor needs one in both branches.
    @gt.function
    def first_negative(x):
        for i in range(3):
            if x[i] < 0:
                return i
        return -1

    with pytest.raises(ValueError, match="the else branch must also have a return"):
        first_negative(gt.constant([1.0, -2.0, -3.0]))


# --- what keeps working: closures, globals, defaults, methods, nested functions --------------

SCALE = gt.constant(2.0, gt.float64)


def test_closures_globals_defaults_and_nested_functions():
    offset = gt.constant(1.0, gt.float64)

    def inner(v):
        if gt.reduce_sum(v) > 0:
            v = v * SCALE
        return v

    def f(x, power=2):
        y = inner(x) + offset
        while gt.reduce_max(y) < 10.0:
            y = y ** power
        return gt.reduce_sum(y)

    _check_against_eager_and_differences(f, [1.5, 0.5])
    compiled = gt.function(f)
    offset = gt.constant(2.0, gt.float64)  # rebinding the closure cell shows in both
    assert compiled(gt.constant([1.5, 0.5], gt.float64)).numpy() == \
        f(gt.constant([1.5, 0.5], gt.float64)).numpy()


def test_a_method_with_self_and_another_decorator():
    import functools

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper

    class Model:
        def __init__(self):
            self.w = gt.Variable(3.0, dtype=gt.float64)

        @gt.function
        def call(self, x):
            if x > 0:
                y = x * self.w
            else:
                y = -x
            return y

        @gt.function
        @logged
        def wrapped(self, x):
            return x * self.w

    m = Model()
    assert m.call(gt.constant(2.0, gt.float64)).numpy() == 6.0
    assert m.call(gt.constant(-2.0, gt.float64)).numpy() == 2.0
    assert m.wrapped(gt.constant(2.0, gt.float64)).numpy() == 6.0


def test_python_print_runs_while_tracing_and_gt_print_on_every_call(capsys):
    @gt.function
    def f(x):
        if x > 0:
            print("tracing the true branch")
            gt.print("positive", output_stream=sys.stdout)
            y = x
        else:
            print("tracing the false branch")
            y = -x
        return y

    f(gt.constant(1.0))
    first = capsys.readouterr().out
    assert "tracing the true branch" in first and "tracing the false branch" in first
    assert first.count("positive") == 1
    f(gt.constant(2.0))
    second = capsys.readouterr().out
    assert second == "positive\n"  # no Python print: the call runs the trace


def test_autograph_false_keeps_tracing_python_control_flow():
    def f(x):
        if x > 0:
            y = x * 2.0
        else:
            y = x * 0.0
        return y

    plain = gt.function(f, autograph=False)
    assert plain(gt.constant(1.0)).numpy() == 2.0
    assert plain(gt.constant(-1.0)).numpy() == 0.0
    assert plain.experimental_get_tracing_count() == 2  # a guard: one trace per branch
    converted = gt.function(f)
    converted(gt.constant(1.0))
    assert converted(gt.constant(-1.0)).numpy() == 0.0
    assert converted.experimental_get_tracing_count() == 1  # a cond: one trace


def test_a_python_if_on_a_random_draw_is_a_cond():
    # Without AutoGraph this is TF's OperatorNotAllowedInGraphError (a Python bool of a
    # draw); converted, as in TF, the if is a cond and the call takes one draw's branch.
    gen = gt.random.Generator.from_seed(3)

    @gt.function
    def f(x):
        u = gen.uniform([])
        if u > 0.5:
            return x * 10.0
        return x - 10.0

    values = {float(f(gt.constant(1.0))) for _ in range(20)}
    assert values == {10.0, -9.0}


def test_a_retrace_names_the_converted_statement_that_read(caplog):
    # A body that reads a value in Python keeps the loop a Python one (guards): the
    # retrace reason names the loop, not AutoGraph's runtime function.
    import logging

    @gt.function
    def f(n):
        s = gt.constant(0.0)
        for i in gt.range(n):
            s = s + float(i)
        return s

    with caplog.at_level(logging.INFO, logger="gradtape"):
        assert f(gt.constant(2)).numpy() == 1.0
        assert f(gt.constant(4)).numpy() == 6.0
    reasons = [r.getMessage() for r in caplog.records if "traced (" in r.getMessage()]
    assert any("a for loop over a tensor at " + __file__ in r for r in reasons), reasons


def test_super_inside_a_converted_branch_of_a_method():
    class Base:
        def scale(self, x):
            return x * 2.0

    class Child(Base):
        @gt.function
        def scale(self, x):
            if x > 0:
                y = super().scale(x)  # inside the branch's own function
            else:
                y = -x
            return y

    child = Child()
    assert child.scale(gt.constant(3.0)).numpy() == 6.0
    assert child.scale(gt.constant(-3.0)).numpy() == 3.0


def test_a_bound_method_passed_to_gt_function_is_converted():
    class Model:
        w = 3.0

        def call(self, x):
            if x > 0:
                return x * self.w
            return x

    f = gt.function(Model().call)
    assert f(gt.constant(2.0)).numpy() == 6.0
    assert f(gt.constant(-2.0)).numpy() == -2.0
    assert f.experimental_get_tracing_count() == 1  # a cond, not a guard per branch


COUNTED = []


def test_nonlocal_and_global_names_assigned_in_python_branches_keep_their_values():
    calls = 0

    def make():
        def f(x, count):
            nonlocal calls
            global COUNTED
            if count:  # a Python bool: Python's if, run while tracing
                calls = calls + 1
                COUNTED = [*COUNTED, "traced"]
            if x > 0:
                y = x * 2.0
            else:
                y = -x
            return y
        return f

    f = gt.function(make())
    assert f(gt.constant(2.0), True).numpy() == 4.0
    assert f(gt.constant(-2.0), True).numpy() == 2.0
    assert calls == 1 and COUNTED == ["traced"]  # one trace; the outside names updated
