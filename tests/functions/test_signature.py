"""gt.TensorSpec, gt.function(input_signature=..., reduce_retracing=...) and calling a
ConcreteFunction directly (TF's ``f.get_concrete_function(x)(x)``)."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences


@pytest.fixture(params=[True, False], ids=["compiled", "interpreted"])
def compile_mode(request):
    with gt.config(compile=request.param, compile_after=1):
        yield request.param


def f64(value):
    return gt.constant(np.asarray(value, dtype=np.float64))


def poly(x, y):
    return gt.reduce_sum(x * x * y, axis=0) + gt.sin(y)


# --- TensorSpec ---------------------------------------------------------------------------

def test_tensor_spec_shape_dtype_name_and_repr_as_tf():
    spec = gt.TensorSpec([None, 3], gt.float64, name="x")
    assert spec.shape == (None, 3) and spec.shape.as_list() == [None, 3]
    assert spec.shape.rank == 2 and not spec.shape.is_fully_defined()
    assert spec.dtype == gt.float64 and spec.name == "x"
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=gt.float64, name='x')"
    assert repr(gt.TensorSpec([])) == "TensorSpec(shape=(), dtype=gt.float32, name=None)"


def test_tensor_spec_equality_and_hash():
    a = gt.TensorSpec((None, 3), "float32")
    assert a == gt.TensorSpec([None, 3], gt.float32)
    assert hash(a) == hash(gt.TensorSpec([None, 3]))
    assert a != gt.TensorSpec([2, 3]) and a != gt.TensorSpec([None, 3], gt.float64)
    assert a != gt.TensorSpec([None, 3], name="a")


def test_tensor_spec_compatibility_and_from_tensor():
    spec = gt.TensorSpec([None, 2])
    assert spec.is_compatible_with(gt.zeros([5, 2]))
    assert not spec.is_compatible_with(gt.zeros([5, 3]))
    assert not spec.is_compatible_with(np.zeros([5, 2]))  # float64
    assert gt.TensorSpec.from_tensor(f64([[1.0, 2.0]])) == gt.TensorSpec([1, 2], gt.float64)


@pytest.mark.parametrize("shape", [[2.5], ["a"]])
def test_tensor_spec_bad_dimension_raises_type_error(shape):
    with pytest.raises(TypeError, match="dimension"):
        gt.TensorSpec(shape)


def test_tensor_spec_negative_dimension_raises_value_error_as_tf():
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        gt.TensorSpec([-1])


def test_tensor_spec_of_unknown_rank_as_tf():
    spec = gt.TensorSpec(None, gt.float64)
    assert repr(spec) == "TensorSpec(shape=<unknown>, dtype=gt.float64, name=None)"
    assert repr(spec.shape) == "TensorShape(None)" and spec.shape.rank is None
    assert not spec.shape.is_fully_defined() and spec.shape.num_elements() is None
    with pytest.raises(ValueError, match="unknown TensorShape"):
        spec.shape.as_list()
    assert spec != gt.TensorSpec([], gt.float64) and spec == gt.TensorSpec(None, "float64")
    assert hash(spec) == hash(gt.TensorSpec(None, gt.float64))
    assert spec.is_compatible_with(f64(1.0)) and spec.is_compatible_with(f64(np.ones((2, 3))))
    assert not spec.is_compatible_with(gt.zeros([2]))  # float32
    assert not gt.TensorSpec([2], gt.float64).is_compatible_with(spec)
    assert gt.TensorSpec(None, gt.float64).is_compatible_with(gt.TensorSpec([2], gt.float64))


# --- input_signature ------------------------------------------------------------------

SIGNATURE = [gt.TensorSpec([None, 2], gt.float64), gt.TensorSpec([2], gt.float64)]


def test_signature_accepts_any_size_for_none_and_traces_per_shape(compile_mode):
    f = gt.function(poly, input_signature=SIGNATURE)
    y = f64([0.5, -1.0])
    for rows in (3, 5, 3, 5):
        x = f64(np.arange(rows * 2.0).reshape(rows, 2))
        np.testing.assert_array_equal(f(x, y).numpy(), poly(x, y).numpy())
    # One trace per concrete shape (the tracer specializes on shapes).
    assert f.experimental_get_tracing_count() == 2


def test_signature_takes_keywords_and_converts_python_values():
    f = gt.function(poly, input_signature=SIGNATURE)
    got = f([[1.0, 2.0]], y=[3, 4])  # Python lists and ints: converted to float64
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), [3.0 + np.sin(3.0), 16.0 + np.sin(4.0)])


@pytest.mark.parametrize("x, y, message", [
    (gt.zeros([3, 2]), f64([1.0, 2.0]), "float32 tensor"),           # wrong dtype
    (f64(np.zeros([3, 3])), f64([1.0, 2.0]), r"shape \(3, 3\)"),     # wrong fixed dim
    (f64(np.zeros([6])), f64([1.0, 2.0]), r"shape \(6,\)"),          # wrong rank
    (f64(np.zeros([3, 2])), f64([1.0, 2.0, 3.0]), r"shape \(3,\)"),  # second argument
])
def test_arguments_not_matching_the_signature_raise_type_error(x, y, message):
    f = gt.function(poly, input_signature=SIGNATURE)
    with pytest.raises(TypeError, match=message):
        f(x, y)
    assert f.experimental_get_tracing_count() == 0


def test_wrong_number_of_arguments_raises_type_error():
    f = gt.function(poly, input_signature=SIGNATURE)
    x, y = f64(np.zeros([1, 2])), f64([1.0, 2.0])
    with pytest.raises(TypeError, match="takes 2"):
        f(x, y, y)
    with pytest.raises(TypeError, match="exactly 2"):
        f(x)
    with pytest.raises(TypeError, match="exactly 2"):
        f(x, z=y)


@pytest.mark.parametrize("signature", [gt.TensorSpec([2]), [[2]], ["float32"]])
def test_bad_input_signature_raises_type_error(signature):
    with pytest.raises(TypeError, match="list or tuple of gt.TensorSpec"):
        gt.function(poly, input_signature=signature)
    with pytest.raises(TypeError, match="list or tuple of gt.TensorSpec"):
        gt.function(input_signature=signature)


def test_gradient_through_a_function_with_a_signature_matches_differences():
    f = gt.function(poly, input_signature=SIGNATURE)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 2)), rng.standard_normal(2)]
    u = rng.standard_normal(2)
    x, y = (f64(a) for a in arrays)
    with gt.GradientTape() as tape:
        tape.watch([x, y])
        out = f(x, y)
    grads = tape.gradient(out, [x, y], output_gradients=gt.constant(u))
    assert_vjp_matches_differences(poly, arrays, u, grads, rng)


def test_method_with_a_signature():
    class Scale:
        def __init__(self, k):
            self.k = k

        @gt.function(input_signature=[gt.TensorSpec([None])])
        def __call__(self, x):
            return x * self.k

    np.testing.assert_array_equal(Scale(3.0)([1.0, 2.0]).numpy(), [3.0, 6.0])
    with pytest.raises(TypeError, match="input_signature"):
        Scale(3.0)(f64([1.0]))


def test_reduce_retracing_is_accepted_and_changes_no_result():
    f = gt.function(poly, reduce_retracing=True)
    g = gt.function(reduce_retracing=True)(poly)
    x, y = f64([[1.0, 2.0]]), f64([3.0, 4.0])
    np.testing.assert_array_equal(f(x, y).numpy(), poly(x, y).numpy())
    np.testing.assert_array_equal(g(x, y).numpy(), poly(x, y).numpy())
    f(f64([[1.0, 2.0], [3.0, 4.0]]), y)
    assert f.reduce_retracing and f.experimental_get_tracing_count() == 2


# --- calling a ConcreteFunction -----------------------------------------------------------

def test_concrete_function_is_callable_with_the_traced_tensors(compile_mode):
    f = gt.function(poly)
    x, y = f64([[1.0, 2.0]]), f64([3.0, 4.0])
    concrete = f.get_concrete_function(x, y)
    x2, y2 = f64([[5.0, -1.0]]), f64([0.5, 2.0])
    np.testing.assert_array_equal(concrete(x2, y2).numpy(), poly(x2, y2).numpy())
    assert f.experimental_get_tracing_count() == 1


def test_concrete_function_fixes_python_arguments():
    f = gt.function(lambda x, power: x ** power)
    concrete = f.get_concrete_function(f64([2.0]), 3)
    np.testing.assert_array_equal(concrete(f64([4.0])).numpy(), [64.0])


@pytest.mark.parametrize("args, message", [
    ((f64([[1.0, 2.0, 3.0]]), f64([3.0, 4.0])), r"shape \(1, 3\)"),
    ((f64([[1.0, 2.0]]),), "takes 2 positional tensor"),
])
def test_concrete_function_checks_what_it_was_traced_for(args, message):
    concrete = gt.function(poly).get_concrete_function(f64([[1.0, 2.0]]), f64([3.0, 4.0]))
    with pytest.raises(TypeError, match=message):
        concrete(*args)


def test_concrete_function_called_with_another_dtype_raises_invalid_argument():
    # TF's function guide: double_strings(tf.constant(1)) raises InvalidArgumentError.
    concrete = gt.function(poly).get_concrete_function(f64([[1.0, 2.0]]), f64([3.0, 4.0]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="expected to be a float64"):
        concrete(gt.constant([[1.0, 2.0]]), f64([3.0, 4.0]))


def test_concrete_function_is_never_stale_on_a_guard():
    def clip(x):
        if gt.reduce_sum(x) > 0:
            return x * 2.0
        return x - 1.0

    f = gt.function(clip, autograph=False)  # Python's if: a guard per branch
    concrete = f.get_concrete_function(f64([1.0]))
    np.testing.assert_array_equal(concrete(f64([-3.0])).numpy(), [-4.0])
    np.testing.assert_array_equal(concrete(f64([3.0])).numpy(), [6.0])
    assert f.experimental_get_tracing_count() == 2  # the other branch, traced by f


def test_concrete_function_from_the_signature_or_specs():
    f = gt.function(lambda x: x * 3.0, input_signature=[gt.TensorSpec([2])])
    concrete = f.get_concrete_function()
    np.testing.assert_array_equal(concrete(gt.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    g = gt.function(lambda x: x + 1.0)
    concrete = g.get_concrete_function(gt.TensorSpec([3], gt.float64))
    np.testing.assert_array_equal(concrete(f64([1.0, 2.0, 3.0])).numpy(), [2.0, 3.0, 4.0])
    open_concrete = g.get_concrete_function(gt.TensorSpec([None], gt.float64))
    np.testing.assert_array_equal(open_concrete(f64([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(open_concrete(f64([5.0])).numpy(), [6.0])
    with pytest.raises(TypeError, match="does not admit"):
        open_concrete(f64([[1.0]]))


def test_gradient_through_a_concrete_function_matches_differences():
    concrete = gt.function(poly).get_concrete_function(f64(np.zeros([3, 2])), f64([0.0, 0.0]))
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    u = rng.standard_normal(2)
    x, y = (f64(a) for a in arrays)
    with gt.GradientTape() as tape:
        tape.watch([x, y])
        out = concrete(x, y)
    grads = tape.gradient(out, [x, y], output_gradients=gt.constant(u))
    assert_vjp_matches_differences(poly, arrays, u, grads, rng)


# --- nested input_signature and shapes of unknown rank -------------------------------------

NESTED = [{"w": gt.TensorSpec([None, 2], gt.float64), "b": gt.TensorSpec([2], gt.float64)},
          (gt.TensorSpec(None, gt.float64), gt.TensorSpec([], gt.int32))]


def nested_model(params, pair):
    x, k = pair
    return gt.reduce_sum(gt.sin(params["w"]) * params["b"]) \
        + gt.reduce_sum(x * x) * gt.cast(k, gt.float64)


def test_nested_signature_with_unknown_rank(compile_mode):
    f = gt.function(nested_model, input_signature=NESTED)
    rng = np.random.default_rng(3)
    params = {"w": rng.normal(size=(3, 2)), "b": [1.0, 2.0]}
    for x in (rng.normal(size=(2, 2, 2)), rng.normal(size=5), np.float64(1.5)):
        got = f(params, [x, 3])  # a list where the spec has a tuple: TF matches them
        want = nested_model({k: f64(v) for k, v in params.items()}, (f64(x), gt.constant(3)))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13)
    assert f.experimental_get_tracing_count() == 3  # one per concrete shape of x
    concrete = f.get_concrete_function(
        {"w": gt.TensorSpec([1, 2], gt.float64), "b": gt.TensorSpec([2], gt.float64)},
        (gt.TensorSpec([3], gt.float64), gt.TensorSpec([], gt.int32)))
    args = ({"w": f64([[0.0, 0.0]]), "b": f64([1.0, 1.0])}, (f64([1.0, 2.0, 2.0]), 2))
    np.testing.assert_allclose(concrete(*args).numpy(), 18.0)


def test_gradient_through_a_nested_signature_matches_differences():
    f = gt.function(nested_model, input_signature=NESTED)
    rng = np.random.default_rng(4)
    arrays = [rng.normal(size=(2, 2)), rng.normal(size=2), rng.normal(size=(3, 1))]
    w, b, x = (f64(a) for a in arrays)
    with gt.GradientTape() as tape:
        tape.watch([w, b, x])
        out = f({"w": w, "b": b}, (x, gt.constant(2)))
    grads = tape.gradient(out, [w, b, x])
    assert_vjp_matches_differences(
        lambda w, b, x: nested_model({"w": w, "b": b}, (x, gt.constant(2))),
        arrays, np.ones(()), grads, rng)


@pytest.mark.parametrize("params, pair, message", [
    ({"w": np.ones((3, 2))}, (np.ones(5), 3),
     r"argument `params`: expected a dict with keys \['b', 'w'\]"),
    ({"w": np.ones((3, 2)), "b": [1.0, 2.0]}, (np.ones(5),),
     "argument `pair`: expected a tuple of 2"),
    ({"w": np.ones((3, 2)), "b": [1.0, 2.0]}, np.ones(2),
     "argument `pair`: expected a tuple of 2 .* got a ndarray"),
    ({"w": np.ones((3, 2)), "b": [1.0, 2.0]}, (np.ones(5, np.float32), 3),
     r"argument `pair\[0\]`: got a float32 tensor"),
    ({"w": np.ones((3, 3)), "b": [1.0, 2.0]}, (np.ones(5), 3),
     r"argument `params\['w'\]`: got a tensor of shape \(3, 3\)"),
])
def test_nested_arguments_not_matching_raise_type_error(params, pair, message):
    f = gt.function(nested_model, input_signature=NESTED)
    with pytest.raises(TypeError, match=message):
        f(params, pair)
    assert f.experimental_get_tracing_count() == 0


def test_nested_signature_entries_must_be_specs():
    with pytest.raises(TypeError, match="list or tuple of gt.TensorSpec"):
        gt.function(nested_model, input_signature=[{"w": [2]}])
