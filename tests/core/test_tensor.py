"""gt.Tensor and gt.constant: TensorFlow's conversion rules, NumPy's arithmetic."""

import numpy as np
import pytest

import gradtape as gt

# --- conversion: TF's default dtypes ------------------------------------------------------

@pytest.mark.parametrize("value, dtype", [
    (1.0, "float32"),
    (1, "int32"),
    (True, "bool"),
    (1 + 2j, "complex128"),
    ([1.0, 2], "float32"),
    ([[1, 2], [3, 4]], "int32"),
    ([1 + 1j], "complex128"),
    ([True, False], "bool"),
    (2**40, "int64"),  # too big for int32, as in TF
    (np.float64(1.0), "float64"),  # NumPy values keep their dtype
    (np.float32(1.0), "float32"),
    (np.array([1, 2]), "int64"),
    (np.array(1.0, np.float16), "float16"),
    ([np.float64(1.0), 2.0], "float64"),
])
def test_constant_dtypes(value, dtype):
    assert gt.constant(value).dtype == np.dtype(dtype)


def test_constant_with_a_dtype_converts():
    t = gt.constant(1, dtype="float32")
    assert t.dtype == np.float32 and t.numpy() == 1.0
    assert gt.constant([1.0, 2.0], dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("value, dtype, match", [
    (1.5, "int32", "fraction"),
    ([1.0, 2.5], "int64", "fraction"),
    (1 + 2j, "float32", "complex"),
    (np.array([1j]), "float32", "complex"),
])
def test_constant_refuses_lossy_conversions(value, dtype, match):
    with pytest.raises(TypeError, match=match):
        gt.constant(value, dtype=dtype)


def test_constant_shape_broadcasts_a_scalar_or_reshapes():
    np.testing.assert_array_equal(gt.constant(7.0, shape=(2, 3)).numpy(), np.full((2, 3), 7.0))
    assert gt.constant([1, 2, 3, 4], shape=[2, 2]).shape == (2, 2)


def test_a_tensor_does_not_change_with_the_array_it_came_from():
    a = np.array([1.0, 2.0])
    t = gt.constant(a)
    a[0] = 100.0
    assert t.numpy()[0] == 1.0
    out = t.numpy()
    out[1] = 100.0
    assert t.numpy()[1] == 2.0


def test_convert_to_tensor():
    t = gt.constant([1.0, 2.0])
    assert gt.convert_to_tensor(t) is t
    assert gt.convert_to_tensor(3.0).dtype == np.float32
    assert gt.convert_to_tensor(3, dtype="float64").dtype == np.float64
    with pytest.raises(ValueError, match="gt.cast"):
        gt.convert_to_tensor(t, dtype="float64")
    assert gt.is_tensor(t) and not gt.is_tensor(np.ones(2))


# --- what a tensor shows -------------------------------------------------------------------

def test_repr_like_tensorflow():
    assert repr(gt.constant(75.0)) == "Tensor(75.0, shape=(), dtype=float32)"
    assert repr(gt.constant([1.0, 2.0])) == "Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert str(gt.constant([[1, 2], [3, 4]])) == (
        "Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)")


def test_format_of_a_scalar_uses_its_value():
    assert f"{gt.constant(2.5):.2f}" == "2.50"


def test_numpy_shape_and_friends():
    t = gt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.dtype == np.float32
    assert t.ndim == 2 and t.size == 6 and len(t) == 2
    assert isinstance(t.numpy(), np.ndarray)
    scalar = gt.constant(75.0).numpy()
    assert isinstance(scalar, np.float32) and scalar == 75.0  # a NumPy scalar, as in TF


def test_iteration_goes_over_the_first_axis():
    rows = list(gt.constant([[1, 2], [3, 4]]))
    assert len(rows) == 2 and all(isinstance(r, gt.Tensor) for r in rows)
    np.testing.assert_array_equal(rows[1].numpy(), [3, 4])


def test_scalars_have_no_len_and_no_iteration():
    with pytest.raises(TypeError, match="Scalar tensor has no `len\\(\\)`"):
        len(gt.constant(1.0))
    with pytest.raises(TypeError, match="scalar"):
        list(gt.constant(1.0))


def test_array_protocol():
    t = gt.constant([1.0, 2.0])
    a = np.asarray(t)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, [1.0, 2.0])
    assert np.array(t, dtype=np.float64).dtype == np.float64


