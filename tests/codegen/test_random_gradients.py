"""Random programs under a tape: compiled gradient == interpreted == finite differences.

A recipe is a random DAG over elementwise ops (broadcasting between shapes (2, 3), (3,),
(2, 1) and ()), reductions, views (reversal, reshape round trips) and a matmul with a
constant, ending in a weighted sum of some of its values.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradtape.testing import check_vjp

SHAPES = [(2, 3), (3,), (2, 1), ()]
W = np.linspace(-1.0, 1.0, 9).reshape(3, 3)

UNARY = [
    gt.sin, gt.tanh, gt.sigmoid, gt.square, gt.negative,
    lambda a: gt.exp(gt.sin(a)),
    lambda a: gt.log(1.5 + gt.cos(a)),
    lambda a: a * 2.5,
    lambda a: gt.identity(a),
]
BINARY = [
    gt.add, gt.subtract, gt.multiply, gt.maximum,
    lambda a, b: a / (1.0 + b * b),
    # Shifted, so that two mathematically equal values (sin(x1) and (x0 + sin(x1)) - x0)
    # never meet at the branch: rounding would pick a side that finite differences can't
    # see, and the check would compare the two branches' slopes.
    lambda a, b: gt.where(a > b + 0.25, a * b, a - b),
]


def _reduce_or_view(kind, a):
    if a.shape != (2, 3):
        return gt.reduce_sum(a) if kind == 0 else a * 0.5
    return [
        lambda: gt.reduce_sum(a, axis=0),  # (3,)
        lambda: gt.reduce_mean(a, axis=1, keepdims=True),  # (2, 1)
        lambda: a[:, ::-1],
        lambda: gt.reshape(gt.transpose(gt.reshape(a, (3, 2))), (2, 3)),
        lambda: gt.matmul(a, W),
        lambda: gt.reduce_max(a, axis=1, keepdims=True),
    ][kind % 6]()


@st.composite
def recipes(draw):
    n_inputs = draw(st.integers(1, 3))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 50), st.integers(0, 50),
                                    st.integers(0, 50)), min_size=1, max_size=10))
    outputs = draw(st.lists(st.integers(0, 50), min_size=1, max_size=3))
    return shapes, steps, outputs


def _loss_fn(steps, outputs):
    def loss(*xs):
        values = list(xs)
        for kind, k, i, j in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            if kind == 0:
                values.append(UNARY[k % len(UNARY)](a))
            elif kind == 1:
                values.append(BINARY[k % len(BINARY)](a, b))
            else:
                values.append(_reduce_or_view(k, a))
        total = 0.0
        for n, o in enumerate(outputs):
            total = total + gt.reduce_sum(values[-1 - o % len(values)]) * (1.0 + 0.5 * n)
        return total

    return loss


def _gradients(loss, arrays, compiled):
    gt.clear_cache()
    with gt.config(compile=compiled, compile_after=1):
        xs = [gt.Variable(a) for a in arrays]
        with gt.GradientTape() as tape:
            y = loss(*xs)
        grads = tape.gradient(y, xs, unconnected_gradients="zero")
        assert gt.cache_info().compiled == int(compiled)
    return [g.numpy() for g in grads]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes(), st.integers(0, 2**16))
def test_random_gradients_compiled_interpreted_and_numerical_agree(recipe, seed):
    shapes, steps, outputs = recipe
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.0, 1.0, shape) for shape in shapes]
    loss = _loss_fn(steps, outputs)
    interpreted = _gradients(loss, arrays, compiled=False)
    compiled = _gradients(loss, arrays, compiled=True)
    for a, b in zip(interpreted, compiled):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    with gt.config(compile_after=1):
        check_vjp(loss, arrays, rtol=1e-4, atol=1e-6, seed=seed)
