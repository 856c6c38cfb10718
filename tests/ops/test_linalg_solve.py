"""NumPy's and TF's matrix functions (ops/linalg/solve.py): inv, det, slogdet, solve,
cholesky and norm; values equal NumPy's, derivatives match finite differences to 2nd
order (3rd for a few) in reverse and forward mode, over broadcast batch dims, float32
stays float32, singular and non-square inputs raise."""

import numpy as np
import pytest
from linalg_testing import randn as _randn
from linalg_testing import rng
from linalg_testing import spd as _spd
from linalg_testing import well_conditioned as _well_conditioned

import gradtape as gt
from gradtape.testing import check_grads

# --- inv, det, slogdet, solve, cholesky -----------------------------------------------------

BATCHES = [(), (2,), (2, 1)]


@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_inv(batch):
    a = _well_conditioned(*batch, 3, 3)
    np.testing.assert_allclose(gt.linalg.inv(a).numpy(), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.inv(gt.constant(a)).numpy(), np.linalg.inv(a))
    check_grads(gt.linalg.inv, [a], order=2)
    np.testing.assert_allclose(gt.linalg.inv(a, adjoint=True).numpy(),
                               np.linalg.inv(np.swapaxes(a, -1, -2)), rtol=1e-12)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_det_and_slogdet(batch):
    a = _well_conditioned(*batch, 3, 3)
    a[..., 0, :] *= -1  # a negative determinant: sign -1
    np.testing.assert_allclose(gt.linalg.det(a).numpy(), np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.det(gt.constant(a)).numpy(), np.linalg.det(a))
    sign, logabsdet = gt.linalg.slogdet(a)
    want_sign, want_log = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.numpy(), want_sign)
    np.testing.assert_allclose(logabsdet.numpy(), want_log, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.slogdet(gt.constant(a)).logabsdet.numpy(), want_log)
    check_grads(gt.linalg.det, [a], order=2)
    check_grads(lambda x: gt.linalg.slogdet(x)[1], [a], order=2)


def test_slogdet_sign_has_no_gradient_and_logdet_gradient_is_inverse_transpose():
    a = gt.constant(_well_conditioned(3, 3))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        sign, logabsdet = gt.linalg.slogdet(a)
    g = tape.gradient(logabsdet, a)
    np.testing.assert_allclose(g.numpy(), np.linalg.inv(a.numpy()).T, rtol=1e-12)
    assert np.all(tape.gradient(sign, a, unconnected_gradients="zero").numpy() == 0)


def test_det_gradient_of_singular_matrix_raises():
    a = gt.constant(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with gt.GradientTape() as tape:
        tape.watch(a)
        d = gt.linalg.det(a)
    with pytest.raises(np.linalg.LinAlgError):
        tape.gradient(d, a)


@pytest.mark.parametrize("sa,sb", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 2)),
    ((2, 3, 3), (3, 4)), ((3, 3), (2, 3, 1)), ((2, 1, 3, 3), (4, 3, 2)),
], ids=str)
def test_solve(sa, sb):
    a, b = _well_conditioned(*sa), _randn(*sb)
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        # NumPy 1 reads b as vectors when b.ndim == a.ndim - 1, and rejects some of the
        # cases below that NumPy 2 accepts: gradtape follows the installed NumPy.
        try:
            np.linalg.solve(a, b)
        except ValueError:
            with pytest.raises(ValueError):
                gt.linalg.solve(a, b)
            return
    expected = np.linalg.solve(a, b) if len(sb) != 2 or len(sa) == 2 else None
    out = gt.linalg.solve(a, b)
    x = out.numpy()
    np.testing.assert_allclose(a @ (x[..., None] if len(sb) == 1 else x),
                               np.broadcast_to(b[..., None] if len(sb) == 1 else b,
                                               (a @ (x[..., None] if len(sb) == 1 else x)).shape),
                               rtol=1e-10, atol=1e-12)
    if expected is not None:
        np.testing.assert_allclose(x, expected, rtol=1e-12)
        np.testing.assert_allclose(np.linalg.solve(gt.constant(a), b).numpy(), expected)
    check_grads(gt.linalg.solve, [a, b], order=2)


def test_solve_adjoint():
    a, b = _well_conditioned(3, 3), _randn(3, 2)
    np.testing.assert_allclose(gt.linalg.solve(a, b, adjoint=True).numpy(),
                               np.linalg.solve(a.T, b), rtol=1e-12)


