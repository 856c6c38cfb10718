"""gt.scipy.linalg against scipy.linalg: sqrtm, expm, solve_sylvester (primitives with
SciPy impls), solve_triangular and cholesky (composites); gradients to second order,
forward mode, batching rules, compiled against interpreted, Jacobians."""

import numpy as np
import pytest
from scipy_testing import (
    assert_compiled_equals_interpreted,
    assert_forward_over_reverse,
    assert_jacobian_matches_differences,
)

import gradtape as gt
from gradtape.testing import check_grads

sl = pytest.importorskip("scipy.linalg")
L = gt.scipy.linalg


def _spd(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_solve_sylvester():
    a, b, q = _randn(3, 3), _randn(2, 2, seed=1), _randn(3, 2, seed=2)
    np.testing.assert_allclose(L.solve_sylvester(a, b, q).numpy(),
                               sl.solve_sylvester(a, b, q), rtol=1e-10)
    check_grads(L.solve_sylvester, [a, b, q], order=2)
    assert_compiled_equals_interpreted(L.solve_sylvester, [a, b, q])
    with pytest.raises(ValueError, match="does not fit"):
        L.solve_sylvester(a, b, q.T)


def test_sqrtm():
    s = _spd(3)
    np.testing.assert_allclose(L.sqrtm(s).numpy(), sl.sqrtm(s), rtol=1e-10)
    check_grads(L.sqrtm, [s], order=2)
    assert_jacobian_matches_differences(L.sqrtm, s)
    assert_forward_over_reverse(L.sqrtm, s)
    with pytest.raises(ValueError, match="no real square root"):
        L.sqrtm(-np.eye(2))


def test_expm():
    a = _randn(3, 3) * 0.5
    np.testing.assert_allclose(L.expm(a).numpy(), sl.expm(a), rtol=1e-10)
    check_grads(L.expm, [a], order=2)
    assert_compiled_equals_interpreted(L.expm, [a])
    assert_forward_over_reverse(L.expm, a)


def test_rules_of_the_primitives(check_jvp, check_batching):
    a, b, q, s = _randn(3, 3), _randn(2, 2, seed=1), _randn(3, 2, seed=2), _spd(3)
    check_jvp(L.solve_sylvester, [a, b, q])
    check_jvp(L.sqrtm, [s])
    check_jvp(L.expm, [a * 0.5])
    check_batching(L.solve_sylvester, [a, b, q])
    check_batching(L.solve_sylvester, [a, b, q], batched=[False, True, False])
    check_batching(L.expm, [a])


@pytest.mark.parametrize("trans", [0, "T", 2])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular(trans, lower, unit_diagonal):
    a, b = _spd(3) + _randn(3, 3), _randn(3, 2, seed=1)
    kwargs = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    np.testing.assert_allclose(L.solve_triangular(a, b, **kwargs).numpy(),
                               sl.solve_triangular(a, b, **kwargs), rtol=1e-10)
    np.testing.assert_allclose(L.solve_triangular(a, b[:, 0], **kwargs).numpy(),
                               sl.solve_triangular(a, b[:, 0], **kwargs), rtol=1e-10)
    check_grads(lambda a, b: L.solve_triangular(a, b, **kwargs), [a, b], order=2)


def test_solve_triangular_reads_one_triangle_only():
    a, b = _spd(3), _randn(3, seed=1)
    ag = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(ag)
        x = gt.reduce_sum(L.solve_triangular(ag, b, lower=True))
    g = tape.gradient(x, ag).numpy()
    assert np.all(np.triu(g, 1) == 0)


def test_cholesky():
    s = _spd(3)
    np.testing.assert_allclose(L.cholesky(s).numpy(), sl.cholesky(s), rtol=1e-12)
    np.testing.assert_allclose(L.cholesky(s, lower=True).numpy(), sl.cholesky(s, lower=True),
                               rtol=1e-12)
    check_grads(lambda s: L.cholesky((s + gt.transpose(s, (1, 0))) / 2), [s], order=2)


@pytest.mark.parametrize("l_and_u", [(1, 1), (1, 2), (0, 2)], ids=str)
def test_solve_banded(l_and_u):
    lower, upper = l_and_u
    ab, b = _randn(lower + upper + 1, 5), _randn(5, 2, seed=1)
    ab[upper] += 4.0  # a dominant diagonal
    np.testing.assert_allclose(L.solve_banded(l_and_u, ab, b).numpy(),
                               sl.solve_banded(l_and_u, ab, b), rtol=1e-10)
    np.testing.assert_allclose(L.solve_banded(l_and_u, ab, b[:, 0]).numpy(),
                               sl.solve_banded(l_and_u, ab, b[:, 0]), rtol=1e-10)
    check_grads(lambda ab, b: L.solve_banded(l_and_u, ab, b), [ab, b], order=2)


def test_python_lists_compute_in_float64_as_scipy():
    """SciPy computes a list in float64; these took TF's conversion (float32)."""
    sl = pytest.importorskip("scipy.linalg")
    a = [[2.0, 0.1], [0.1, 1.0]]
    for name in ("expm", "sqrtm", "cholesky"):
        out = getattr(gt.scipy.linalg, name)(a)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), getattr(sl, name)(a), rtol=1e-13)
    x = gt.scipy.linalg.solve_triangular(a, [0.1, 0.3], lower=True)
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.numpy(), sl.solve_triangular(a, [0.1, 0.3], lower=True),
                               rtol=1e-14)
    q = gt.scipy.linalg.solve_sylvester(a, a, a)
    np.testing.assert_allclose(q.numpy(), sl.solve_sylvester(a, a, a), rtol=1e-13)
