"""Helpers for the code generator's tests."""

import numpy as np

import gradtape as gt
from gradtape.compiler.build import build_inspected
from gradtape.ir.lower import Trace, feed_value, prune
from gradtape.tape.lookup import output_flags


def gradient_both_ways(loss_fn, args, output_gradients=None):
    """``d loss_fn(*args) / d args`` through the interpreter and through generated code
    (compiled on the first call). Returns ``(interpreted, compiled)`` lists of arrays."""
    results = []
    for compiled in (False, True):
        gt.clear_cache()
        sources = [gt.Variable(a) for a in args]
        with gt.config(compile=compiled, compile_after=1):
            with gt.GradientTape() as tape:
                loss = loss_fn(*sources)
            grads = tape.gradient(loss, sources, output_gradients=output_gradients)
        info = gt.cache_info()
        assert info.compiled == (1 if compiled else 0), info
        results.append([None if g is None else g.numpy() for g in grads])
    return results


def assert_same(expected, got, rtol=1e-6, atol=0.0):
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        if e is None:
            assert g is None
            continue
        assert np.asarray(g).dtype == np.asarray(e).dtype
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def backward_of(tape, target, sources, output_gradients=None):
    """The optimized backward program of ``tape.gradient(target, sources)`` and the
    arguments ``gradient`` feeds it (residual values, then output gradients)."""
    targets = list(target) if isinstance(target, (list, tuple)) else [target]
    grads = [None] * len(targets) if output_gradients is None else list(output_gradients)
    target_ids = [t._id for t in targets]
    kept = prune(tape._records, [s._id for s in sources], target_ids)
    flags = output_flags(grads)
    trace = Trace(kept, sources, target_ids, flags)
    _, _, optimized, feeds = build_inspected(trace, grads)
    seeds = [np.asarray(g) for g in grads if g is not None]
    args = [feed_value(f, trace.records, sources, seeds) for f in feeds]
    return optimized, args
