"""``gt.recompute_grad``: the gradients of the un-checkpointed block, eagerly, in
``@gt.function``, with Keras layers, variables, random draws and nested tapes; and
what the forward keeps (only the block's inputs)."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradtape as gt

RNG = np.random.default_rng(7)


def _mlp_block(weights):
    def block(x):
        for w in weights:
            x = gt.tanh(x @ w)
        return x
    return block


def _grads(fn, x, sources, target=lambda y: gt.reduce_sum(y * y)):
    with gt.GradientTape() as tape:
        tape.watch(x)
        loss = target(fn(x))
    return loss, tape.gradient(loss, [x, *sources])


def _assert_same(expected, got):
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-14)


def test_gradients_equal_the_unrecomputed_ones_for_inputs_and_variables():
    weights = [gt.Variable(RNG.normal(size=(6, 6)) * 0.5) for _ in range(3)]
    block = _mlp_block(weights)
    x = gt.constant(RNG.normal(size=(4, 6)))
    loss, expected = _grads(block, x, weights)
    loss_r, got = _grads(gt.recompute_grad(block), x, weights)
    np.testing.assert_allclose(loss_r.numpy(), loss.numpy(), rtol=1e-14)
    _assert_same(expected, got)


def test_gradients_match_finite_differences():
    w = gt.Variable(RNG.normal(size=(3, 3)))
    block = gt.recompute_grad(lambda x: gt.sin(x @ w) * x)
    x0 = RNG.normal(size=(2, 3))
    _, (gx, gw) = _grads(block, gt.constant(x0), [w], target=gt.reduce_sum)

    def loss(xv, wv):
        return np.sum(np.sin(xv @ wv) * xv)

    eps, fd_x, fd_w = 1e-6, np.zeros_like(x0), np.zeros((3, 3))
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        fd_x[i] = (loss(x0 + d, w.numpy()) - loss(x0 - d, w.numpy())) / (2 * eps)
    for i in np.ndindex(3, 3):
        d = np.zeros((3, 3))
        d[i] = eps
        fd_w[i] = (loss(x0, w.numpy() + d) - loss(x0, w.numpy() - d)) / (2 * eps)
    np.testing.assert_allclose(gx.numpy(), fd_x, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gw.numpy(), fd_w, rtol=1e-7, atol=1e-8)


def test_several_arguments_a_nest_and_keyword_arguments():
    def block(pair, c, scale=1.0):
        a, b = pair
        return a * b + gt.exp(c) * scale, gt.reduce_sum(a)

    a, b, c = (gt.constant(RNG.normal(size=(3,))) for _ in range(3))

    def run(fn):
        with gt.GradientTape() as tape:
            tape.watch([a, b, c])
            y, s = fn((a, b), c, scale=3.0)
            loss = gt.reduce_sum(y * y) + s * s
        return tape.gradient(loss, [a, b, c])

    _assert_same(run(block), run(gt.recompute_grad(block)))


def test_the_block_is_run_again_in_the_backward_and_keeps_nothing_of_its_own():
    calls = []
    kept = []

    def block(x):
        calls.append(1)
        h = gt.tanh(x * 2.0)
        kept.append(weakref.ref(h))
        return h * 3.0

    x = gt.constant(RNG.normal(size=(5,)))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.recompute_grad(block)(x)
    gc.collect()
    assert kept[0]() is None  # the block's intermediate died with the forward
    assert len(calls) == 1
    (g,) = tape.gradient(y, [x])
    assert len(calls) == 2
    np.testing.assert_allclose(g.numpy(), 6.0 * (1 - np.tanh(2 * x.numpy()) ** 2))


def _bytes_held_between_forward_and_backward(checkpoint: bool) -> int:
    weights = [gt.Variable(RNG.normal(size=(256, 256)) * 0.05) for _ in range(4)]
    block = _mlp_block(weights)
    fn = gt.recompute_grad(block) if checkpoint else block
    x = gt.constant(RNG.normal(size=(512, 256)))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(fn(x))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    tape.gradient(loss, weights)
    return held


def test_the_forward_keeps_fewer_bytes_with_recompute_grad():
    layer_bytes = 512 * 256 * 8
    plain = _bytes_held_between_forward_and_backward(checkpoint=False)
    recomputed = _bytes_held_between_forward_and_backward(checkpoint=True)
    # Four tanh layers: the tape keeps at least their outputs without checkpointing; with
    # it, only the block's output (the input is the caller's).
    assert plain >= 3.9 * layer_bytes
    assert recomputed <= 1.5 * layer_bytes
    assert recomputed < plain / 3


def test_without_a_tape_the_block_just_runs():
    block = gt.recompute_grad(lambda x: x * 2.0)
    np.testing.assert_array_equal(block(gt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_dropout_inside_a_block_draws_the_forward_mask_again():
    x = gt.constant(RNG.normal(size=(200,)))
    masks = []

    def block(v):
        y = gt.nn.dropout(v, 0.5)
        masks.append((y.numpy() != 0).copy())
        return y * v

    gt.random.set_seed(3)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.recompute_grad(block)(x)
    after_forward = gt.random.uniform((4,), dtype=gt.float64).numpy()
    (g,) = tape.gradient(y, [x])
    np.testing.assert_array_equal(masks[1], masks[0])  # the recomputed mask
    kept = masks[0]
    np.testing.assert_allclose(g.numpy(), np.where(kept, 4.0 * x.numpy(), 0.0))
    # The recomputation moved no stream: the next draws are those without it.
    gt.random.set_seed(3)
    gt.nn.dropout(x, 0.5)
    np.testing.assert_array_equal(gt.random.uniform((4,), dtype=gt.float64).numpy(),
                                  after_forward)
    next_draw = gt.random.uniform((2,), dtype=gt.float64).numpy()
    gt.random.set_seed(3)
    gt.nn.dropout(x, 0.5)
    gt.random.uniform((4,), dtype=gt.float64)
    np.testing.assert_array_equal(gt.random.uniform((2,), dtype=gt.float64).numpy(),
                                  next_draw)


def test_a_generator_stream_is_replayed_too():
    gen = gt.random.Generator.from_seed(5)
    x = gt.constant(np.ones(50))

    def block(v):
        return v * gen.normal((50,), dtype=gt.float64)

    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.recompute_grad(block)(x)
    (g,) = tape.gradient(y, [x])
    np.testing.assert_array_equal(g.numpy(), y.numpy())  # d(x * n)/dx = n = y at x = 1


def test_second_order_through_a_block_equals_the_unrecomputed_one():
    def block(x):
        return gt.sin(x) * x ** 3

    x = gt.constant(RNG.normal(size=(4,)))

    def second(fn):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(fn(x))
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    _assert_same(second(block), second(gt.recompute_grad(block)))
    xv = x.numpy()
    d2 = -np.sin(xv) * xv ** 3 + 6 * np.cos(xv) * xv ** 2 + 6 * np.sin(xv) * xv
    np.testing.assert_allclose(second(gt.recompute_grad(block))[1].numpy(), d2, rtol=1e-12)


def test_in_a_gt_function_the_gradients_are_the_unrecomputed_ones(caplog):
    weights = [gt.Variable(RNG.normal(size=(5, 5)) * 0.5) for _ in range(2)]
    block = _mlp_block(weights)
    checkpointed = gt.recompute_grad(block)

    def step(fn):
        @gt.function
        def train_step(x):
            with gt.GradientTape() as tape:
                loss = gt.reduce_sum(fn(x) ** 2)
            return loss, tape.gradient(loss, weights)
        return train_step

    x = gt.constant(RNG.normal(size=(3, 5)))
    plain, recomputed = step(block), step(checkpointed)
    for _ in range(2):  # the first call and a warm one
        with caplog.at_level("WARNING", logger="gradtape"):
            (l0, g0), (l1, g1) = plain(x), recomputed(x)
        np.testing.assert_allclose(l1.numpy(), l0.numpy(), rtol=1e-14)
        _assert_same(g0, g1)
    # It compiles: no warning that the function runs eagerly, and the block is a
    # function of the generated code (tests/functions/test_recompute_compiled.py).
    said = [r.getMessage() for r in caplog.records if "eagerly" in r.getMessage()]
    assert said == []
    assert "def block" in recomputed.get_source(x)


def test_keras_sequential_of_dense_blocks():
    keras = gt.keras
    gt.keras.utils.set_random_seed(1)
    layers = [keras.layers.Dense(8, activation="tanh", dtype="float64") for _ in range(3)]
    model = keras.Sequential(layers)
    x = gt.constant(RNG.normal(size=(4, 6)))
    model(x)  # build
    blocks = [gt.recompute_grad(layer) for layer in layers]

    def chain(fns):
        def run(v):
            for fn in fns:
                v = fn(v)
            return v
        return run

    loss, expected = _grads(chain(layers), x, model.trainable_variables)
    loss_r, got = _grads(chain(blocks), x, model.trainable_variables)
    assert len(got) == 7 and got[-1].dtype == gt.float64
    _, whole_expected = _grads(model, x, model.trainable_variables)
    _, whole = _grads(gt.recompute_grad(model), x, model.trainable_variables)
    _assert_same(whole_expected, whole)
    np.testing.assert_allclose(loss_r.numpy(), loss.numpy(), rtol=1e-14)
    _assert_same(expected, got)


def test_a_keras_layer_whose_call_is_recomputed_builds_and_gets_its_gradients():
    keras = gt.keras

    class Block(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = keras.layers.Dense(6, activation="tanh", dtype="float64")

        @gt.recompute_grad
        def call(self, x):
            return self.inner(x) + x

    class Plain(Block):
        def call(self, x):
            return self.inner(x) + x

    gt.keras.utils.set_random_seed(2)
    block = Block(dtype="float64")
    plain = Plain(dtype="float64")
    x = gt.constant(RNG.normal(size=(3, 6)))
    plain(x)
    with gt.GradientTape() as tape:  # the first call builds the layer inside the block
        loss = gt.reduce_sum(block(x) ** 2)
    grads = tape.gradient(loss, block.trainable_variables)
    assert len(block.trainable_variables) == 2
    for w, v in zip(plain.trainable_variables, block.trainable_variables, strict=True):
        w.assign(v)
    _, expected = _grads(plain, x, plain.trainable_variables)
    _assert_same(expected[1:], grads)


def test_a_positional_argument_that_is_no_array_is_refused():
    block = gt.recompute_grad(lambda x, f: f(x))
    x = gt.constant([1.0])
    with gt.GradientTape() as tape, pytest.raises(TypeError, match="keyword arguments"):
        tape.watch(x)
        block(x, np.sin)


def test_persistent_tapes_jacobians_and_forward_mode_are_the_unrecomputed_ones():
    w = gt.Variable(RNG.normal(size=(3, 3)))
    x = gt.constant(RNG.normal(size=(2, 3)))
    tangent = gt.constant(RNG.normal(size=(2, 3)))

    def block(v):
        return gt.tanh(v @ w)

    def derivatives(fn):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = fn(x)
        first = tape.gradient(y, [x, w])
        again = tape.gradient(y, [x, w])  # a second call recomputes again
        with gt.ForwardAccumulator(x, tangent) as acc:
            z = fn(x)
        return [tape.jacobian(y, x), *first, *again, acc.jvp(z)]

    _assert_same(derivatives(block), derivatives(gt.recompute_grad(block)))


def test_nested_blocks():
    w = gt.Variable(RNG.normal(size=(4, 4)) * 0.5)
    inner = gt.recompute_grad(lambda v: gt.tanh(v @ w))

    def outer(v):
        return inner(inner(v)) * v

    x = gt.constant(RNG.normal(size=(2, 4)))
    _, expected = _grads(lambda v: gt.tanh(gt.tanh(v @ w) @ w) * v, x, [w])
    _, got = _grads(gt.recompute_grad(outer), x, [w])
    _assert_same(expected, got)


def test_a_tensor_the_block_reads_from_outside_gets_its_gradient():
    """A block that closes over a tensor the tape differentiates (computed on the tape
    before the block, or watched) passes the gradient on: the tensor becomes an input of
    the block's record (TF's recompute_grad drops it silently)."""
    x0, scale0 = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    w = gt.Variable(RNG.normal(size=(4, 4)) * 0.5)

    def grads(checkpoint):
        x, scale = gt.constant(x0), gt.constant(scale0)
        with gt.GradientTape() as tape:
            tape.watch([x, scale])
            shift = gt.sin(x)  # computed on the tape, read by the block from outside

            def block(h):
                return gt.tanh(h @ w) * scale + shift

            out = (gt.recompute_grad(block) if checkpoint else block)(x * 2.0)
            loss = gt.reduce_sum(out * out)
        return tape.gradient(loss, [x, scale, w])

    expected, got = grads(False), grads(True)
    assert all(g is not None for g in got)
    _assert_same(expected, got)

    def loss(xv, sv):
        return np.sum((np.tanh(2 * xv @ w.numpy()) * sv + np.sin(xv)) ** 2)

    eps = 1e-6
    for i in np.ndindex(scale0.shape):
        d = np.zeros_like(scale0)
        d[i] = eps
        numeric = (loss(x0, scale0 + d) - loss(x0, scale0 - d)) / (2 * eps)
        np.testing.assert_allclose(got[1].numpy()[i], numeric, rtol=1e-7)
    d = RNG.normal(size=x0.shape)
    numeric = (loss(x0 + eps * d, scale0) - loss(x0 - eps * d, scale0)) / (2 * eps)
    np.testing.assert_allclose(np.sum(got[0].numpy() * d), numeric, rtol=1e-7)


def test_an_outside_tensor_in_a_nested_second_derivative():
    x0, c0 = RNG.normal(size=(4,)), RNG.normal(size=(4,))

    def second(checkpoint):
        x, c = gt.constant(x0), gt.constant(c0)
        with gt.GradientTape() as outer:
            outer.watch([x, c])
            with gt.GradientTape() as inner:
                inner.watch([x, c])
                block = lambda h: gt.sin(h * c) * c  # noqa: E731
                y = gt.reduce_sum((gt.recompute_grad(block) if checkpoint else block)(x))
            dy = inner.gradient(y, c)
        return outer.gradient(dy, [x, c])

    got = second(True)
    assert all(g is not None for g in got)
    _assert_same(second(False), got)


def test_the_interpreted_backward_frees_each_value_after_its_last_use():
    """A backward with a recompute_grad record is interpreted (never compiled): the
    interpreter drops each value after its last use instead of holding all of them
    until it returns."""
    from gradtape.ir import interpreter

    # Values of 4,096 elements or more are released (smaller ones cost more to track).
    weights = [gt.Variable(RNG.normal(size=(64, 64)) / 8) for _ in range(2)]
    seen = []
    original = interpreter.walk

    def watching(program, args, apply=None, literal=None, release=None, consume=False):
        env = original(program, args, apply, literal, release, consume)
        seen.append((release is not None, len(env), len(program.inputs) + sum(
            len(e.outs) for e in program.eqns), len(program.outputs)))
        return env

    interpreter.walk = watching
    try:
        x = gt.constant(RNG.normal(size=(128, 64)))
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.recompute_grad(_mlp_block(weights))(x))
        grads = tape.gradient(loss, weights)
    finally:
        interpreter.walk = original
    assert seen and all(release for release, *_ in seen)
    assert any(left < made for _, left, made, _ in seen)
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(_mlp_block(weights)(x))
    for g, g0 in zip(grads, tape.gradient(loss, weights)):
        np.testing.assert_allclose(g.numpy(), g0.numpy(), rtol=1e-12)


def _step_peak(blocks, x, weights) -> tuple[int, list]:
    """The most ``tracemalloc`` saw allocated during one eager step (forward and
    backward) above what was allocated before it, and the gradients."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with gt.GradientTape() as tape:
            h = x
            for block in blocks:
                h = block(h)
            loss = gt.reduce_sum(h * h)
        del h  # as a training step's function scope would
        grads = tape.gradient(loss, weights)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak, [g.numpy() for g in grads]


