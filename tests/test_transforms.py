"""gt.grad, gt.value_and_grad, gt.jacobian, gt.hessian: values against central finite
differences in float64, structures, argnums, has_aux, composition and errors."""

from collections import namedtuple

import numpy as np
import pytest

import gradtape as gt

RNG = np.random.default_rng(1)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of a scalar NumPy function of one float64 array."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        out[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return out


def numeric_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(f(x))
    out = np.zeros(y.shape + x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        out[(...,) + i] = (np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps)
    return out


def as_np(f):
    """Run a gradtape function on NumPy input and return NumPy output."""
    return lambda x: np.asarray(f(gt.constant(x)))


def loss(x):
    return gt.reduce_sum(gt.sin(x) * x + gt.exp(-x * x))


def quadratic_form(x, a):
    return gt.reduce_sum(a * gt.expand_dims(x, 1) * gt.expand_dims(x, 0))


# --- grad and value_and_grad ----------------------------------------------------------------

def test_grad_matches_finite_differences():
    x = RNG.standard_normal((3, 4))
    g = gt.grad(loss)(x)
    assert isinstance(g, gt.Tensor) and g.dtype == np.float64 and g.shape == x.shape
    np.testing.assert_allclose(g.numpy(), numeric_grad(as_np(loss), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g.numpy(), np.sin(x) + x * np.cos(x) - 2 * x * np.exp(-x * x),
                               rtol=1e-12)


def test_value_and_grad():
    x = RNG.standard_normal(5)
    value, g = gt.value_and_grad(loss)(x)
    assert float(value) == pytest.approx(float(loss(gt.constant(x))), rel=1e-12)
    np.testing.assert_allclose(g.numpy(), gt.grad(loss)(x).numpy(), rtol=1e-12)


def test_input_types_and_dtypes():
    cube = gt.grad(lambda x: x**3)
    g = cube(2.0)  # a Python float is float32, TF's rule
    assert g.dtype == np.float32 and float(g) == 12.0
    assert cube(np.float64(2.0)).dtype == np.float64
    assert cube(gt.constant(np.array(2.0, np.float32))).dtype == np.float32
    w = gt.Variable([1.0, 2.0])
    np.testing.assert_allclose(gt.grad(lambda v: gt.reduce_sum(v * v))(w).numpy(), [2.0, 4.0])
    # A list is a structure (a pytree in JAX's terms): one gradient per entry.
    g = gt.grad(lambda v: v[0] * v[1])([2.0, 3.0])
    assert isinstance(g, list) and [float(t) for t in g] == [3.0, 2.0]


def test_argnums_tuple_and_negative():
    def f(x, y, z):
        return gt.reduce_sum(x * y * y + z)

    x, y, z = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    gx, gz = gt.grad(f, argnums=(0, 2))(x, y, z)
    np.testing.assert_allclose(gx.numpy(), y * y)
    np.testing.assert_allclose(gz.numpy(), np.ones(3))
    np.testing.assert_allclose(gt.grad(f, argnums=-2)(x, y, z).numpy(), 2 * x * y)
    (gy,) = gt.grad(f, argnums=(1,))(x, y, z)
    np.testing.assert_allclose(gy.numpy(), 2 * x * y)
    value, (gx, gy) = gt.value_and_grad(f, argnums=[0, 1])(x, y, z)
    np.testing.assert_allclose(gy.numpy(), 2 * x * y)


def test_same_tensor_twice_gives_independent_gradients():
    x = gt.constant([1.0, 2.0])
    ga, gb = gt.grad(lambda a, b: gt.reduce_sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(ga.numpy(), [1.0, 4.0])  # b*b
    np.testing.assert_allclose(gb.numpy(), [2.0, 8.0])  # 2ab


def test_nested_structures_keep_their_structure():
    Point = namedtuple("Point", "x y")

    def f(params, scale):
        a = params["w"][0] * params["w"][1] + params["b"].x * params["b"].y
        return gt.reduce_sum(a) * scale

    params = {"w": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
              "b": Point(np.array(2.0), np.array(5.0))}
    g = gt.grad(f)(params, 2.0)
    assert set(g) == {"w", "b"} and isinstance(g["w"], list) and isinstance(g["b"], Point)
    np.testing.assert_allclose(g["w"][0].numpy(), [6.0, 8.0])
    np.testing.assert_allclose(g["w"][1].numpy(), [2.0, 4.0])
    # b.x * b.y broadcasts over the two entries of w: counted twice, times scale.
    assert float(g["b"].x) == 20.0 and float(g["b"].y) == 8.0
    pair = gt.grad(lambda t: t[0] * t[1])((3.0, 4.0))
    assert isinstance(pair, tuple) and [float(v) for v in pair] == [4.0, 3.0]


def test_has_aux():
    def f(x):
        y = gt.reduce_sum(x * x)
        return y, {"y": y, "label": "squares"}

    x = np.array([1.0, 2.0])
    g, aux = gt.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert aux["label"] == "squares" and float(aux["y"]) == 5.0
    (value, aux), g = gt.value_and_grad(f, has_aux=True)(x)
    assert float(value) == 5.0 and aux["label"] == "squares"
    with pytest.raises(TypeError, match="pair"):
        gt.grad(lambda x: x * x, has_aux=True)(1.0)


def test_kwargs_pass_through_and_unconnected_inputs_get_zeros():
    def f(x, y, *, power):
        return gt.reduce_sum(x**power)

    gx, gy = gt.grad(f, argnums=(0, 1))(np.array([2.0]), np.array([5.0, 6.0]), power=3)
    np.testing.assert_allclose(gx.numpy(), [12.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0])
    assert float(gt.grad(lambda x: 7.0)(1.0)) == 0.0


def test_integer_arguments_raise_type_error():
    with pytest.raises(TypeError, match="inexact.*int32"):
        gt.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="inexact"):
        gt.grad(lambda p: p[0] * 2.0)([1.0, np.array(2, np.int64)])
    with pytest.raises(TypeError, match="inexact"):
        gt.jacobian(lambda x: x * 2.0)(np.arange(3))
    # Integer arguments outside argnums are fine.
    g = gt.grad(lambda x, n: x**n)(2.0, 3)
    assert float(g) == 12.0


def test_other_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        gt.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match="scalar-output"):
        gt.grad(lambda x: (x, x))(1.0)
    with pytest.raises(TypeError, match="real-valued outputs"):
        gt.grad(lambda x: gt.cast(x, np.int32))(1.0)
    with pytest.raises(TypeError, match="at least 3 positional arguments"):
        gt.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="argnums"):
        gt.grad(lambda x: x, argnums="x")


