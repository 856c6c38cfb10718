"""Decompositions (ops/linalg/decompositions.py): svd, eigh, eig, pinv and the norms and
names built on them. Values equal NumPy's; derivatives of gauge-invariant functions
match finite differences to second order in float64, in reverse and forward mode,
over batches, for real and complex inputs, at degenerate spectra too."""

import numpy as np
import pytest
from complex_testing import numeric_complex_gradient
from linalg_testing import randn as _randn
from linalg_testing import rng
from linalg_testing import spd as _spd

import gradtape as gt
from gradtape.ops.linalg import decompositions
from gradtape.testing import check_grads


def _crandn(*shape):
    return _randn(*shape) + 1j * _randn(*shape)


def _rotation(n):
    return np.linalg.qr(_randn(n, n))[0]


# --- values ------------------------------------------------------------------------------

SHAPES = [(3, 5), (5, 3), (4, 4), (2, 3, 5), (2, 5, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_svd_values_equal_numpy(shape, full, kind):
    a = _randn(*shape) if kind == "real" else _crandn(*shape)
    u, s, vh = np.linalg.svd(gt.constant(a), full_matrices=full)
    want = np.linalg.svd(a, full_matrices=full)
    for got, expected in zip((u, s, vh), want):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    only_s = np.linalg.svd(gt.constant(a), compute_uv=False)
    np.testing.assert_allclose(only_s.numpy(), want[1], rtol=1e-12)


def test_tf_svd_returns_s_u_v_and_keeps_float32():
    a = _randn(4, 3).astype(np.float32)
    s, u, v = gt.linalg.svd(a)
    assert (s.shape, u.shape, v.shape) == ((3,), (4, 3), (3, 3)) and s.dtype == np.float32
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-5)
    s_full, u_full, v_full = gt.linalg.svd(a, full_matrices=True)
    assert u_full.shape == (4, 4) and v_full.shape == (3, 3)
    np.testing.assert_allclose(gt.linalg.svd(a, compute_uv=False).numpy(), s.numpy())


def test_eigh_eig_pinv_values_equal_numpy():
    a = _randn(2, 4, 4)
    for uplo in ("L", "U"):
        w, v = np.linalg.eigh(gt.constant(a), UPLO=uplo)
        want_w, want_v = np.linalg.eigh(a, UPLO=uplo)
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-12)
        np.testing.assert_allclose(np.abs(v.numpy()), np.abs(want_v), atol=1e-12)
        np.testing.assert_allclose(np.linalg.eigvalsh(gt.constant(a), uplo).numpy(), want_w)
    e, v = gt.linalg.eigh(a)
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(a), rtol=1e-12)
    w, v = np.linalg.eig(gt.constant(a))
    want_w, want_v = np.linalg.eig(a)
    assert w.dtype == np.complex128  # always complex, like TF
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-12)
    np.testing.assert_allclose(v.numpy(), want_v, rtol=1e-12)
    np.testing.assert_allclose(gt.linalg.eigvals(a).numpy(), want_w, rtol=1e-12)
    b = _randn(3, 5)
    np.testing.assert_allclose(np.linalg.pinv(gt.constant(b)).numpy(), np.linalg.pinv(b))
    np.testing.assert_allclose(gt.linalg.pinv(b).numpy(), np.linalg.pinv(b), rtol=1e-12)
    low_rank = b.T @ b
    assert np.linalg.matrix_rank(gt.constant(low_rank)) == 3
    assert gt.linalg.matrix_rank(low_rank) == 3


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_singular_value_norms_equal_numpy(ord):
    a = _randn(3, 4, 5)
    for axis in [(1, 2), (2, 0)]:
        got = np.linalg.norm(gt.constant(a), ord, axis, keepdims=True)
        np.testing.assert_allclose(got.numpy(), np.linalg.norm(a, ord, axis, keepdims=True),
                                   rtol=1e-12)
    check_grads(lambda t: np.linalg.norm(t, ord, (0, 2)), [a], order=2)


