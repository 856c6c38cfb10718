"""``gt.recompute_grad`` inside ``@gt.function``: the block compiles into one
``recompute`` equation (a local function of the generated code) instead of making the
function run eagerly. Its gradients are the eager ones and finite differences' (first
and second order, jacobians, forward mode, Keras layers, dropout), and the compiled
forward keeps only the block's inputs."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_same_gradients, assert_vjp_matches_differences

RNG = np.random.default_rng(11)


def _mlp(weights):
    def block(h):
        for w in weights:
            h = gt.tanh(h @ w)
        return h
    return block


def _train_step(fn, weights):
    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            loss = gt.reduce_sum(fn(x) ** 2)
        return loss, tape.gradient(loss, [x, *weights])
    return step


def _eager_grads(fn, x, weights):
    with gt.GradientTape() as tape:
        tape.watch(x)
        loss = gt.reduce_sum(fn(x) ** 2)
    return loss, tape.gradient(loss, [x, *weights])


def _no_eager_warning(caplog):
    return [r.getMessage() for r in caplog.records if "eagerly" in r.getMessage()] == []


def test_compiled_gradients_equal_eager_ones_and_finite_differences(caplog):
    weights = [gt.Variable(RNG.normal(size=(5, 5)) * 0.5) for _ in range(2)]
    x = gt.constant(RNG.normal(size=(3, 5)))
    block = gt.recompute_grad(_mlp(weights))
    step = _train_step(block, weights)
    with caplog.at_level("WARNING", logger="gradtape"):
        for _ in range(3):  # the trace's call, then warm ones
            loss, grads = step(x)
            eager_loss, eager = _eager_grads(block, x, weights)
            _, plain = _eager_grads(_mlp(weights), x, weights)
            np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-13)
            assert_same_gradients(eager, grads, rtol=1e-12)
            assert_same_gradients(plain, grads, rtol=1e-12)
    assert _no_eager_warning(caplog)

    def loss_of(xa, w1, w2):
        return gt.reduce_sum(_mlp([w1, w2])(xa) ** 2)

    arrays = [x.numpy(), weights[0].numpy(), weights[1].numpy()]
    assert_vjp_matches_differences(loss_of, arrays, np.float64(1.0), grads, RNG)


def test_the_generated_code_writes_the_block_and_its_recomputation():
    weights = [gt.Variable(RNG.normal(size=(4, 4))) for _ in range(2)]
    x = gt.constant(RNG.normal(size=(2, 4)))

    def block(h):
        for w in weights:
            h = gt.tanh(h @ w)
        return h

    source = _train_step(gt.recompute_grad(block), weights).get_source(x)
    assert re.search(r"def block_\d+\(x, ", source)
    # The backward runs the block's forward again (no pass merged it with the first).
    recomputed = source.split("def block_grad")[1]
    assert "x @ " in recomputed and "tanh(" in recomputed
    # The backward reads the block's operands and the seed, nothing the block computed.
    (call,) = re.findall(r"= block_grad_\d+\((.*)\)\n", source)
    names = [a.strip() for a in call.split(",")]
    assert names[0] == "x" and not any(n.startswith(("matmul", "tanh")) for n in names)


def _backward_arguments(fn, x):
    """The arguments of the backward a tape runs through ``fn``'s call: its residuals."""
    # A backward takes its arguments in one list: ``[a, b, ...] = feeds``.
    taken = re.search(r"\[(.*)\] = feeds", fn.get_backward_source(x)).group(1)
    return [a.strip() for a in taken.split(",")]


