"""Control flow nested in control flow inside @gt.function: a loop in a branch, a branch
in a loop, a loop in a loop, written with gt.cond/gt.while_loop and as AutoGraph Python.
Each stays a loop or a switch of its sub-program; values and gradients (first and
second order) equal eager Python control flow and finite differences in float64, and
the trace runs no loop in the interpreter (a loop in a branch ran equation by equation
while tracing: 15,000 interpreted equations for a 3,000-step loop)."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import central_differences as _fd
from gradient_checks import program_primitives
from gradtape.ops import control_flow


def loop_in_cond(x, k):
    def true_fn():
        return gt.while_loop(lambda i, y: i < k, lambda i, y: (i + 1, gt.sin(y) * x),
                             (gt.constant(0), x))[1]
    return gt.cond(k > 1, true_fn, lambda: x * x * 2.0)


def loop_in_cond_autograph(x, k):
    if k > 1:
        i = gt.constant(0)
        y = x
        while i < k:
            y = gt.sin(y) * x
            i += 1
    else:
        y = x * x * 2.0
    return y


def loop_in_cond_in_loop(x, k):
    i = gt.constant(0)
    y = x
    while i < k:
        if gt.reduce_sum(y) > 0.5:
            j = gt.constant(0)
            while j < i:
                y = gt.cos(y) * x
                j += 1
        else:
            y = y * 1.5 + x
        i += 1
    return y


PROGRAMS = [loop_in_cond, loop_in_cond_autograph, loop_in_cond_in_loop]



def _value_and_derivatives(fn, x, k):
    """y, dy/dx and d2y/dx2 of ``sum(fn(x, k))`` by nested tapes."""
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.reduce_sum(fn(x, k))
        g = inner.gradient(y, x)
        s = gt.reduce_sum(g)
    second = outer.gradient(s, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    return y.numpy(), g.numpy(), second.numpy()



@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", [0, 3, 4])
def test_nested_control_flow_compiles_with_exact_first_and_second_derivatives(fn, k):
    f = gt.function(fn)
    xv = np.array([0.7, -0.4, 1.1])
    x, kt = gt.constant(xv), gt.constant(k)
    for _ in range(3):  # the traced call, then the compiled one
        got = _value_and_derivatives(f, x, kt)
    eager = _value_and_derivatives(fn, x, kt)
    for a, b in zip(got, eager):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)

    def total(v):
        return gt.reduce_sum(fn(gt.constant(v), kt)).numpy()

    def grad_total(v):
        return _value_and_derivatives(fn, gt.constant(v), kt)[1].sum()

    np.testing.assert_allclose(got[1], _fd(total, xv, 1e-5), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[2], _fd(grad_total, xv, 1e-5), rtol=1e-5, atol=1e-8)
    program = f.get_concrete_function(x, kt).program
    assert {"loop", "switch"} <= program_primitives(program)
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_trace_runs_no_loop_of_a_branch_in_the_interpreter(fn, monkeypatch):
    interpreted = []
    run = control_flow.run  # what loop and switch run their sub-programs with

    def counting(program, args, *rest, **kw):
        interpreted.append(len(program.eqns))
        return run(program, args, *rest, **kw)

    monkeypatch.setattr(control_flow, "run", counting)
    f = gt.function(fn)
    x = gt.constant(np.array([0.7, -0.4, 1.1]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(f(x, gt.constant(4)))
    g = tape.gradient(y, x)
    with gt.GradientTape() as eager_tape:
        eager_tape.watch(x)
        want = gt.reduce_sum(fn(x, gt.constant(4)))
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), eager_tape.gradient(want, x).numpy(), rtol=1e-12)
    assert interpreted == []
