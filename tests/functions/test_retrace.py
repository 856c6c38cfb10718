"""@gt.function retracing: integer tensors used as labels or indices are program inputs
(no guard on their values), boolean masks guard only on their count, and the retracing
warning names its cause."""

import logging
import warnings

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences


def _dataset(rng, steps, batch=16, features=6, classes=4):
    xs = [rng.normal(size=(batch, features)) for _ in range(steps)]
    ys = [rng.integers(0, classes, size=batch).astype(np.int32) for _ in range(steps)]
    return xs, ys


def _train(step_fn, xs, ys, classes=4):
    """Run ``step_fn`` over the data with fresh float64 parameters: losses, parameters."""
    w = gt.Variable(np.linspace(-1.0, 1.0, xs[0].shape[1] * classes).reshape(-1, classes))
    b = gt.Variable(np.zeros(classes))
    opt = gt.keras.optimizers.SGD(learning_rate=0.2)

    def step(x, y):
        with gt.GradientTape() as tape:
            logits = gt.matmul(x, w) + b
            loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    fn = step_fn(step)
    losses = [float(fn(gt.constant(x), gt.constant(y))) for x, y in zip(xs, ys)]
    return np.array(losses), w.numpy(), b.numpy(), fn


def test_sparse_cross_entropy_train_step_traces_once(compile_mode):
    xs, ys = _dataset(np.random.default_rng(0), 80)
    eager_losses, eager_w, eager_b, _ = _train(lambda f: f, xs, ys)
    losses, w, b, fn = _train(gt.function, xs, ys)
    assert fn.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    np.testing.assert_allclose(w, eager_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b, eager_b, rtol=1e-12, atol=1e-14)


def test_out_of_range_labels_raise_on_a_later_call(compile_mode):
    @gt.function
    def loss(logits, labels):
        return gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

    logits = gt.constant(np.zeros((2, 3)))
    np.testing.assert_allclose(loss(logits, gt.constant([0, 2])).numpy(), [np.log(3.0)] * 2)
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"label value of 3 .*\[0, 3\)"):
        loss(logits, gt.constant([0, 3]))
    assert loss.experimental_get_tracing_count() == 1


INDEXERS = {
    "getitem": lambda x, i: x[i],
    "getitem_with_slice": lambda x, i: x[:, i[:2]],
    "scalar_getitem": lambda x, i: x[i[0]],
    "take": lambda x, i: np.take(x, i, axis=1),
    "gather": lambda x, i: gt.gather(x, i, axis=0),
    "gather_nd": lambda x, i: gt.gather_nd(x, gt.stack([i, i[::-1]], axis=-1)),
    "take_along_axis": lambda x, i: np.take_along_axis(x, gt.reshape(i, (-1, 1)), axis=1),
    "roll": lambda x, i: gt.roll(x, i[0], axis=1) + np.roll(x, i[:2] - 1, axis=[0, 1]),
    "argsort_gather": lambda x, i: gt.gather(x, gt.argsort(gt.cast(i, gt.float64))),
}


@pytest.mark.parametrize("name", sorted(INDEXERS))
def test_changing_index_tensors_do_not_retrace(compile_mode, name):
    index_fn = INDEXERS[name]

    def f(x, i):
        return gt.reduce_sum(gt.sin(index_fn(x, i)) * index_fn(x, i))

    traced = gt.function(f)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 4))
    for _ in range(6):
        i = rng.integers(0, 4, size=4).astype(np.int32)
        got = traced(gt.constant(x), gt.constant(i))
        np.testing.assert_allclose(got.numpy(), f(gt.constant(x), gt.constant(i)).numpy(),
                                   rtol=1e-13)
        xt = gt.constant(x)
        with gt.GradientTape() as tape:
            tape.watch(xt)
            y = traced(xt, gt.constant(i))
        grad = tape.gradient(y, xt)
        assert_vjp_matches_differences(lambda a, i=i: f(a, gt.constant(i)), [x], np.ones(()),
                                       [grad.numpy()], rng)
    assert traced.experimental_get_tracing_count() == 1


def _masked(x, m):
    return gt.reduce_sum(x[m] ** 2) + gt.reduce_sum(gt.boolean_mask(x, m[:, 0]))


