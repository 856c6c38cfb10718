"""gt.config(dtype_promotion="tf") covers every op with operands TF requires to share a
dtype (one check in ``bind``, declared per primitive with ``same_dtype``), eager and
traced. Before, only the binary ops and matmul's public function were checked, float
against float: ``tensordot``, ``einsum``, ``concat``, ``stack``, ``where`` and int32
against float32 tensors computed with NumPy's promotion, and a @gt.function trace was
not checked at all. The float32-variable promotion warning now also covers the ops that
reshape their operands before they meet (``stack``, ``tensordot``)."""

import re
import warnings

import numpy as np
import pytest

import gradtape as gt

F32 = gt.ones((2, 2))
F64 = gt.ones((2, 2), gt.float64)
I32 = gt.constant([[1, 2], [3, 4]])


def _tf_message(op: str, index: int, want: str, have: str) -> str:
    # TF's kernel message (eager), e.g. for tf.constant(1.0) + tf.constant(1.0, tf.float64)
    return (f"cannot compute {op} as input #{index}(zero-based) was expected to be a "
            f"{want} tensor but is a {have} tensor [Op:{op}]")


@pytest.mark.parametrize("compute, op, index, want, have", [
    (lambda: gt.matmul(F32, F64), "MatMul", 1, "float", "double"),
    (lambda: F64 @ F32, "MatMul", 1, "double", "float"),
    (lambda: np.dot(F32, F64), "MatMul", 1, "float", "double"),
    (lambda: gt.tensordot(F32, F64, 1), "MatMul", 1, "float", "double"),
    (lambda: gt.linalg.matvec(F32, gt.ones(2, gt.float64)), "MatMul", 1, "float", "double"),
    (lambda: gt.einsum("ij,jk->ik", F32, F64), "Einsum", 1, "float", "double"),
    (lambda: np.einsum("ij,jk->ik", F64, F32), "Einsum", 1, "double", "float"),
    (lambda: gt.concat([F32, F64], 0), "ConcatV2", 1, "float", "double"),
    (lambda: np.concatenate([F32, F32, F64]), "ConcatV2", 2, "float", "double"),
    (lambda: I32 + F32, "AddV2", 1, "int32", "float"),
    (lambda: F32 * I32, "Mul", 1, "float", "int32"),
    (lambda: gt.constant([1, 2], gt.int64) - gt.constant([1, 2]), "Sub", 1, "int64", "int32"),
    (lambda: I32 < F32, "Less", 1, "int32", "float"),
    (lambda: gt.where(F32 > 0, F32, F64), "SelectV2", 2, "float", "double"),
    (lambda: gt.clip_by_value(F32, gt.constant(0.0, gt.float64), 1.0),
     "ClipByValue", 1, "float", "double"),
    (lambda: gt.linalg.solve(gt.eye(2), F64), "MatrixSolve", 1, "float", "double"),
])
def test_two_tensors_of_different_dtypes_raise_tfs_error(compute, op, index, want, have):
    with gt.config(dtype_promotion="tf"):
        with pytest.raises(gt.errors.InvalidArgumentError) as info:
            compute()
    assert _tf_message(op, index, want, have) in str(info.value)
    assert "gt.cast" in str(info.value)


def test_stack_of_different_dtypes_raises():
    with gt.config(dtype_promotion="tf"):
        with pytest.raises(gt.errors.InvalidArgumentError,
                           match=re.escape("was expected to be a float tensor but is a "
                                           "double tensor")):
            gt.stack([F32, F64])


def test_a_traced_function_is_checked_too():
    @gt.function
    def product(a, b):
        return gt.matmul(a, b) + 1.0

    @gt.function
    def joined(a, b):
        return gt.concat([a, b], 0)

    with gt.config(dtype_promotion="tf"):
        with pytest.raises(gt.errors.InvalidArgumentError,
                           match=re.escape(_tf_message("MatMul", 1, "float", "double"))):
            product(F32, F64)
        with pytest.raises(gt.errors.InvalidArgumentError,
                           match=re.escape(_tf_message("ConcatV2", 1, "float", "int32"))):
            joined(F32, I32)
        np.testing.assert_array_equal(product(F32, F32).numpy(), np.full((2, 2), 3.0))


def test_arrays_and_numbers_beside_tensors_take_the_tensors_dtype_as_tf_converts():
    with gt.config(dtype_promotion="tf"):
        assert (F32 + np.arange(2)).dtype == gt.float32  # NumPy: int64 + float32 = float64
        assert (I32 + np.arange(2)).dtype == gt.int32  # NumPy: int64
        assert (I32 * 2).dtype == gt.int32
        joined = gt.concat([F32, np.full((1, 2), 0.5)], 0)
        assert joined.dtype == gt.float32
        np.testing.assert_array_equal(joined.numpy(), [[1, 1], [1, 1], [0.5, 0.5]])
        assert gt.stack([F64, 2.0 * np.ones((2, 2), np.float32)]).dtype == gt.float64
        assert gt.stack([gt.constant(1.0, gt.float64), 2.0]).dtype == gt.float64
        assert gt.einsum("ij,jk->ik", F32, np.ones((2, 2))).dtype == gt.float32
        assert gt.where(F32 > 0, F32, 0.0).dtype == gt.float32