def test_the_forward_keeps_only_the_block_inputs_for_an_outer_tape():
    weights = [gt.Variable(RNG.normal(size=(5, 5)) * 0.5) for _ in range(3)]
    x = gt.constant(RNG.normal(size=(3, 5)))

    def function_of(fn):
        @gt.function
        def f(v):
            return gt.reduce_sum(fn(v) ** 2)
        return f

    plain, recomputed = function_of(_mlp(weights)), function_of(gt.recompute_grad(_mlp(weights)))
    grads = []
    for f in (plain, recomputed):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        grads.append(tape.gradient(y, [x, *weights]))
    assert_same_gradients(grads[0], grads[1], rtol=1e-12)
    # Without the block, the backward reads the layers' tanh values; with it, none.
    assert any(a.startswith("tanh") for a in _backward_arguments(plain, x))
    kept = _backward_arguments(recomputed, x)
    assert not any(a.startswith(("tanh", "matmul")) for a in kept), kept
    assert "v" in kept


def test_second_order_jacobian_and_forward_mode_compile_through_a_block():
    def block(v):
        return gt.sin(v) * v ** 3

    x = gt.constant(RNG.normal(size=(4,)))
    xv = x.numpy()
    first = np.cos(xv) * xv ** 3 + 3 * np.sin(xv) * xv ** 2
    second = -np.sin(xv) * xv ** 3 + 6 * np.cos(xv) * xv ** 2 + 6 * np.sin(xv) * xv
    recomputed = gt.recompute_grad(block)

    @gt.function
    def derivatives(v):
        with gt.GradientTape() as outer:
            outer.watch(v)
            with gt.GradientTape() as inner:
                inner.watch(v)
                y = gt.reduce_sum(recomputed(v))
            g = inner.gradient(y, v)
        return g, outer.gradient(g, v)

    @gt.function
    def jacobian(v):
        with gt.GradientTape() as tape:
            tape.watch(v)
            y = recomputed(v)
        return tape.jacobian(y, v)

    @gt.function
    def tangent(v):
        with gt.autodiff.ForwardAccumulator(v, gt.ones_like(v)) as acc:
            y = recomputed(v)
        return acc.jvp(y)

    for _ in range(2):
        g, h = derivatives(x)
        np.testing.assert_allclose(g.numpy(), first, rtol=1e-12)
        np.testing.assert_allclose(h.numpy(), second, rtol=1e-12)
        np.testing.assert_allclose(jacobian(x).numpy(), np.diag(first), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(tangent(x).numpy(), first, rtol=1e-12)
    for f in (derivatives, jacobian, tangent):
        assert "def block" in f.get_source(x)


def test_second_order_with_respect_to_the_weights_matches_finite_differences():
    w = gt.Variable(RNG.normal(size=(3, 3)) * 0.5)
    x = gt.constant(RNG.normal(size=(2, 3)))
    block = gt.recompute_grad(lambda h: gt.tanh(h @ w))
    u = RNG.normal(size=(3, 3))

    @gt.function
    def hessian_vector(v):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                loss = gt.reduce_sum(block(v) ** 2)
            g = inner.gradient(loss, w)
            gu = gt.reduce_sum(g * u)
        return g, outer.gradient(gu, w)

    g, hv = hessian_vector(x)

    def gradient_along_u(wa):  # <d loss / d w, u> as a function of w, eagerly
        with gt.GradientTape() as tape:
            tape.watch(wa)
            loss = gt.reduce_sum(gt.tanh(x @ wa) ** 2)
        return gt.reduce_sum(tape.gradient(loss, wa) * u)

    assert_vjp_matches_differences(gradient_along_u, [w.numpy()], np.float64(1.0), [hv], RNG)
    assert "def block_grad" in hessian_vector.get_source(x)  # a lambda's block


def test_a_keras_layer_wrapped_and_built_in_the_function():
    keras = gt.keras
    keras.utils.set_random_seed(4)
    layer = keras.layers.Dense(5, activation="tanh", dtype="float64")
    recomputed = gt.recompute_grad(layer)
    x = gt.constant(RNG.normal(size=(3, 6)))

    @gt.function
    def step(v):
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(recomputed(v) ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    loss, grads = step(x)  # the first call builds the layer, outside the block
    assert len(layer.trainable_variables) == 2
    with gt.GradientTape() as tape:
        expected_loss = gt.reduce_sum(layer(x) ** 2)
    expected = tape.gradient(expected_loss, layer.trainable_variables)
    np.testing.assert_allclose(loss.numpy(), expected_loss.numpy(), rtol=1e-13)
    assert_same_gradients(expected, grads, rtol=1e-12)
    assert "def dense" in step.get_source(x)

    def loss_of(kernel, bias):
        return gt.reduce_sum(gt.tanh(x @ kernel + bias) ** 2)

    assert_vjp_matches_differences(loss_of, [v.numpy() for v in layer.trainable_variables],
                                   np.float64(1.0), grads, RNG)


def test_a_keras_layer_whose_call_is_recomputed_inside_a_function(caplog):
    keras = gt.keras

    class Block(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = keras.layers.Dense(6, activation="tanh", dtype="float64")

        @gt.recompute_grad
        def call(self, v):
            return self.inner(v) + v

    class Plain(Block):
        def call(self, v):
            return self.inner(v) + v

    keras.utils.set_random_seed(2)
    block, plain = Block(dtype="float64"), Plain(dtype="float64")
    x = gt.constant(RNG.normal(size=(3, 6)))
    block(x), plain(x)  # built
    for w, v in zip(plain.trainable_variables, block.trainable_variables, strict=True):
        w.assign(v)

    def step_of(layer):
        @gt.function
        def step(v):
            with gt.GradientTape() as tape:
                loss = gt.reduce_sum(layer(v) ** 2)
            return tape.gradient(loss, layer.trainable_variables)
        return step

    recomputed = step_of(block)
    with caplog.at_level("WARNING", logger="gradtape"):
        assert_same_gradients(step_of(plain)(x), recomputed(x), rtol=1e-12)
    assert _no_eager_warning(caplog)
    assert "def call" in recomputed.get_source(x)


def test_dropout_in_a_compiled_block_replays_its_mask():
    x = gt.constant(RNG.normal(size=(300,)))

    def block(v):
        return gt.nn.dropout(v, 0.5) * v

    def step_of(fn):
        @gt.function
        def step(v):
            with gt.GradientTape() as tape:
                tape.watch(v)
                y = fn(v)
                loss = gt.reduce_sum(y)
            return y, tape.gradient(loss, v)
        return step

    plain, recomputed = step_of(block), step_of(gt.recompute_grad(block))
    runs = {}
    for name, step in (("plain", plain), ("recomputed", recomputed)):
        gt.random.set_seed(3)
        runs[name] = [step(x) for _ in range(3)]  # a new mask on every call
    for (y0, g0), (y1, g1) in zip(runs["plain"], runs["recomputed"]):
        np.testing.assert_array_equal(y1.numpy(), y0.numpy())
        np.testing.assert_array_equal(g1.numpy(), g0.numpy())
        kept = y1.numpy() != 0  # d(2 x^2 on kept entries)/dx = 4x there, 0 elsewhere
        np.testing.assert_allclose(g1.numpy(), np.where(kept, 4.0 * x.numpy(), 0.0),
                                   rtol=1e-14)
    masks = [y.numpy() != 0 for y, _ in runs["recomputed"]]
    assert not np.array_equal(masks[0], masks[1])
    source = recomputed.get_source(x)
    # The draw runs once, before the block, which reads it (the backward too).
    assert source.count("random_draw_impl(") == 1
    assert source.index("random_draw_impl(") < source.index("def block")


def test_a_block_that_reads_a_value_in_python_runs_as_eagerly(caplog):
    w = gt.Variable(RNG.normal(size=(3, 3)))
    x = gt.constant(RNG.normal(size=(2, 3)))

    def block(h):
        if float(gt.reduce_sum(h)) > 1e9:  # a Python read: not a sub-program
            h = -h
        return gt.tanh(h @ w)

    step = _train_step(gt.recompute_grad(block), [w])
    with caplog.at_level("WARNING", logger="gradtape"):
        _, grads = step(x)
    _, expected = _eager_grads(block, x, [w])
    assert_same_gradients(expected, grads, rtol=1e-12)
    said = [r.getMessage() for r in caplog.records if "recompute_grad" in r.getMessage()]
    assert len(said) == 1 and "eagerly" in said[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_block_in_a_compiled_loop_body(dtype):
    w = gt.Variable(RNG.normal(size=(4, 4)).astype(dtype) * 0.5)
    x = gt.constant(RNG.normal(size=(2, 4)).astype(dtype))
    cell = gt.recompute_grad(lambda h: gt.tanh(h @ w))

    def run(fn):
        @gt.function
        def f(v):
            with gt.GradientTape() as tape:
                h = v
                for _ in gt.range(3):
                    h = fn(h)
                loss = gt.reduce_sum(h)
            return tape.gradient(loss, w)
        return f

    recomputed = run(cell)
    got = recomputed(x)
    expected = run(lambda h: gt.tanh(h @ w))(x)
    source = recomputed.get_source(x)
    assert "def block" in source and "def block_grad" in source
    assert got.dtype == dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol)


def test_no_warning_logger_noise_from_a_compiled_block(caplog):
    """A block without a tape (inference) compiles too, and gives the block's values."""
    w = gt.Variable(RNG.normal(size=(3, 3)))
    block = gt.recompute_grad(lambda h: gt.tanh(h @ w))

    @gt.function
    def infer(v):
        return block(v)

    x = gt.constant(RNG.normal(size=(2, 3)))
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        np.testing.assert_allclose(infer(x).numpy(), np.tanh(x.numpy() @ w.numpy()),
                                   rtol=1e-14)
    assert caplog.records == []


def test_blocks_of_large_arrays_write_into_their_own_dead_buffers():
    """At sizes where generated code writes into dead buffers (``out=``), a block's
    function does so only with buffers it made: the gradients stay the plain ones."""
    weights = [gt.Variable(RNG.normal(size=(128, 128)) * 0.1) for _ in range(4)]
    x = gt.constant(RNG.normal(size=(64, 128)))

    def step_of(blocks):
        @gt.function
        def step(v):
            with gt.GradientTape() as tape:
                tape.watch(v)
                h = v
                for block in blocks:
                    h = block(h)
                loss = gt.reduce_sum(h * h)
            return tape.gradient(loss, [v, *weights])
        return step

    plain = step_of([_mlp(weights)])
    two = step_of([gt.recompute_grad(_mlp(weights[:2])), gt.recompute_grad(_mlp(weights[2:]))])
    for _ in range(2):
        assert_same_gradients(plain(x), two(x), rtol=1e-12)
    source = two.get_source(x)
    assert source.count("def block_grad") == 2 and "out=" in source.split("def block_grad")[1]


def test_the_ir_text_writes_out_sub_programs():
    """A ``recompute``'s block (as a loop's body, a switch's branches) is printed below
    its equation, not as an object's address."""
    w = gt.Variable(RNG.normal(size=(3, 3)))
    block = gt.recompute_grad(lambda h: gt.tanh(h @ w))

    @gt.function
    def f(v):
        with gt.GradientTape() as tape:
            tape.watch(v)
            loss = gt.reduce_sum(block(v))
        return loss, tape.gradient(loss, [v, w])

    @gt.function
    def g(v):
        return gt.cond(gt.reduce_sum(v) > 0, lambda: v * 2.0, lambda: v - 1.0)

    x = gt.constant(RNG.normal(size=(2, 3)))
    text = f.get_forward_ir(x)
    assert "object at 0x" not in text
    assert re.search(r"= recompute \[block=\{\.\.\.\}, name='block'\]", text)
    assert re.search(r"block = \{ lambda argument_\d+:float64\[2,3\]", text)
    assert "= tanh " in text.split("name='block_grad'")[1]  # recomputed in the backward
    branches = g.get_forward_ir(x)
    assert "object at 0x" not in branches and "branches[1] = { lambda" in branches


def test_keras_fit_with_a_recomputed_call_and_dropout_is_the_plain_fit(caplog):
    """``fit``'s compiled steps with a layer whose ``call`` (dense, dropout, a residual)
    is a recompute_grad block: the same losses as without it, seed for seed."""
    keras = gt.keras
    data = np.random.default_rng(0)
    features = data.normal(size=(64, 8)).astype("float32")
    targets = data.normal(size=(64, 1)).astype("float32")

    class Residual(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = keras.layers.Dense(8, activation="tanh")
            self.dropout = keras.layers.Dropout(0.3)

        @gt.recompute_grad
        def call(self, v, training=None):
            return self.dropout(self.dense(v), training=training) + v

    class Plain(Residual):
        def call(self, v, training=None):
            return self.dropout(self.dense(v), training=training) + v

    def losses(layer_class):
        keras.utils.set_random_seed(5)
        model = keras.Sequential([keras.Input((8,)), layer_class(), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        return model.fit(features, targets, epochs=2, batch_size=16, verbose=0).history["loss"]

    with caplog.at_level("WARNING", logger="gradtape"):
        recomputed = losses(Residual)
    assert _no_eager_warning(caplog)
    np.testing.assert_allclose(recomputed, losses(Plain), rtol=1e-6)


def test_a_tensor_keyword_argument_gets_no_gradient_as_eagerly():
    w = gt.Variable(RNG.normal(size=(3, 3)))
    x = gt.constant(RNG.normal(size=(2, 3)))
    scale = gt.constant(RNG.normal(size=(2, 3)))
    block = gt.recompute_grad(lambda h, scale: gt.tanh(h @ w) * scale)

    def gradients(v, s):
        with gt.GradientTape() as tape:
            tape.watch([v, s])
            loss = gt.reduce_sum(block(v, scale=s))
        return tape.gradient(loss, [v, s, w])

    eager = gradients(x, scale)
    compiled = gt.function(gradients)(x, scale)
    assert eager[1] is None and compiled[1] is None
    assert_same_gradients([eager[0], eager[2]], [compiled[0], compiled[2]], rtol=1e-12)
    assert "def block" in gt.function(gradients).get_source(x, scale)


def _warm_step_peak(step, x) -> int:
    import tracemalloc

    for _ in range(2):
        step(x)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = step(x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, result


def test_a_compiled_block_frees_each_recomputed_value_after_its_last_use():
    """Four tanh layers as two blocks of two: the forward keeps the second block's input,
    and each block's recomputation in the backward deletes its values as it goes, so
    the step peaks below the plain step (as high as it while the block's local function
    held every value until it returned). No pool: the peaks compare the step's
    own allocations."""
    weights = [gt.Variable(RNG.normal(size=(128, 128)) * 0.1) for _ in range(4)]
    halves = [gt.recompute_grad(_mlp(weights[:2])), gt.recompute_grad(_mlp(weights[2:]))]

    def two_blocks(h):
        return halves[1](halves[0](h))

    x = gt.constant(RNG.normal(size=(512, 128)))  # 512 KiB a layer
    with gt.config(pool_buffers=False):
        plain_peak, plain = _warm_step_peak(_train_step(_mlp(weights), weights), x)
        step = _train_step(two_blocks, weights)
        peak, checkpointed = _warm_step_peak(step, x)
        source = step.get_concrete_function(x).source
    grad_function = source[source.index("_grad"):]
    assert "del " in grad_function[:grad_function.index("return")], source
    assert peak < plain_peak, (peak, plain_peak)
    for g, g0 in zip(checkpointed[1], plain[1]):
        np.testing.assert_allclose(g.numpy(), g0.numpy(), rtol=1e-10, atol=1e-12)
