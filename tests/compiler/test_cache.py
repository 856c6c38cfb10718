"""The compile cache: hits, misses, no stale results, threads, memory."""

import gc
import linecache
import threading
import tracemalloc
import types

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.ops.registry import Primitive, bind
from gradtape.tape import backward


@pytest.fixture(autouse=True)
def fresh_cache():
    gt.clear_cache()
    yield
    gt.clear_cache()


def _stats():
    info = gt.cache_info()
    return info.hits, info.misses, info.entries


def _step(x, w):
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.tanh(x * w) * w)
    return tape.gradient(loss, w).numpy()


def _expected(x, w):
    t = np.tanh(x * w)
    return t + w * (1 - t * t) * x


def test_persistent_tape_reuses_the_compiled_function():
    x = gt.Variable(np.linspace(-1, 1, 6))
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(gt.sin(x) * x)
    for _ in range(5):
        g = tape.gradient(y, x)
    assert _stats() == (4, 1, 1)
    assert gt.cache_info().compiled == 1
    v = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(v) * v + np.sin(v))


def test_fresh_tapes_in_a_loop_hit_without_rebuilding(monkeypatch):
    builds = []
    original = backward.build_entry

    def counting(*args, **kwargs):
        builds.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(backward, "build_entry", counting)
    x = np.linspace(-1, 1, 6)
    w = gt.Variable(np.full(6, 0.5))
    for _ in range(10):
        g = _step(gt.constant(x), w)
        np.testing.assert_allclose(g, _expected(x, w.numpy()))
        w.assign_sub(0.1 * g)
    assert len(builds) == 1
    assert _stats() == (9, 1, 1)
    assert gt.cache_info().compiled == 1


def _grad_of(fn, *arrays, sources=None):
    tensors = [gt.Variable(a) for a in arrays]
    with gt.GradientTape() as tape:
        y = fn(*tensors)
    chosen = tensors if sources is None else [tensors[i] for i in sources]
    return [g.numpy() for g in tape.gradient(y, chosen)]


def test_a_different_structure_misses():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    _grad_of(lambda x, y: gt.reduce_sum(x * y), a, b)
    assert _stats() == (0, 1, 1)
    _grad_of(lambda x, y: gt.reduce_sum(x * y), a, b)  # same structure: hit
    assert _stats() == (1, 1, 1)
    cases = [
        ("shape", lambda: _grad_of(lambda x, y: gt.reduce_sum(x * y), np.ones(3), np.ones(3))),
        ("dtype", lambda: _grad_of(lambda x, y: gt.reduce_sum(x * y),
                                   a.astype(np.float32), b.astype(np.float32))),
        ("params", lambda: _grad_of(lambda x, y: gt.reduce_sum(gt.reshape(x * y, (2, 1)),
                                                               axis=1), a, b)),
        ("wiring", lambda: _grad_of(lambda x, y: gt.reduce_sum(x * x), a, b, sources=[0])),
        ("sources", lambda: _grad_of(lambda x, y: gt.reduce_sum(x * y), a, b, sources=[1])),
        ("literal", lambda: _grad_of(lambda x, y: gt.reduce_sum(x * y * 2.0), a, b)),
        ("op", lambda: _grad_of(lambda x, y: gt.reduce_sum(x + y), a, b)),
    ]
    for k, (what, run) in enumerate(cases, start=2):
        run()
        assert _stats() == (1, k, k), what


def test_a_changing_branch_never_gets_a_stale_gradient():
    w = gt.Variable(np.array([0.3, -0.7, 1.1]))
    v = w.numpy()
    with gt.config(compile_after=1):
        for step in range(8):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(gt.sin(w) if step % 3 else gt.cos(w) * w)
            g = tape.gradient(y, w).numpy()
            expected = np.cos(v) if step % 3 else -np.sin(v) * v + np.cos(v)
            np.testing.assert_allclose(g, expected)
    assert gt.cache_info().entries == 2


def test_lru_bound_evicts_and_forgets_the_source():
    with gt.config(cache_size=2, compile_after=1):
        for k in range(4):
            _grad_of(lambda x, p=float(k + 2): gt.reduce_sum(x ** p), np.ones(3))
        assert gt.cache_info().entries == 2
        live = [e.compiled.filename for e in backward_cache.entries()]
        assert all(linecache.getlines(f) for f in live)
    assert gt.cache_info().entries == 2


