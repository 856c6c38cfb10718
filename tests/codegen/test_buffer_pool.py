"""A compiled @gt.function keeps the buffers of its large intermediates between calls.

The pooled step must give the unpooled step's numbers bit for bit, call after call;
nothing a call returns may live in a pooled buffer (outputs, views of intermediates,
variables' new values); calls running at once (threads, recursion through a
py_function) never share a set; a call that raises gives its set back.
"""

import inspect
import re
import threading
import tracemalloc

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops.registry import Primitive

POINTS = 600  # (600, 32) float32: 75 KiB, above the pooling threshold
NU = 0.01 / np.pi


def _rng():
    return np.random.default_rng(7)


def _pool(function, *args):
    """The BufferPool of ``function``'s trace for ``args`` (None: not pooled)."""
    concrete = function.get_concrete_function(*args)
    # inspect.unwrap: a function with effects runs inside the runner's effect wrapper
    return inspect.unwrap(concrete.forward.function).__globals__.get("buffer_pool")


def _pinn(seed: int = 0):
    """The PINN step of benchmarks/pinn.py at a smaller size: nested tapes for u_x, u_t
    and u_xx, the mean squared Burgers residual, one Adam update."""
    gt.keras.utils.set_random_seed(seed)
    model = gt.keras.Sequential([gt.keras.Input((2,))] + [
        gt.keras.layers.Dense(32, activation="tanh") for _ in range(2)] + [
        gt.keras.layers.Dense(1)])
    optimizer = gt.keras.optimizers.Adam(1e-2)

    @gt.function
    def step(x, t):
        with gt.GradientTape() as tape:
            with gt.GradientTape() as second:
                second.watch(x)
                with gt.GradientTape(persistent=True) as first:
                    first.watch([x, t])
                    u = model(gt.concat([x, t], axis=1))
                u_x = first.gradient(u, x)
                u_t = first.gradient(u, t)
            u_xx = second.gradient(u_x, x)
            residual = u_t + u * u_x - NU * u_xx
            loss = gt.reduce_mean(gt.square(residual))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, u_x

    return step, model


def _collocation():
    rng = _rng()
    x = rng.uniform(-1.0, 1.0, (POINTS, 1)).astype(np.float32)
    t = rng.uniform(0.0, 1.0, (POINTS, 1)).astype(np.float32)
    return gt.constant(x), gt.constant(t)


def _run_pinn(pool: bool, calls: int = 6):
    with gt.config(pool_buffers=pool):
        step, model = _pinn()
        x, t = _collocation()
        results = [step(x, t) for _ in range(calls)]
        source = step.get_concrete_function(x, t).source
    return results, [w.numpy() for w in model.trainable_variables], source


def test_pooled_pinn_step_is_bit_identical_to_unpooled_call_after_call():
    pooled, pooled_weights, pooled_source = _run_pinn(True)
    plain, plain_weights, plain_source = _run_pinn(False)
    assert "out=pooled_" in pooled_source and "buffer_pool" in pooled_source
    assert "pooled" not in plain_source
    # The references kept from call k are compared after every later call ran.
    for (loss, u_x), (loss_0, u_x_0) in zip(pooled, plain):
        assert loss.numpy().tobytes() == loss_0.numpy().tobytes()
        assert u_x.numpy().tobytes() == u_x_0.numpy().tobytes()
    losses = [float(loss) for loss, _ in pooled]
    assert len(set(losses)) == len(losses)  # Adam moved the weights every step
    for w, w_0 in zip(pooled_weights, plain_weights):
        assert w.tobytes() == w_0.tobytes()


def test_pinn_step_matches_the_same_step_run_eagerly():
    """The nested tapes give the same numbers compiled and pooled as eagerly."""
    results, _, _ = _run_pinn(True, calls=1)
    compiled = results[0]
    step, _ = _pinn()
    x, t = _collocation()
    eager = step.python_function(x, t)
    np.testing.assert_allclose(compiled[0].numpy(), eager[0].numpy(), rtol=1e-5)
    np.testing.assert_allclose(compiled[1].numpy(), eager[1].numpy(), rtol=1e-5)