# --- composition and higher order ---------------------------------------------------------------

def test_grad_of_grad():
    d2 = gt.grad(gt.grad(lambda x: gt.sin(x) * x))
    x = np.float64(0.7)
    assert float(d2(x)) == pytest.approx(2 * np.cos(x) - x * np.sin(x), rel=1e-12)
    d3 = gt.grad(gt.grad(gt.grad(lambda x: x**4)))
    assert float(d3(np.float64(1.5))) == pytest.approx(24 * 1.5, rel=1e-12)


def test_grad_of_grad_against_finite_differences():
    first = gt.grad(loss)
    x = RNG.standard_normal(4)

    def directional(x):
        return gt.reduce_sum(first(x) * np.arange(1.0, 5.0))

    numeric = numeric_grad(lambda v: float(directional(v)), x)
    np.testing.assert_allclose(gt.grad(directional)(x).numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_transform_inside_a_users_tape():
    x = gt.constant(np.array([0.3, -1.2]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        g = gt.grad(lambda v: gt.reduce_sum(v**3))(x)
        total = gt.reduce_sum(g)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), 6 * x.numpy())


def test_hessian_vector_product_with_jvp_of_grad():
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    _, hv = gt.jvp(gt.grad(loss), (x,), (v,))
    np.testing.assert_allclose(hv.numpy(), gt.hessian(loss)(x).numpy() @ v, rtol=1e-10)


def test_mixed_partials_through_argnums():
    def f(x, y):
        return x * x * y * y * y

    dxdy = gt.grad(gt.grad(f, argnums=0), argnums=1)
    assert float(dxdy(np.float64(2.0), np.float64(3.0))) == pytest.approx(2 * 2.0 * 3 * 9.0)


# --- jacobian and hessian ----------------------------------------------------------------------

def test_jacobian_shapes_and_values():
    def f(x):
        return gt.sin(gt.reduce_sum(x, axis=1)) * 2.0

    x = RNG.standard_normal((4, 3))
    jac = gt.jacobian(f)(x)
    assert jac.shape == (4, 4, 3)
    np.testing.assert_allclose(jac.numpy(), numeric_jacobian(as_np(f), x), rtol=1e-6,
                               atol=1e-8)
    assert gt.jacobian(loss)(x).shape == (4, 3)  # scalar output: the gradient


def test_jacobian_structures_and_argnums():
    def f(x, y):
        return {"sum": gt.reduce_sum(x) * y, "prod": (x * y, x * x)}

    x, y = np.array([1.0, 2.0, 3.0]), np.float64(2.0)
    jac = gt.jacobian(f, argnums=(0, 1))(x, y)
    assert set(jac) == {"sum", "prod"}
    d_sum_dx, d_sum_dy = jac["sum"]
    assert d_sum_dx.shape == (3,) and d_sum_dy.shape == ()
    np.testing.assert_allclose(d_sum_dx.numpy(), [2.0, 2.0, 2.0])
    assert float(d_sum_dy) == 6.0
    (dxy_dx, dxy_dy), (dxx_dx, dxx_dy) = jac["prod"]
    np.testing.assert_allclose(dxy_dx.numpy(), 2.0 * np.eye(3))
    np.testing.assert_allclose(dxy_dy.numpy(), x)
    np.testing.assert_allclose(dxx_dx.numpy(), np.diag(2 * x))
    np.testing.assert_array_equal(dxx_dy.numpy(), np.zeros(3))
    (jac, aux) = gt.jacobian(lambda x: (x * x, "aux"), has_aux=True)(x)
    assert aux == "aux" and jac.shape == (3, 3)


def test_hessian_of_quadratic_form_is_a_plus_a_transpose():
    a = RNG.standard_normal((4, 4))
    x = RNG.standard_normal(4)
    h = gt.hessian(quadratic_form)(x, a)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h.numpy(), a + a.T, rtol=1e-12, atol=1e-12)