def test_bad_inputs_raise_numpy_errors():
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        np.linalg.svd(gt.constant(np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.eigh(gt.constant(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        gt.linalg.eig(np.ones((2, 3)))
    with pytest.raises(ValueError, match="UPLO"):
        np.linalg.eigh(gt.constant(np.eye(2)), UPLO="X")


# --- derivatives of gauge-invariant functions ---------------------------------------------

def _svd_invariants(full):
    """|u|, s, |vh| and the complement projectors: none depends on the vectors' signs."""
    def f(t):
        u, s, vh = np.linalg.svd(t, full_matrices=full)
        k = min(t.shape[-2:])
        parts = [gt.reduce_sum(gt.abs(u[..., :k]) * 0.7), gt.reduce_sum(s * s),
                 gt.reduce_sum(gt.abs(vh[..., :k, :]))]
        if full:  # the extra columns only through their projectors: a basis is arbitrary
            u2, vh2 = u[..., k:], vh[..., k:, :]
            weights = np.arange(t.shape[-2] ** 2).reshape(t.shape[-2], -1)
            parts.append(gt.reduce_sum(gt.real(u2 @ gt.linalg.adjoint(u2)) * weights))
            weights = np.arange(t.shape[-1] ** 2).reshape(t.shape[-1], -1)
            parts.append(gt.reduce_sum(gt.imag(gt.linalg.adjoint(vh2) @ vh2) * np.sin(weights)
                                        + gt.real(gt.linalg.adjoint(vh2) @ vh2)))
        return parts[0] + parts[1] + parts[2] + sum(parts[3:], 0.0)
    return f


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 4, 3)], ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_svd_gradients_match_finite_differences(shape, full, check_jvp):
    f = _svd_invariants(full)
    a = _randn(*shape)
    check_grads(f, [a], order=2)
    check_jvp(f, [a])


def test_svd_complex_gradients_follow_tf_convention():
    for shape, full in [((3, 4), False), ((4, 3), True)]:
        a = _crandn(*shape)
        f = _svd_invariants(full)
        t = gt.constant(a)
        with gt.GradientTape() as tape:
            tape.watch(t)
            y = f(t)
        np.testing.assert_allclose(tape.gradient(y, t).numpy(),
                                   numeric_complex_gradient(f, [a], 0), atol=1e-6)


def _eigh_invariant(uplo):
    def f(t):
        w, v = np.linalg.eigh(t, UPLO=uplo)
        return gt.reduce_sum(w * np.array([1.0, -2.0, 0.5])) + gt.reduce_sum(gt.abs(v))
    return f


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_gradient_is_on_the_triangle_read(uplo, check_jvp):
    a = _randn(3, 3)  # not symmetric: only the UPLO triangle counts
    f = _eigh_invariant(uplo)
    check_grads(f, [a], order=2)
    check_jvp(f, [a])
    t = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = f(t)
    g = tape.gradient(y, t).numpy()
    other = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(other == 0)


def test_eigh_complex_and_batched():
    a = _crandn(3, 3)
    f = _eigh_invariant("L")
    t = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = f(t)
    g = tape.gradient(y, t).numpy()
    np.testing.assert_allclose(g, numeric_complex_gradient(f, [a], 0), atol=1e-6)
    assert np.all(np.diagonal(g).imag == 0)  # the diagonal eigh reads is real
    check_grads(lambda x: gt.reduce_sum(gt.abs(np.linalg.eigh(x)[1]))
                + gt.reduce_sum(np.linalg.eigvalsh(x) ** 2), [_spd(2, 3, 3)], order=2)


def test_eig_gradients_real_input_complex_eigenvalues(check_jvp):
    a = np.array([[0.3, -1.2, 0.4], [1.0, 0.1, -0.3], [0.2, 0.5, 0.9]])
    assert np.iscomplexobj(np.linalg.eigvals(a))

    def f(t):
        w, v = np.linalg.eig(t)
        return gt.reduce_sum(gt.abs(w) * np.array([1.0, 2.0, 3.0])) + gt.reduce_sum(
            gt.abs(v) * np.arange(9.0).reshape(3, 3))

    check_grads(f, [a], order=2)
    check_jvp(f, [a])
    c = _crandn(2, 3, 3)

    def g(t):
        w, v = gt.linalg.eig(t)
        return gt.reduce_sum(gt.real(w * np.array([1.0, 2.0j, 3.0]))) + gt.reduce_sum(gt.abs(v))

    t = gt.constant(c)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = g(t)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), numeric_complex_gradient(g, [c], 0),
                               atol=1e-6)