def test_an_eager_step_with_recompute_grad_peaks_below_the_plain_tape():
    """Nine tanh layers, three blocks of three: the plain tape's backward holds the nine
    layer outputs and two working arrays (11 layer arrays, and the weights' gradients),
    a checkpointed one the two later blocks' inputs, one block's three recomputed values
    and two working arrays (7). Each recomputed value, each block input and each upstream
    gradient must die at its last use for that: the first call (interpreted), the second
    and a compiled one all peak at least two layer arrays below the plain step of the
    same call. The gradients are the plain tape's, and a finite difference's."""
    batch, width, depth = 256, 128, 9
    layer = batch * width * 8
    rng = np.random.default_rng(11)
    weights = [gt.Variable(rng.normal(size=(width, width)) / np.sqrt(width))
               for _ in range(depth)]
    x = gt.constant(rng.normal(size=(batch, width)))
    blocks = [gt.recompute_grad(_mlp_block(weights[i:i + 3])) for i in range(0, depth, 3)]
    # Fresh structures: the first call of each is interpreted, the third compiled.
    gt.clear_cache()
    plain = [_step_peak([_mlp_block(weights)], x, weights) for _ in range(3)]
    recomputed = [_step_peak(blocks, x, weights) for _ in range(3)]
    for (plain_peak, expected), (peak, got) in zip(plain, recomputed):
        assert peak < plain_peak - 2 * layer, (peak / layer, plain_peak / layer)
        _assert_same(expected, got)
    # Compiled: about 9.7 layer arrays against 14 (both with the gradients, 4.5).
    assert recomputed[-1][0] < 0.75 * plain[-1][0]

    # A central difference of the loss along a random direction of all the weights.
    def loss(ws):
        h = x.numpy()
        for w in ws:
            h = np.tanh(h @ w)
        return np.sum(h * h)

    directions = [rng.normal(size=(width, width)) for _ in range(depth)]
    eps = 1e-6
    values = [w.numpy() for w in weights]
    fd = (loss([v + eps * d for v, d in zip(values, directions)])
          - loss([v - eps * d for v, d in zip(values, directions)])) / (2 * eps)
    along = sum(np.sum(g * d) for g, d in zip(recomputed[-1][1], directions))
    np.testing.assert_allclose(along, fd, rtol=1e-6)


def test_a_block_result_that_is_a_python_number_is_a_constant():
    """Its recomputation differentiates the tensor results only (the number has no
    gradient), as the block's record re-issued the number as a constant."""
    w = gt.Variable(RNG.normal(size=(3, 3)))
    x = gt.constant(RNG.normal(size=(2, 3)))

    def block(v):
        return gt.tanh(v @ w), 2.0

    def grads(fn):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y, c = fn(x)
            loss = gt.reduce_sum(y * y) * c
        return tape.gradient(loss, [x, w])

    _assert_same(grads(block), grads(gt.recompute_grad(block)))
