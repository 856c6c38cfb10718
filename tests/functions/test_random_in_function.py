"""gt.random and nn.dropout inside @gt.function: fresh values on every call (TF's stateful
random ops), in the order eager calls draw them; gradients use the call's own values.
Every test runs compiled and interpreted (``compile_mode``)."""

import numpy as np
import pytest

import gradtape as gt

R = gt.random


@pytest.fixture(autouse=True)
def _unseed():
    yield
    R.set_seed(None)


def _calls(fn, count, *args):
    """The results of ``count`` calls, each as a list of arrays."""
    results = []
    for _ in range(count):
        out = fn(*args)
        results.append([t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])])
    return results


def _assert_same_sequence(got, expected):
    assert len(got) == len(expected)
    for got_call, expected_call in zip(got, expected):
        for g, e in zip(got_call, expected_call):
            np.testing.assert_array_equal(g, e)


def _eager_and_traced(body, count, *args, seed=0):
    """``count`` calls of ``body`` run eagerly, then as a @gt.function, after the same
    ``set_seed``."""
    R.set_seed(seed)
    eager = _calls(body, count, *args)
    R.set_seed(seed)
    traced = _calls(gt.function(body), count, *args)
    return eager, traced


def test_dropout_draws_a_new_mask_on_every_call_as_eager_calls_do(compile_mode):
    x = gt.constant(np.arange(1.0, 41.0, dtype=np.float32).reshape(5, 8))

    def step(x):
        return gt.nn.dropout(x, rate=0.5)

    eager, traced = _eager_and_traced(step, 4, x)
    _assert_same_sequence(traced, eager)
    masks = [call[0] != 0 for call in traced]
    assert not any(np.array_equal(masks[0], m) for m in masks[1:])
    np.testing.assert_array_equal(traced[0][0][masks[0]], 2 * x.numpy()[masks[0]])


def test_the_generated_code_draws_when_it_runs(compile_mode):
    step = gt.function(lambda x: gt.nn.dropout(x, 0.5, seed=3))
    x = gt.ones([6, 6])
    source = step.get_source(x)
    assert "random_draw_impl(stream=3, distribution='uniform', shape=(6, 6)" in source
    R.set_seed(1)
    first = step(x).numpy()
    assert not np.array_equal(step(x).numpy(), first)


def _dropout_step(x, w):
    """A training step's core: the loss of a dropped-out layer and its gradient, taken
    inside the function."""
    with gt.GradientTape() as tape:
        dropped = gt.nn.dropout(x * w, rate=0.4)
        loss = gt.reduce_sum(gt.sin(dropped))
    return dropped, loss, tape.gradient(loss, w)


def _loss_with_mask(x, w, kept):
    return np.sum(np.sin(np.where(kept, x * w / 0.6, 0.0)))


def _finite_differences(f, w, eps=1e-6):
    grad = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        grad[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return grad


def test_the_gradient_inside_a_function_uses_that_calls_mask(compile_mode):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (4, 3))
    w = gt.Variable(rng.uniform(0.5, 1.5, (4, 3)))
    step = gt.function(_dropout_step)
    R.set_seed(2)
    masks = []
    for _ in range(3):
        dropped, loss, grad = step(gt.constant(x), w)
        kept = dropped.numpy() != 0
        masks.append(kept)
        w0 = w.numpy()
        np.testing.assert_allclose(float(loss), _loss_with_mask(x, w0, kept), rtol=1e-12)
        expected = _finite_differences(lambda v, kept=kept: _loss_with_mask(x, v, kept), w0)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6, atol=1e-9)
    assert not np.array_equal(masks[0], masks[1]) or not np.array_equal(masks[1], masks[2])
    R.set_seed(2)
    eager = [(_dropout_step(gt.constant(x), w)[0].numpy() != 0) for _ in range(3)]
    _assert_same_sequence([[m] for m in masks], [[m] for m in eager])


