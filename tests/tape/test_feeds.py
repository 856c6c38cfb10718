"""One ``Feed`` type says where a backward's argument comes from (a source, a recorded
input, a recorded output, a seed), and one whole-tape lookup (``lookup.whole_tape``)
serves every caller (issue 20, item 4)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.ir.lower import (
    RECORDED_INPUT,
    RECORDED_OUTPUT,
    SEED,
    SOURCE,
    Feed,
    Trace,
    feed_value,
    prune,
)
from gradtape.tape import lookup


@pytest.fixture(autouse=True)
def _fresh_cache():
    gt.clear_cache()
    yield
    gt.clear_cache()


A = np.array([1.5, 0.25, -0.75])
SEED_Y = np.array([2.0, -1.0, 0.5])


def _record(w, x):
    """A source read by ops, a constant, residual outputs (tanh, exp) and a seed."""
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.tanh(w * A) * x
        z = gt.reduce_sum(gt.exp(x) * w)
    return tape, y, z


def _expected(wv, xv):
    """d(SEED_Y . y + z)/dw and d/dx by hand for _record's program."""
    t = np.tanh(wv * A)
    dw = SEED_Y * xv * (1 - t * t) * A + np.exp(xv)
    dx = SEED_Y * t + np.exp(xv) * wv
    return dw, dx


def _entry_and_trace(tape, sources, targets, grads):
    target_ids = [t._id for t in targets]
    kept = prune(tape._records, [s._id for s in sources], target_ids)
    trace = Trace(kept, sources, target_ids, lookup.output_flags(grads))
    return trace, backward_cache.get(trace.key)


def test_every_backward_says_where_its_arguments_come_from_with_feeds():
    w, x = gt.Variable(np.array([0.5, -1.2, 2.0])), gt.constant(np.array([0.3, 0.7, -0.4]))
    grads = [SEED_Y, None]
    for _ in range(2):
        tape, y, z = _record(w, x)
        g = tape.gradient([y, z], [w, x], output_gradients=grads)
    dw, dx = _expected(w.numpy(), x.numpy())
    np.testing.assert_allclose(g[0].numpy(), dw, rtol=1e-12)
    np.testing.assert_allclose(g[1].numpy(), dx, rtol=1e-12)
    (hit,) = lookup._whole_tapes.values()
    tape, y, z = _record(w, x)
    trace, entry = _entry_and_trace(tape, [w, x], [y, z], grads)
    for feeds in (trace.origins, entry.feeds, hit.feeds):
        assert all(isinstance(f, Feed) for f in feeds), feeds
    kinds = {f.kind for f in entry.feeds}
    assert SEED in kinds and kinds & {RECORDED_INPUT, RECORDED_OUTPUT}, entry.feeds
    assert kinds <= {SOURCE, RECORDED_INPUT, RECORDED_OUTPUT, SEED}


def test_the_entry_and_its_whole_tape_hit_gather_the_same_arrays():
    """The entry's feeds count the trace's records, the hit's the tape's: both must name
    the very arrays the tape recorded, in the backward's input order."""
    w, x = gt.Variable(np.array([0.5, -1.2, 2.0])), gt.constant(np.array([0.3, 0.7, -0.4]))
    grads = [SEED_Y, None]
    tape, y, z = _record(w, x)
    tape.gradient([y, z], [w, x], output_gradients=grads)
    (hit,) = lookup._whole_tapes.values()
    tape, y, z = _record(w, x)
    trace, entry = _entry_and_trace(tape, [w, x], [y, z], grads)
    assert hit.entry is entry
    from_entry = entry.arguments(trace, [w, x], [SEED_Y])
    from_hit = hit.gather(tape._records, [w, x], [SEED_Y])
    assert len(from_entry) == len(from_hit) == len(entry.program.inputs)
    for a, b in zip(from_entry, from_hit):
        assert a is b
    assert [feed_value(f, trace.records, [w, x], [SEED_Y]) for f in entry.feeds] == from_entry


def test_fresh_tapes_give_the_same_gradient_on_every_rung():
    """Step 1 builds (trace rung), the later steps find the whole-tape hit; jacobians
    climb the same lookup (``lookup.whole_tape``)."""
    w = gt.Variable(np.array([0.5, -1.2, 2.0]))
    x = gt.constant(np.array([0.3, 0.7, -0.4]))
    for step in range(4):
        tape, y, z = _record(w, x)
        hits = gt.cache_info().hits
        dw, dx = tape.gradient([y, z], [w, x], output_gradients=[SEED_Y, None])
        if step:
            assert gt.cache_info().hits == hits + 1
        ew, ex = _expected(w.numpy(), x.numpy())
        np.testing.assert_allclose(dw.numpy(), ew, rtol=1e-12)
        np.testing.assert_allclose(dx.numpy(), ex, rtol=1e-12)
        w.assign_add(np.array([0.1, -0.05, 0.02]))
    for step in range(3):
        with gt.GradientTape() as tape:
            y = gt.tanh(w * A)
        whole_tapes = len(lookup._whole_tapes)
        jac = tape.jacobian(y, w).numpy()
        # The first jacobian files its structure on the whole-tape rung; later ones find it.
        assert len(lookup._whole_tapes) == whole_tapes + (step == 0)
        t = np.tanh(w.numpy() * A)
        np.testing.assert_allclose(jac, np.diag((1 - t * t) * A), rtol=1e-12)


def test_a_tape_without_a_signature_has_no_whole_tape_key():
    w = gt.Variable(np.array([0.5, -1.2, 2.0]))
    tape, y, z = _record(w, gt.constant(np.zeros(3)))
    tape._signature = None  # something unkeyable was recorded
    assert lookup.whole_tape(tape, lookup.tape_slots(tape, [w]), lookup.tape_slots(tape, [z]),
                             lookup.ONES) == (None, None)
