"""Every memo and cache stays bounded in a long run (docs/memory.md lists them).

A learning rate that changes every step, batch sizes that vary, a @gt.function called
with ever new shapes: none of them may grow memory without end.
"""

import gc
import linecache
import logging

import numpy as np
import pytest

import gradtape as gt
from gradtape.core import state
from gradtape.ir import primitive
from gradtape.ir.nodes import Aval, Literal, Var
from gradtape.ops import elementwise as ew


def var(shape, dtype):
    return Var(Aval(tuple(shape), np.dtype(dtype)), "x")


# --- the elementwise dtype memo (ir/primitive.py) -----------------------------------------

def test_40k_changing_scalars_keep_the_dtype_memo_bounded():
    primitive._elementwise_dtypes.clear()
    x = var((8,), np.float32)
    for step in range(40_000):
        lr = 0.1 / (1 + step)  # a learning-rate schedule
        n = 1 + step % 997  # batch sizes
        assert ew.multiply.primitive.abstract_eval((x, Literal(lr)), {})[0].dtype == np.float32
        assert ew.multiply.primitive.abstract_eval((x, Literal(1 / n)), {})[0].dtype \
            == np.float32
        ew.add.primitive.abstract_eval((x, Literal(n)), {})
    assert len(primitive._elementwise_dtypes) <= 16


def test_a_training_loop_with_a_changing_scalar_keeps_the_memo_bounded():
    primitive._elementwise_dtypes.clear()
    x0 = np.linspace(-1.0, 1.0, 8)
    x = gt.Variable(x0)
    for step in range(300):
        lr = 0.1 / (1 + step)
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.tanh(x) * lr + x * (1 / (1 + step % 7)))
        grad = tape.gradient(loss, x).numpy()
    assert len(primitive._elementwise_dtypes) <= 16
    np.testing.assert_allclose(grad, lr * (1 - np.tanh(x0) ** 2) + 1 / (1 + 299 % 7),
                               rtol=1e-12)


def _direct(prim, array_dtype, value):
    """What NumPy says, without the memo: the dtype, or the exception type."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(prim.impl(np.ones(1, array_dtype), value)).dtype
    except Exception as exc:  # the type is the answer
        return type(exc)


def _memoized(prim, array_dtype, value):
    try:
        return prim.abstract_eval((var((3,), array_dtype), Literal(value)), {})[0].dtype
    except Exception as exc:
        return type(exc)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64, np.uint64,
                                   np.float16, np.bool_])
def test_scalars_in_one_key_class_get_numpys_answer(dtype):
    """The memo keys a scalar by its range, not its value: each answer must still be
    the one NumPy gives that value (int overflow raises under NumPy 2)."""
    primitive._elementwise_dtypes.clear()
    values = [1, 100, 127, 128, 200, 255, 256, -1, -128, -129, 40000, 70000, 2**31,
              2**63 - 1, 2**63, 2**64, -(2**63), 0.5, 1e10, 1e300, float("nan"),
              float("inf"), True, False, 1j, 1e300j]
    for repeat in range(2):  # the second round answers from the memo
        for value in values:
            for prim in (ew.add.primitive, ew.multiply.primitive):
                assert _memoized(prim, dtype, value) == _direct(prim, dtype, value), (
                    value, repeat)


def test_the_dtype_memo_is_emptied_when_full(monkeypatch):
    monkeypatch.setattr(primitive, "MAX_ELEMENTWISE_DTYPES", 4)
    primitive._elementwise_dtypes.clear()
    scaled = primitive.Primitive("scaled", lambda x, scale: x * scale, elementwise=True)
    x = var((3,), np.float32)
    for scale in range(50):  # a param that changes every step
        assert scaled.abstract_eval((x,), {"scale": scale})[0].dtype == np.float32
        assert len(primitive._elementwise_dtypes) <= 4


# --- other memos ------------------------------------------------------------------------

def test_code_objects_seen_by_the_location_walk_are_bounded(monkeypatch):
    monkeypatch.setattr(state, "MAX_CODE_OBJECTS", 32)
    state._is_internal.clear()
    x = gt.Variable(np.ones(2))
    for i in range(200):  # code made at run time: a new code object each time
        namespace = {"gt": gt}
        exec(compile(f"def f(x):\n    return gt.sin(x) * {i}\n", f"gen{i}.py", "exec"),
             namespace)
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(namespace["f"](x))
        assert len(state._is_internal) <= 32
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 199 * np.cos(np.ones(2)))


# --- @gt.function traces --------------------------------------------------------------------

def test_5000_shapes_keep_traces_bounded_and_results_right(caplog):
    @gt.function(max_traces=16)
    def double(x):
        return x * 2.0

    before = len(linecache.cache)
    with caplog.at_level(logging.ERROR, logger="gradtape"):
        for n in range(1, 5001):
            out = double(np.full(n, n, np.float32))
            assert out.shape == (n,) and out.numpy()[0] == 2.0 * n
    assert double._kept == sum(len(v) for v in double._cache.values()) <= 16
    assert double.experimental_get_tracing_count() == 5000
    gc.collect()
    assert len(linecache.cache) - before <= 16


def test_dropped_traces_release_their_generated_source():
    @gt.function(max_traces=8)
    def scaled(x, factor):  # a Python number is part of the code: one source per value
        return gt.reduce_sum(gt.tanh(x) * float(factor))

    x0 = np.linspace(-1.0, 1.0, 3)
    before = len(linecache.cache)
    for factor in range(300):
        x = gt.Variable(x0)
        with gt.GradientTape() as tape:  # taping: the residual forward is compiled too
            y = scaled(x, factor)
        grad = tape.gradient(y, x).numpy()
        np.testing.assert_allclose(grad, factor * (1 - np.tanh(x0) ** 2), rtol=1e-12)
    del x, tape, y
    gc.collect()
    assert len(scaled._cache) == 8
    assert len(linecache.cache) - before <= 2 * 8 + 4  # forward and residual forward


def test_a_dropped_trace_is_traced_again_and_the_least_recent_goes_first():
    @gt.function(max_traces=2)
    def f(x):
        return x + 1.0

    a, b, c = np.zeros(1), np.zeros(2), np.zeros(3)
    f(a), f(b), f(a)  # a is now more recent than b
    f(c)  # drops b
    assert f.experimental_get_tracing_count() == 3
    f(a)
    assert f.experimental_get_tracing_count() == 3  # a was kept
    np.testing.assert_array_equal(f(b).numpy(), [1.0, 1.0])
    assert f.experimental_get_tracing_count() == 4  # b traced again


def test_max_traces_from_config_and_retracing_still_warns(caplog):
    with gt.config(max_traces=3):
        @gt.function
        def f(x):
            return x * 3.0

        with caplog.at_level(logging.WARNING, logger="gradtape"):
            for n in (1, 2, 3, 4, 1, 2):  # more signatures in turn than kept
                np.testing.assert_array_equal(f(np.ones(n)).numpy(), np.full(n, 3.0))
    assert f._kept == 3
    assert "triggered tf.function retracing" in caplog.text and "max_traces" in caplog.text


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8"])
def test_max_traces_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_traces"):
        gt.function(lambda x: x, max_traces=bad)
    with pytest.raises(ValueError, match="max_traces"):
        gt.config(max_traces=bad)