def test_warm_pooled_call_allocates_none_of_its_large_intermediates():
    """The bug: each step freed and allocated its (n, 32) temporaries again, so malloc
    gave them back to the system and the next step faulted them in (3.8x tf.function
    on the PINN). A warm call now allocates only what it returns and small arrays."""
    step, _ = _pinn()
    x, t = _collocation()
    for _ in range(3):
        step(x, t)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        step(x, t)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    one = POINTS * 32 * 4
    assert peak < 4 * one, f"a warm step allocated {peak} bytes at its peak"


def test_outputs_and_views_of_intermediates_are_never_pooled():
    rng = _rng()
    w = gt.Variable(rng.standard_normal((32, 32)).astype(np.float32))
    kept = gt.Variable(np.zeros((600, 32), np.float32))

    @gt.function
    def f(x):
        h = gt.tanh(x @ w)
        g = h * 2.0 + 1.0  # an intermediate whose views are returned
        kept.assign(gt.exp(h) - 1.0)  # a variable's new value outlives the call
        return (h, gt.transpose(g), gt.reshape(g, [-1]), g[:, :3], gt.reduce_sum(g * g))

    def expected(x):
        h = np.tanh(x @ w.numpy())
        g = h * 2.0 + 1.0
        return h, g.T, g.reshape(-1), g[:, :3], np.sum(g * g), np.exp(h) - 1.0

    inputs = [rng.standard_normal((600, 32)).astype(np.float32) for _ in range(4)]
    assert _pool(f, gt.constant(inputs[0])) is not None  # g * g is pooled
    results, variable_values = [], []
    for x in inputs:
        results.append(f(gt.constant(x)))
        variable_values.append(kept.value())
    for x, got, value in zip(inputs, results, variable_values):
        want = expected(x)
        for g_, e in zip(got, want[:5]):
            np.testing.assert_allclose(g_.numpy(), e, rtol=2e-6, atol=1e-4)
        np.testing.assert_allclose(value.numpy(), want[5], rtol=2e-6, atol=1e-6)


def test_an_array_the_users_python_may_keep_is_not_pooled():
    rng = _rng()
    w = gt.constant(rng.standard_normal((32, 32)).astype(np.float32))
    stored = []

    def keep(v):
        stored.append(v)  # the user's Python may keep what it is given
        return gt.reduce_sum(v)

    @gt.function
    def f(x):
        h = gt.tanh(x @ w) * 2.0
        return gt.py_function(keep, [h], gt.float32) + gt.reduce_sum(gt.exp(x @ w) * x)

    inputs = [rng.standard_normal((600, 32)).astype(np.float32) for _ in range(4)]
    for x in inputs:
        f(gt.constant(x))
    for x, v in zip(inputs, stored[-4:]):
        np.testing.assert_allclose(np.asarray(v), np.tanh(x @ w.numpy()) * 2.0, rtol=1e-5)
    assert _pool(f, gt.constant(inputs[0])) is not None  # exp(x @ w) * x is pooled


