"""Dead-code elimination and pruning to the requested outputs."""

from pass_testing import args_for, assert_same_results, build, prims, var

import gradtape as gt
from gradtape.ir.verifier import verify
from gradtape.passes.dce import eliminate_dead_code, prune_outputs


def test_unused_equations_go_and_inputs_stay():
    def f(x, y):
        gt.exp(gt.cos(y))  # computed, never read
        return gt.sin(x)

    before = build(f, var((3,)), var((2,)))
    after = eliminate_dead_code(before)
    verify(after)
    assert prims(after) == ["sin"]
    assert after.inputs == before.inputs
    assert_same_results(before, after, args_for(before))


def test_none_outputs_need_no_work():
    before = build(lambda x: (gt.sin(x), gt.cos(x)), var((3,)))
    before.outputs[1] = None
    after = eliminate_dead_code(before)
    assert prims(after) == ["sin"] and after.outputs[1] is None


def test_prune_outputs_keeps_positions():
    before = build(lambda x, y: (gt.sin(x) * y, gt.cos(y), gt.tanh(x)), var((3,)), var((3,)))
    after = prune_outputs(before, [0, 2])
    verify(after)
    assert prims(after) == ["sin", "multiply", "tanh"]
    assert after.outputs[1] is None
    full, pruned = (gt.ir.interpreter.run(p, args_for(before)) for p in (before, after))
    assert pruned[1] is None
    for i in (0, 2):
        assert (full[i] == pruned[i]).all()


def test_shared_work_stays_while_one_user_lives():
    before = build(lambda x: (gt.sin(x) + 1.0, gt.sin(x) * 2.0), var((3,)))
    after = prune_outputs(before, [1])
    assert prims(after) == ["sin", "multiply"]
