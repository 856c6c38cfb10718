"""nn ops: softmax and log_softmax (values, stability, dtypes, derivatives to 3rd order),
one_hot with TF's semantics, and the ``gt.nn`` namespace."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(3)


def np_log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    return np.exp(np_log_softmax(x, axis))


SHAPES_AXES = [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), (0, 2))]


@pytest.mark.parametrize("shape, axis", SHAPES_AXES)
def test_values(shape, axis):
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(gt.nn.softmax(x, axis=axis).numpy(), np_softmax(x, axis),
                               rtol=1e-12)
    np.testing.assert_allclose(gt.nn.log_softmax(x, axis=axis).numpy(),
                               np_log_softmax(x, axis), rtol=1e-12)
    np.testing.assert_allclose(np.sum(gt.softmax(x, axis).numpy(), axis=axis), 1.0)


@pytest.mark.parametrize("shape, axis", SHAPES_AXES)
def test_grads(shape, axis, check_jvp):
    x = rng.standard_normal(shape)
    check_grads(lambda t: gt.nn.softmax(t, axis=axis), [x], order=2)
    check_grads(lambda t: gt.nn.log_softmax(t, axis=axis), [x], order=2)
    check_jvp(lambda t: gt.nn.softmax(t, axis=axis), [x])
    check_jvp(lambda t: gt.nn.log_softmax(t, axis=axis), [x])


def test_third_order():
    x = rng.standard_normal((2, 3))
    check_grads(lambda t: gt.nn.softmax(t) * t, [x], order=3)
    check_grads(lambda t: gt.nn.log_softmax(t, axis=0) ** 2, [x], order=3)


def test_gradient_by_hand():
    # d/dx log_softmax(x)[0] = e_0 - softmax(x); for x = (0, 0): (0.5, -0.5).
    x = gt.constant([0.0, 0.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ls = gt.nn.log_softmax(x)[0]
        s = gt.nn.softmax(x)[0]
    np.testing.assert_allclose(tape.gradient(ls, x).numpy(), [0.5, -0.5])
    # d softmax_0 / dx = s0 (e_0 - s) = (0.25, -0.25)
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), [0.25, -0.25])


def test_stable_for_large_logits_and_float32():
    x = gt.constant([1000.0, 0.0, -1000.0])  # float32, like tf.constant
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = gt.nn.softmax(x)
        ls = gt.nn.log_softmax(x)
        loss = -ls[1]
        weighted = gt.reduce_sum(s * gt.constant([1.0, 2.0, 3.0]))
    assert s.dtype == np.float32 and ls.dtype == np.float32
    np.testing.assert_array_equal(s.numpy(), np.array([1.0, 0.0, 0.0], np.float32))
    np.testing.assert_allclose(ls.numpy(), [0.0, -1000.0, -2000.0])
    g = tape.gradient(loss, x)
    assert g.dtype == np.float32
    assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_allclose(g.numpy(), [1.0, -1.0, 0.0])
    # s is saturated at (1, 0, 0): its gradient is exactly zero, not nan.
    np.testing.assert_array_equal(tape.gradient(weighted, x).numpy(), [0.0, 0.0, 0.0])


def test_second_order_at_large_logits_is_finite():
    x = gt.constant([1000.0, 999.0])
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.nn.log_softmax(x)[0]
        g = inner.gradient(y, x)
    hess = outer.jacobian(g, x).numpy()
    s = np_softmax(np.array([1000.0, 999.0]))
    # Hessian of log_softmax_0 = -(diag(s) - s s^T).
    np.testing.assert_allclose(hess, -(np.diag(s) - np.outer(s, s)), rtol=1e-5)


def test_integer_logits_rejected():
    with pytest.raises(TypeError, match="floating"):
        gt.nn.softmax(gt.constant([1, 2]))


def test_activations_in_nn_namespace():
    x = gt.constant([-1.0, 2.0])
    assert gt.nn.relu is gt.relu and gt.nn.sigmoid is gt.sigmoid
    np.testing.assert_allclose(gt.nn.softplus(x).numpy(), np.log1p(np.exp([-1.0, 2.0])),
                               rtol=1e-6)
    np.testing.assert_allclose(gt.nn.tanh(x).numpy(), np.tanh([-1.0, 2.0]), rtol=1e-6)
    assert gt.one_hot is gt.nn.one_hot


# --- one_hot ----------------------------------------------------------------------------

def test_one_hot_like_tf():
    out = gt.one_hot([0, 2, -1, 3], depth=3)
    assert out.dtype == np.float32 and out.shape == (4, 3)
    np.testing.assert_array_equal(
        out.numpy(), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]
    )
    # TF's docs: indices [[0, 2], [1, -1]], depth 3, on 1.0, off 0.0, axis -1.
    out = gt.one_hot([[0, 2], [1, -1]], 3, on_value=1.0, off_value=0.0)
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[1], [[0, 1, 0], [0, 0, 0]])


def test_one_hot_axis_values_and_dtype():
    idx = np.array([[0, 1], [2, 0]])
    out = gt.one_hot(idx, 3, on_value=5.0, off_value=-1.0, axis=0)
    assert out.shape == (3, 2, 2)
    expected = np.where(np.arange(3)[:, None, None] == idx, 5.0, -1.0)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert gt.one_hot(idx, 3, axis=1).shape == (2, 3, 2)
    assert gt.one_hot([1], 2, on_value=3, off_value=0).dtype == np.int32
    assert gt.one_hot([1], 2, dtype=np.float64).dtype == np.float64
    assert gt.one_hot(gt.constant(1), 4).shape == (4,)


def test_one_hot_is_a_constant():
    labels = gt.constant([1, 0])
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        loss = -gt.reduce_sum(gt.one_hot(labels, 2) * gt.nn.log_softmax(x))
    s = np_softmax(np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), s - [[0, 1], [1, 0]],
                               rtol=1e-6)
    assert not tape._records or all(r[0].name != "one_hot" for r in tape._records)


def test_one_hot_errors():
    with pytest.raises(TypeError, match="integers"):
        gt.one_hot([0.5], 2)
    with pytest.raises(ValueError, match="axis"):
        gt.one_hot([0], 2, axis=3)


@pytest.mark.parametrize("shape, axis", SHAPES_AXES)
def test_batching_rules(shape, axis, check_batching):
    x = rng.standard_normal(shape)
    check_batching(lambda t: gt.nn.softmax(t, axis=axis), [x])
    check_batching(lambda t: gt.nn.log_softmax(t, axis=axis), [x])


# --- the rest of tf.nn --------------------------------------------------------------------

def _np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACTIVATIONS = {
    "leaky_relu": (lambda t: gt.nn.leaky_relu(t, alpha=0.1),
                   lambda x: np.where(x > 0, x, 0.1 * x)),
    "relu6": (gt.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (gt.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "selu": (gt.nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "silu": (gt.nn.silu, lambda x: x * _np_sigmoid(x)),
    "swish beta": (lambda t: gt.nn.swish(t, beta=2.0), lambda x: x * _np_sigmoid(2 * x)),
    "log_sigmoid": (gt.nn.log_sigmoid, lambda x: np.log(_np_sigmoid(x))),
    "l2_loss": (gt.nn.l2_loss, lambda x: np.sum(x ** 2) / 2),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations(name):
    op, reference = ACTIVATIONS[name]
    x = np.array([[-3.0, -0.7, 0.4], [1.3, 5.5, 7.0]])
    np.testing.assert_allclose(op(x).numpy(), reference(x), rtol=1e-12)
    check_grads(op, [x], order=2)


def test_activations_do_not_overflow():
    x = gt.constant([-1000.0, 1000.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        outs = [gt.nn.elu(x), gt.nn.selu(x), gt.nn.log_sigmoid(x), gt.nn.silu(x)]
    for out in outs:
        assert out.dtype == np.float32
        assert np.all(np.isfinite(tape.gradient(out, x).numpy()))
    np.testing.assert_allclose(outs[2].numpy(), [-1000.0, 0.0])


def test_cross_entropies():
    logits = rng.standard_normal((3, 4))
    labels = np_softmax(rng.standard_normal((3, 4)))
    expected = -np.sum(labels * np_log_softmax(logits), axis=-1)
    np.testing.assert_allclose(
        gt.nn.softmax_cross_entropy_with_logits(labels, logits).numpy(), expected, rtol=1e-12
    )
    check_grads(lambda z, x: gt.nn.softmax_cross_entropy_with_logits(z, x), [labels, logits])

    classes = np.array([3, 0, 3])
    sparse = gt.nn.sparse_softmax_cross_entropy_with_logits(classes, logits)
    np.testing.assert_allclose(sparse.numpy(), -np_log_softmax(logits)[[0, 1, 2], classes],
                               rtol=1e-12)
    check_grads(lambda x: gt.nn.sparse_softmax_cross_entropy_with_logits(classes, x), [logits])
    with pytest.raises(ValueError, match="outside the valid range of \\[0, 4\\)"):
        gt.nn.sparse_softmax_cross_entropy_with_logits(np.array([4, 0, 0]), logits)

    z = rng.uniform(0, 1, (3, 4))
    expected = -(z * np.log(_np_sigmoid(logits)) + (1 - z) * np.log(1 - _np_sigmoid(logits)))
    np.testing.assert_allclose(
        gt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=logits).numpy(), expected,
        rtol=1e-10,
    )
    check_grads(lambda x: gt.nn.sigmoid_cross_entropy_with_logits(z, x), [logits], order=2)


def test_sigmoid_cross_entropy_gradient_at_zero_and_large_logits():
    # d/dx = sigmoid(x) - z: 0.5 - z at x = 0 (TF's branch choice), finite at +-1000.
    x = gt.constant([0.0, 1000.0, -1000.0])
    z = gt.constant([0.25, 1.0, 0.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        loss = gt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    np.testing.assert_allclose(loss.numpy(), [np.log(2.0), 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [0.25, 0.0, 0.0])


def test_bias_add():
    value = rng.standard_normal((2, 3, 4))
    last, channels = rng.standard_normal(4), rng.standard_normal(3)
    np.testing.assert_allclose(gt.nn.bias_add(value, last).numpy(), value + last)
    np.testing.assert_allclose(gt.nn.bias_add(value, channels, data_format="NCW").numpy(),
                               value + channels[:, None])


# Measured in TF 2.21: the gradients of tf.nn activations at their kinks (TF's
# ReluGrad, Relu6Grad, EluGrad, SeluGrad and LeakyReluGrad kernels).
KINK_GRADIENTS = {
    "relu": (gt.nn.relu, [0.0], [0.0]),
    "relu6": (gt.nn.relu6, [0.0, 6.0, -1.0, 3.0, 7.0], [0.0, 0.0, 0.0, 1.0, 0.0]),
    "elu": (gt.nn.elu, [0.0], [1.0]),
    "selu": (gt.nn.selu, [0.0], [1.0507009873554805]),
    "leaky_relu": (gt.nn.leaky_relu, [0.0], [0.2]),
}


@pytest.mark.parametrize("name", sorted(KINK_GRADIENTS))
def test_activation_gradients_at_kinks_follow_tensorflow(name):
    op, points, expected = KINK_GRADIENTS[name]
    x = gt.constant(np.array(points))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-15)
    _, tangent = gt.jvp(op, [x], [gt.ones_like(x)])
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-15)


def test_relu6_keeps_the_input_dtype():
    assert gt.nn.relu6(gt.constant([-1.0, 7.0])).dtype == np.float32
    ints = gt.nn.relu6(gt.constant([-3, 2, 9]))
    assert ints.dtype == np.int32 and ints.numpy().tolist() == [0, 2, 6]
