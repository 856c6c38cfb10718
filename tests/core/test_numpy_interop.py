"""NumPy calls on tensors that used to lose a gradient or crash: np.copy, np.sort (and
TF's gt.sort / gt.argsort), NumPy's conversion of watched tensors (a warning naming the
caller's line), einsum with size-0 axes, np.column_stack of one tensor, and operands
that are not numbers. Gradients against finite differences in float64, to second order;
compiled against interpreted."""

import decimal
import warnings
from fractions import Fraction

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

RNG = np.random.default_rng(7)
X_2D = RNG.permutation(12).reshape(3, 4) + RNG.uniform(0.1, 0.4, (3, 4))  # distinct values


def gradient(f, x):
    x = gt.constant(np.asarray(x, dtype=np.float64))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x).numpy()


def numeric_grad(f, x, eps=1e-6):
    """Central differences of a scalar function of one float64 array."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        plus = f(gt.constant(x + step)).numpy()
        minus = f(gt.constant(x - step)).numpy()
        out[i] = (plus - minus) / (2 * eps)
    return out


@pytest.fixture
def drops_are_errors():
    """Any GradientDroppedWarning fails the test, whatever pytest's filters say."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.GradientDroppedWarning)
        yield


# --- np.copy -----------------------------------------------------------------------------

def test_np_copy_passes_the_gradient(compile_mode):
    # d/dx sum(copy(x) * x) = 2x: the copy's gradient used to be dropped ([1, 2]).
    np.testing.assert_allclose(gradient(lambda x: gt.reduce_sum(np.copy(x) * x), [1.0, 2.0]),
                               [2.0, 4.0])


def test_np_copy_second_order():
    check_grads(lambda x: np.copy(x) * gt.sin(x), [X_2D], order=2)


def test_np_copy_is_a_new_tensor_and_a_snapshot_of_a_variable():
    v = gt.Variable([1.0, 2.0])
    snapshot = np.copy(v)
    v.assign([5.0, 6.0])
    assert isinstance(snapshot, gt.Tensor) and snapshot is not v
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])


# --- np.sort ------------------------------------------------------------------------------

def expected_sort_gradient(x, weights, axis):
    """The gradient of sum(sort(x, axis) * weights): each weight goes back to the element
    that was sorted into its place."""
    flat = axis is None
    x = x.reshape(-1) if flat else x
    out = np.empty_like(x)
    np.put_along_axis(out, np.argsort(x, axis=-1 if flat else axis), weights,
                      axis=-1 if flat else axis)
    return out.reshape(X_2D.shape) if flat else out


@pytest.mark.parametrize("axis", [-1, 0, 1, None])
def test_np_sort_values_and_gradient(axis, compile_mode):
    sorted_x = np.sort(X_2D, axis=axis)
    weights = RNG.standard_normal(sorted_x.shape)
    np.testing.assert_array_equal(np.sort(gt.constant(X_2D), axis=axis).numpy(), sorted_x)

    def f(x):
        return gt.reduce_sum(np.sort(x, axis=axis) * weights)

    grad = gradient(f, X_2D)
    np.testing.assert_allclose(grad, expected_sort_gradient(X_2D, weights, axis))
    np.testing.assert_allclose(grad, numeric_grad(f, X_2D), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_np_sort_second_order(axis):
    check_grads(lambda x: np.sort(x, axis=axis) ** 3, [X_2D], order=2)


@pytest.mark.parametrize("kind", ["quicksort", "mergesort", "heapsort", "stable"])
def test_np_sort_kind(kind):
    x = gt.constant(X_2D)
    np.testing.assert_array_equal(np.sort(x, axis=0, kind=kind).numpy(),
                                  np.sort(X_2D, axis=0, kind=kind))


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="np.sort takes stable= from NumPy 2.0 on")
def test_np_sort_stable():
    x = gt.constant(X_2D)
    np.testing.assert_array_equal(np.sort(x, stable=True).numpy(), np.sort(X_2D, stable=True))


