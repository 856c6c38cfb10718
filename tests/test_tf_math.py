"""gt.math (tf.math), gt.errors (tf.errors) and gt.keras.optimizers."""

import inspect

import numpy as np
import pytest

import gradtape as gt

SAME = ["add", "subtract", "multiply", "divide", "square", "sqrt", "exp", "log", "sin",
        "cos", "tanh", "sigmoid", "abs", "pow", "reduce_sum", "reduce_mean", "reduce_max",
        "reduce_min", "reduce_prod", "reduce_logsumexp", "maximum", "minimum", "equal",
        "greater", "less", "logical_and", "logical_or", "logical_not", "floor", "ceil",
        "round", "sign", "negative", "reciprocal", "log1p", "expm1", "softplus", "floormod"]


@pytest.mark.parametrize("name", SAME)
def test_same_function_object_as_top_level(name):
    assert getattr(gt.math, name) is getattr(gt, name)


def test_renamed_ones():
    assert gt.math.is_nan is gt.isnan and gt.math.is_inf is gt.isinf
    assert gt.math.is_finite is gt.isfinite and gt.math.truediv is gt.divide
    assert gt.math.log_sigmoid is gt.nn.log_sigmoid
    x = gt.constant([1.0, np.nan, np.inf])
    assert gt.math.is_nan(x).numpy().tolist() == [False, True, False]
    assert gt.math.is_finite(x).numpy().tolist() == [True, False, False]
    assert gt.math.is_inf(x).numpy().tolist() == [False, False, True]
    assert set(gt.math.__all__) >= set(SAME) | {"is_nan", "add_n", "argmax", "cumsum"}


def test_argmax_argmin_cumsum_cumprod_are_the_top_level_tf_functions():
    for name in ("argmax", "argmin", "cumsum", "cumprod"):
        assert getattr(gt.math, name) is getattr(gt, name), name


def test_argmax_argmin_take_tfs_arguments():
    x = gt.constant([[1.0, 3.0], [4.0, 2.0]])
    assert gt.math.argmax(x).numpy().tolist() == [1, 0]  # axis 0, as TF
    out = gt.math.argmax(x, 1, gt.int32, "am")  # TF's positional order, a DType output_type
    assert out.dtype == np.int32 and out.numpy().tolist() == [1, 0]
    assert gt.math.argmin(x, axis=1, output_type=gt.int64, name="am").dtype == np.int64


def test_cumsum_cumprod_take_tfs_arguments():
    v = gt.constant([2.0, 3.0, 5.0])  # tf.math.cumsum's and cumprod's doc examples
    assert gt.math.cumsum(v, exclusive=True).numpy().tolist() == [0, 2, 5]
    assert gt.math.cumsum(v, reverse=True).numpy().tolist() == [10, 8, 5]
    assert gt.math.cumprod(v, 0, True, True).numpy().tolist() == [15, 5, 1]
    named = gt.math.cumsum(v, 0, False, False, "running_total")  # name is TF's 5th argument
    assert named.numpy().tolist() == [2, 5, 10]
    x = gt.constant([[1, 2], [3, 4]])
    summed = gt.cumsum(x, name="c", dtype=gt.float64)  # dtype stays, keyword-only
    assert summed.dtype == np.float64 and summed.numpy().tolist() == [[1, 2], [4, 6]]


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (float(f(gt.constant(up))) - float(f(gt.constant(down)))) / (2 * eps)
    return g


@pytest.mark.parametrize("compile_", [True, False])
@pytest.mark.parametrize("fn", [
    lambda x: gt.reduce_sum(gt.math.rsqrt(x) * x),
    lambda x: gt.reduce_sum(gt.math.squared_difference(x, gt.constant([1.0, -2.0, 0.5],
                                                                        gt.float64)) ** 2),
    lambda x: gt.reduce_sum(gt.math.add_n([x, x * x, gt.sin(x)]) ** 2),
], ids=["rsqrt", "squared_difference", "add_n"])
def test_thin_math_functions_differentiate(fn, compile_):
    x0 = np.array([0.7, 1.3, 2.2])
    x = gt.constant(x0)
    with gt.config(compile=compile_):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), _fd(fn, x0), rtol=1e-6)


def test_thin_math_values():
    np.testing.assert_allclose(gt.math.rsqrt(gt.constant([4.0, 0.25])).numpy(), [0.5, 2.0])
    assert gt.math.squared_difference(gt.constant([1, 5]), 3).numpy().tolist() == [4, 4]
    total = gt.math.add_n([gt.constant([1, 2]), gt.constant([3, 4]), gt.constant([5, 6])])
    assert total.dtype == np.int32 and total.numpy().tolist() == [9, 12]
    with pytest.raises(ValueError, match="at least one Tensor"):
        gt.math.add_n([])
    with pytest.raises(gt.errors.InvalidArgumentError, match="one shape and dtype"):
        gt.math.add_n([gt.constant([1.0]), gt.constant([1.0, 2.0])])