def test_threads_calling_at_once_take_their_own_buffer_sets():
    rng = _rng()
    w = gt.constant(rng.standard_normal((32, 32)).astype(np.float32) * 0.2)
    # Generous: on a loaded machine a thread may take long to get there. A barrier that
    # breaks stops the calls waiting (the pass-through below), and the count then fails.
    inside = threading.Barrier(3, timeout=120)
    waiting = [False]

    def wait(v):
        if waiting[0]:
            try:
                inside.wait()  # the three calls are all between taking and giving back
            except threading.BrokenBarrierError:
                pass
        return v

    @gt.function
    def f(x):
        h = gt.tanh(x @ w) * 3.0
        h = gt.py_function(wait, [h], gt.float32)
        return gt.reduce_sum(gt.square(gt.tanh(x @ w) * x + h), axis=1)

    inputs = [rng.standard_normal((600, 32)).astype(np.float32) for _ in range(3)]
    for x in inputs:
        f(gt.constant(x))  # traced and warm
    pool = _pool(f, gt.constant(inputs[0]))
    assert pool is not None and len(pool) == 1
    got = [None] * 3
    waiting[0] = True

    def call(k):
        got[k] = f(gt.constant(inputs[k])).numpy()

    threads = [threading.Thread(target=call, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wn = w.numpy()
    for k, x in enumerate(inputs):
        h = np.tanh(x @ wn) * 3.0
        np.testing.assert_allclose(got[k], np.sum(np.square(np.tanh(x @ wn) * x + h), axis=1),
                                   rtol=1e-5)
    assert len(pool) == 3  # one set per call that ran at once
    waiting[0] = False
    for x in inputs:  # one at a time again: the sets are reused, none is made
        f(gt.constant(x))
    assert len(pool) == 3


def test_recursive_call_through_py_function_gets_its_own_set():
    rng = _rng()
    w = gt.constant(rng.standard_normal((32, 32)).astype(np.float32) * 0.2)
    x0 = rng.standard_normal((600, 32)).astype(np.float32)
    x1 = rng.standard_normal((600, 32)).astype(np.float32)
    depth = {"n": 0}

    def inner(v):
        if depth["n"] == 1:  # the outer call is between taking and giving back its set
            depth["n"] = 2
            f(gt.constant(x1))
        return v

    @gt.function
    def f(x):
        a = gt.tanh(x @ w) + 1.0
        b = gt.py_function(inner, [gt.reduce_sum(x)], gt.float32)
        return gt.reduce_sum(a * gt.exp(a), axis=1) + b * 0.0

    def expected(x):
        a = np.tanh(x @ w.numpy()) + 1.0
        return np.sum(a * np.exp(a), axis=1)

    f(gt.constant(x0))
    f(gt.constant(x0))
    depth["n"] = 1
    result = f(gt.constant(x0))
    assert depth["n"] == 2
    np.testing.assert_allclose(result.numpy(), expected(x0), rtol=1e-5)
    assert len(_pool(f, gt.constant(x0))) == 2


def test_a_call_that_raises_gives_its_buffers_back():
    rng = _rng()
    w = gt.constant(rng.standard_normal((32, 32)).astype(np.float32) * 0.2)
    fail = {"now": False}

    def check(v):
        if fail["now"]:
            raise ValueError("the user's Python failed mid-call")
        return v

    @gt.function
    def f(x):
        h = gt.tanh(x @ w) * 2.0
        s = gt.py_function(check, [gt.reduce_sum(h)], gt.float32)
        return gt.reduce_sum(h * h + 1.0, axis=1) + s * 0.0

    x = rng.standard_normal((600, 32)).astype(np.float32)
    f(gt.constant(x))
    pool = _pool(f, gt.constant(x))
    assert pool is not None and len(pool) == 1
    fail["now"] = True
    with pytest.raises(ValueError, match="failed mid-call"):
        f(gt.constant(x))
    assert len(pool) == 1  # given back, not lost, and not taken twice
    fail["now"] = False
    assert "out=pooled_" in f.get_concrete_function(gt.constant(x)).source  # still compiled
    h = np.tanh(x @ w.numpy()) * 2.0
    np.testing.assert_allclose(f(gt.constant(x)).numpy(), np.sum(h * h + 1.0, axis=1),
                               rtol=1e-5)
    assert len(pool) == 1


def test_small_arrays_are_not_pooled():
    @gt.function
    def f(x):
        return gt.reduce_sum(gt.tanh(x * 2.0) + 1.0)

    x = gt.constant(np.ones((100, 32), np.float32))  # 12.5 KiB
    assert "pooled" not in f.get_concrete_function(x).source
    assert float(f(x)) == pytest.approx(3200 * (np.tanh(2.0) + 1.0), rel=1e-6)


def test_clear_cache_and_config_drop_the_pools():
    @gt.function
    def f(x):
        return gt.reduce_sum(gt.tanh(x * 2.0) * x, axis=1)

    x = gt.constant(np.linspace(-1, 1, 600 * 32, dtype=np.float32).reshape(600, 32))
    want = np.sum(np.tanh(x.numpy() * 2.0) * x.numpy(), axis=1)
    f(x)
    pool = _pool(f, x)
    assert len(pool) == 1 and pool.nbytes >= 600 * 32 * 4
    gt.clear_cache()
    assert len(pool) == 0
    np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-6)  # a new set
    assert len(pool) == 1
    with gt.config(pool_buffers=False):
        assert len(pool) == 0

        @gt.function
        def g(x):
            return gt.reduce_sum(gt.tanh(x * 2.0) * x, axis=1)

        assert "pooled" not in g.get_concrete_function(x).source
        np.testing.assert_allclose(g(x).numpy(), want, rtol=1e-6)
    with pytest.raises(TypeError):
        gt.config(pool_buffer=False)


def test_ufunc_templates_read_each_input_once_in_order():
    """A fused temporary's pooled slot is reused by a later one once its reader ran; that
    holds only if every ufunc's template evaluates its inputs once, left to right."""
    import gc

    placeholder = re.compile(r"\{(\d+)\}")
    checked = 0
    for prim in [o for o in gc.get_objects() if isinstance(o, Primitive)]:
        if isinstance(prim.impl, np.ufunc):
            for template in list(prim.templates) + [s.template for s in prim.array_shorthands]:
                numbers = [int(n) for n in placeholder.findall(template)]
                assert numbers == sorted(set(numbers)), (prim.name, template)
                checked += 1
    assert checked >= 5


def test_intermediates_carried_by_a_loop_or_a_branch_keep_their_values():
    rng = _rng()
    w = gt.constant(rng.standard_normal((32, 32)).astype(np.float32) * 0.1)

    @gt.function
    def f(x):
        h = gt.tanh(x @ w) * 2.0
        _, carried = gt.while_loop(lambda i, c: i < 3, lambda i, c: (i + 1, gt.tanh(c) + h),
                                   (gt.constant(0), h))
        branch = gt.cond(gt.reduce_sum(x) > 0, lambda: h * 3.0, lambda: h)
        return carried, branch, gt.reduce_sum(gt.exp(h) * x)

    def expected(x):
        h = np.tanh(x @ w.numpy()) * 2.0
        c = h
        for _ in range(3):
            c = np.tanh(c) + h
        return c, (h * 3.0 if x.sum() > 0 else h), np.sum(np.exp(h) * x)

    inputs = [rng.standard_normal((600, 32)).astype(np.float32) + s for s in (0.5, -0.5, 1.0)]
    results = [f(gt.constant(x)) for x in inputs]
    results += [f(gt.constant(x)) for x in inputs]
    for x, got in zip(inputs * 2, results):
        for g_, e in zip(got, expected(x)):
            np.testing.assert_allclose(g_.numpy(), e, rtol=1e-5, atol=1e-5)


def _mlp_step(width: int):
    ws = [gt.Variable(np.random.default_rng(k).standard_normal((width, width))
                      .astype(np.float32) / np.float32(np.sqrt(width))) for k in range(4)]

    def step(x):
        with gt.GradientTape() as tape:
            h = x
            for w in ws:
                h = gt.tanh(gt.matmul(h, w))
            loss = gt.reduce_mean(h)
        return tape.gradient(loss, ws)
    return step


def _pooled_and_plain(step, x):
    with gt.config(pool_buffers=True):
        pooled = gt.function(step)
        got = [pooled(x) for _ in range(3)]
    with gt.config(pool_buffers=False):
        want = gt.function(step)(x)
    return pooled, got, want


def test_a_statement_numpy_computes_in_its_temporary_is_not_pooled():
    """The tanh MLP step of benchmarks/memory.py, smaller: ``-square(h) + c`` computes in
    one temporary; a pooled form would hold a slot for it and one for its result. The
    pool holds the four layer outputs (whose buffers the backward's matmuls reuse),
    and the gradients are the unpooled ones to the bit and the eager ones."""
    width = 256  # (512, 256) float32: 512 KiB, above NumPy's elision threshold
    step = _mlp_step(width)
    x = gt.constant(_rng().standard_normal((512, width)).astype(np.float32))
    pooled, got, want = _pooled_and_plain(step, x)
    source = pooled.get_concrete_function(x).source
    assert len(_pool(pooled, x).avals) == 4, source
    assert "+ float32_1p0" in source
    eager = step(x)
    for grads in got:
        for g, g0, g1 in zip(grads, want, eager):
            assert g.numpy().tobytes() == g0.numpy().tobytes()
            np.testing.assert_allclose(g.numpy(), g1.numpy(), rtol=2e-4, atol=1e-9)
