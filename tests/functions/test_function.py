"""@gt.function: tracing, signatures, guards, retracing, variables, gradients through it."""

import logging
from collections import namedtuple

import numpy as np
import pytest

import gradtape as gt
from gradtape.ir.lower import PRIM
from gradtape.ops.registry import Primitive


@pytest.fixture(params=[True, False], ids=["compiled", "interpreted"])
def compile_mode(request):
    """Traced functions (and gradients) through generated code, then the interpreter."""
    with gt.config(compile=request.param, compile_after=1):
        yield request.param


def assert_same(a, b):
    """Equal values, dtypes and shapes (bit for bit: a trace runs the same NumPy calls)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def f64(value):
    return gt.constant(np.asarray(value, dtype=np.float64))


# --- equality with the undecorated function -------------------------------------------

def model(x, w, b):
    return gt.reduce_sum(gt.tanh(x @ w + b) ** 2, axis=1)


def test_results_equal_the_python_function(compile_mode):
    rng = np.random.default_rng(0)
    x = gt.constant(rng.normal(size=(4, 3)).astype(np.float32))
    w = gt.constant(rng.normal(size=(3, 5)).astype(np.float32))
    b = gt.constant(rng.normal(size=(5,)).astype(np.float32))
    traced = gt.function(model)
    for _ in range(3):
        assert_same(traced(x, w, b), model(x, w, b))
    assert traced.experimental_get_tracing_count() == 1


def test_nested_arguments_and_results():
    Pair = namedtuple("Pair", "a b")

    def fn(inputs, scale, pair):
        out = {"sum": inputs["x"] + inputs["y"][0], "scaled": inputs["y"][1] * scale}
        return out, [pair.a * pair.b, None, "tag"], Pair(pair.b, pair.a)

    traced = gt.function(fn)
    args = ({"x": f64([1.0, 2.0]), "y": [f64(3.0), f64([4.0, 5.0])]}, 2.0,
            Pair(f64(6.0), f64(7.0)))
    for _ in range(2):
        got, want = traced(*args), fn(*args)
        assert set(got[0]) == {"sum", "scaled"}
        assert_same(got[0]["sum"], want[0]["sum"])
        assert_same(got[0]["scaled"], want[0]["scaled"])
        assert_same(got[1][0], want[1][0])
        assert got[1][1:] == [None, "tag"]
        assert isinstance(got[2], Pair)
        assert_same(got[2].a, 7.0)
    assert traced.experimental_get_tracing_count() == 1


def test_keyword_arguments_and_numpy_arrays():
    @gt.function
    def fn(x, *, power=2, offset=None):
        return x ** power + offset

    a = np.array([1.0, 2.0, 3.0])
    assert_same(fn(a, offset=np.array([1.0, 1.0, 1.0])), a ** 2 + 1)
    assert_same(fn(a, power=3, offset=np.float64(0.5)), a ** 3 + 0.5)
    assert fn.experimental_get_tracing_count() == 2


def test_numpy_arguments_are_copied():
    @gt.function
    def fn(x):
        return gt.identity(x)

    a = np.array([1.0, 2.0])
    out = fn(a)
    a[0] = 100.0
    assert_same(out, [1.0, 2.0])


def test_python_side_effects_run_only_while_tracing():
    log = []

    @gt.function
    def fn(x):
        log.append("traced")
        return x + 1.0

    for _ in range(3):
        fn(gt.constant(1.0))
    assert log == ["traced"]


def test_methods_trace_per_instance():
    class Scale:
        def __init__(self, k):
            self.k = gt.Variable(k)

        @gt.function
        def __call__(self, x):
            return x * self.k

    a, b = Scale(2.0), Scale(3.0)
    x = gt.constant([1.0, 2.0])
    assert_same(a(x), np.float32([2.0, 4.0]))
    assert_same(b(x), np.float32([3.0, 6.0]))
    assert_same(a(x), np.float32([2.0, 4.0]))
    a.k.assign(5.0)
    assert_same(a(x), np.float32([5.0, 10.0]))
    assert "def forward(x, Variable_1):" in type(a).__call__.__get__(a).get_source(x)


def test_decorator_with_arguments_and_repr():
    @gt.function(name="renamed")
    def fn(x):
        return x

    fn(gt.constant(1.0))
    assert fn.__name__ == "renamed"
    assert "renamed" in repr(fn) and "1 trace" in repr(fn)


# --- signatures and retracing ----------------------------------------------------------

def test_retrace_counts_for_shapes_dtypes_and_static_values():
    @gt.function
    def fn(x, k):
        return x * k

    calls = [
        (gt.constant([1.0, 2.0]), 2, 1),        # first trace
        (gt.constant([3.0, 4.0]), 2, 1),        # same signature: no trace
        (gt.constant([1.0, 2.0, 3.0]), 2, 2),   # new shape
        (f64([1.0, 2.0]), 2, 3),                # new dtype
        (gt.constant([1.0, 2.0]), 3, 4),        # new static value
        (gt.constant([1.0, 2.0]), 3.0, 5),      # same value, other Python type
        (np.array([5.0, 6.0], np.float32), 2, 5),  # an array: same signature as a tensor
        (gt.constant([7.0, 8.0]), 3, 5),
    ]
    for x, k, count in calls:
        assert_same(fn(x, k), np.asarray(x) * k)
        assert fn.experimental_get_tracing_count() == count


def test_non_hashable_static_argument_raises_type_error():
    @gt.function
    def fn(x, options):
        return x

    with pytest.raises(TypeError, match="not hashable"):
        fn(gt.constant(1.0), {1, 2} if False else bytearray(b"ab"))


def test_variable_arguments_are_keyed_by_identity():
    @gt.function
    def fn(v):
        return v * 2.0

    a, b = gt.Variable([1.0, 2.0]), gt.Variable([3.0, 4.0])
    assert_same(fn(a), np.float32([2.0, 4.0]))
    assert_same(fn(b), np.float32([6.0, 8.0]))
    assert fn.experimental_get_tracing_count() == 2
    a.assign([5.0, 6.0])
    assert_same(fn(a), np.float32([10.0, 12.0]))
    assert fn.experimental_get_tracing_count() == 2


def test_rebinding_a_captured_variable_retraces():
    holder = {"v": gt.Variable(2.0)}
    v = holder["v"]

    def make():
        def fn(x):
            return x * v
        return fn

    fn = gt.function(make())
    x = gt.constant(3.0)
    assert_same(fn(x), np.float32(6.0))
    v = gt.Variable(10.0)  # the closure cell now holds another variable
    assert_same(fn(x), np.float32(30.0))
    assert fn.experimental_get_tracing_count() == 2


def test_rebinding_a_captured_tensor_retraces():
    scale = gt.constant(2.0)

    @gt.function
    def fn(x):
        return x * scale

    x = gt.constant(3.0)
    assert_same(fn(x), np.float32(6.0))
    scale = gt.constant(5.0)  # read through the closure cell
    assert_same(fn(x), np.float32(15.0))
    assert fn.experimental_get_tracing_count() == 2


def test_retracing_warns_after_five_consecutive_traces(caplog):
    @gt.function
    def fn(x, k):
        return x * k

    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for k in range(4):
            fn(gt.constant(1.0), k)
        assert "retracing" not in caplog.text
        fn(gt.constant(1.0), 4)
    assert "5 out of the last 5 calls to <gt.function fn> triggered tf.function retracing" \
        in caplog.text
    assert "argument `k` changed: Python int 3 -> Python int 4" in caplog.text


def test_each_trace_is_logged_with_its_reason(caplog):
    traced = gt.function(branchy, autograph=False)  # its if stays a bool(t) guard
    with caplog.at_level(logging.INFO, logger="gradtape"):
        traced(gt.constant([1.0]))
        traced(gt.constant([1.0, 2.0]))
        traced(gt.constant([-1.0, -2.0]))
    reasons = [r.getMessage() for r in caplog.records if "traced" in r.getMessage()]
    assert len(reasons) == 3
    assert "(the first call)" in reasons[0]
    assert "(argument `x` changed: float32 tensor of shape (1,) -> float32 tensor of " \
        "shape (2,))" in reasons[1]
    assert "bool(t) at " in reasons[2] and "it was True when traced, False now" in reasons[2]


def test_reusing_a_trace_does_not_warn(caplog):
    @gt.function
    def fn(x):
        return x * 2.0

    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for _ in range(10):
            fn(gt.constant(1.0))
    assert "retracing" not in caplog.text


# --- guards: Python control flow on tensor values --------------------------------------

def branchy(x):
    if gt.reduce_sum(x) > 0:
        return x * 2.0
    return -x


def test_value_dependent_branch_is_guarded(compile_mode):
    traced = gt.function(branchy, autograph=False)  # Python's if: a guard
    values = [[1.0, 2.0], [-1.0, -2.0], [3.0, 4.0], [-5.0, 1.0], [2.0, -1.0], [-1.0, 0.0]]
    for v in values:
        x = gt.constant(v)
        assert_same(traced(x), branchy(x))
    # One trace per outcome of the branch, each reused.
    assert traced.experimental_get_tracing_count() == 2


def test_loop_bound_depending_on_values_is_guarded():
    def steps_to_halve(x):
        n = 0
        while gt.reduce_max(gt.abs(x)) > 1.0:
            x = x / 2.0
            n += 1
        return x, n

    traced = gt.function(steps_to_halve, autograph=False)  # Python's loop: guards
    for v in [3.0, 5.0, 100.0, 3.5, 0.5, 100.0, 7.9]:
        x = gt.constant([v, 0.25])
        got, want = traced(x), steps_to_halve(x)
        assert_same(got[0], want[0])
        assert got[1] == want[1]
    # 3.0, 3.5: two halvings; 5.0, 7.9: three; 100.0: seven; 0.5: none.
    assert traced.experimental_get_tracing_count() == 4


@pytest.mark.parametrize("read", ["float", "int", "numpy", "asarray", "index"])
def test_value_reads_are_guards(read):
    def fn(x, i):
        if read == "float":
            k = float(i)
        elif read == "int":
            k = int(i)
        elif read == "numpy":
            k = i.numpy() * 1
        elif read == "asarray":
            k = np.asarray(i) * 1
        else:
            k = [1, 10, 100][i]
        return x * k

    traced = gt.function(fn)
    x = gt.constant(2)
    for i in [0, 1, 2, 1, 0, 2]:
        i_t = gt.constant(i)
        assert_same(traced(x, i_t), fn(x, i_t))
    assert traced.experimental_get_tracing_count() == 3


def test_int_guard_compares_what_python_saw():
    @gt.function
    def fn(x, n):
        return x * int(n)

    x = gt.constant(1.0)
    assert_same(fn(x, gt.constant(2.2)), np.float32(2.0))
    assert_same(fn(x, gt.constant(2.9)), np.float32(2.0))  # int() is 2 again: no trace
    assert fn.experimental_get_tracing_count() == 1
    assert_same(fn(x, gt.constant(3.1)), np.float32(3.0))
    assert fn.experimental_get_tracing_count() == 2


def test_guard_on_a_variable_sees_its_current_value():
    v = gt.Variable(1.0)

    @gt.function(autograph=False)  # Python's conditional expression: a guard
    def fn(x):
        return x * 2.0 if v > 0 else x * -3.0

    x = gt.constant(1.0)
    assert_same(fn(x), np.float32(2.0))
    v.assign(-1.0)
    assert_same(fn(x), np.float32(-3.0))
    v.assign(5.0)
    assert_same(fn(x), np.float32(2.0))
    assert fn.experimental_get_tracing_count() == 2


def test_an_op_reading_a_tensor_value_directly_is_never_stale():
    # gather with a tensor index: the op wrapper turns the index into an array.
    @gt.function
    def fn(x, i):
        return x[i]

    x = gt.constant([1.0, 2.0, 3.0])
    for i in [0, 2, 1, 2]:
        assert_same(fn(x, gt.constant([i])), np.float32([i + 1.0]))


def test_returning_a_value_read_from_a_tensor_raises():
    @gt.function
    def as_float(x):
        return float(x)

    @gt.function
    def as_array(x):
        return x.numpy()

    with pytest.raises(TypeError, match="return the tensor itself"):
        as_float(gt.constant(1.5))
    with pytest.raises(TypeError, match="return the tensor itself"):
        as_array(gt.constant([1.5]))


def test_returning_static_python_values_is_fine():
    @gt.function
    def fn(x, flag):
        if x > 0:  # a bool read: True is a fine result (a bool tensor, as in TF)
            return x, True, flag
        return x, False, flag

    for value, expected in ((1.0, True), (-1.0, False), (2.0, True)):
        got = fn(gt.constant(value), "a")
        assert_same(got[1], np.bool_(expected))
        assert got[2] == "a"


@pytest.mark.parametrize("taping", [False, True], ids=["plain", "under_a_tape"])
def test_returned_python_numbers_are_tensors_as_in_tf(compile_mode, taping):
    # TF: @tf.function returning 3 gives tf.Tensor(3, shape=(), dtype=int32).
    @gt.function
    def fn(x):
        return x * 2.0, 3, (2.5, True, np.float64(0.5), np.array([1, 2], np.int64)), None

    x = gt.constant(1.5)
    for _ in range(2):
        with gt.GradientTape() as tape:
            if taping:
                tape.watch(x)
            y, three, (half, flag, wide, pair), nothing = fn(x)
        assert_same(y, np.float32(3.0))
        for got, want in ((three, np.int32(3)), (half, np.float32(2.5)),
                          (flag, np.bool_(True)), (wide, np.float64(0.5)),
                          (pair, np.array([1, 2], np.int64))):
            assert isinstance(got, gt.Tensor)
            assert_same(got, want)
        assert nothing is None
        if taping:
            assert_same(tape.gradient(y, x), np.float32(2.0))
    assert_same(gt.function(lambda: 3)(), np.int32(3))
    assert fn.experimental_get_tracing_count() == 1


def test_returning_another_object_raises_type_error():
    @gt.function
    def fn(x):
        return x, object()

    with pytest.raises(TypeError, match="returned a object"):
        fn(gt.constant(1.0))


def test_generator_functions_raise_type_error():
    @gt.function
    def gen(x):
        yield x * 2.0

    with pytest.raises(TypeError, match="generator and async functions are not supported"):
        gen(gt.constant(1.0))
    with pytest.raises(TypeError, match="generator"):
        gt.function(lambda x: (v * 2.0 for v in x))(gt.constant([1.0, 2.0]))


# --- printing and other value reads: shown symbolically, guarded, or refused ---------------

def test_repr_of_a_traced_tensor_shows_no_value():
    # The value read by repr is not a guard: repr shows a name instead (TF's graph
    # tensors), so a branch on it takes the same side on every call.
    traced = gt.function(lambda x: x * 2 if "-" in repr(x) else x * 3)
    assert_same(traced(gt.constant([-1.0, -1.0])), np.float32([-3.0, -3.0]))
    assert_same(traced(gt.constant([3.0, 3.0])), np.float32([9.0, 9.0]))
    assert traced.experimental_get_tracing_count() == 1


def test_print_inside_a_function_shows_names_shapes_and_dtypes(capsys):
    captured = gt.constant([5.0, 6.0])
    weight = gt.Variable(2.0, name="w")

    @gt.function
    def fn(x):
        y = x * weight
        print(x, y, captured, weight)
        print(f"{x}; {[y]}; %s" % (x,))  # %-formatting is tested too
        return y

    for value in ([1.0, -2.0], [3.0, 4.0]):
        assert_same(fn(gt.constant(value)), np.float32(value) * 2.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [  # printed once: the one trace
        'Tensor("x", shape=(2,), dtype=float32) Tensor("multiply", shape=(2,), dtype=float32) '
        "Tensor([5. 6.], shape=(2,), dtype=float32) <gt.Variable 'w:0' shape=() "
        "dtype=float32>",
        'Tensor("x", shape=(2,), dtype=float32); [Tensor("multiply", shape=(2,), '
        'dtype=float32)]; Tensor("x", shape=(2,), dtype=float32)',
    ]
    assert "numpy=2.0" in repr(weight)  # outside a trace: the value, as before


@pytest.mark.parametrize("show", ["str", "fstring", "format", "percent", "variable"])
def test_text_of_a_traced_value_is_the_same_on_every_call(show):
    v = gt.Variable(1.0)

    def fn(x):
        text = {"str": lambda: str(x), "fstring": lambda: f"{x}",
                "format": lambda: "{}".format(x),  # noqa: UP032 - the call is the point
                "percent": lambda: "%s" % (x,),  # noqa: UP031
                "variable": lambda: repr(v)}[show]()
        return x * 2.0 if "-" in text else x * 3.0

    traced = gt.function(fn)
    for value in (-1.0, 2.0, -3.0):
        v.assign(value)
        assert_same(traced(gt.constant(value)), np.float32(value * 3.0))
    assert traced.experimental_get_tracing_count() == 1


def test_formatting_a_traced_scalar_with_a_spec_raises_type_error():
    traced = gt.function(lambda x: x * 2.0 if "-" in f"{x:.2f}" else x)
    with pytest.raises(TypeError, match=r"no value to format.*float\(t\)"):
        traced(gt.constant(-1.0))
    assert f"{gt.constant(-1.0):.2f}" == "-1.00"  # eagerly: the value


def test_hashing_a_tensor_is_refused():
    traced = gt.function(lambda x: x * 2.0 if hash(x) else x)
    with pytest.raises(TypeError, match="unhashable"):
        traced(gt.constant(1.0))


@pytest.mark.parametrize("read", [
    "if", "iterate", "contains", "max", "list", "floor", "percent_f", "percent_d",
    "format_float", "str_numpy", "tolist", "complex"])
def test_more_value_reads_are_guards(read):
    import math

    readers = {
        "if": lambda x: x[0] < 0,
        "iterate": lambda x: any(v < 0 for v in x),
        "contains": lambda x: -1.0 in x,
        "max": lambda x: max(x) < 0,
        "list": lambda x: list(x)[0] < 0,
        "floor": lambda x: math.floor(x[0]) < 0,
        "percent_f": lambda x: "-" in "%.1f" % x[0],  # noqa: UP031 - % is the point
        "percent_d": lambda x: "-" in "%d" % x[0],  # noqa: UP031
        "format_float": lambda x: "-" in f"{float(x[0]):.2f}",
        "str_numpy": lambda x: "-" in str(x.numpy()),
        "tolist": lambda x: x.numpy().tolist()[0] < 0,
        "complex": lambda x: complex(x[0]).real < 0,
    }

    def fn(x):
        return x * 2.0 if readers[read](x) else x * 3.0

    traced = gt.function(fn, autograph=False)  # a tensor condition would be a cond
    for value in ([-1.0, -1.0], [3.0, 3.0], [-1.0, -1.0], [3.0, 3.0]):
        x = gt.constant(value)
        assert_same(traced(x), fn(x))
    assert traced.experimental_get_tracing_count() == 2  # one per value, each reused


def test_a_branch_on_len_follows_the_shape():
    def fn(x):
        return x * 2.0 if len(x) == 2 else x * 3.0

    traced = gt.function(fn)
    for value in ([1.0, 2.0], [1.0, 2.0, 3.0], [4.0, 5.0]):
        assert_same(traced(gt.constant(value)), fn(gt.constant(value)))
    assert traced.experimental_get_tracing_count() == 2


# --- variables ----------------------------------------------------------------------------

def test_variable_reads_happen_at_call_time(compile_mode):
    v = gt.Variable([1.0, 2.0])

    @gt.function
    def fn(x):
        return x * v

    x = gt.constant([3.0, 4.0])
    assert_same(fn(x), np.float32([3.0, 8.0]))
    v.assign([10.0, 20.0])
    assert_same(fn(x), np.float32([30.0, 80.0]))
    assert fn.experimental_get_tracing_count() == 1


def test_assignments_are_applied_after_each_call(compile_mode):
    v = gt.Variable(1.0)
    counter = gt.Variable(0, dtype=np.int64)

    @gt.function
    def fn(x):
        v.assign_add(x)
        before = v * 1.0  # reads the value just assigned
        v.assign(v * 2.0)
        v.assign_sub(1.0)
        counter.assign_add(1)
        return before

    results = [float(fn(gt.constant(2.0))) for _ in range(3)]
    # v: 1 -> 3 -> 5 ; 5 -> 7 -> 13 ; 13 -> 15 -> 29
    assert results == [3.0, 7.0, 15.0]
    assert float(v) == 29.0
    assert int(counter) == 3
    assert fn.experimental_get_tracing_count() == 1


def test_derivatives_of_reads_after_an_assign_go_to_the_variable():
    # Eagerly, assign is not recorded: a later read is the variable itself (gradients
    # of all its reads are summed), not the expression assigned to it.
    v = gt.Variable(2.0)

    def fn(x):
        before = v * x
        v.assign(x * 3.0)
        return v * v + before

    results = []
    for f in (fn, gt.function(fn)):
        for _ in range(2):
            v.assign(2.0)
            x = gt.constant(1.0)
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            gx, gv = tape.gradient(y, [x, v])
            v.assign(2.0)
            with gt.ForwardAccumulator(v, gt.constant(1.0)) as acc:
                y = f(gt.constant(1.0))
            results.append((float(y), float(gx), float(gv), float(acc.jvp(y))))
    assert results == [(11.0, 2.0, 7.0, 7.0)] * 4


def test_assign_checks_dtype_and_shape_as_eagerly():
    v = gt.Variable([1.0, 2.0])

    @gt.function
    def bad_shape(x):
        v.assign(x)

    @gt.function
    def bad_dtype(x):
        v.assign(x)

    with pytest.raises(ValueError, match="shape mismatch"):
        bad_shape(gt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="float64"):
        bad_dtype(f64([1.0, 2.0]))
    assert_same(v, np.float32([1.0, 2.0]))  # failed traces leave variables alone


def test_variable_created_on_a_retrace_raises():
    made = []

    @gt.function
    def fn(x):
        made.append(gt.Variable(np.zeros(x.shape, np.float32)))
        return x + made[-1]

    # As TF: a first trace that creates variables is traced again, and a function that
    # creates one on every trace raises at once (TF's function guide, "Creating
    # tf.Variables").
    with pytest.raises(ValueError, match="only supports variables created on the first call"):
        fn(gt.constant([1.0]))


def test_variable_created_on_the_first_call_only_is_kept():
    class Count(gt.Module):
        def __init__(self):
            self.count = None

        @gt.function
        def __call__(self):
            if self.count is None:
                self.count = gt.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert [int(c()), int(c()), int(c())] == [1, 2, 3]  # TF's guide prints 1, then 2
    assert c.__call__.experimental_get_tracing_count() == 1


def test_function_returning_a_variable_returns_its_value():
    v = gt.Variable(1.0)

    @gt.function
    def fn():
        v.assign_add(1.0)
        return v

    out = fn()
    assert isinstance(out, gt.Tensor) and not isinstance(out, gt.Variable)
    assert float(out) == 2.0 and float(fn()) == 3.0


# --- gradients through @function ----------------------------------------------------------

def loss_fn(x, w):
    return gt.reduce_sum(gt.sin(x * w) * x) + gt.reduce_sum(w * w)


def first_and_second(fn, x, w):
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = fn(x, w)
        dx, dw = inner.gradient(y, [x, w])
    hessian = outer.jacobian(dx, x)
    return y, dx, dw, hessian


def test_gradients_match_the_python_function(compile_mode):
    x = f64([0.3, -0.7, 1.1])
    w = gt.Variable(np.array([1.5, -0.5, 0.25]))
    traced = gt.function(loss_fn)
    for _ in range(2):
        got = first_and_second(traced, x, w)
        want = first_and_second(loss_fn, x, w)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-14)
    assert traced.experimental_get_tracing_count() == 1


def test_third_derivative_through_function(compile_mode):
    traced = gt.function(lambda x: x * x * gt.sin(x))
    x = f64(0.4)
    with gt.GradientTape() as t3:
        t3.watch(x)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = traced(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    s, c = np.sin(0.4), np.cos(0.4)
    np.testing.assert_allclose(float(d1), 2 * 0.4 * s + 0.16 * c, rtol=1e-13)
    np.testing.assert_allclose(float(d2), 2 * s + 4 * 0.4 * c - 0.16 * s, rtol=1e-13)
    np.testing.assert_allclose(float(d3), 6 * c - 6 * 0.4 * s - 0.16 * c, rtol=1e-12)


def test_one_call_op_is_recorded():
    traced = gt.function(loss_fn)
    x, w = f64([0.3, 0.7]), gt.Variable(np.array([1.0, 2.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = traced(x, w)
    assert [rec[PRIM].name for rec in tape._records] == ["function_call"]
    assert tape.watched_variables() == (w,)  # variables read inside are watched
    gx, gw = tape.gradient(y, [x, w])
    want_x, want_w = first_and_second(loss_fn, x, w)[1:3]
    np.testing.assert_allclose(gx.numpy(), want_x.numpy(), rtol=1e-13)
    np.testing.assert_allclose(gw.numpy(), want_w.numpy(), rtol=1e-13)


def test_gradient_reaches_captured_tensors_and_skips_constants():
    c = f64([2.0, 3.0])

    @gt.function
    def fn(x):
        return gt.reduce_sum(x * c * gt.constant(np.array([1.0, 10.0])))

    x = f64([1.0, 1.0])
    with gt.GradientTape() as tape:
        tape.watch([x, c])
        y = fn(x)
    gx, gc = tape.gradient(y, [x, c])
    assert_same(gx, [2.0, 30.0])
    assert_same(gc, [1.0, 10.0])


def test_unconnected_and_integer_outputs_under_a_tape():
    @gt.function
    def fn(x):
        return x * 2.0, gt.argmax(x), gt.constant(7.0)

    x = gt.constant([1.0, 3.0, 2.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, i, c = fn(x)
    assert int(i) == 1 and float(c) == 7.0
    assert_same(tape.gradient(y, x), np.float32([2.0, 2.0, 2.0]))
    assert tape.gradient(c, x) is None


def test_forward_mode_through_function():
    traced = gt.function(loss_fn)
    w = gt.Variable(np.array([1.5, -0.5]))
    tangent = np.array([1.0, 2.0])
    results = []
    for fn in (loss_fn, traced):
        x = f64([0.3, 0.7])
        with gt.ForwardAccumulator(x, tangent) as acc:
            y = fn(x, w)
        results.append(acc.jvp(y).numpy())
        # forward over reverse: a Hessian-vector product
        x = f64([0.3, 0.7])
        with gt.ForwardAccumulator(x, tangent) as acc:
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = fn(x, w)
            g = tape.gradient(y, x)
        results.append(acc.jvp(g).numpy())
    np.testing.assert_allclose(results[2], results[0], rtol=1e-13)
    np.testing.assert_allclose(results[3], results[1], rtol=1e-13)


def test_gradient_inside_and_outside_nested_functions():
    @gt.function
    def inner(x):
        return gt.exp(x) * x

    @gt.function
    def outer(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = inner(x)  # inlined into outer's trace
        return y, tape.gradient(y, x)

    x = f64([0.5, -1.0])
    y, g = outer(x)
    assert_same(y, np.exp([0.5, -1.0]) * [0.5, -1.0])
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, -1.0]) * ([0.5, -1.0] + np.ones(2)),
                               rtol=1e-14)
    with gt.GradientTape() as tape:
        tape.watch(x)
        _, g = outer(x)
    hess_diag = tape.gradient(g, x)  # d/dx of e^x (x + 1) = e^x (x + 2)
    xs = np.array([0.5, -1.0])
    np.testing.assert_allclose(hess_diag.numpy(), np.exp(xs) * (xs + 2.0), rtol=1e-14)


def test_gradient_of_a_guarded_function_follows_the_branch():
    traced = gt.function(branchy)
    for v in ([1.0, 2.0], [-3.0, 1.0], [2.0, 2.0]):
        x = gt.constant(v)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = traced(x)
        expected = 2.0 if sum(v) > 0 else -1.0
        assert_same(tape.gradient(y, x), np.full(2, expected, np.float32))


def numeric_gradient(fn, x, eps=1e-6):
    """Central differences of a scalar ``fn`` at the float64 array ``x``."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (float(fn(gt.constant(x + step))) - float(fn(gt.constant(x - step)))) / (2 * eps)
    return grad


