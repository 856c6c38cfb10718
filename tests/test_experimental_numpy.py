"""gt.experimental.numpy (TF's tf.experimental.numpy; also `import gradtape.numpy`): NumPy
functions that take lists and nests of tensors and differentiate. Before, there was no
such namespace, and plain NumPy on a list of tensors dropped the gradient."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences

tnp = gt.experimental.numpy
RNG = np.random.default_rng(0)


def _check(f, *arrays):
    """f's gradient at float64 ``arrays`` against central differences."""
    xs = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    u = RNG.standard_normal(np.shape(y))
    grads = tape.gradient(y, xs, output_gradients=gt.constant(u))
    assert all(g is not None for g in grads)
    assert_vjp_matches_differences(f, arrays, u, grads, RNG)
    return y


def test_the_module_is_reachable_three_ways():
    import gradtape.experimental.numpy as a
    import gradtape.numpy as b

    assert a is b is tnp


@pytest.mark.parametrize("f, want", [
    (lambda t: tnp.mean([t, t + 2]), lambda a: np.mean([a, a + 2])),
    (lambda t: tnp.array([t[0], t[1] * t[2]]), lambda a: np.array([a[0], a[1] * a[2]])),
    (lambda t: tnp.asarray([[t[0], 1.0], [t[1], t[2]]]),
     lambda a: np.asarray([[a[0], 1.0], [a[1], a[2]]])),
    (lambda t: tnp.r_[t, 3.0, t * 2], lambda a: np.r_[a, 3.0, a * 2]),
    (lambda t: tnp.r_[0:2, t], lambda a: np.r_[0:2, a]),
    (lambda t: tnp.append(t, [t[0] * 3]), lambda a: np.append(a, [a[0] * 3])),
    (lambda t: tnp.concatenate([t, [t[0], 5.0]]), lambda a: np.concatenate([a, [a[0], 5.0]])),
    (lambda t: tnp.stack([t, t ** 2], axis=1), lambda a: np.stack([a, a ** 2], axis=1)),
    (lambda t: tnp.sum(tnp.outer(t, [t[0], 2.0])), lambda a: np.sum(np.outer(a, [a[0], 2.0]))),
    (lambda t: tnp.sin(t) * tnp.exp(t), lambda a: np.sin(a) * np.exp(a)),
    (lambda t: tnp.linalg.norm([t[0], t[1]]), lambda a: np.linalg.norm([a[0], a[1]])),
    (lambda t: tnp.where(t > 0, t, [t[2], 0.0, 1.0]),
     lambda a: np.where(a > 0, a, [a[2], 0.0, 1.0])),
])
def test_nests_of_tensors_differentiate(f, want):
    a = np.array([0.3, -1.2, 2.0])
    y = _check(f, a)
    np.testing.assert_allclose(np.asarray(y), want(a), rtol=1e-12)


def test_plain_numpy_drops_the_gradient_the_namespace_keeps():
    t = gt.Variable([1.0, 2.0])
    with gt.GradientTape() as tape:
        with pytest.warns(gt.GradientDroppedWarning):
            dropped = np.mean([t, t + 2])
        kept = tnp.mean([t, t + 2])
    assert not isinstance(dropped, gt.Tensor)
    np.testing.assert_allclose(tape.gradient(kept, t).numpy(), [0.5, 0.5])


def test_results_are_tensors_and_dtypes_constants_are_numpys():
    assert tnp.ndarray is gt.Tensor
    assert isinstance(tnp.zeros((2, 3)), gt.Tensor) and tnp.zeros(2).dtype == gt.float64
    assert tnp.float32 is np.float32 and tnp.int64 is np.int64
    assert tnp.newaxis is None and tnp.pi == np.pi and np.isinf(tnp.inf)
    assert np.isnan(tnp.nan) and tnp.e == np.e
    assert tnp.array([1, 2], dtype=tnp.float32).dtype == gt.float32
    assert tnp.array(3.0, ndmin=2).shape == (1, 1)
    np.testing.assert_array_equal(tnp.arange(3).numpy(), [0, 1, 2])
    assert tnp.shape([[1, 2, 3]]) == (1, 3)


def test_a_numpy_function_without_a_gradient_rule_is_left_out():
    for name in ("busday_count", "unwrap"):
        assert not hasattr(tnp, name)
    with pytest.raises(AttributeError, match="no gradient rule for numpy.busday_count"):
        _ = tnp.busday_count
    with pytest.raises(AttributeError) as info:
        _ = tnp.not_numpy_either
    assert str(info.value) == ("module 'gradtape.experimental.numpy' has no attribute "
                               "'not_numpy_either'")
    with pytest.raises(AttributeError, match="numpy.linalg.matrix_power"):
        _ = tnp.linalg.matrix_power


def test_it_covers_what_gradtape_implements():
    from gradtape.ops import numpy_dispatch

    top = [n.split(".", 1)[1] for n in numpy_dispatch.supported_names()["differentiable"]
           if n.count(".") == 1]
    assert [n for n in top if not hasattr(tnp, n)] == []


def test_r_refuses_string_directives():
    with pytest.raises(ValueError, match="string directives"):
        tnp.r_["0,2", [1.0], [2.0]]