@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_cholesky(batch):
    a = _spd(*batch, 4, 4)
    np.testing.assert_allclose(gt.linalg.cholesky(a).numpy(), np.linalg.cholesky(a),
                               rtol=1e-12)
    np.testing.assert_allclose(np.linalg.cholesky(gt.constant(a)).numpy(),
                               np.linalg.cholesky(a))
    np.testing.assert_allclose(gt.linalg.cholesky(a, upper=True).numpy(),
                               np.swapaxes(np.linalg.cholesky(a), -1, -2), rtol=1e-12)
    # The input is symmetrized first, so finite differences along any direction agree.
    check_grads(gt.linalg.cholesky, [a], order=2)


def test_cholesky_gradient_is_symmetric_and_matches_the_formula():
    a = _spd(3, 3)
    t = gt.constant(a)
    w = _randn(3, 3)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = gt.sum(gt.linalg.cholesky(t) * w)
    g = tape.gradient(y, t).numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12)
    # Directional derivative along a symmetric direction, by finite differences of NumPy.
    d = _randn(3, 3)
    d = d + d.T
    eps = 1e-6
    numeric = (np.sum(np.linalg.cholesky(a + eps * d) * w)
               - np.sum(np.linalg.cholesky(a - eps * d) * w)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), numeric, rtol=1e-6)


def test_cholesky_of_non_positive_definite_raises():
    with pytest.raises(np.linalg.LinAlgError):
        gt.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_non_square_raises():
    for op in (gt.linalg.inv, gt.linalg.det, gt.linalg.slogdet, gt.linalg.cholesky):
        with pytest.raises(np.linalg.LinAlgError, match="square"):
            op(np.ones((2, 3)))


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "solve", "cholesky", "logdet"])
def test_linalg_forward_mode(name, check_jvp):
    a = _spd(2, 3, 3) if name in ("cholesky", "logdet") else _well_conditioned(2, 3, 3)
    if name == "solve":
        check_jvp(gt.linalg.solve, [a, _randn(2, 3, 2)])
    elif name == "slogdet":
        check_jvp(lambda x: gt.linalg.slogdet(x)[1], [a])
    else:
        check_jvp(getattr(gt.linalg, name), [a])


@pytest.mark.parametrize("name", ["inv", "det", "cholesky"])
def test_linalg_third_order(name):
    a = _spd(2, 2) if name == "cholesky" else _well_conditioned(2, 2)
    check_grads(getattr(gt.linalg, name), [a], order=3, rtol=1e-4)


def test_logdet():
    a = _spd(2, 3, 3)
    np.testing.assert_allclose(gt.linalg.logdet(a).numpy(), np.linalg.slogdet(a)[1],
                               rtol=1e-12)
    check_grads(gt.linalg.logdet, [a], order=2)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "matmul", "einsum"])
def test_float32_stays_float32(name):
    a = gt.constant(_spd(2, 3, 3).astype(np.float32))
    b = gt.constant(_randn(2, 3, 2).astype(np.float32))
    ops = {
        "inv": lambda: gt.linalg.inv(a), "det": lambda: gt.linalg.det(a),
        "solve": lambda: gt.linalg.solve(a, b), "cholesky": lambda: gt.linalg.cholesky(a),
        "matmul": lambda: gt.matmul(a, b), "einsum": lambda: gt.einsum("bii,bij->bj", a, b),
    }
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        y = ops[name]()
    assert y.dtype == np.float32
    for g in tape.gradient(y, [a, b]):
        assert g is None or g.dtype == np.float32


# --- norm -------------------------------------------------------------------------------------