def test_pinv_gradients_tall_wide_and_fixed_low_rank(check_jvp):
    for a in (_randn(4, 2), _randn(2, 3, 4)):
        check_grads(np.linalg.pinv, [a], order=2)
        check_jvp(np.linalg.pinv, [a])
    # rank 2 of 4: finite differences keep the rank, and so does the derivative
    check_grads(lambda x: gt.linalg.pinv(gt.linalg.matrix_transpose(x) @ x), [_randn(2, 4)],
                order=2)


# --- degenerate spectra (TF's convention: gap terms of a degenerate pair are 0) ---------------

def test_gauge_invariant_gradients_at_repeated_eigenvalues_are_finite_and_exact():
    q = _rotation(3)
    a = q @ np.diag([1.0, 1.0, 3.0]) @ q.T  # eigenvalue 1 twice
    weights = _randn(3, 3)

    def projector(t):  # onto the degenerate eigenspace: defined although its basis is not
        v = np.linalg.eigh(t)[1][:, :2]
        return gt.reduce_sum((v @ gt.transpose(v)) * weights) + gt.reduce_sum(
            np.linalg.eigvalsh(t) ** 2)

    check_grads(projector, [a], order=1)
    t = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = projector(t)
    assert np.all(np.isfinite(tape.gradient(y, t).numpy()))


def test_nuclear_norm_gradient_at_repeated_singular_values():
    a = _rotation(3) * 2.0  # every singular value is 2: the gradient is u vh
    t = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = np.linalg.norm(t, "nuc")
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), a / 2.0, atol=1e-12)
    check_grads(lambda x: np.linalg.norm(x, "nuc"), [a], order=1)
    check_grads(lambda x: gt.reduce_sum(gt.abs(np.linalg.svd(x)[0] @ np.linalg.svd(x)[2])),
                [a], order=1)


# --- transformations -----------------------------------------------------------------------

def test_jacobian_and_forward_over_reverse():
    a = _randn(3, 2)

    def f(t):
        s = np.linalg.svd(t, compute_uv=False)
        w = np.linalg.eigvalsh(gt.transpose(t) @ t + gt.constant(np.eye(2)))
        return gt.concat([s, w], 0)

    jac = gt.jacobian(f)(gt.constant(a)).numpy()
    eps = 1e-6
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        column = (f(gt.constant(a + d)).numpy() - f(gt.constant(a - d)).numpy()) / (2 * eps)
        np.testing.assert_allclose(jac[(slice(None),) + idx], column, atol=1e-6)

    def loss(t):
        return gt.reduce_sum(gt.abs(np.linalg.svd(t, full_matrices=False)[0])) + gt.reduce_sum(
            np.linalg.eigvalsh(gt.transpose(t) @ t) ** 2)

    v = _randn(3, 2)
    _, hvp = gt.jvp(gt.grad(loss), [gt.constant(a)], [gt.constant(v)])
    grad = gt.grad(loss)
    numeric = (grad(gt.constant(a + eps * v)).numpy() - grad(gt.constant(a - eps * v)).numpy())
    np.testing.assert_allclose(hvp.numpy(), numeric / (2 * eps), atol=1e-5)


def test_under_function_compiled_and_interpreted_agree():
    a = _randn(2, 4, 3)

    @gt.function
    def grads(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            s, u, v = gt.linalg.svd(x)
            e, w = gt.linalg.eigh(x @ gt.linalg.adjoint(x))
            y = (gt.reduce_sum(s) + gt.reduce_sum(gt.abs(u)) + gt.reduce_sum(gt.abs(w))
                 + gt.reduce_sum(gt.linalg.pinv(x))
                 + gt.reduce_sum(gt.abs(gt.linalg.eigvals(x[..., :3, :]))))
        return tape.gradient(y, x)

    results = []
    for compiled in (False, True):
        with gt.config(compile=compiled, compile_after=1):
            results.append([grads(gt.constant(a)).numpy() for _ in range(2)])
    for interpreted, generated in zip(*results):
        np.testing.assert_allclose(generated, interpreted, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,f,shape", [
    ("svd", lambda a: gt.linalg.svd(a)[1], (4, 3)),
    ("svd full", lambda a: gt.linalg.svd(a, full_matrices=True)[2], (2, 3)),
    ("eigh", lambda a: decompositions._eigh_np(a, UPLO="U")[1], (3, 3)),
    ("eig", lambda a: gt.linalg.eig(a)[0], (3, 3)),
    ("pinv", gt.linalg.pinv, (3, 2)),
    ("qr", lambda a: gt.linalg.qr(a)[1], (3, 2)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_batching_rules(name, f, shape, check_batching):
    check_batching(f, [rng.standard_normal(shape)])


# --- qr ------------------------------------------------------------------------------------

def _qr_loss(shape, dtype=float):
    wq = _randn(shape[-2], min(shape[-2:])).astype(dtype)
    wr = _randn(min(shape[-2:]), shape[-1]).astype(dtype)

    def f(t):
        q, r = np.linalg.qr(t)
        return gt.reduce_sum(gt.real(q * wq)) + gt.reduce_sum(gt.real(r * wr))
    return f


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 3)], ids=str)
def test_qr_values_and_gradients(shape, check_jvp):
    a = _randn(*shape)
    q, r = np.linalg.qr(gt.constant(a))
    want_q, want_r = np.linalg.qr(a)
    np.testing.assert_allclose(q.numpy(), want_q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), want_r, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.linalg.qr(gt.constant(a), mode="r").numpy(), want_r,
                               atol=1e-12)
    f = _qr_loss(shape)
    check_grads(f, [a], order=2)
    check_jvp(f, [a])