def test_np_sort_compiled_equals_interpreted():
    weights = RNG.standard_normal(X_2D.shape)

    def second_order(x):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(np.sort(x, axis=0) ** 3 * weights)
            g = inner.gradient(y, x)
            z = gt.reduce_sum(g * g)
        return g.numpy(), outer.gradient(z, x).numpy()

    x = gt.constant(X_2D)
    with gt.config(compile=True, compile_after=1):
        second_order(x)  # compiles each structure
        compiled = second_order(x)
    with gt.config(compile=False):
        interpreted = second_order(x)
    for c, i in zip(compiled, interpreted):
        np.testing.assert_allclose(c, i, rtol=1e-12)
    # and the numbers: d/dx of 3 * sort(x)**2 * w is 6 * sort(x) * w, sent back
    expected = expected_sort_gradient(X_2D, 3 * np.sort(X_2D, axis=0) ** 2 * weights, 0)
    np.testing.assert_allclose(compiled[0], expected)


def test_np_sort_under_jacobian():
    x = np.array([0.3, -1.0, 2.0, 0.5])
    jac = gt.jacobian(lambda t: np.sort(t) * 2.0)(gt.constant(x)).numpy()
    expected = 2.0 * np.eye(4)[np.argsort(x)]  # row i picks the element sorted to place i
    np.testing.assert_allclose(jac, expected)


def test_np_sort_forward_mode():
    x = gt.constant(np.array([3.0, 1.0, 2.0]))
    tangent = gt.constant(np.array([10.0, 20.0, 30.0]))
    with gt.ForwardAccumulator(x, tangent) as acc:
        y = np.sort(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [20.0, 30.0, 10.0])