def test_clear_cache_resets_statistics():
    _grad_of(lambda x: gt.reduce_sum(x * x), np.ones(2))
    gt.clear_cache()
    info = gt.cache_info()
    assert (info.hits, info.misses, info.entries, info.compiled) == (0, 0, 0, 0)


opaque_p = Primitive("opaque", lambda x, fn: fn(x), vjp=lambda g, y, x, fn: (g * 2.0,),
                     cacheable=False)


def test_a_program_with_an_uncacheable_primitive_is_never_cached():
    x = gt.Variable(np.array([1.0, 2.0]))
    for _ in range(3):
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(bind(opaque_p, x * 3.0, fn=lambda v: v + 1.0))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [6.0, 6.0])
    info = gt.cache_info()
    assert info.entries == 0 and info.compiled == 0


def test_the_cache_holds_no_arrays():
    big = np.random.default_rng(0).standard_normal(100_000)
    _grad_of(lambda x: gt.reduce_sum(gt.tanh(x) * x), big)
    _grad_of(lambda x: gt.reduce_sum(gt.tanh(x) * x), big)
    (entry,) = backward_cache.entries()
    assert entry.compiled is not None
    seen, stack = set(), [entry]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        assert not (isinstance(obj, np.ndarray) and obj.size > 1), "an array in the cache"
        if isinstance(obj, (type(np), types.FunctionType, Primitive, np.ufunc)):
            continue  # code the entry calls (their modules' globals are not its data)
        stack.extend(gc.get_referents(obj))


def test_eight_threads_give_the_serial_results():
    rng = np.random.default_rng(1)
    inputs = [(rng.standard_normal(16), rng.standard_normal(16)) for _ in range(6)]
    structures = [
        lambda x, w: gt.reduce_sum(gt.tanh(x * w) * w),
        lambda x, w: gt.reduce_sum(gt.sin(x) * gt.exp(-w * w)),
        lambda x, w: gt.reduce_mean(gt.square(x - w)),
    ]

    def work(k):
        out = []
        for i in range(30):
            x, w = inputs[(k + i) % len(inputs)]
            out.append(_grad_of(structures[(k * 7 + i) % 3], x, w))
        return out

    with gt.config(compile_after=2):
        serial = [work(k) for k in range(8)]
        gt.clear_cache()
        results = [None] * 8
        threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, work(k)))
                   for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for s, r in zip(serial, results):
        for gs, gr in zip(s, r):
            for a, b in zip(gs, gr):
                np.testing.assert_array_equal(a, b)
    assert gt.cache_info().entries == 3


@pytest.mark.slow
def test_memory_stays_flat_over_ten_thousand_steps():
    w = gt.Variable(np.full(8, 0.5))
    x = np.linspace(-1, 1, 8)

    def steps(n):
        for _ in range(n):
            w.assign_sub(0.01 * _step(gt.constant(x), w))

    steps(500)  # warm up: build, compile, fill free lists
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        steps(10_000)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024, f"grew by {after - before} bytes"
    assert gt.cache_info().entries == 1


def test_repeated_gradients_on_a_growing_persistent_tape_stay_right(compile_mode):
    x = gt.Variable(np.array([0.5, 1.0]))
    v = x.numpy()
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(gt.sin(x))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(v))
        z = gt.reduce_sum(gt.exp(x) * y)  # the tape grew since the last call
        np.testing.assert_allclose(tape.gradient(z, x).numpy(),
                                   np.exp(v) * np.sin(v).sum() + np.exp(v).sum() * np.cos(v))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(v))
    np.testing.assert_allclose(tape.gradient([y, z], x).numpy(),
                               np.cos(v) + np.exp(v) * np.sin(v).sum()
                               + np.exp(v).sum() * np.cos(v))
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=gt.constant(2.0)).numpy(),
                               2 * np.cos(v))
    x.assign([3.0, 4.0])  # recorded values are what the gradient uses, as in TF
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(v))