def test_qr_complex_and_tf_names():
    for shape in [(4, 3), (2, 3)]:
        a = _crandn(*shape)
        f = _qr_loss(shape, complex)
        t = gt.constant(a)
        with gt.GradientTape() as tape:
            tape.watch(t)
            y = f(t)
        np.testing.assert_allclose(tape.gradient(y, t).numpy(),
                                   numeric_complex_gradient(f, [a], 0), atol=1e-6)
    a = _randn(4, 3)
    q, r = gt.linalg.qr(a, full_matrices=True)
    assert q.shape == (4, 4) and r.shape == (4, 3)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    t = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(t)
        q, r = gt.linalg.qr(t, full_matrices=True)
    with pytest.raises(NotImplementedError, match="full_matrices"):
        tape.gradient(r, t)
    with pytest.raises(ValueError, match="mode"):
        np.linalg.qr(t, mode="raw")


def test_every_nesting_of_forward_and_reverse_mode():
    a = _randn(4, 3)
    v, w = _randn(4, 3), _randn(4, 3)
    eps = 1e-6

    def f(t):
        u, s, vh = np.linalg.svd(t, full_matrices=True)
        q = np.linalg.qr(t)[0]
        w_, v_ = np.linalg.eig(t[:3] @ t[1:])
        return (gt.reduce_sum(gt.abs(u[:, :3])) + gt.reduce_sum(s ** 3)
                + gt.reduce_sum(q * q * q) + gt.reduce_sum(gt.abs(v_)) + gt.reduce_sum(gt.abs(w_)))

    def along_v(t):  # forward mode inside
        return gt.jvp(f, [t], [gt.constant(v)])[1]

    def numeric(h):
        return (h(gt.constant(a + eps * w)).numpy() - h(gt.constant(a - eps * w)).numpy()) / (
            2 * eps)

    expected = numeric(along_v)
    reverse_over_forward = np.sum(gt.grad(along_v)(gt.constant(a)).numpy() * w)
    forward_over_forward = gt.jvp(along_v, [gt.constant(a)], [gt.constant(w)])[1].numpy()
    np.testing.assert_allclose([reverse_over_forward, forward_over_forward],
                               [expected, expected], rtol=1e-6)


@pytest.mark.parametrize("sa,sb", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,))], ids=str)
def test_lstsq_numpy_and_tf(sa, sb):
    a, b = _randn(*sa), _randn(*sb)
    got = np.linalg.lstsq(gt.constant(a), gt.constant(b))
    for value, expected in zip(got, np.linalg.lstsq(a, b)):
        np.testing.assert_allclose(np.asarray(value), expected, atol=1e-12)
    check_grads(lambda x, y: np.linalg.lstsq(x, y)[0], [a, b], order=2)
    if sa[0] > sa[1]:  # the residuals exist for full-rank tall a
        check_grads(lambda x, y: np.linalg.lstsq(x, y)[1], [a, b], order=1)
    rhs = b if len(sb) == 2 else b[:, None]
    np.testing.assert_allclose(gt.linalg.lstsq(a, rhs).numpy(), np.linalg.pinv(a) @ rhs,
                               atol=1e-10)
    check_grads(lambda x, y: gt.linalg.lstsq(x, y, l2_regularizer=0.1), [a, rhs], order=1)