def test_boolean_masks_guard_on_their_count_only(compile_mode):
    traced = gt.function(_masked)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3))
    counts = []
    for step in range(8):
        # the same counts (6 in the mask, 2 in its first column) for the first 5 calls
        m = np.zeros((4, 3), bool)
        m[:2, 0] = True
        m[rng.permutation(4)[:2], 1:] = True
        if step >= 5:
            m[2, 0] = True  # 3 in the first column: a new count
        counts.append(traced.experimental_get_tracing_count())
        mt = gt.constant(m)
        xt = gt.constant(x)
        with gt.GradientTape() as tape, warnings.catch_warnings():
            # a trace whose count no longer fits is skipped: its generated code is kept
            # (no "raised where the interpreter does not" RuntimeWarning)
            warnings.simplefilter("error", RuntimeWarning)
            tape.watch(xt)
            y = traced(xt, mt)
        want = (x[m] ** 2).sum() + x[m[:, 0]].sum()
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-13)
        grad = tape.gradient(y, xt)
        np.testing.assert_allclose(grad.numpy(), 2 * x * m + m[:, :1], rtol=1e-13)
    assert counts == [0, 1, 1, 1, 1, 1, 2, 2]


# --- the retracing warning names its cause ---------------------------------------------

def _warnings(caplog, fn, calls):
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for args in calls:
            fn(*args)
    return [r.getMessage() for r in caplog.records if "retracing" in r.getMessage()]


def test_warning_names_the_nested_argument_that_changed(caplog):
    @gt.function
    def step(x, config):
        return x * config["scales"][1]

    x = gt.constant([1.0, 2.0])
    messages = _warnings(caplog, step, [(x, {"scales": (1.0, float(k))}) for k in range(5)])
    assert len(messages) == 1
    assert messages[0].startswith("5 out of the last 5 calls to <gt.function step> "
                                  "triggered tf.function retracing. Tracing is expensive")
    assert "  - the first call\n" in messages[0]
    assert "argument `config['scales'][1]` changed: Python float 3.0 -> Python float 4.0" \
        in messages[0]


def test_warning_names_a_shape_change():
    @gt.function
    def step(x, y):
        return x + gt.reduce_sum(y)

    step(gt.constant(1.0), gt.constant(np.zeros((2, 3), np.float32)))
    fn = step.get_concrete_function(gt.constant(1.0), gt.constant(np.zeros((2, 4))))
    assert fn is not None
    reason = step._signature_change(*_key_and_description(step, gt.constant(1.0),
                                                          gt.constant(np.zeros((5,)))))
    assert reason == ("argument `y` changed: float64 tensor of shape (2, 4) -> float64 "
                      "tensor of shape (5,)")


def _key_and_description(fn, *args):
    from gradtape.functions.retrace import describe_arguments

    key = fn._signature(args, {})[0]
    return key, describe_arguments(fn._parameter_names, args, {})


def test_warning_names_the_value_read_and_its_line(caplog):
    @gt.function
    def step(x):
        threshold = float(gt.reduce_max(x))  # the guarded read
        return x * threshold

    line = step.python_function.__code__.co_firstlineno + 2
    messages = _warnings(caplog, step, [(gt.constant([float(k), 0.0]),) for k in range(5)])
    assert len(messages) == 1
    where = f"{__file__}:{line}"
    assert (f"float(t) at {where} read the value of the result of `max` (made at {where}): "
            "it was 3.0 when traced, 4.0 now") in messages[0]


def test_warning_names_numpy_reads_and_ops_reading_values(caplog):
    @gt.function
    def step(x, widths):
        shift = x.numpy()[0]
        return gt.pad(x, widths) * shift

    calls = [(gt.constant([float(k)]), gt.constant([[1, 1]])) for k in range(5)]
    messages = _warnings(caplog, step, calls)
    assert "t.numpy() at " in messages[0]
    assert "read the value of argument `x`: it was [3.] when traced, [4.] now" in messages[0]
    caplog.clear()
    calls = [(gt.constant([7.0]), gt.constant([[k, 1]])) for k in range(5)]
    messages = _warnings(caplog, step, calls)
    assert ("gt.pad(...) reading a tensor argument's value at " in messages[0]
            and "read the value of argument `widths`" in messages[0])