def test_np_sort_in_a_function_follows_new_values():
    @gt.function
    def sorted_grad(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(np.sort(x) * gt.constant([1.0, 10.0, 100.0], "float64"))
        return tape.gradient(y, x)

    first = sorted_grad(gt.constant(np.array([3.0, 1.0, 2.0])))
    second = sorted_grad(gt.constant(np.array([1.0, 2.0, 3.0])))  # another permutation
    np.testing.assert_allclose(first.numpy(), [100.0, 1.0, 10.0])
    np.testing.assert_allclose(second.numpy(), [1.0, 10.0, 100.0])


def test_np_argsort_stays_a_plain_integer_array():
    order = np.argsort(gt.constant(X_2D), axis=0)
    assert isinstance(order, np.ndarray) and order.dtype.kind == "i"
    np.testing.assert_array_equal(order, np.argsort(X_2D, axis=0))


def test_np_sort_errors():
    with pytest.raises(ValueError, match="no fields"):
        np.sort(gt.constant(X_2D), order="a")
    with pytest.raises(ValueError, match="rank-0"):
        np.sort(gt.constant(1.0))


# --- gt.sort and gt.argsort (TF) ------------------------------------------------------------

def test_gt_sort_ties_keep_index_order_in_both_directions(compile_mode):
    # TF sorts with top_k: equal values in index order, so tie gradients follow it.
    x = [1.0, 1.0, 0.0]
    weights = gt.constant([1.0, 10.0, 100.0], "float64")
    up = gradient(lambda t: gt.reduce_sum(gt.sort(t) * weights), x)
    down = gradient(lambda t: gt.reduce_sum(gt.sort(t, direction="DESCENDING") * weights), x)
    np.testing.assert_allclose(up, [10.0, 100.0, 1.0])
    np.testing.assert_allclose(down, [1.0, 10.0, 100.0])


def test_gt_sort_values_along_an_axis():
    x = gt.constant(X_2D)
    np.testing.assert_array_equal(gt.sort(x, axis=0).numpy(), np.sort(X_2D, axis=0))
    np.testing.assert_array_equal(gt.sort(x, direction="DESCENDING").numpy(),
                                  -np.sort(-X_2D, axis=-1))


def test_gt_sort_second_order_descending():
    check_grads(lambda x: gt.sort(x, axis=0, direction="DESCENDING") ** 3, [X_2D], order=2)


def test_gt_argsort_is_tf_int32():
    order = gt.argsort(gt.constant([2, 1, 2, 0]), direction="DESCENDING")
    assert order.dtype == np.int32
    np.testing.assert_array_equal(order.numpy(), [0, 2, 1, 3])
    np.testing.assert_array_equal(gt.argsort(gt.constant([2, 1, 2, 0])).numpy(), [3, 1, 0, 2])


def test_gt_sort_errors():
    with pytest.raises(ValueError, match="ASCENDING"):
        gt.sort(gt.constant([1.0]), direction="up")
    with pytest.raises(ValueError, match="constant scalar int"):
        gt.sort(gt.constant([1.0]), axis=None)


# --- NumPy's conversion of watched tensors -----------------------------------------------

DROPPING_CALLS = {
    "np.mean of a list": lambda x: np.mean([x, x + 2.0]),
    "np.linalg.norm of a list": lambda x: np.linalg.norm([x, x]),
    "np.r_": lambda x: np.r_[x, x],
    "np.c_": lambda x: np.c_[x, x],
    "np.append of lists": lambda x: np.append([x], [x]),
    "np.asarray": lambda x: np.asarray(x),
}


@pytest.mark.parametrize("name", DROPPING_CALLS)
def test_numpy_conversion_of_a_watched_tensor_warns_with_the_callers_line(name):
    call = DROPPING_CALLS[name]
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(gt.GradientDroppedWarning) as caught:
            call(x)
    message = str(caught[0].message)
    assert f"{__file__}:{call.__code__.co_firstlineno}:" in message
    assert caught[0].filename == __file__
    assert "gradient is not recorded" in message and ".numpy()" in message


def test_the_warning_names_the_numpy_function():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(gt.GradientDroppedWarning, match="np.mean converted"):
            np.mean([x, x])


def test_on_gradient_drop_raise():
    x = gt.constant([1.0, 2.0])
    with gt.config(on_gradient_drop="raise"), gt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(gt.GradientDroppedError, match="test_numpy_interop.py:"):
            np.mean([x, x])
    assert issubclass(gt.GradientDroppedError, NotImplementedError)


def test_on_gradient_drop_ignore(drops_are_errors):
    x = gt.constant([1.0, 2.0])
    with gt.config(on_gradient_drop="ignore"), gt.GradientTape() as tape:
        tape.watch(x)
        assert np.mean([x, x]) == 1.5


def test_on_gradient_drop_rejects_other_values():
    with pytest.raises(ValueError, match="on_gradient_drop"):
        gt.config(on_gradient_drop="loud")


def test_silent_conversions(drops_are_errors):
    x = gt.constant([1.0, 2.0])
    unwatched = gt.constant([3.0, 4.0])
    np.mean([x, x])  # nothing records
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        np.mean([x.numpy(), x.numpy()])  # an explicit .numpy()
        np.mean([unwatched, unwatched])  # no tape watches it
        with tape.stop_recording():
            np.mean([x, x])
    np.mean([x, x])  # after the with block


def test_a_forward_accumulator_warns_too():
    x = gt.constant([1.0, 2.0])
    with gt.ForwardAccumulator(x, gt.constant([1.0, 1.0])):
        with pytest.warns(gt.GradientDroppedWarning):
            np.mean([x, x])


def test_a_trainable_variable_read_by_numpy_warns():
    v = gt.Variable([1.0, 2.0])
    with gt.GradientTape():
        with pytest.warns(gt.GradientDroppedWarning):
            np.mean([v, v])


def test_a_list_of_tensors_given_to_gt_ops_differentiates(drops_are_errors, compile_mode):
    # TF packs a list holding tensors: gt.reduce_mean([x, x + 2]) and x * [x, x + 1]
    # differentiate instead of converting the list.
    np.testing.assert_allclose(gradient(lambda x: gt.reduce_mean([x, x + 2.0]), [1.0, 2.0]),
                               [0.5, 0.5])
    np.testing.assert_allclose(gradient(lambda x: gt.reduce_sum(x * [x, x + 1.0]), [1.0, 2.0]),
                               [5.0, 9.0])  # d/dx sum(2x^2 + x) = 4x + 1


def test_a_list_of_tensors_second_order(drops_are_errors):
    check_grads(lambda x: gt.reduce_sum([x * x, gt.sin(x)]), [X_2D], order=2)


# --- einsum with size-0 axes --------------------------------------------------------------

@pytest.mark.parametrize("batch", [0, 1])
def test_einsum_size_zero_batch(batch, compile_mode):
    t = gt.constant(np.zeros((batch, 2, 3)))
    other = np.zeros((0, 3, 4))
    out = np.einsum("...ij,...jk->...ik", t, other)
    assert out.shape == np.einsum("...ij,...jk->...ik", np.zeros((batch, 2, 3)), other).shape
    assert out.shape == (0, 2, 4)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = gt.reduce_sum(np.einsum("...ij,...jk->...ik", t, other))
    grad = tape.gradient(y, t)
    assert grad.shape == (batch, 2, 3)
    np.testing.assert_array_equal(grad.numpy(), 0.0)


def test_einsum_size_one_broadcast_still_differentiates():
    other = RNG.standard_normal((2, 3, 4))
    check_grads(lambda t: np.einsum("...ij,...jk->...ik", t, other),
                [RNG.standard_normal((1, 2, 3))])


# --- np.column_stack ----------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3,), (3, 2), (3, 2, 2), (2, 3, 4, 2)])
def test_column_stack_of_one_tensor_is_numpys(shape, compile_mode):
    x = RNG.standard_normal(shape)
    expected = np.column_stack(x)
    np.testing.assert_array_equal(np.column_stack(gt.constant(x)).numpy(), expected)
    weights = RNG.standard_normal(expected.shape)

    def f(t):
        return gt.reduce_sum(np.column_stack(t) ** 2 * weights)

    np.testing.assert_allclose(gradient(f, x), numeric_grad(f, x), rtol=1e-6, atol=1e-8)


def test_column_stack_second_order_and_scalars():
    check_grads(lambda t: np.column_stack(t) ** 2, [RNG.standard_normal((3, 2))], order=2)
    pieces = [gt.constant(1.0), gt.constant(2.0)]
    np.testing.assert_array_equal(np.column_stack(pieces).numpy(), [[1.0, 2.0]])
    with pytest.raises(TypeError, match="scalar"):
        np.column_stack(gt.constant(1.0))


# --- operands that are not numbers ------------------------------------------------------------

ODD_OPERANDS = [Fraction(1, 3), decimal.Decimal("0.5"), "a", None, object(), [1.0, None]]
OPERATIONS = {
    "x * v": lambda x, v: x * v,
    "v * x": lambda x, v: v * x,
    "x + v": lambda x, v: x + v,
    "x - v": lambda x, v: x - v,
    "x / v": lambda x, v: x / v,
    "x ** v": lambda x, v: x ** v,
    "x < v": lambda x, v: x < v,
    "np.multiply": lambda x, v: np.multiply(x, v),
    "gt.multiply": lambda x, v: gt.multiply(x, v),
    "gt.maximum": lambda x, v: gt.maximum(v, x),
}


@pytest.mark.parametrize("op", OPERATIONS)
@pytest.mark.parametrize("value", ODD_OPERANDS, ids=lambda v: type(v).__name__)
def test_an_operand_that_is_not_numbers_raises_tfs_error(op, value):
    for x in (gt.constant([1.0, 2.0]), gt.constant(2.0)):
        with pytest.raises(ValueError, match=r"Attempt to convert a value \(.*\) with an "
                                             r"unsupported type \(<class '.*'>\) to a Tensor"):
            OPERATIONS[op](x, value)


def test_fraction_error_is_tfs_message():
    with pytest.raises(ValueError) as error:
        gt.constant([1.0, 2.0]) * Fraction(1, 3)
    assert str(error.value).startswith(
        "Attempt to convert a value (Fraction(1, 3)) with an unsupported type "
        "(<class 'fractions.Fraction'>) to a Tensor.")


def test_numbers_and_arrays_still_work():
    x = gt.constant([1.0, 2.0])
    for value in (2, 2.0, True, np.float16(2), np.int8(2), [2.0, 2.0], (2, 2), np.array(2.0)):
        np.testing.assert_allclose((x * value).numpy(), np.multiply([1.0, 2.0], value))
    np.testing.assert_array_equal((x == None).numpy(), [False, False])  # noqa: E711


@pytest.mark.parametrize("how", ["-c", "stdin"])
def test_the_warning_names_the_line_of_a_script_without_a_file(how):
    # python -c and piped scripts run as a __main__ whose loader has no source: the
    # warning must still be shown (it once raised ImportError from the warnings module).
    import subprocess
    import sys

    script = ("import numpy as np, gradtape as gt\n"
              "x = gt.constant(1.0)\n"
              "with gt.GradientTape() as t:\n"
              "    t.watch(x)\n"
              "    y = np.mean([x, x + 2.0])\n"
              "print(type(y).__name__)\n")
    args = [sys.executable, "-c", script] if how == "-c" else [sys.executable, "-"]
    done = subprocess.run(args, input=None if how == "-c" else script, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "float32"
    assert "GradientDroppedWarning" in done.stderr
    assert ":5: np.mean converted a watched tensor" in done.stderr
