"""Random programs (``random_programs.programs``): every way of computing a gradient agrees.

For each program, at random points and with random output gradients:

- fresh tapes: compiled (generated on the first call) == interpreted == central finite
  differences in float64, at a first point and at a second one served from the cache;
  compiled == interpreted in float32; variables as inputs, assigned between calls;
- forward mode: ``gt.jvp`` == finite differences;
- second order, nested tapes: ``d <grad, w> / dx`` compiled == interpreted == finite
  differences of the first-order gradient;
- a persistent tape asked again with other output gradients (served from the cache);
- ``@gt.function`` returning the gradient: each call, compiled == interpreted, and a tape
  around a call differentiates the gradient once more.

The default suite runs a small budget; ``-m slow`` runs every check on many programs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradient_checks import (
    assert_same_gradients,
    assert_vjp_matches_differences,
    directional_difference,
)
from random_programs import Program, programs, random_inputs

# The compiled backward falling back to the interpreter is a code generation bug: fail.
pytestmark = pytest.mark.filterwarnings("error:gradtape.s generated:RuntimeWarning")


def _budget(examples: int) -> settings:
    # derandomize and no database: every run checks the same programs.
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])


SMALL = _budget(15)
LARGE = _budget(300)


def _constants(arrays):
    return [gt.constant(a) for a in arrays]


def _numpy(grads):
    return [g.numpy() for g in grads]


def tape_gradient(program: Program, arrays, u, *, compiled: bool) -> list[np.ndarray]:
    """``u``'s vector-Jacobian product of ``program`` on a fresh tape."""
    with gt.config(compile=compiled, compile_after=1):
        xs = _constants(arrays)
        with gt.GradientTape() as tape:
            tape.watch(xs)
            y = program(*xs)
        return _numpy(tape.gradient(y, xs, output_gradients=u, unconnected_gradients="zero"))


def contracted_gradient(program: Program, u, ws):
    """``x -> <u's VJP of program at x, ws>``: a scalar function of the inputs (tensors)."""
    def along(*xs):
        with gt.GradientTape() as inner:
            inner.watch(xs)
            y = program(*xs)
        grads = inner.gradient(y, list(xs), output_gradients=u, unconnected_gradients="zero")
        return sum(gt.reduce_sum(g * w) for g, w in zip(grads, ws))
    return along


def second_order(program: Program, arrays, u, ws, *, compiled: bool) -> list[np.ndarray]:
    """``d <VJP(x), ws> / dx`` with a tape around the inner tape."""
    with gt.config(compile=compiled, compile_after=1):
        xs = _constants(arrays)
        with gt.GradientTape() as outer:
            outer.watch(xs)
            s = contracted_gradient(program, u, ws)(*xs)
        return _numpy(outer.gradient(s, xs, unconnected_gradients="zero"))


def _point(program: Program, rng: np.random.Generator):
    arrays = random_inputs(program, int(rng.integers(2**31)))
    return arrays, rng.standard_normal(program.output_shape)


# --- the checks ----------------------------------------------------------------------------