def test_reduce_all_any_and_count_nonzero():
    b = gt.constant([[True, True], [False, True]])
    assert bool(gt.math.reduce_all(b)) is False and bool(gt.math.reduce_any(b)) is True
    assert gt.math.reduce_all(b, axis=0).numpy().tolist() == [False, True]
    assert gt.math.reduce_any(b, axis=1, keepdims=True).numpy().tolist() == [[True], [True]]
    with pytest.raises(gt.errors.InvalidArgumentError, match="bool tensor"):
        gt.math.reduce_all(gt.constant([1, 0]))
    x = gt.constant([[0, 1, 0], [1, 1, 0]])  # tf.math.count_nonzero's doc example
    n = gt.math.count_nonzero(x)
    assert n.dtype == np.int64 and int(n) == 3
    assert gt.math.count_nonzero(x, axis=0).numpy().tolist() == [1, 2, 0]
    assert gt.math.count_nonzero(x, axis=1, keepdims=True).numpy().tolist() == [[1], [2]]


# --- gt.errors --------------------------------------------------------------------------

def test_error_classes_subclass_what_gradtape_raised():
    E = gt.errors
    assert issubclass(E.InvalidArgumentError, E.OpError)
    assert issubclass(E.InvalidArgumentError, ValueError)
    assert issubclass(E.OutOfRangeError, IndexError)
    assert issubclass(E.UnimplementedError, NotImplementedError)
    assert issubclass(E.NotFoundError, LookupError)
    assert issubclass(E.ResourceExhaustedError, MemoryError)
    e = E.InvalidArgumentError(None, None, "bad shape")  # TF's constructor
    assert e.message == "bad shape" and str(e) == "bad shape" and e.op is None
    assert e.error_code == E.INVALID_ARGUMENT == 3
    assert str(E.OutOfRangeError("past the end")) == "past the end"


@pytest.mark.parametrize("call, message", [
    (lambda: gt.reshape(gt.zeros([6]), [4]), "Cannot reshape"),
    (lambda: gt.reshape(gt.zeros([6]), [-1, -1]), "Only one input size may be -1"),
    (lambda: gt.concat([gt.zeros([2, 2]), gt.zeros([2, 3])], axis=0), "same shape except"),
    (lambda: gt.stack([gt.zeros([2]), gt.zeros([3])]), "same shape"),
    (lambda: gt.matmul(gt.zeros([2, 3]), gt.zeros([2, 3])), "inner dimensions differ"),
    (lambda: gt.linalg.matvec(gt.zeros([2, 3]), gt.zeros([2])), "inner dimensions differ"),
    (lambda: gt.tensordot(gt.zeros([2, 3]), gt.zeros([4, 3]), axes=[[0], [0]]), "mismatch"),
    (lambda: gt.squeeze(gt.zeros([2, 3]), axis=0), "Cannot squeeze"),
    (lambda: gt.transpose(gt.zeros([2, 3]), [0, 0]), "not a permutation"),
    (lambda: gt.split(gt.zeros([5]), 2), "equal"),
    (lambda: gt.split(gt.zeros([5]), [2, 2]), "do not add up"),
    (lambda: gt.split(gt.zeros([5]), [-1, -1]), "At most one size"),
    (lambda: gt.repeat(gt.zeros([2]), -1), "negative"),
    (lambda: gt.gather_nd(gt.zeros([2]), gt.constant([[0, 0]])), "exceeds the rank"),
    (lambda: gt.tile(gt.zeros([2]), [-1]), "non-negative"),
    (lambda: gt.pad(gt.zeros([2]), [[-1, 0]]), "non-negative"),
    (lambda: gt.reduce_sum(gt.zeros([2]), axis=3), "out of bounds"),
    (lambda: gt.expand_dims(gt.zeros([2]), 5), "out of bounds"),
    (lambda: gt.nn.sparse_softmax_cross_entropy_with_logits(
        labels=gt.constant([3]), logits=gt.zeros([1, 2])), "outside the valid range"),
])
def test_tf_invalid_argument_sites(call, message):
    with pytest.raises(gt.errors.InvalidArgumentError, match=message) as info:
        call()
    assert isinstance(info.value, ValueError)  # callers catching ValueError still do


def test_invalid_argument_inside_a_function_trace():
    @gt.function
    def f(x):
        return gt.reshape(x, [4])

    with pytest.raises(gt.errors.InvalidArgumentError, match="Cannot reshape"):
        f(gt.zeros([6]))


# --- gt.keras.optimizers ----------------------------------------------------------------

KERAS_ARGS = {
    "SGD": ["learning_rate", "momentum", "nesterov", "name"],
    "Adam": ["learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"],
    "RMSprop": ["learning_rate", "rho", "momentum", "epsilon", "centered", "name"],
    "Adagrad": ["learning_rate", "initial_accumulator_value", "epsilon", "name"],
}


@pytest.mark.parametrize("name", sorted(KERAS_ARGS))
def test_keras_optimizer_names_and_arguments(name):
    cls = getattr(gt.keras.optimizers, name)
    assert cls is getattr(gt.optimizers, name)
    params = list(inspect.signature(cls).parameters)
    assert params == KERAS_ARGS[name]


def test_keras_sgd_with_momentum_step():
    v = gt.Variable([1.0, 2.0])
    opt = gt.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    g = gt.constant([0.5, -1.0])
    opt.apply_gradients([(g, v)])
    opt.apply_gradients([(g, v)])
    # velocity_1 = -0.1 g; velocity_2 = 0.9 velocity_1 - 0.1 g = -0.19 g
    np.testing.assert_allclose(v.numpy(), np.array([1.0, 2.0]) - 0.29 * g.numpy(), rtol=1e-6)
