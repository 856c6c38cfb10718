"""The lookup ladder (lookup.py): one owner of every table from a recorded structure to
its backward, named hits, and one ``clear_cache`` that empties every table."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.ad import nested
from gradtape.compiler import cache
from gradtape.compiler.cache import backward_cache
from gradtape.ir import lower
from gradtape.tape import lookup, site_references


@pytest.fixture(autouse=True)
def _fresh_cache():
    gt.clear_cache()
    yield
    gt.clear_cache()


def _tables() -> dict:
    return {
        "compile cache": len(backward_cache),
        "whole tapes": len(lookup._whole_tapes),
        "persistent repeats": len(lookup._repeats),
        "batched entries": len(cache.batched_entries._table),
        "nested derived programs": len(nested.derived_programs._table),
        "site references": len(site_references._references),
    }


def _fill_every_table(x: gt.Variable) -> tuple[gt.Tensor, gt.GradientTape]:
    """A Hessian-vector product's result, and a persistent tape (kept weakly by rung 1)."""
    for _ in range(2):  # a fresh tape per step: whole-tape hits and site references
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(gt.tanh(x) * x)
        tape.gradient(y, x)
    with gt.GradientTape(persistent=True) as persistent:  # rung 1
        y = gt.sin(x) * x
    persistent.gradient(y, x)
    persistent.jacobian(y, x)  # a batched entry
    with gt.GradientTape() as outer:  # a Hessian: the call op's VJP program
        with gt.GradientTape() as inner:
            y = gt.reduce_sum(gt.exp(x) * x)
        g = inner.gradient(y, x)
        z = gt.reduce_sum(g * g)
    return outer.gradient(z, x), persistent


def test_clear_cache_empties_every_table_and_later_gradients_are_right():
    x = gt.Variable(np.array([0.3, -0.7, 1.1]))
    _, persistent = _fill_every_table(x)
    assert all(_tables().values()), _tables()
    gt.clear_cache()
    assert not any(_tables().values()), _tables()
    assert gt.cache_info().hits == gt.cache_info().misses == 0
    # d/dx sum(g^2) with g = (1 + x) e^x: 2 g (2 + x) e^x
    v = x.numpy()
    g = (1 + v) * np.exp(v)
    np.testing.assert_allclose(_fill_every_table(x)[0].numpy(), 2 * g * (2 + v) * np.exp(v),
                               rtol=1e-12)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
def test_a_whole_tape_hit_gathers_seeds_and_records_in_feed_order(compiled):
    """Output gradients make the hit read seeds as well as recorded values: its
    arguments must come in the backward's input order (checked by finite differences)."""
    w = gt.Variable(np.array([0.5, -1.2, 2.0]))
    a = np.array([1.5, 0.25, -0.75])
    seed_y, seed_z = np.array([2.0, -1.0, 0.5]), np.array(3.0)

    def loss(wv):  # what the weighted gradient differentiates
        return np.sum(seed_y * np.tanh(wv * a)) + seed_z * np.sum(np.exp(wv) * a)

    with gt.config(compile=compiled, compile_after=1):
        for step in range(3):
            with gt.GradientTape() as tape:
                y = gt.tanh(w * a)
                z = gt.reduce_sum(gt.exp(w) * a)
            hits = gt.cache_info().hits
            g = tape.gradient([y, z], w, output_gradients=[seed_y, seed_z]).numpy()
            if step:
                assert gt.cache_info().hits == hits + 1
            wv = w.numpy()
            eps = 1e-6
            numeric = [(loss(wv + eps * e) - loss(wv - eps * e)) / (2 * eps) for e in np.eye(3)]
            np.testing.assert_allclose(g, numeric, rtol=1e-7, atol=1e-8)
            w.assign_add(np.array([0.1, -0.05, 0.02]))
    (hit,) = lookup._whole_tapes.values()
    assert isinstance(hit, lookup.WholeTapeHit) and hit.reads_seeds
    assert all(isinstance(f, lower.Feed) for f in hit.feeds)
    assert hit.connected == (True, True)


def test_the_gatherer_puts_every_kind_of_feed_in_its_place():
    class Source:
        _id = 7
        _value = "source0"

    records = [(None, (1,), ("in0",), {}, (2,), ("out0",), None),
               (None, (2, 3), ("out0", "in1b"), {}, (4,), ("out1",), None)]
    feeds = (lower.Feed(lower.SEED, 1), lower.Feed(lower.RECORDED_OUTPUT, 1, 0),
             lower.Feed(lower.SOURCE, 0), lower.Feed(lower.RECORDED_INPUT, 1, 1),
             lower.Feed(lower.SEED, 0), lower.Feed(lower.RECORDED_INPUT, 0, 0))
    located = lookup.LocatedBackward(None, feeds, (True,))
    assert located.reads_seeds
    assert located.gather(records, [Source()], ["seed0", "seed1"]) == [
        "seed1", "out1", "source0", "in1b", "seed0", "in0"]
    assert [located.tensor_id(f, records, [Source()]) for f in feeds[1:4]] == [4, 7, 3]
    recorded_only = lookup.LocatedBackward(None, (feeds[3], feeds[1], feeds[5]), (True,))
    assert not recorded_only.reads_seeds
    assert recorded_only.gather(records, [], []) == ["in1b", "out1", "in0"]