def test_gradient_through_tensordot_of_a_length_one_intermediate(compile_mode):
    # The optimized backward once broadcast a (1, 1) cotangent straight to (2,): the
    # reshape to (1,) between them was dropped, and the backward raised ValueError.
    def fn(x):
        row = gt.expand_dims(gt.reduce_sum(x), 0)
        return gt.reduce_sum(gt.tensordot(row, np.array([[1.0, 2.0]]), axes=1))

    traced = gt.function(fn)
    x = np.array([0.5, -1.5])
    for _ in range(2):
        xt = gt.constant(x)
        with gt.GradientTape() as tape:
            tape.watch(xt)
            y = traced(xt)
        np.testing.assert_allclose(tape.gradient(y, xt).numpy(), numeric_gradient(fn, x),
                                   rtol=1e-7)


# --- the training-step pattern --------------------------------------------------------------

def make_model(seed):
    rng = np.random.default_rng(seed)
    return [gt.Variable(rng.normal(size=(4, 8)) * 0.5, name="w1"),
            gt.Variable(np.zeros(8), name="b1"),
            gt.Variable(rng.normal(size=(8, 3)) * 0.5, name="w2"),
            gt.Variable(np.zeros(3), name="b2")]


def make_train_step(variables, optimizer):
    def train_step(x, y):
        with gt.GradientTape() as tape:
            h = gt.tanh(x @ variables[0] + variables[1])
            logits = h @ variables[2] + variables[3]
            loss = gt.reduce_mean(gt.nn.softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        correct = gt.equal(gt.argmax(logits, axis=-1), gt.argmax(y, axis=-1))
        return loss, gt.reduce_mean(gt.cast(correct, "float64"))
    return train_step


@pytest.mark.parametrize("make_optimizer", [
    lambda: gt.optimizers.Adam(0.05),
    lambda: gt.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    lambda: gt.optimizers.RMSprop(0.01),
], ids=["adam", "sgd-nesterov", "rmsprop"])
def test_train_step_matches_the_eager_loop(make_optimizer):
    rng = np.random.default_rng(1)
    batches = [(rng.normal(size=(16, 4)), np.eye(3)[rng.integers(0, 3, 16)]) for _ in range(3)]
    eager_vars, traced_vars = make_model(0), make_model(0)
    eager_opt, traced_opt = make_optimizer(), make_optimizer()
    eager = make_train_step(eager_vars, eager_opt)
    traced = gt.function(make_train_step(traced_vars, traced_opt))
    for step in range(12):
        x, y = (gt.constant(a) for a in batches[step % 3])
        want, got = eager(x, y), traced(x, y)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-12)
        assert float(got[1]) == float(want[1])
    for a, b in zip(traced_vars + traced_opt.variables, eager_vars + eager_opt.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
    assert int(traced_opt.iterations) == 12
    assert traced.experimental_get_tracing_count() == 1


def test_train_step_compiles_to_one_function_with_its_gradient_inline():
    variables = make_model(0)
    step = gt.function(make_train_step(variables, gt.optimizers.SGD(0.1)))
    x, y = gt.constant(np.ones((2, 4))), gt.constant(np.eye(3)[:2])
    source = step.get_source(x, y)
    assert "def forward(" in source
    assert "backward_call" not in source and "function_call" not in source
    assert "tanh" in source and "@" in source
    # the variables are inputs of the generated function, and their new values outputs
    assert "w1" in source and "b2" in source


def test_minimize_with_a_loss_callable_inside():
    w = gt.Variable(np.array([3.0, -2.0]))
    opt = gt.optimizers.SGD(0.25)

    @gt.function
    def step():
        opt.minimize(lambda: gt.reduce_sum(w * w), [w])

    for _ in range(3):
        step()
    assert_same(w, np.array([3.0, -2.0]) * 0.5 ** 3)


# --- inspection and limits ----------------------------------------------------------------

def test_inspection_shows_forward_backward_and_source():
    traced = gt.function(lambda x, y: gt.reduce_sum(gt.sin(x) * y))
    x, y = f64([1.0, 2.0]), f64([3.0, 4.0])
    forward_ir = traced.get_forward_ir(x, y)
    assert "sin" in forward_ir and "multiply" in forward_ir and "x_1:float64[2]" in forward_ir
    backward_ir = traced.get_backward_ir(x, y)
    assert "cos" in backward_ir and "seed" in backward_ir
    source = traced.get_source(x, y)
    assert source.startswith("# Generated by gradtape: the forward function")
    assert "def forward(x, y):" in source
    assert "def backward(" in traced.get_backward_source(x, y)
    assert traced.experimental_get_tracing_count() == 1  # inspection traced it once
    assert traced.get_concrete_function(x, y) is traced.get_concrete_function(x, y)


def test_custom_gradient_inside_runs_eagerly_with_its_gradient(caplog):
    calls = []

    @gt.custom_gradient
    def clip_grad(x):
        calls.append(1)
        return x, lambda g: gt.clip_by_value(g, -1.0, 1.0)

    @gt.function
    def fn(x):
        return clip_grad(x) * 2.0

    x = gt.constant(3.0, dtype=gt.float64)
    with caplog.at_level("WARNING", logger="gradtape"):
        for _ in range(3):
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = fn(x)
            # upstream 2.0 is clipped to 1.0 by grad_fn: TF's value.
            assert float(y) == 6.0 and float(tape.gradient(y, x)) == 1.0
    assert len([r for r in caplog.records if "custom_gradient" in r.message]) == 1
    assert len(calls) == 4  # the aborted trace, then once per call: Python runs each time
    with pytest.raises(NotImplementedError, match="no concrete function"):
        fn.get_concrete_function(x)


def test_non_differentiable_ops_are_traced_too():
    @gt.function
    def fn(x):
        return gt.stop_gradient(x) * x, gt.argmax(x)

    x = gt.constant([1.0, 5.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y, i = fn(x)
    assert int(i) == 1
    assert_same(tape.gradient(y, x), np.float32([1.0, 5.0, 2.0]))
    x2 = gt.constant([9.0, 1.0, 2.0])
    assert int(fn(x2)[1]) == 0


def test_compiled_and_interpreted_calls_agree():
    traced = gt.function(model)
    rng = np.random.default_rng(3)
    args = [gt.constant(rng.normal(size=s)) for s in [(2, 3), (3, 4), (4,)]]
    compiled = traced(*args)
    with gt.config(compile=False):
        interpreted = traced(*args)
    assert_same(compiled, interpreted)


def test_traced_with_compilation_off_compiles_once_it_is_on():
    traced = gt.function(model)
    args = [gt.constant(np.ones(s)) for s in [(2, 3), (3, 4), (4,)]]
    with gt.config(compile=False):
        interpreted = traced(*args)
        concrete = traced.get_concrete_function(*args)
        assert concrete.forward.function is None
        assert "def forward(" in traced.get_source(*args)
    assert_same(traced(*args), interpreted)
    assert concrete.forward.function is not None


def test_a_primitive_traced_through_its_implementation():
    # A primitive the code generator calls by its implementation (not a NumPy template).
    def _clipped_square(x):
        return np.minimum(x * x, 4.0)

    prim = Primitive("clipped_square", _clipped_square,
                     vjp=lambda g, y, x: (g * 2.0 * x * (x * x < 4.0),))

    @gt.function
    def fn(x):
        from gradtape.ops.registry import bind

        return bind(prim, x) + 1.0

    x = f64([1.0, 3.0])
    assert_same(fn(x), [2.0, 5.0])
    assert "clipped_square_impl" in fn.get_source(x)


def test_docs_snippets_run():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "function.md").read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(block, namespace)
    assert namespace["train_step"].experimental_get_tracing_count() == 1
    assert namespace["clip_norm"].experimental_get_tracing_count() == 2


def test_watching_on_a_tape_from_outside_the_trace_raises():
    x = gt.constant(np.array([3.0, 4.0]))
    outer = gt.GradientTape()

    @gt.function
    def watch_outside(a):
        outer.watch(a)  # would only happen while tracing: a clear error instead
        return a * 2

    with pytest.raises(RuntimeError, match="opened outside the @gt.function"):
        watch_outside(x)

    @gt.function
    def watch_inside(a):
        with gt.GradientTape() as tape:
            tape.watch(a)
            y = gt.reduce_sum(a * a)
        return tape.gradient(y, a)

    np.testing.assert_allclose(watch_inside(x).numpy(), [6.0, 8.0])
    np.testing.assert_allclose(watch_inside(x).numpy(), [6.0, 8.0])