def test_hessian_matches_finite_differences_of_the_gradient():
    x = RNG.standard_normal(3)
    h = gt.hessian(loss)(x)
    numeric = numeric_jacobian(lambda v: gt.grad(loss)(v).numpy(), x)
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h.numpy(), h.numpy().T, rtol=1e-12)


def test_hessian_blocks_for_several_arguments():
    def f(x, y):
        return gt.reduce_sum(x * x * y) + gt.reduce_sum(y * y * y)

    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    (hxx, hxy), (hyx, hyy) = gt.hessian(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(hxx.numpy(), np.diag(2 * y))
    np.testing.assert_allclose(hxy.numpy(), np.diag(2 * x))
    np.testing.assert_allclose(hyx.numpy(), np.diag(2 * x))
    np.testing.assert_allclose(hyy.numpy(), np.diag(6 * y))
    h, aux = gt.hessian(lambda x: (gt.reduce_sum(x**3), 1), has_aux=True)(x)
    assert aux == 1
    np.testing.assert_allclose(h.numpy(), np.diag(6 * x))


def test_hessian_shape_for_matrix_input():
    x = RNG.standard_normal((2, 3))
    assert gt.hessian(loss)(x).shape == (2, 3, 2, 3)


def test_transformed_functions_are_named():
    def energy(x):
        """Potential energy."""
        return x * x

    assert gt.grad(energy).__name__ == "grad(energy)"
    assert gt.hessian(energy).__doc__ == "Potential energy."


NESTED_JACOBIAN_FUNCTIONS = {
    # sin(outer(x, x)) + cos(dot(x, x)): tensordot with axes=0 and axes=1.
    "tensordot": lambda x: gt.sin(gt.tensordot(x, x, axes=0))
    + gt.cos(gt.tensordot(x, x, axes=1)),
    # A column times a row: the backward unbroadcasts over a size-1 axis, which the
    # batched backward does with the batch axis in front (its JVP once lost track).
    "outer": lambda x: gt.sin(gt.outer(x, x)),
    "expand_dims": lambda x: gt.reduce_sum(
        gt.sin(gt.expand_dims(x, 0) * gt.expand_dims(x, 1)), axis=0),
    # Its backward compares with the maximum (equal): no tangent flows through that.
    "reduce_max": lambda x: gt.reduce_max(gt.outer(x, x) + x, axis=1),
}


@pytest.mark.parametrize("compile_mode", [True, False], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(NESTED_JACOBIAN_FUNCTIONS))
def test_jvp_of_a_nested_jacobian_matches_finite_differences(compile_mode, n, name):
    # Forward mode over two levels of vectorized reverse mode.
    nested = gt.jacobian(gt.jacobian(NESTED_JACOBIAN_FUNCTIONS[name]))
    x = RNG.normal(size=n)
    v = RNG.normal(size=n)
    with gt.config(compile=compile_mode, compile_after=1):
        for _ in range(2):
            out, tangent = gt.jvp(nested, (gt.constant(x),), (gt.constant(v),))
    eps = 1e-6
    want = (as_np(nested)(x + eps * v) - as_np(nested)(x - eps * v)) / (2 * eps)
    assert tangent.shape == out.shape and set(out.shape) == {n}
    np.testing.assert_allclose(out.numpy(), as_np(nested)(x), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-6, atol=1e-7)