def test_a_tape_outside_the_call_differentiates_with_that_calls_mask(compile_mode):
    x = gt.constant(np.linspace(0.5, 2.0, 12).reshape(3, 4))

    @gt.function
    def noisy(x):
        return gt.nn.dropout(x * x, rate=0.5), gt.random.normal([3, 4], dtype=gt.float64)

    R.set_seed(4)
    for _ in range(3):
        with gt.GradientTape() as tape:
            tape.watch(x)
            dropped, noise = noisy(x)
            loss = gt.reduce_sum(dropped * noise)
        kept = dropped.numpy() != 0
        xs, n = x.numpy(), noise.numpy()

        def f(v, kept=kept, n=n):
            return np.sum(np.where(kept, v * v * 2.0, 0.0) * n)

        np.testing.assert_allclose(tape.gradient(loss, x).numpy(),
                                   _finite_differences(f, xs), rtol=1e-6, atol=1e-9)


def test_forward_mode_through_a_call_uses_that_calls_mask(compile_mode):
    """The JVP of a call reruns its program: on the values that call drew, not new ones."""
    x = gt.constant(np.linspace(0.5, 2.0, 12))
    direction = np.linspace(-1.0, 1.0, 12)

    @gt.function
    def f(x):
        dropped = gt.nn.dropout(x, rate=0.5)
        return gt.reduce_sum(gt.square(dropped)), dropped

    R.set_seed(6)
    for _ in range(3):
        with gt.autodiff.ForwardAccumulator(x, gt.constant(direction)) as acc:
            y, dropped = f(x)
        kept = dropped.numpy() != 0
        expected = np.sum(np.where(kept, 8 * x.numpy() * direction, 0.0))
        np.testing.assert_allclose(float(acc.jvp(y)), expected, rtol=1e-12)


def test_op_seeded_and_global_draws_follow_the_eager_sequence(compile_mode):
    """An op seed's stream and the global one, interleaved with eager draws between
    calls: the same values as the body run eagerly."""

    def body():
        return R.normal([3], seed=7), R.uniform([2]), R.normal([2], seed=7)

    R.set_seed(5)
    eager = []
    for _ in range(3):
        eager.append([t.numpy() for t in body()])
        eager.append([R.normal([1]).numpy()])
    R.set_seed(5)
    traced_body = gt.function(body)
    traced = []
    for _ in range(3):
        traced.append([t.numpy() for t in traced_body()])
        traced.append([R.normal([1]).numpy()])
    _assert_same_sequence(traced, eager)
    assert not np.array_equal(traced[0][0], traced[2][0])
    # set_seed restarts every stream the function draws from, also between its calls.
    R.set_seed(5)
    _assert_same_sequence([[t.numpy() for t in traced_body()]], eager[:1])


def test_generator_methods_advance_the_generator_on_every_call(compile_mode):
    def body(g):
        return g.normal([2, 3]), g.uniform([4], minval=1.0, maxval=2.0), \
            g.truncated_normal([3], dtype=gt.float64)

    eager = _calls(body, 3, R.Generator.from_seed(11))
    generator = R.Generator.from_seed(11)
    step = gt.function(lambda: body(generator))
    _assert_same_sequence(_calls(step, 3), eager)
    generator.reset_from_seed(11)  # a new stream object: read at every call
    _assert_same_sequence(_calls(step, 1), eager[:1])
    assert step.experimental_get_tracing_count() == 1


