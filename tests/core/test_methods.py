"""NumPy's ndarray methods on tensors: NumPy's signatures and values, each recorded like
the NumPy function it mirrors (gradients checked against finite differences, first and
second order, in forward and reverse mode, under jacobian and compiled vs interpreted)."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(3)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4, 2))

# name -> (the method call on a tensor or an array: the same code for both).
METHODS = {
    "flatten": lambda a: a.flatten(),
    "ravel": lambda a: a.ravel(),
    "squeeze": lambda a: a[None, :, None, :].squeeze(),
    "squeeze axis": lambda a: a[None].squeeze(axis=0),
    "reshape args": lambda a: a.reshape(2, 6),
    "reshape tuple": lambda a: a.reshape((4, -1)),
    "astype": lambda a: a.astype(np.float32),
    "sum": lambda a: a.sum(),
    "sum axis keepdims": lambda a: a.sum(axis=1, keepdims=True),
    "mean": lambda a: a.mean(axis=0),
    "max": lambda a: a.max(axis=1),
    "min": lambda a: a.min(),
    "prod": lambda a: a.prod(axis=0),
    "std ddof": lambda a: a.std(axis=1, ddof=1),
    "var": lambda a: a.var(keepdims=True),
    "dot": lambda a: a.dot(B),
    "clip": lambda a: a.clip(-0.5, 0.8),
    "clip max only": lambda a: a.clip(max=0.3),
    "cumsum": lambda a: a.cumsum(),
    "cumsum axis": lambda a: a.cumsum(axis=1),
    "round decimals": lambda a: a.round(1),
    "conj": lambda a: a.conj(),
    "conjugate": lambda a: a.conjugate(),
    "copy": lambda a: a.copy(),
    "transpose": lambda a: a.transpose(),
    "transpose args": lambda a: a.transpose(1, 0),
    "transpose tuple": lambda a: a.transpose((1, 0)),
    "T": lambda a: a.T,
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "real": lambda a: a.real,
    "imag": lambda a: a.imag,
    "trace": lambda a: a.trace(),
    "trace offset": lambda a: a.trace(1),
    "diagonal": lambda a: a.diagonal(),
    "repeat": lambda a: a.repeat(2, axis=0),
    "repeat flat": lambda a: a.repeat(2),
    "take": lambda a: a.take([0, 5, 7]),
    "take axis": lambda a: a.take([2, 0], axis=1),
    "argmax": lambda a: a.argmax(),
    "argmin axis": lambda a: a.argmin(axis=0),
    "argsort": lambda a: a.argsort(axis=1),
    "any": lambda a: (a > 1.0).any(),
    "all axis": lambda a: (a > -3.0).all(axis=0),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_values_follow_numpy(name):
    method = METHODS[name]
    got, expected = method(gt.constant(A)), method(A)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(np.asarray(got), expected)


# The differentiable methods, with the NumPy function each mirrors.
MIRRORS = {
    "flatten": np.ravel,
    "squeeze": lambda a: np.squeeze(a[None, :, None, :]),
    "reshape args": lambda a: np.reshape(a, (2, 6)),
    "sum axis keepdims": lambda a: np.sum(a, axis=1, keepdims=True),
    "max": lambda a: np.max(a, axis=1),
    "prod": lambda a: np.prod(a, axis=0),
    "std ddof": lambda a: np.std(a, axis=1, ddof=1),
    "dot": lambda a: np.dot(a, B),
    "clip": lambda a: np.clip(a, -0.5, 0.8),
    "clip max only": lambda a: np.minimum(a, 0.3),
    "cumsum": np.cumsum,
    "transpose args": np.transpose,
    "trace offset": lambda a: np.trace(a, 1),
    "diagonal": np.diagonal,
    "repeat": lambda a: np.repeat(a, 2, axis=0),
    "take": lambda a: np.take(a, [0, 5, 7]),
    "copy": np.copy,
}


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_method_records_like_the_function_it_mirrors(name):
    method, function = METHODS[name], MIRRORS[name]
    u = rng.standard_normal(np.shape(function(A)))

    def weighted(f):
        return lambda a: gt.reduce_sum(f(a) * u)

    np.testing.assert_allclose(gt.grad(weighted(method))(A).numpy(),
                               gt.grad(weighted(function))(A).numpy(), rtol=1e-12)
    check_grads(method, [A], order=2)


def _check_jvp(f, x, eps=1e-6):
    """Forward mode against central differences along a random tangent (float64)."""
    v = rng.standard_normal(x.shape)
    _, tangent = gt.jvp(f, (x,), (v,))
    expected = (np.asarray(f(gt.constant(x + eps * v))) - np.asarray(f(gt.constant(x - eps * v))))
    np.testing.assert_allclose(tangent.numpy(), expected / (2 * eps), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["flatten", "std ddof", "clip", "cumsum", "dot", "take"])
def test_methods_in_forward_mode_jacobian_and_compiled(name):
    method = METHODS[name]
    _check_jvp(method, A)
    _check_jvp(lambda a: gt.jvp(lambda b: gt.reduce_sum(method(b) ** 2), (a,), (A,))[1], A)
    jac = np.asarray(gt.jacobian(method)(A))
    with gt.config(compile=False):
        interpreted = np.asarray(gt.jacobian(method)(A))
        hess_interpreted = np.asarray(gt.hessian(lambda a: gt.reduce_sum(method(a) ** 3))(A))
    np.testing.assert_allclose(jac, interpreted, rtol=1e-12)
    np.testing.assert_allclose(gt.function(method)(gt.constant(A)).numpy(),
                               np.asarray(method(gt.constant(A))), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gt.hessian(lambda a: gt.reduce_sum(method(a) ** 3))(A)),
                               hess_interpreted, rtol=1e-10, atol=1e-12)


def test_value_reads_are_python_values():
    t = gt.constant(A)
    assert t.item(5) == A.item(5) and isinstance(t.item(5), float)
    assert gt.constant(2.5).item() == 2.5
    assert t.tolist() == A.tolist()
    for got, expected in zip(gt.constant(A > 0).nonzero(), (A > 0).nonzero()):
        np.testing.assert_array_equal(got, expected)


def test_item_inside_a_function_is_a_guarded_read():
    traces = []

    @gt.function
    def scaled(x):
        traces.append(1)
        return x * x.item()

    assert scaled(gt.constant(2.0)).numpy() == 4.0
    assert scaled(gt.constant(3.0)).numpy() == 9.0  # not the first trace's 2.0


@pytest.mark.parametrize("name", ["fill", "sort", "resize", "partition", "put", "itemset"])
def test_in_place_methods_raise(name):
    with pytest.raises(TypeError, match="immutable"):
        getattr(gt.constant(A), name)(0)


def test_astype_checks_casting_and_clip_rejects_out():
    t = gt.constant(A)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        t.astype(np.int32, casting="safe")
    with pytest.raises(TypeError, match="immutable"):
        t.clip(0.0, 1.0, out=np.empty_like(A))
    assert t.astype(np.float32, casting="same_kind").dtype == np.float32


def test_methods_on_variables_read_the_variable():
    v = gt.Variable(A)
    with gt.GradientTape() as tape:
        y = v.flatten().sum() + v.std(ddof=1)
    expected = gt.grad(lambda a: np.sum(a) + np.std(a, ddof=1))(A)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), expected.numpy(), rtol=1e-12)


def test_real_and_imag_of_complex_tensors():
    z = A + 1j * A[::-1]
    t = gt.constant(z)
    np.testing.assert_array_equal(t.real.numpy(), z.real)
    np.testing.assert_array_equal(t.imag.numpy(), z.imag)
    np.testing.assert_array_equal(t.conj().numpy(), z.conj())
