"""A @gt.function of float64 scalars runs generated code on Python floats (codegen/floats.py).

Each covered op: the compiled call gives the eager (NumPy) call's bits, the interpreter's
bits, gradients equal to float64 finite differences, and at edge values (0, -0, inf,
nan, huge, negative) NumPy's values and NumPy's warnings. The generated source is pinned
in tests/golden/scalar_chain_on_floats.txt (tests/codegen/golden_programs.py).
"""

import math
import types
import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape.codegen import floats

UNARY = {
    "sin": gt.sin,
    "cos": gt.cos,
    "sqrt": gt.sqrt,
    "square": gt.square,
    "negative": gt.negative,
    "reciprocal": gt.math.reciprocal,
}
BINARY = {
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "divide": lambda x, y: x / y,
}
EDGES = [0.0, -0.0, 1.0, -2.5, 1e-310, 1e300, -1e300, math.inf, -math.inf, math.nan, 1e22]


def _on_floats(function, *args):
    return "isfinite" in function.get_source(*args) or "= float(" in function.get_source(*args)


def _bits(value):
    array = np.asarray(value)
    assert array.dtype == np.float64 and array.shape == ()
    return "nan" if np.isnan(array) else array.tobytes()


def _run(python_function, *args, decorate):
    """The value and NumPy's warning kinds (overflow, divide by zero, invalid)."""
    fn = gt.function(python_function) if decorate else python_function
    if decorate:  # traced on ordinary values: the call below runs the generated code
        fn(*[gt.constant(np.float64(0.5 + i)) for i in range(len(args))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*[gt.constant(np.float64(a)) for a in args])
    kinds = {k for w in caught for k in ("overflow", "divide by zero", "invalid value")
             if k in str(w.message) and issubclass(w.category, RuntimeWarning)}
    return out, kinds


def _assert_same_as_eager(python_function, *args):
    eager, eager_kinds = _run(python_function, *args, decorate=False)
    compiled, compiled_kinds = _run(python_function, *args, decorate=True)
    assert isinstance(compiled, gt.Tensor) and compiled.dtype == gt.float64
    assert _bits(compiled.numpy()) == _bits(eager.numpy()), (args, compiled, eager)
    assert compiled_kinds == eager_kinds, (args, compiled_kinds, eager_kinds)


@pytest.mark.parametrize("op", list(UNARY))
def test_each_unary_op_runs_on_floats_and_gives_numpys_bits(op):
    function = gt.function(lambda x: UNARY[op](x) * 1.5)
    x = gt.constant(np.float64(0.7))
    assert _on_floats(function, x)
    for value in EDGES + list(np.random.default_rng(1).standard_normal(20) * 4):
        _assert_same_as_eager(lambda x: UNARY[op](x) * 1.5, value)


@pytest.mark.parametrize("op", list(BINARY))
def test_each_binary_op_runs_on_floats_and_gives_numpys_bits(op):
    function = gt.function(BINARY[op])
    x = gt.constant(np.float64(0.7))
    assert _on_floats(function, x, x)
    for a in EDGES:
        for b in EDGES:
            _assert_same_as_eager(BINARY[op], a, b)


@pytest.mark.parametrize("op", list(UNARY) + list(BINARY))
def test_gradients_equal_finite_differences_and_the_interpreter(op):
    def grad(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = UNARY[op](x * 1.3) if op in UNARY else BINARY[op](gt.sin(x), x + 2.0)
        return y, tape.gradient(y, x)

    compiled = gt.function(grad)
    for value in (0.3, 0.9, 2.1):
        x = gt.constant(np.float64(value))
        assert _on_floats(compiled, x)
        y, g = compiled(x)
        with gt.config(compile=False):
            y_interpreted, g_interpreted = gt.function(grad)(x)
        assert _bits(y.numpy()) == _bits(y_interpreted.numpy())
        assert _bits(g.numpy()) == _bits(g_interpreted.numpy())
        h = 1e-6
        up, _ = grad(gt.constant(np.float64(value + h)))
        down, _ = grad(gt.constant(np.float64(value - h)))
        assert g.numpy() == pytest.approx((up.numpy() - down.numpy()) / (2 * h), rel=1e-7)


def test_a_division_by_an_overflowed_value_warns_as_numpy_does():
    # x * x overflows (NumPy warns), then 1 / inf is a finite 0: still NumPy's warning.
    _assert_same_as_eager(lambda x: 1.0 / (x * x) + x, 1e200)
    _assert_same_as_eager(lambda x: gt.math.reciprocal(x * x), 1e200)
    _, kinds = _run(lambda x: 1.0 / (x * x) + x, 1e200, decorate=True)
    assert kinds == {"overflow"}


def test_finite_outputs_whose_sum_overflows_are_still_right():
    def two(x):
        return x * 1.0, x * 1.5

    a, b = gt.function(two)(gt.constant(np.float64(1e308)))
    assert a.numpy() == 1e308 and b.numpy() == np.float64(1e308) * 1.5  # inf, as NumPy


def test_errors_numpy_raises_under_seterr_are_raised():
    fn = gt.function(lambda x: x * 1e300)
    fn(gt.constant(np.float64(1.0)))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        fn(gt.constant(np.float64(1e300)))


def test_the_scalar_chain_matches_the_numpy_code_and_its_gradient():
    def chain(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(20):
                y = gt.sin(y) * y + gt.cos(y) * 0.5
        return tape.gradient(y, x)

    compiled = gt.function(chain)
    for value in (0.7, -1.3, 0.0):
        x = gt.constant(np.float64(value))
        assert _on_floats(compiled, x)
        assert _bits(compiled(x).numpy()) == _bits(chain(x).numpy())


def test_second_order_with_nested_tapes_on_floats():
    @gt.function
    def second(x):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.sin(x) * x
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    x = gt.constant(np.float64(0.8))
    assert _on_floats(second, x)
    dy, d2y = second(x)
    assert dy.numpy() == pytest.approx(math.cos(0.8) * 0.8 + math.sin(0.8), rel=1e-14)
    assert d2y.numpy() == pytest.approx(2 * math.cos(0.8) - 0.8 * math.sin(0.8), rel=1e-14)


def test_an_outer_tape_through_a_float_function_gets_its_gradient():
    fn = gt.function(lambda x: gt.sin(x) * x)
    x = gt.constant(np.float64(0.8))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert tape.gradient(y, x).numpy() == pytest.approx(
        math.cos(0.8) * 0.8 + math.sin(0.8), rel=1e-14)


def test_float32_scalars_keep_float32_arithmetic():
    fn = gt.function(lambda x: gt.sin(x) * x + 0.1)
    x = gt.constant(np.float32(0.7))
    assert not _on_floats(fn, x)
    out = fn(x)
    assert out.dtype == gt.float32
    assert out.numpy().tobytes() == (np.sin(np.float32(0.7)) * np.float32(0.7)
                                     + np.float32(0.1)).tobytes()


def test_ops_that_differ_from_math_or_arrays_stay_on_numpy():
    x = gt.constant(np.float64(0.7))
    assert not _on_floats(gt.function(lambda x: gt.exp(x) * x), x)  # NumPy's own exp
    assert not _on_floats(gt.function(lambda x: gt.sin(x) * 2.0),
                          gt.constant(np.array([0.7])))
    assert not _on_floats(gt.function(lambda x: x > 0.5), x)


def test_every_math_function_template_is_checked_against_numpy():
    from gradtape.ops import elementwise

    for op in (elementwise.sin, elementwise.cos, elementwise.sqrt):
        assert floats._matches_numpy(op.primitive)  # glibc's, as NumPy's float64 loops

    class OneBitOff:
        float_template = "exp({0})"
        impl = staticmethod(lambda x: np.nextafter(np.exp(x), np.inf))

    assert not floats._matches_numpy(OneBitOff())


# --- the warm call's capture probe: same objects, same result; another object, a trace --

SCALE = gt.constant(np.float64(2.0))
SCALES = [gt.constant(np.float64(2.0))]


def test_rebinding_a_global_tensor_after_warm_calls_traces_again():
    global SCALE
    fn = gt.function(lambda x: x * SCALE)
    x = gt.constant(np.float64(1.5))
    assert fn(x).numpy() == 3.0 and fn(x).numpy() == 3.0
    saved = SCALE
    try:
        SCALE = gt.constant(np.float64(4.0))
        assert fn(x).numpy() == 6.0
        assert fn.experimental_get_tracing_count() == 2
    finally:
        SCALE = saved


def test_a_global_list_changed_in_place_after_warm_calls_traces_again():
    fn = gt.function(lambda x: x * SCALES[0])
    x = gt.constant(np.float64(1.5))
    assert fn(x).numpy() == 3.0 and fn(x).numpy() == 3.0
    saved = SCALES[0]
    try:
        SCALES[0] = gt.constant(np.float64(4.0))
        assert fn(x).numpy() == 6.0
    finally:
        SCALES[0] = saved


def test_rebinding_a_closure_tensor_after_warm_calls_traces_again():
    scale = gt.constant(np.float64(2.0))
    fn = gt.function(lambda x: x * scale)
    x = gt.constant(np.float64(1.5))
    assert fn(x).numpy() == 3.0 and fn(x).numpy() == 3.0
    scale = gt.constant(np.float64(5.0))  # the closure reads it
    assert fn(x).numpy() == 7.5


def test_a_closure_cell_bound_after_warm_calls_traces_again():
    switch = types.SimpleNamespace(on=False)  # not a container: the probe remembers

    def step(x):
        return x * scale if switch.on else x

    fn = gt.function(step)
    x = gt.constant(np.float64(1.5))
    assert fn(x).numpy() == 1.5 and fn(x).numpy() == 1.5  # scale's cell is empty
    scale = gt.constant(np.float64(2.0))
    switch.on = True
    assert fn(x).numpy() == 3.0  # the cell holds a tensor now: a new signature


def test_the_probe_looks_up_only_the_globals_the_code_reads():
    def step(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = [gt.sin(x) * SCALE for _ in range(2)]
        return tape.gradient(y, x)

    assert set(gt.function(step)._probe.names) == {"gt", "SCALE", "range"}