@pytest.mark.parametrize("compute, shown", [
    (lambda: I32 * 0.5, "0.5"),
    (lambda: I32 + np.array([0.5, 1.5]), "array([0.5, 1.5])"),
    (lambda: gt.concat([gt.constant([1, 2]), [0.5]], 0), "array([0.5])"),
])
def test_a_float_beside_an_integer_tensor_raises_tfs_type_error(compute, shown):
    with gt.config(dtype_promotion="tf"):
        with pytest.raises(TypeError, match=re.escape(
                f"Cannot convert {shown} to EagerTensor of dtype int32")):
            compute()


def test_the_default_mode_keeps_numpys_promotion():
    assert gt.config().dtype_promotion == "numpy"
    assert (I32 + F32).dtype == gt.float64
    assert gt.concat([F32, F64], 0).dtype == gt.float64
    assert gt.tensordot(F32, F64, 1).dtype == gt.float64
    assert gt.einsum("ij,jk->ik", F32, F64).dtype == gt.float64
    assert (I32 * 0.5).dtype == gt.float64
    assert (F32 + np.arange(2)).dtype == gt.float64


def test_numpy_style_namespaces_keep_their_own_promotion_in_tf_mode():
    """tf.experimental.numpy and keras.ops promote their operands themselves (TF's tnp
    and Keras 3 do), so TF's kernel rule never sees a mix there."""
    tnp = gt.experimental.numpy
    keras = gt.keras
    with gt.config(dtype_promotion="tf"):
        assert tnp.concatenate([F64[0], [1.0, 2.0]]).dtype == gt.float64
        np.testing.assert_array_equal(tnp.r_[0:2, F64[0]].numpy(), [0.0, 1.0, 1.0, 1.0])
        product = keras.ops.multiply(F64, F64 > 0.5)
        assert product.dtype == gt.float64
        a = keras.Input(shape=(2,), dtype="float64")
        model = keras.Model(a, (1.0 - a) * (a > 0.5))
        np.testing.assert_array_equal(model(np.array([[0.25, 0.75]])).numpy(), [[0.0, 0.25]])


def test_tf_mode_gradient_through_concat_and_einsum():
    w = gt.Variable([[1.0, 2.0], [3.0, 4.0]])
    data = np.array([[0.5, -1.0]])  # float64: converted to float32, as TF converts it
    with gt.config(dtype_promotion="tf"):
        with gt.GradientTape() as tape:
            joined = gt.concat([w, data], 0)  # (3, 2)
            y = gt.reduce_sum(gt.einsum("ij,ij->", joined, joined))
        g = tape.gradient(y, w)
    assert joined.dtype == g.dtype == gt.float32
    np.testing.assert_allclose(g.numpy(), 2 * w.numpy(), rtol=1e-6)


# The promotion warning (default mode): a float32 variable meeting a float64 array, once
# per line, for the ops that combine operands.
PROMOTING = {
    "matmul": lambda w, x: gt.matmul(x, w),
    "einsum": lambda w, x: gt.einsum("ij,jk->ik", w, x),
    "concat": lambda w, x: gt.concat([w, x], 0),
    "stack": lambda w, x: gt.stack([w, x]),
    "tensordot": lambda w, x: gt.tensordot(w, x, 1),
    "outer": lambda w, x: np.outer(w, x),
    "np.concatenate": lambda w, x: np.concatenate([x, w]),
}


@pytest.mark.parametrize("name", sorted(PROMOTING))
def test_a_float32_variable_promoted_by_an_array_warns_in_each_op(name):
    from gradtape.core import promotion_warning

    w = gt.Variable(np.ones((2, 2), np.float32), name="w")
    promotion_warning._told.clear()  # another test may have told this line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with gt.GradientTape():
                y = PROMOTING[name](w, np.ones((2, 2)))
    assert y.dtype == gt.float64  # NumPy's promotion, as the warning says
    told = [c for c in caught if "float32 variable 'w:0' meets a float64" in str(c.message)]
    assert len(told) == 1 and told[0].filename == __file__


def test_a_trace_follows_the_mode_it_runs_under():
    """Changing gt.config(dtype_promotion=) drops the traces: a trace made under NumPy's
    promotion does not keep computing float64 under TF's rule, nor the other way."""
    @gt.function
    def product(a, b):
        return a * b

    assert product(F32, F64).dtype == gt.float64
    with gt.config(dtype_promotion="tf"):
        with pytest.raises(gt.errors.InvalidArgumentError, match="cannot compute Mul"):
            product(F32, F64)
        # a NumPy array argument is a tensor of its own dtype inside a tf.function, as TF
        with pytest.raises(gt.errors.InvalidArgumentError, match="cannot compute Mul"):
            product(F32, np.ones((2, 2)))
    assert product(F32, F64).dtype == gt.float64