VECTOR_NORMS = [None, 2, 1, np.inf, -np.inf, 3, 0.5]
MATRIX_NORMS = [None, "fro", 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_NORMS, ids=str)
@pytest.mark.parametrize("shape,axis", [((5,), None), ((3, 4), 1), ((3, 4), -2),
                                        ((2, 3, 4), 0)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms(ord, shape, axis, keepdims):
    x = rng.permutation(int(np.prod(shape))).reshape(shape) * 0.3 + 0.2
    x *= rng.choice([-1.0, 1.0], size=shape)
    expected = np.linalg.norm(x, ord, axis, keepdims)
    np.testing.assert_allclose(np.linalg.norm(gt.constant(x), ord, axis, keepdims).numpy(),
                               expected, rtol=1e-12)
    check_grads(lambda t: np.linalg.norm(t, ord, axis, keepdims), [x], order=2)
    if axis is not None and (ord is None or ord > 0):  # TF's vector norms: the same
        tf_ord = "euclidean" if ord is None else ord
        np.testing.assert_allclose(gt.linalg.norm(x, tf_ord, axis, keepdims).numpy(),
                                   expected, rtol=1e-12)


@pytest.mark.parametrize("ord", MATRIX_NORMS, ids=str)
@pytest.mark.parametrize("shape,axis", [((3, 4), None), ((2, 3, 4), (1, 2)),
                                        ((2, 3, 4), (2, 0)), ((2, 3, 4), (-1, -3))], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms(ord, shape, axis, keepdims):
    # Continuous values: no ties among row/column sums (max/min are kinked there).
    x = rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], size=shape)
    expected = np.linalg.norm(x, ord, axis, keepdims)
    np.testing.assert_allclose(np.linalg.norm(gt.constant(x), ord, axis, keepdims).numpy(),
                               expected, rtol=1e-12)
    check_grads(lambda t: np.linalg.norm(t, ord, axis, keepdims), [x], order=2)
    if axis is not None and ord in (None, "fro", 1, np.inf):  # TF's matrix norms: the same
        tf_ord = "euclidean" if ord is None else ord
        np.testing.assert_allclose(gt.linalg.norm(x, tf_ord, axis, keepdims).numpy(),
                                   expected, rtol=1e-12)


def test_norm_defaults_and_errors():
    x = _randn(2, 3, 4)
    t = gt.constant(x)
    np.testing.assert_allclose(gt.norm(x).numpy(), np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(t, keepdims=True).numpy(),
                               np.linalg.norm(x, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(t, "euclidean").numpy(), np.linalg.norm(x))
    np.testing.assert_array_equal(
        np.linalg.norm(gt.constant(np.array([0.0, 2.0, 0.0])), 0).numpy(), 1.0)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        np.linalg.norm(t, 1)
    with pytest.raises(ValueError, match="Invalid norm order"):
        np.linalg.norm(t[0, 0], "fro")
    np.testing.assert_allclose(np.linalg.norm(t[0], "nuc").numpy(),
                               np.linalg.norm(x[0], "nuc"), rtol=1e-12)
    assert gt.linalg.norm(np.arange(3)).dtype == np.float64


def test_tf_norm_follows_tensorflow():
    x = _randn(2, 3, 4)
    # axis=None: the whole tensor is one vector, whatever the order and rank
    np.testing.assert_allclose(gt.linalg.norm(x, 1).numpy(), np.sum(np.abs(x)), rtol=1e-12)
    np.testing.assert_allclose(gt.norm(x, np.inf).numpy(), np.max(np.abs(x)))
    np.testing.assert_allclose(gt.norm(x, 3, keepdims=True).numpy(),
                               np.sum(np.abs(x) ** 3, keepdims=True) ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(gt.linalg.norm(x, 2, axis=(1, 2)).numpy(),
                               np.linalg.norm(x, 2, axis=(1, 2)), rtol=1e-12)
    check_grads(lambda t: gt.linalg.norm(t, 2, axis=[-1, 0]), [x], order=2)
    for bad_ord, axis in [(-1, None), (0, 1), ("fro", None), ("nuc", (0, 1)), (-2, (0, 1))]:
        with pytest.raises(ValueError, match="'ord' must be a supported"):
            gt.linalg.norm(x, bad_ord, axis)
    with pytest.raises(ValueError, match="'axis' must be None"):
        gt.norm(x, axis=(1, 1))


def test_norm_gradient_at_zero_is_nan_like_jax():
    x = gt.constant(np.zeros(3))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.linalg.norm(x)
    with np.errstate(all="ignore"):
        assert np.all(np.isnan(tape.gradient(y, x).numpy()))


def test_norm_forward_mode(check_jvp):
    check_jvp(lambda t: gt.linalg.norm(t, axis=1), [_randn(3, 4)])
    check_jvp(lambda t: gt.linalg.norm(t, 1, axis=(0, 1)), [_randn(3, 4)])
