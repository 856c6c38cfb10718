"""Generated code computes what the reference interpreter computes."""

import numpy as np
import pytest
from codegen_testing import assert_same, gradient_both_ways

import gradtape as gt

rng = np.random.default_rng(42)


def _r(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def _pos(*shape, dtype=np.float64):
    return (rng.random(shape) + 0.5).astype(dtype)


def _mlp(x, w1, b1, w2, b2):
    h = gt.tanh(gt.matmul(x, w1) + b1)
    return gt.reduce_mean(gt.square(gt.matmul(h, w2) + b2))


def _softmax_xent(logits, w):
    labels = np.eye(5, dtype=logits.dtype)[[0, 3, 1, 4]]
    z = gt.matmul(logits, w)
    return -gt.reduce_mean(gt.reduce_sum(labels * gt.nn.log_softmax(z), axis=1))


CASES = {
    "elementwise chain": (lambda x: gt.reduce_sum(gt.sin(x) * x + gt.cos(x) * 0.5), [_r(7)]),
    "float32 chain": (lambda x: gt.reduce_sum(gt.exp(-x * x) / (1.0 + gt.sigmoid(x))),
                      [_r(3, 4, dtype=np.float32)]),
    "broadcasting": (lambda a, b, c: gt.reduce_sum(gt.tanh(a * b - c) ** 2),
                     [_r(3, 1, 4), _r(5, 1), _r()]),
    "scalar": (lambda x: gt.sin(x) * gt.log(x) + x ** 3.0, [_pos()]),
    "reductions": (lambda x: gt.reduce_max(x, axis=0)[1] + gt.reduce_logsumexp(x)
                   + gt.reduce_variance(x, axis=1)[0] + gt.reduce_prod(x[0]),
                   [_r(4, 3)]),
    "mean keepdims": (lambda x: gt.reduce_sum(x / gt.reduce_mean(x, axis=1, keepdims=True)),
                      [_pos(3, 5)]),
    "shape ops": (lambda x: gt.reduce_sum(gt.transpose(gt.reshape(x, (3, 2, 4)), (2, 0, 1))
                                          * np.arange(24.0).reshape(4, 3, 2)),
                  [_r(6, 4)]),
    "concat and stack": (lambda a, b: gt.reduce_sum(gt.stack([a, b]) ** 2)
                         + gt.reduce_sum(gt.concatenate([a, b * 2.0], axis=0)),
                         [_r(2, 3), _r(2, 3)]),
    "indexing": (lambda x: gt.reduce_sum(x[np.array([0, 2, 2]), 1:] ** 2) + x[1, 0] * 3.0,
                 [_r(4, 3)]),
    "where and clip": (lambda x: gt.reduce_sum(gt.where(x > 0.0, x * x, gt.clip(x, -0.5, 0.5))
                                               + gt.maximum(x, 0.1) + gt.relu(x)),
                       [_r(10)]),
    "matmul mlp": (_mlp, [_r(8, 5), _r(5, 16), _r(16), _r(16, 3), _r(3)]),
    "softmax cross-entropy": (_softmax_xent, [_r(4, 6, dtype=np.float32),
                                              _r(6, 5, dtype=np.float32)]),
    "cast": (lambda x: gt.reduce_sum(gt.cast(gt.square(x), np.float64) * 1.5),
             [_r(4, dtype=np.float32)]),
    "power": (lambda x, y: gt.reduce_sum(gt.power(x, y) + x ** 2 + 2.0 ** x), [_pos(5), _r(5)]),
    "source used twice": (lambda x: gt.reduce_sum(x * x * x + x), [_r(6)]),
    "identity gradient": (lambda x, y: x + y * 2.0, [_r(3), _r(3)]),
    "unconnected source": (lambda x, y: gt.reduce_sum(x * 2.0), [_r(3), _r(3)]),
    "large elementwise": (lambda x: gt.reduce_sum(gt.tanh(x) * gt.sin(x) + gt.exp(-x * x)),
                          [_r(20000)]),
    "accumulation": (lambda x, w: gt.reduce_sum(gt.tanh(x * w) + gt.sin(x * w) * w + x * w),
                     [_r(5000), _r(5000)]),
    "complex": (lambda z: gt.reduce_sum(gt.real(z * gt.conj(z) + gt.exp(z))),
                [_r(4) + 1j * _r(4)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_generated_code_matches_interpreter(name):
    fn, args = CASES[name]
    interpreted, compiled = gradient_both_ways(fn, args)
    assert_same(interpreted, compiled)


def test_output_gradients_are_fed_to_generated_code():
    x = _r(3, 2)
    seed = _r(3, 2)
    interpreted, compiled = gradient_both_ways(lambda v: gt.sin(v) * v, [x], [seed])
    assert_same(interpreted, compiled)
    np.testing.assert_allclose(compiled[0], seed * (np.cos(x) * x + np.sin(x)))


def test_several_targets():
    x, y = _r(4), _r(4)
    interpreted, compiled = gradient_both_ways(lambda a, b: [a * b, gt.sin(a) + b], [x, y])
    assert_same(interpreted, compiled)
    np.testing.assert_allclose(compiled[0], y + np.cos(x))


def test_nested_tapes_give_the_same_second_derivative(compile_mode):
    x = gt.Variable(np.array([0.3, -1.2, 2.0]))
    for _ in range(3):  # compiled on the first call, then reused from the cache
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                y = gt.reduce_sum(gt.tanh(x) * x)
            dy = inner.gradient(y, x)
            z = gt.reduce_sum(dy * dy)
        d2 = outer.gradient(z, x).numpy()
    t = np.tanh(x.numpy())
    s = 1 - t * t
    dy_ = t + x.numpy() * s
    d2y = 2 * s - 2 * x.numpy() * t * s
    np.testing.assert_allclose(d2, 2 * dy_ * d2y, rtol=1e-12)


def test_third_order_through_nested_tapes(compile_mode):
    x = gt.Variable(0.7)
    with gt.GradientTape() as t3:
        with gt.GradientTape() as t2:
            with gt.GradientTape() as t1:
                y = gt.sin(x) * x
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x).numpy()
    v = 0.7
    np.testing.assert_allclose(d3, -3 * np.sin(v) - v * np.cos(v), rtol=1e-6)


def test_persistent_tape_gives_the_same_gradient_on_every_call(compile_mode):
    x = gt.Variable(_r(50))
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(gt.tanh(x) * x)
    grads = [tape.gradient(y, x).numpy() for _ in range(4)]
    for g in grads[1:]:
        np.testing.assert_array_equal(g, grads[0])
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(grads[0], t + x.numpy() * (1 - t * t), rtol=1e-12)