def test_python_number_conversions():
    assert float(gt.constant(2.5)) == 2.5
    assert int(gt.constant(3)) == 3
    assert bool(gt.constant(0.0)) is False and bool(gt.constant([1.0])) is True
    assert complex(gt.constant(1j)) == 1j
    assert [10, 20, 30][gt.constant(1)] == 20  # integer tensors are indices


def test_truth_value_of_several_elements_is_ambiguous():
    with pytest.raises(ValueError, match="ambiguous.*any\\(\\)"):
        bool(gt.constant([1.0, 2.0]))


def test_tensors_are_unhashable_but_have_refs():
    t = gt.constant(1.0)
    with pytest.raises(TypeError):
        hash(t)
    refs = {t.ref(): "t"}
    assert refs[t.ref()] == "t" and t.ref().deref() is t


# --- operators ----------------------------------------------------------------------------

@pytest.mark.parametrize("expr, expected", [
    (lambda x: x + 3, 5.0), (lambda x: 3 + x, 5.0),
    (lambda x: x - 3, -1.0), (lambda x: 3 - x, 1.0),
    (lambda x: x * 3, 6.0), (lambda x: 3 * x, 6.0),
    (lambda x: x / 4, 0.5), (lambda x: 1 / x, 0.5),
    (lambda x: 7.0 // x, 3.0), (lambda x: x // 0.75, 2.0),
    (lambda x: 7 % x, 1.0), (lambda x: x % 0.75, 0.5),
    (lambda x: x ** 3, 8.0), (lambda x: 2 ** x, 4.0),
    (lambda x: -x, -2.0), (lambda x: +x, 2.0), (lambda x: abs(-x), 2.0),
])
def test_arithmetic_operators_keep_float32_with_python_numbers(expr, expected):
    out = expr(gt.constant(2.0))
    assert isinstance(out, gt.Tensor) and out.dtype == np.float32
    assert out.numpy() == expected


def test_matmul_operator_both_ways():
    m = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((m @ m).numpy(), [[7.0, 10.0], [15.0, 22.0]])
    eye = np.eye(2, dtype=np.float32)
    np.testing.assert_array_equal((eye @ m).numpy(), m.numpy())  # reflected
    assert isinstance(eye @ m, gt.Tensor)


def test_integer_division_follows_numpy():
    assert (gt.constant(3) / gt.constant(2)).dtype == np.float64  # as TF's truediv too
    assert (gt.constant(7) // 2).numpy() == 3


def test_comparisons_return_bool_tensors():
    x = gt.constant([1.0, 2.0, 3.0])
    for out, expected in [(x > 1.5, [False, True, True]), (x >= 2.0, [False, True, True]),
                          (x < 2.0, [True, False, False]), (x <= 1.0, [True, False, False]),
                          (x == 2.0, [False, True, False]), (x != 2.0, [True, False, True]),
                          (1.5 < x, [False, True, True])]:
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out.numpy(), expected)


def test_comparisons_are_not_differentiable():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        c = x > 1.5
        y = gt.where(c, x * 3.0, x * 5.0)
    assert tape.gradient(c, x) is None
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [5.0, 3.0])


def test_logical_operators_on_bool_tensors():
    b = gt.constant([True, False])
    np.testing.assert_array_equal((b & b).numpy(), [True, False])
    np.testing.assert_array_equal((b | ~b).numpy(), [True, True])


def test_operators_are_differentiable():
    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = (3 - x) * (x / 4) + 2 ** x - 1 / x
    # d/dx: -(x/4) + (3-x)/4 + 2^x ln 2 + 1/x^2 = -0.5 + 0.25 + 4 ln 2 + 0.25
    assert np.isclose(tape.gradient(y, x).numpy(), 4 * np.log(2.0), rtol=1e-6)


def test_getitem_is_differentiable_and_repeated_indices_accumulate():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(x[[0, 0, 1]]) + x[2] * 10.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 1.0, 10.0])


# --- NumPy protocol --------------------------------------------------------------------

def test_numpy_functions_on_tensors_record():
    x = gt.constant([0.5, 1.0])
    w = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sin(x) * np.matmul(w, x), axis=0)
    assert isinstance(y, gt.Tensor)
    # d/dx sum(sin(x) * (W x)) = cos(x) * (W x) + W^T sin(x)
    xv, wv = x.numpy(), w.numpy()
    expected = np.cos(xv) * (wv @ xv) + wv.T @ np.sin(xv)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-6)


def test_numpy_function_without_a_rule_runs_on_the_array():
    # Issue 21: it runs as on the array (a watched tensor's drop is told).
    counts, _ = np.histogram(gt.constant([1.0, 2.0]), bins=2)
    np.testing.assert_array_equal(counts, [1, 1])