def test_other_random_ops_follow_the_eager_sequence(compile_mode):
    values = gt.constant(np.arange(12).reshape(6, 2))
    logits = gt.constant(np.log([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))

    def body(values, logits):
        return (R.shuffle(values), R.categorical(logits, 5, seed=3),
                R.truncated_normal([4], mean=1.0, stddev=0.5),
                R.uniform([3], minval=2, maxval=9, dtype=gt.int32),
                R.uniform([], maxval=100, dtype=gt.int64),  # a scalar: never folded
                R.normal([2, 2], mean=[1.0, -1.0], stddev=3.0, dtype=gt.float16))

    eager, traced = _eager_and_traced(body, 4, values, logits, seed=9)
    _assert_same_sequence(traced, eager)
    assert len({int(call[4]) for call in traced}) > 1


def test_tensor_parameters_are_inputs_of_the_scaling(compile_mode):
    """mean, stddev, minval, maxval as tensor arguments: new values without a new trace,
    and differentiable (checked against finite differences in float64)."""

    def body(mean, stddev, low):
        return R.normal([3], mean=mean, stddev=stddev, dtype=gt.float64, seed=1), \
            R.uniform([2], minval=low, maxval=low + 1.0, dtype=gt.float64)

    args = [gt.constant(0.5, gt.float64), gt.constant(2.0, gt.float64),
            gt.constant(-1.0, gt.float64)]
    eager, traced = _eager_and_traced(body, 3, *args, seed=2)
    _assert_same_sequence(traced, eager)
    step = gt.function(body)
    R.set_seed(3)
    with gt.GradientTape() as tape:
        tape.watch(args)
        normal, uniform = step(*args)
        total = gt.reduce_sum(normal) + gt.reduce_sum(uniform)
    d_mean, d_stddev, d_low = (float(g) for g in tape.gradient(total, args))
    unit = (normal.numpy() - 0.5) / 2.0
    assert (d_mean, d_low) == (3.0, 2.0)
    assert d_stddev == pytest.approx(np.sum(unit), rel=1e-12)


def test_stateless_ops_take_their_seed_as_an_input(compile_mode):
    @gt.function
    def draw(seed):
        return (R.stateless_normal([3], seed=seed), R.stateless_uniform([2], seed=seed),
                R.stateless_truncated_normal([2], seed=seed, dtype=gt.float64),
                R.stateless_uniform([2], seed=seed, minval=0, maxval=50, dtype=gt.int32))

    seeds = [[1, 2], [2, 1], [1, 2], [7, 0]]
    traced = [[t.numpy() for t in draw(gt.constant(s))] for s in seeds]
    eager = [[t.numpy() for t in draw.python_function(gt.constant(s))] for s in seeds]
    _assert_same_sequence(traced, eager)
    _assert_same_sequence(traced[2:3], traced[:1])  # a seed gives its values, every call
    assert not np.array_equal(traced[0][0], traced[1][0])
    assert draw.experimental_get_tracing_count() == 1
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape \\[2\\]"):
        draw(gt.constant([1, 2, 3]))


def test_tracing_draws_nothing(compile_mode):
    """get_concrete_function (a trace, no call) and the trace of a first call move no
    stream: the calls draw as eager calls would."""
    x = gt.ones([4])
    step = gt.function(lambda x: gt.nn.dropout(x, 0.5) + R.normal([4], seed=2))
    R.set_seed(8)
    expected = [(gt.nn.dropout(x, 0.5) + R.normal([4], seed=2)).numpy() for _ in range(2)]
    R.set_seed(8)
    step.get_concrete_function(x)
    step.get_concrete_function(x)  # finds the trace: a probe, not a call
    _assert_same_sequence(_calls(step, 2, x), [[e] for e in expected])


def test_a_call_whose_guards_fail_gives_back_what_it_drew(compile_mode):
    """The trace tried first draws, then its guard fails and another trace runs: the
    stream moves once per call, as eagerly."""

    def body(x, flag):
        noise = R.uniform([3])
        return noise * 2.0 if bool(flag) else noise - 1.0

    x = gt.zeros([3])
    flags = [True, False, True, False, False, True]
    R.set_seed(4)
    eager = [[body(x, gt.constant(f)).numpy()] for f in flags]
    R.set_seed(4)
    step = gt.function(body)
    traced = [[step(x, gt.constant(f)).numpy()] for f in flags]
    _assert_same_sequence(traced, eager)
    assert step.experimental_get_tracing_count() == 2


def test_unused_draws_still_move_the_stream(compile_mode):
    def body():
        R.normal([5])  # discarded, but eagerly it moves the global stream
        return R.normal([2])

    eager, traced = _eager_and_traced(body, 3)
    _assert_same_sequence(traced, eager)


def test_compiled_and_interpreted_calls_agree():
    x = gt.constant(np.linspace(-1.0, 1.0, 20).reshape(4, 5))
    w = gt.Variable(np.full((4, 5), 0.7))
    results = []
    for compiled in (True, False):
        with gt.config(compile=compiled, compile_after=1):
            step = gt.function(_dropout_step)
            R.set_seed(12)
            results.append(_calls(step, 3, x, w))
    _assert_same_sequence(results[0], results[1])


def test_vectorized_draws_take_one_draw_per_element(compile_mode):
    """The batching rule: a draw whose operand is batched draws once per element."""
    from gradtape.ad.batching import batch_program
    from gradtape.ir import interpreter

    logits = gt.constant(np.log([[0.5, 0.5], [0.9, 0.1]]))
    step = gt.function(lambda logits: R.categorical(logits, 4))
    program = step.get_concrete_function(logits).program
    batched = batch_program(program, [True], 3)
    R.set_seed(1)
    rows = [R.categorical(logits, 4).numpy() for _ in range(3)]
    R.set_seed(1)
    (result, *_) = interpreter.run(batched, [np.stack([logits.numpy()] * 3)])
    np.testing.assert_array_equal(result, np.stack(rows))


def test_higher_order_derivatives_through_a_call_use_its_mask(compile_mode):
    """Reverse over reverse, forward over reverse, reverse over forward and a jacobian
    through a call with dropout: each with that call's mask (y = 8 Σ kept x³)."""
    x = gt.constant(np.linspace(0.5, 2.0, 8))
    v = gt.constant(np.linspace(-1.0, 1.0, 8))

    @gt.function
    def f(x):
        dropped = gt.nn.dropout(x, 0.5)
        return gt.reduce_sum(dropped * dropped * dropped), dropped

    def hvp(kept):
        return np.where(kept, 48 * x.numpy() * v.numpy(), 0.0)

    R.set_seed(3)
    for _ in range(2):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y, dropped = f(x)
            product = gt.reduce_sum(inner.gradient(y, x) * v)
        np.testing.assert_allclose(outer.gradient(product, x).numpy(),
                                   hvp(dropped.numpy() != 0), rtol=1e-12)
        with gt.autodiff.ForwardAccumulator(x, v) as acc:
            with gt.GradientTape() as tape:
                tape.watch(x)
                y, dropped = f(x)
            grad = tape.gradient(y, x)
        np.testing.assert_allclose(acc.jvp(grad).numpy(), hvp(dropped.numpy() != 0),
                                   rtol=1e-12)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y, dropped = f(x)
        np.testing.assert_array_equal(tape.jacobian(dropped, x).numpy(),
                                      np.diag(np.where(dropped.numpy() != 0, 2.0, 0.0)))


def test_reset_from_seed_inside_a_function_raises():
    generator = R.Generator.from_seed(1)

    @gt.function
    def restart():
        generator.reset_from_seed(1)
        return generator.normal([2])

    with pytest.raises(NotImplementedError, match="outside the function"):
        restart()


def test_a_concrete_function_whose_guard_fails_gives_back_what_it_drew(compile_mode):
    def body(x, flag):
        noise = R.uniform([3])
        return noise * 2.0 if bool(flag) else noise - 1.0

    x = gt.zeros([3])
    R.set_seed(4)
    eager = [[body(x, gt.constant(f)).numpy()] for f in (False, True)]
    step = gt.function(body)
    concrete = step.get_concrete_function(x, gt.constant(True))
    R.set_seed(4)
    traced = [[concrete(x, gt.constant(f)).numpy()] for f in (False, True)]
    _assert_same_sequence(traced, eager)


class _LazyDense(gt.Module):
    """A layer that makes its weights on the first call, from gt.random."""

    def __init__(self, units):
        super().__init__()
        self.units = units
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = gt.Variable(gt.random.normal([x.shape[-1], self.units]) * 0.5)
        return gt.nn.dropout(x @ self.w, rate=0.5)


def test_a_layer_built_inside_the_first_call_draws_its_weights_once(compile_mode):
    """The weights' draw happens once, at the first trace, as TF runs a variable's
    initializer once; the masks then follow as eagerly."""
    x = gt.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    R.set_seed(0)
    eager_layer = _LazyDense(4)
    eager = _calls(eager_layer, 3, x)
    R.set_seed(0)
    traced_layer = _LazyDense(4)
    traced = _calls(gt.function(traced_layer), 3, x)
    np.testing.assert_array_equal(traced_layer.w.numpy(), eager_layer.w.numpy())
    _assert_same_sequence(traced, eager)
