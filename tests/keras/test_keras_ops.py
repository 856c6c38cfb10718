"""keras.ops: values against NumPy's (and Keras's written) definitions, gradients
against float64 finite differences, and the same ops on KerasTensors inside a
functional model."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences
from gradtape import keras
from gradtape.keras import ops

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
POS = np.abs(X) + 0.5
Y = RNG.standard_normal((3, 4))
M = RNG.standard_normal((4, 2))


def _softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# (name, keras.ops call on the operands, NumPy's definition, operands)
CASES = [
    ("sum", lambda x: ops.sum(x, axis=1, keepdims=True), lambda x: x.sum(1, keepdims=True), [X]),
    ("sum_all", lambda x: ops.sum(x), np.sum, [X]),
    ("mean", lambda x: ops.mean(x, axis=0), lambda x: x.mean(0), [X]),
    ("max", lambda x: ops.max(x, axis=-1), lambda x: x.max(-1), [X]),
    ("min", lambda x: ops.min(x, axis=[0, 1]), np.min, [X]),
    ("std", lambda x: ops.std(x, axis=1), lambda x: x.std(1), [X]),
    ("var", lambda x: ops.var(x), np.var, [X]),
    ("prod", lambda x: ops.prod(x, axis=0), lambda x: x.prod(0), [X]),
    ("logsumexp", lambda x: ops.logsumexp(x, axis=1),
     lambda x: np.log(np.exp(x).sum(1)), [X]),
    ("matmul", ops.matmul, np.matmul, [X, M]),
    ("dot", ops.dot, np.dot, [X, M]),
    ("einsum", lambda a, b: ops.einsum("ij,jk->ik", a, b), lambda a, b: a @ b, [X, M]),
    ("tensordot", lambda a, b: ops.tensordot(a, b, axes=1), lambda a, b: a @ b, [X, M]),
    ("outer", lambda a, b: ops.outer(a[0], b[:, 0]), lambda a, b: np.outer(a[0], b[:, 0]),
     [X, M]),
    ("concatenate", lambda a, b: ops.concatenate([a, b], axis=1),
     lambda a, b: np.concatenate([a, b], 1), [X, Y]),
    ("stack", lambda a, b: ops.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1), [X, Y]),
    ("reshape", lambda x: ops.reshape(x, (2, -1)), lambda x: x.reshape(2, -1), [X]),
    ("transpose", lambda x: ops.transpose(x), np.transpose, [X]),
    ("expand_dims", lambda x: ops.expand_dims(x, 1), lambda x: x[:, None], [X]),
    ("squeeze", lambda x: ops.squeeze(ops.expand_dims(x, 0)), lambda x: x, [X]),
    ("where", lambda a, b: ops.where(a > b, a, b), np.maximum, [X, Y]),
    ("add", ops.add, np.add, [X, Y]),
    ("subtract", ops.subtract, np.subtract, [X, Y]),
    ("multiply", ops.multiply, np.multiply, [X, Y]),
    ("divide", ops.divide, np.divide, [X, POS]),
    ("power", lambda a, b: ops.power(a, b), np.power, [POS, Y]),
    ("maximum", ops.maximum, np.maximum, [X, Y]),
    ("minimum", ops.minimum, np.minimum, [X, Y]),
    ("sqrt", ops.sqrt, np.sqrt, [POS]),
    ("exp", ops.exp, np.exp, [X]),
    ("log", ops.log, np.log, [POS]),
    ("abs", ops.abs, np.abs, [X]),
    ("square", ops.square, np.square, [X]),
    ("tanh", ops.tanh, np.tanh, [X]),
    ("erf", ops.erf, lambda x: np.vectorize(__import__("math").erf)(x), [X]),
    ("rsqrt", ops.rsqrt, lambda x: 1 / np.sqrt(x), [POS]),
    ("clip", lambda x: ops.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), [X]),
    ("take", lambda x: ops.take(x, [2, 0], axis=1), lambda x: x[:, [2, 0]], [X]),
    ("take_flat", lambda x: ops.take(x, [5, 1]), lambda x: x.ravel()[[5, 1]], [X]),
    ("tile", lambda x: ops.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1)), [X]),
    ("tile_short", lambda x: ops.tile(x, 2), lambda x: np.tile(x, 2), [X]),
    ("repeat", lambda x: ops.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, 0), [X]),
    ("repeat_flat", lambda x: ops.repeat(x, 2), lambda x: np.repeat(x, 2), [X]),
    ("split", lambda x: ops.split(x, [1, 3], axis=1)[1], lambda x: np.split(x, [1, 3], 1)[1],
     [X]),
    ("cumsum", lambda x: ops.cumsum(x, axis=1), lambda x: np.cumsum(x, 1), [X]),
    ("cumsum_flat", ops.cumsum, np.cumsum, [X]),
    ("slice", lambda x: ops.slice(x, (1, 1), (2, 2)), lambda x: x[1:3, 1:3], [X]),
    ("norm", ops.norm, np.linalg.norm, [X]),
    ("norm_axis", lambda x: ops.norm(x, ord=1, axis=1), lambda x: np.abs(x).sum(1), [X]),
    ("softmax", ops.softmax, _softmax, [X]),
    ("log_softmax", ops.log_softmax, lambda x: np.log(_softmax(x)), [X]),
    ("sigmoid", ops.sigmoid, lambda x: 1 / (1 + np.exp(-x)), [X]),
    ("relu", ops.relu, lambda x: np.maximum(x, 0), [X]),
    ("leaky_relu", ops.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), [X]),
    ("elu", ops.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [X]),
    ("silu", ops.silu, lambda x: x / (1 + np.exp(-x)), [X]),
    ("softplus", ops.softplus, lambda x: np.log1p(np.exp(x)), [X]),
    ("gelu", ops.gelu,  # Keras's ops.gelu default: the tanh approximation
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), [X]),
    ("hard_sigmoid", ops.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, [X * 4]),
    ("moments_var", lambda x: ops.moments(x, axes=[0])[1], lambda x: x.var(0), [X]),
    ("normalize", ops.normalize,
     lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True), [X]),
    ("flip", lambda x: ops.flip(x, axis=1), lambda x: np.flip(x, 1), [X]),
    ("roll", lambda x: ops.roll(x, 2), lambda x: np.roll(x, 2), [X]),
    ("pad", lambda x: ops.pad(x, ((1, 0), (0, 2))), lambda x: np.pad(x, ((1, 0), (0, 2))), [X]),
    ("average", lambda x: ops.average(x, axis=1, weights=[1.0, 2.0, 3.0, 4.0]),
     lambda x: np.average(x, axis=1, weights=[1.0, 2.0, 3.0, 4.0]), [X]),
    ("swapaxes", lambda x: ops.swapaxes(x, 0, 1), lambda x: np.swapaxes(x, 0, 1), [X]),
    ("triu", ops.triu, np.triu, [X]),
]

NON_DIFFERENTIABLE = {"take_flat"}  # (differentiable too; kept to check flat indexing)


@pytest.mark.parametrize("name,op,reference,operands", CASES, ids=[c[0] for c in CASES])
def test_value_matches_numpy(name, op, reference, operands):
    got = op(*[gt.constant(a) for a in operands])
    np.testing.assert_allclose(np.asarray(got), reference(*operands), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,op,reference,operands", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(name, op, reference, operands):
    tensors = [gt.Variable(a) for a in operands]
    with gt.GradientTape() as tape:
        out = op(*tensors)
    u = RNG.standard_normal(np.shape(out))
    grads = tape.gradient(out, tensors, output_gradients=gt.constant(u))
    grads = [np.zeros_like(a) if g is None else g.numpy() for g, a in zip(grads, operands)]
    assert_vjp_matches_differences(op, operands, u, grads, RNG, rtol=1e-5, what=name)


@pytest.mark.parametrize("name,op,reference,operands", CASES, ids=[c[0] for c in CASES])
def test_op_on_keras_tensors_builds_a_model_giving_the_same_values(name, op, reference,
                                                                     operands):
    # Operands of the first one's batch are model inputs (a None first size); the
    # others are constants of the graph.
    batch = operands[0].shape[0]
    symbolic = [keras.Input(shape=a.shape[1:], dtype="float64") if a.shape[0] == batch
                else gt.constant(a) for a in operands]
    inputs = [t for t in symbolic if isinstance(t, keras.KerasTensor)]
    model = keras.Model(inputs, op(*symbolic))
    fed = [a for a in operands if a.shape[0] == batch]
    np.testing.assert_allclose(np.asarray(model(fed)), reference(*operands), rtol=1e-10,
                               atol=1e-12)


def test_crossentropies_follow_keras_definitions():
    t = np.array([[1.0, 0.0, 1.0]])
    p = np.array([[0.9, 0.2, 1.0]])
    clipped = np.clip(p, 1e-7, 1 - 1e-7)
    np.testing.assert_allclose(
        ops.binary_crossentropy(t, p).numpy(),
        -(t * np.log(clipped) + (1 - t) * np.log(1 - clipped)), rtol=1e-12)
    z = np.array([[2.0, -1.0, 0.5]])
    np.testing.assert_allclose(
        ops.binary_crossentropy(t, z, from_logits=True).numpy(),
        -(t * np.log(1 / (1 + np.exp(-z))) + (1 - t) * np.log(1 - 1 / (1 + np.exp(-z)))),
        rtol=1e-12)
    probs = np.array([[0.2, 0.3, 0.1]])  # not normalized: Keras scales to sum to one
    onehot = np.array([[0.0, 1.0, 0.0]])
    assert ops.categorical_crossentropy(onehot, probs).numpy() == pytest.approx(
        [-np.log(0.3 / 0.6)])
    assert ops.categorical_crossentropy(onehot, z, from_logits=True).numpy() == \
        pytest.approx([-np.log(_softmax(z)[0, 1])])
    assert ops.sparse_categorical_crossentropy(np.array([1]), z, from_logits=True).numpy() \
        == pytest.approx([-np.log(_softmax(z)[0, 1])])


def test_crossentropy_gradients_match_finite_differences():
    t = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    z = RNG.standard_normal((2, 3))
    for fn in (lambda p: ops.categorical_crossentropy(t, p, from_logits=True),
               lambda p: ops.binary_crossentropy(t, p, from_logits=True),
               lambda p: ops.sparse_categorical_crossentropy(np.array([1, 0]), p,
                                                            from_logits=True)):
        v = gt.Variable(z)
        with gt.GradientTape() as tape:
            out = fn(v)
        u = RNG.standard_normal(np.shape(out))
        grad = tape.gradient(out, v, output_gradients=gt.constant(u))
        assert_vjp_matches_differences(fn, [z], u, [grad.numpy()], RNG, rtol=1e-6)


def test_binary_crossentropy_from_logits_is_smooth_at_zero():
    """softplus(z) - z t is smooth: its gradient at z = 0 is sigmoid(0) - t = 1/2 - t (as
    Keras on TF or JAX gives), not the -t of relu's and abs's zero slopes at their kinks."""
    z = gt.constant(np.array([[0.0, 0.0, -0.0, 3.0]]))
    t = np.array([[0.0, 1.0, 0.25, 0.5]])
    with gt.GradientTape() as tape:
        tape.watch(z)
        loss = gt.reduce_sum(ops.binary_crossentropy(t, z, from_logits=True))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               1 / (1 + np.exp(-z.numpy())) - t, rtol=1e-12)
    eps = 1e-6  # central differences in float64 at z = 0
    plus = ops.binary_crossentropy(t, np.full((1, 4), eps), from_logits=True).numpy()
    minus = ops.binary_crossentropy(t, np.full((1, 4), -eps), from_logits=True).numpy()
    np.testing.assert_allclose(((plus - minus) / (2 * eps))[0, :3], [0.5, -0.5, 0.25],
                               rtol=1e-8)


@pytest.mark.parametrize("from_logits", [False, True])
def test_binary_crossentropy_needs_one_shape(from_logits):
    with pytest.raises(ValueError, match=r"must have the same shape. Received: "
                                         r"target.shape=\(3,\), output.shape=\(2, 3\)"):
        ops.binary_crossentropy(np.ones(3), np.full((2, 3), 0.5), from_logits=from_logits)


def test_dtypes_and_creation_follow_keras():
    assert ops.argmax(X).dtype == np.int32 and int(ops.argmax(X)) == int(np.argmax(X))
    np.testing.assert_array_equal(ops.argmax(X, axis=1).numpy(), np.argmax(X, 1))
    assert ops.argmax(X, axis=1, keepdims=True).shape == (3, 1)
    assert ops.arange(5).dtype == np.int32 and ops.arange(0.0, 1.0, 0.5).dtype == np.float32
    assert ops.zeros((2, 3)).dtype == np.float32 and ops.ones((2,)).numpy().tolist() == [1, 1]
    assert ops.full((2,), 7).dtype == np.int32
    np.testing.assert_array_equal(ops.one_hot(np.array([0, 2, 5]), 3).numpy(),
                                  [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert ops.one_hot(np.array([1]), 3).dtype == np.float32
    assert ops.shape(X) == (3, 4) and ops.cast(X, "int32").dtype == np.int32
    assert ops.convert_to_tensor([1.0, 2.0]).numpy().tolist() == [1.0, 2.0]
    values, indices = ops.top_k(np.array([1.0, 5.0, 3.0]), 2)
    assert values.numpy().tolist() == [5.0, 3.0] and indices.numpy().tolist() == [1, 2]
    assert [i.numpy().tolist() for i in ops.where(np.array([0, 3, 0, 1]))] == [[1, 3]]


def test_shape_of_a_keras_tensor_keeps_the_unknown_batch():
    inputs = keras.Input(shape=(None, 4))
    assert ops.shape(inputs) == (None, None, 4)
    pooled = ops.mean(inputs, axis=1)
    assert pooled.shape == (None, 4)
    assert ops.reshape(inputs, (-1, 2, 2)).shape == (None, 2, 2)
    assert ops.transpose(inputs, (2, 0, 1)).shape == (4, None, None)


def test_stop_gradient_stops_it():
    v = gt.Variable(X)
    with gt.GradientTape() as tape:
        out = ops.sum(ops.stop_gradient(v) * v)
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), X)


def test_random_with_an_integer_seed_repeats_and_without_follows_the_global_seed():
    a = keras.random.normal((3,), seed=4)
    b = keras.random.normal((3,), seed=4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    keras.utils.set_random_seed(1)
    first = keras.random.uniform((3,), minval=2.0, maxval=3.0).numpy()
    keras.utils.set_random_seed(1)
    again = keras.random.uniform((3,), minval=2.0, maxval=3.0).numpy()
    np.testing.assert_array_equal(first, again)
    assert np.all((first >= 2.0) & (first < 3.0))
    ints = keras.random.randint((1000,), 0, 4, seed=3).numpy()
    assert set(ints.tolist()) == {0, 1, 2, 3} and ints.dtype == np.int32
    shuffled = keras.random.shuffle(np.arange(10), seed=2).numpy()
    assert sorted(shuffled.tolist()) == list(range(10))


@pytest.mark.parametrize("find", ["argmax", "argmin"])
def test_arg_reductions_with_keepdims_and_no_axis_keep_every_axis_as_size_one(find):
    """Keras 3's numpy backend: ``np.argmax(x, axis=None, keepdims=True)``, shape
    (1, 1) for a matrix (the flattened index, in x's rank). Before, it was (1,)."""
    x = np.array([[0.5, 3.0, -1.0], [2.0, -4.0, 1.5]])
    found = getattr(ops, find)(x, keepdims=True)
    expected = getattr(np, find)(x, keepdims=True)
    assert found.shape == expected.shape == (1, 1) and found.dtype == np.int32
    np.testing.assert_array_equal(found.numpy(), expected)


def test_arg_reductions_order_negative_zero_below_zero_as_keras():
    """Keras 3's backends replace -0.0 by -tiny before argmax/argmin, so 0.0 beats -0.0
    for argmax and -0.0 wins argmin (NumPy would take the first of the equal zeros)."""
    assert int(ops.argmax(np.array([-0.0, 0.0, -1.0]))) == 1
    assert int(ops.argmin(np.array([0.0, -0.0, 1.0]))) == 1
    np.testing.assert_array_equal(
        ops.argmax(np.array([[-0.0, 0.0], [0.0, -0.0]], np.float32), axis=1).numpy(), [1, 0])
    assert int(ops.argmax(np.array([1, 3, 2]))) == 1  # integers as they are