def check_fresh_tapes(program: Program, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    for call in ("first call", "cached"):
        arrays, u = _point(program, rng)
        interpreted = tape_gradient(program, arrays, u, compiled=False)
        compiled = tape_gradient(program, arrays, u, compiled=True)
        assert_same_gradients(interpreted, compiled, what=f"compiled vs interpreted, {call}")
        assert_vjp_matches_differences(program, arrays, u, compiled, rng, what=call)
    assert gt.cache_info().compiled >= 1


def check_float32(program: Program, seed: int) -> None:
    """In float32, compiled == interpreted, and the gradients keep their sources' dtype
    (no finite differences: float32 is too coarse for them)."""
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    arrays, _ = _point(program, rng)
    arrays = [a.astype(np.float32) for a in arrays]
    u = rng.standard_normal(program.output_shape).astype(np.float32)
    for call in ("first call", "cached"):
        interpreted = tape_gradient(program, arrays, u, compiled=False)
        compiled = tape_gradient(program, arrays, u, compiled=True)
        assert all(g.dtype == np.float32 for g in compiled), [g.dtype for g in compiled]
        assert_same_gradients(interpreted, compiled, rtol=1e-4, what=f"float32, {call}")


def check_variables(program: Program, seed: int) -> None:
    """Variables as the inputs, read by the tape without ``watch`` and assigned new values
    between gradient calls of the same structure."""
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    variables = None
    for call in ("first call", "assigned", "assigned again"):
        arrays, u = _point(program, rng)
        if variables is None:
            variables = [gt.Variable(a) for a in arrays]
        for v, a in zip(variables, arrays):
            v.assign(a)
        with gt.config(compile=True, compile_after=1):
            with gt.GradientTape() as tape:
                y = program(*variables)
            grads = _numpy(tape.gradient(y, variables, output_gradients=u,
                                         unconnected_gradients="zero"))
        interpreted = tape_gradient(program, arrays, u, compiled=False)
        assert_same_gradients(interpreted, grads, what=f"variables, {call}")
        assert_vjp_matches_differences(program, arrays, u, grads, rng, what=f"variables, {call}")


def check_forward_mode(program: Program, seed: int) -> None:
    """``gt.jvp`` == central finite differences along a random direction."""
    rng = np.random.default_rng(seed)
    arrays, _ = _point(program, rng)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    _, tangent = gt.jvp(program, _constants(arrays), _constants(vs))
    numeric = directional_difference(program, arrays, vs, 1e-6)
    scale = 1.0 + float(np.max(np.abs(numeric), initial=0.0))
    np.testing.assert_allclose(np.asarray(tangent), numeric, rtol=1e-5, atol=1e-6 * scale)


def check_second_order(program: Program, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    for call in ("first call", "cached"):
        arrays, u = _point(program, rng)
        ws = [rng.standard_normal(a.shape) for a in arrays]
        interpreted = second_order(program, arrays, u, ws, compiled=False)
        compiled = second_order(program, arrays, u, ws, compiled=True)
        assert_same_gradients(interpreted, compiled, rtol=1e-8,
                              what=f"second order compiled vs interpreted, {call}")
        with gt.config(compile=False):
            assert_vjp_matches_differences(contracted_gradient(program, u, ws), arrays,
                                           np.float64(1.0), compiled, rng, eps=1e-5,
                                           rtol=1e-5, what=f"second order, {call}")


def check_persistent_tape(program: Program, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    arrays, _ = _point(program, rng)
    seeds = [rng.standard_normal(program.output_shape) for _ in range(2)]
    with gt.config(compile=True, compile_after=1):
        xs = _constants(arrays)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = program(*xs)
        # Other output gradients, the first again, then the default (ones) twice: every
        # call but the first of each kind of seed is served from the cache.
        calls = [seeds[0], seeds[1], seeds[0], None, None]
        for n, u in enumerate(calls):
            hits = gt.cache_info().hits
            grads = _numpy(tape.gradient(y, xs, output_gradients=u,
                                         unconnected_gradients="zero"))
            if n not in (0, 3):
                assert gt.cache_info().hits > hits, f"call {n} was not served from the cache"
            u = np.ones(program.output_shape) if u is None else u
            interpreted = tape_gradient(program, arrays, u, compiled=False)
            assert_same_gradients(interpreted, grads, what=f"persistent tape, call {n}")
            assert_vjp_matches_differences(program, arrays, u, grads, rng,
                                           what=f"persistent tape, call {n}")


def gradient_function(program: Program) -> Callable[..., list]:
    """A ``@gt.function`` returning ``u``'s vector-Jacobian product of ``program``."""
    @gt.function
    def vjp(xs, u):
        with gt.GradientTape() as tape:
            tape.watch(xs)
            y = program(*xs)
        return tape.gradient(y, xs, output_gradients=u, unconnected_gradients="zero")
    return vjp


def check_function(program: Program, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt.clear_cache()
    vjp = gradient_function(program)
    for call in ("tracing call", "traced call"):
        arrays, u = _point(program, rng)
        xs, u_t = _constants(arrays), gt.constant(u)
        compiled = _numpy(vjp(xs, u_t))
        with gt.config(compile=False):
            interpreted = _numpy(vjp(xs, u_t))
        assert_same_gradients(interpreted, compiled, what=f"@gt.function, {call}")
        assert_vjp_matches_differences(program, arrays, u, compiled, rng,
                                       what=f"@gt.function, {call}")
        # A tape around the call differentiates the returned gradient.
        ws = [rng.standard_normal(a.shape) for a in arrays]
        with gt.GradientTape() as outer:
            outer.watch(xs)
            s = sum(gt.reduce_sum(g * w) for g, w in zip(vjp(xs, u_t), ws))
        hessian_w = _numpy(outer.gradient(s, xs, unconnected_gradients="zero"))
        with gt.config(compile=False):
            assert_vjp_matches_differences(contracted_gradient(program, u, ws), arrays,
                                           np.float64(1.0), hessian_w, rng, eps=1e-5,
                                           rtol=1e-5, what=f"@gt.function second order, {call}")
    assert vjp.experimental_get_tracing_count() == 1


# --- the tests -----------------------------------------------------------------------------

@SMALL
@given(programs(), st.integers(0, 2**16))
def test_fresh_tapes(program, seed):
    check_fresh_tapes(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_float32(program, seed):
    check_float32(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_variables_assigned_between_calls(program, seed):
    check_variables(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_forward_mode(program, seed):
    check_forward_mode(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_second_order_nested_tapes(program, seed):
    check_second_order(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_persistent_tape_called_again(program, seed):
    check_persistent_tape(program, seed)


@SMALL
@given(programs(), st.integers(0, 2**16))
def test_function_returning_the_gradient(program, seed):
    check_function(program, seed)


@pytest.mark.slow
@LARGE
@given(programs(), st.integers(0, 2**16))
def test_every_check_on_many_programs(program, seed):
    check_fresh_tapes(program, seed)
    check_float32(program, seed)
    check_variables(program, seed)
    check_forward_mode(program, seed)
    check_second_order(program, seed)
    check_persistent_tape(program, seed)
    check_function(program, seed)


# --- found by the property tests, fixed: regression tests ---------------------------------

def test_second_order_of_a_vector_dot_vector_compiles():
    def f(x):
        return gt.reduce_sum(gt.sin(x + gt.tensordot(x, x, axes=1)))

    x = np.array([0.3, -0.6])
    hessians = []
    for compiled in (False, True):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            xt = gt.constant(x)
            with gt.GradientTape() as outer:
                outer.watch(xt)
                with gt.GradientTape() as inner:
                    inner.watch(xt)
                    y = f(xt)
                s = gt.reduce_sum(inner.gradient(y, xt))
            hessians.append(outer.gradient(s, xt).numpy())
    # s = S (1 + 2 sum(x)) with S = sum(cos(x + x.x)): its gradient, by hand.
    z = x + x @ x
    dS = -np.sin(z) - 2 * x * np.sum(np.sin(z))
    expected = dS * (1 + 2 * np.sum(x)) + 2 * np.sum(np.cos(z))
    for hessian in hessians:
        np.testing.assert_allclose(hessian, expected, rtol=1e-12)


# Forward over reverse: f(x) -> its Hessian-vector product at x = [1, -2] along v = [1, 1].
FORWARD_OVER_REVERSE = {
    "abs": (lambda x: gt.reduce_sum(gt.abs(x) * x), [2.0, -2.0]),  # H = diag(2 sign(x))
    "relu": (lambda x: gt.reduce_sum(gt.nn.relu(x) * x), [2.0, 0.0]),  # H = diag(2 (x > 0))
    "maximum": (lambda x: gt.reduce_sum(gt.maximum(x, 0.5) * x), [2.0, 0.0]),
    "reduce_max": (lambda x: gt.reduce_max(x * x), [0.0, 2.0]),  # the max is x[1]^2
}


@pytest.mark.parametrize("name", sorted(FORWARD_OVER_REVERSE))
def test_forward_over_reverse_through_piecewise_constant_ops(name):
    f, expected = FORWARD_OVER_REVERSE[name]
    x, v = gt.constant(np.array([1.0, -2.0])), gt.constant(np.array([1.0, 1.0]))
    _, hessian_v = gt.jvp(gt.grad(f), (x,), (v,))
    np.testing.assert_allclose(hessian_v.numpy(), expected, rtol=1e-12)
