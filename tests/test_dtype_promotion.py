"""gt.config(dtype_promotion="tf") raises TF's InvalidArgumentError where float32 meets
float64, and a float32 variable promoted to float64 by an array warns once per line.
Before, mixed float32/float64 silently computed in float64 (NumPy's promotion)."""

import warnings

import numpy as np
import pytest

import gradtape as gt

F32 = gt.constant([1.0, 2.0])
F64 = gt.constant(np.array([3.0, 4.0]))


def test_default_mode_is_numpys_promotion():
    assert gt.config().dtype_promotion == "numpy"
    assert (F32 + F64).dtype == gt.float64
    assert gt.matmul(gt.ones((2, 2)), np.ones((2, 2))).dtype == gt.float64


@pytest.mark.parametrize("compute, message", [
    (lambda: F32 + F64, "cannot compute AddV2 as input #1(zero-based) was expected to be "
                        "a float tensor but is a double tensor [Op:AddV2]"),
    (lambda: F64 * F32, "cannot compute Mul as input #1(zero-based) was expected to be a "
                        "double tensor but is a float tensor [Op:Mul]"),
    (lambda: gt.subtract(F32, F64), "cannot compute Sub as input #1"),
    (lambda: F32 / F64, "cannot compute RealDiv as input #1"),
    (lambda: gt.maximum(F32, F64), "cannot compute Maximum as input #1"),
    (lambda: F32 < F64, "cannot compute Less as input #1"),
    (lambda: gt.matmul(gt.ones((2, 2)), gt.ones((2, 2), gt.float64)),
     "cannot compute MatMul as input #1(zero-based) was expected to be a float tensor"),
    # tf.matmul's first operand sets the dtype: a float64 array there is a double tensor.
    (lambda: gt.matmul(np.ones((2, 2)), gt.ones((2, 2))),
     "was expected to be a double tensor but is a float tensor [Op:MatMul]"),
])
def test_tf_mode_raises_tfs_error(compute, message):
    with gt.config(dtype_promotion="tf"):
        with pytest.raises(gt.errors.InvalidArgumentError) as info:
            compute()
    assert message in str(info.value)
    assert "gt.cast" in str(info.value)
    assert (F32 + F64).dtype == gt.float64  # the block's end restores "numpy"


def test_tf_mode_converts_arrays_and_keeps_python_numbers_weak():
    with gt.config(dtype_promotion="tf"):
        assert (F32 + 2.0).dtype == gt.float32
        assert (F32 + np.array([1.0, 1.0])).dtype == gt.float32
        assert (np.float64(2.0) * F32).dtype == gt.float32
        assert gt.matmul(gt.ones((2, 2)), np.ones((2, 2))).dtype == gt.float32
        assert (F64 + np.float32(1.0)).dtype == gt.float64
        np.testing.assert_array_equal((F32 + np.array([0.5, 0.25])).numpy(), [1.5, 2.25])


def test_tf_mode_gradient():
    w = gt.Variable([1.0, 2.0])
    c = np.array([0.1, 3.0])
    with gt.config(dtype_promotion="tf"):
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(w * c * w)
        g = tape.gradient(y, w)
    assert y.dtype == g.dtype == gt.float32
    np.testing.assert_allclose(g.numpy(), 2 * c * w.numpy(), rtol=1e-6)


def test_unknown_mode():
    with pytest.raises(ValueError, match="'numpy', 'tf'"):
        gt.config(dtype_promotion="jax")


def _promoting_step(w, x):
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(gt.matmul(x, w))  # the line the warning names
    return tape.gradient(y, w)


def test_a_float32_variable_promoted_by_an_array_warns_once_per_line():
    w = gt.Variable(np.ones((3, 2), np.float32), name="w")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            _promoting_step(w, np.ones((4, 3)))
    assert len(caught) == 1
    warning = caught[0]
    assert warning.filename == __file__
    assert "y = gt.reduce_sum(gt.matmul(x, w))" in open(__file__).read().splitlines()[
        warning.lineno - 1]
    assert "float32 variable 'w:0' meets a float64 array" in str(warning.message)
    assert 'dtype_promotion="tf"' in str(warning.message)


def test_no_warning_for_numbers_float32_data_float64_variables_or_tf_mode():
    w32 = gt.Variable(np.ones(2, np.float32))
    w64 = gt.Variable(np.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with gt.GradientTape():
            _ = w32 * 2.0 + np.float32(1.0) * w32
            _ = w32 + np.ones(2, np.float32)
            _ = w64 * np.ones(2)
        with gt.config(dtype_promotion="tf"), gt.GradientTape():
            _ = w32 + np.ones(2)
