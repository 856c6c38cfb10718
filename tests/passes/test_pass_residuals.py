"""Residual selection: only the inputs the backward reads are passed in."""

import pytest
from pass_testing import args_for, build, var

import gradtape as gt
from gradtape.ir import interpreter
from gradtape.ir.nodes import Program
from gradtape.ir.verifier import verify
from gradtape.passes.residuals import select_residuals


def test_unread_inputs_are_dropped_in_order():
    before = build(lambda a, b, c, d: (gt.sin(c) + a, d), var((3,)), var((2,)), var((3,)),
                   var((4,)))
    selection = select_residuals(before)
    verify(selection.program)
    assert selection.kept == (0, 2, 3)
    assert selection.program.inputs == [before.inputs[i] for i in (0, 2, 3)]
    args = args_for(before)
    full = interpreter.run(before, args)
    kept = interpreter.run(selection.program, [args[i] for i in selection.kept])
    for a, b in zip(full, kept):
        assert (a == b).all()


def test_everything_read_keeps_everything():
    before = build(lambda a, b: a * b, var((3,)), var((3,)))
    assert select_residuals(before).kept == (0, 1)


def test_a_value_read_but_not_given_is_an_error():
    inner = build(lambda a: gt.sin(a), var((3,)))
    broken = Program([], inner.eqns, inner.outputs)
    with pytest.raises(ValueError, match="not given"):
        select_residuals(broken)
