"""The user's file:line on each recorded op (the comments of the generated code).

A tape opened where an earlier tape was opened takes each op's location from that
tape while it records the same structure (no stack walk); where it diverges, it finds
the locations itself. Either way the comments name the lines that recorded the ops.
"""

import inspect

import numpy as np

import gradtape as gt
from gradtape.ir.lower import LOCATION, PRIM


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _step(x, branch):
    with gt.GradientTape() as tape:  # one site for every call
        tape.watch(x)
        y = gt.sin(x)
        if branch == "cos":
            z = gt.cos(y)
        else:
            z = gt.exp(y) * 2.0
    return tape, z


def _recorded_lines(tape):
    return [(record[PRIM].name, record[LOCATION][1]) for record in tape._records]


def test_known_and_diverging_structures_record_the_lines_that_ran():
    gt.clear_cache()
    x = gt.constant(np.array([0.3, 0.7]))
    sin_line = _line_of(_step, "gt.sin(x)")
    cos_line = _line_of(_step, "gt.cos(y)")
    exp_line = _line_of(_step, "gt.exp(y)")
    branches = ["cos", "cos", "cos", "exp", "exp", "cos"]
    # Whether the tape still agreed with the site's reference when it stopped recording:
    # no reference yet, then the cos tape's, then it diverges at exp (exp becomes the
    # reference), and cos diverges from that one.
    agreed = [False, True, True, False, True, False]
    for branch, agrees in zip(branches, agreed):
        tape, z = _step(x, branch)
        assert (tape._reference is not None) == agrees
        expected = [("sin", sin_line)] + (
            [("cos", cos_line)] if branch == "cos"
            else [("exp", exp_line), ("multiply", exp_line)])
        assert _recorded_lines(tape) == expected
        assert all(record[LOCATION][0] == __file__ for record in tape._records)
        source = tape.inspect(z, x).source
        assert f"test_locations.py:{expected[-1][1]})" in source
        tape.gradient(z, x)  # builds (or finds) the backward: the site's reference


def test_nested_tapes_and_call_ops_keep_their_lines():
    gt.clear_cache()
    x = gt.constant(np.array([0.3, 0.7]))

    def hessian_step():
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(gt.tanh(x) * x)
            g = inner.gradient(y, x)
        return outer, g

    gradient_line = _line_of(hessian_step, "inner.gradient(y, x)")
    product_line = _line_of(hessian_step, "gt.tanh(x) * x")
    for _ in range(4):
        outer, g = hessian_step()
        lines = _recorded_lines(outer)
        assert lines[-1] == ("backward_call", gradient_line)
        assert all(line == product_line for _, line in lines[:-1])
        outer.jacobian(g, x)
