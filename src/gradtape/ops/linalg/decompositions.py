"""Decompositions over the last two axes (any leading batch dims): ``svd``, ``eigh``,
``eig`` and the functions built on them (``eigvalsh``, ``eigvals``, ``pinv``,
``matrix_rank``, the spectral norms in ``solve.norm``).

Derivative conventions (those of TF and JAX, ``docs/semantics.md``):

- The eigenvector and singular vector rules divide by gaps between eigenvalues
  (``1/(w_j - w_i)``) or singular values. A gap within rounding of zero (``|gap| <= n *
  eps * max|w|``) counts as a degenerate pair and its term is 0, as TF's
  ``_SafeReciprocal`` does; likewise ``1/s`` is 0 for a zero singular value. ``svd``
  splits ``1/(s_j^2 - s_i^2)`` so that only the Hermitian part of ``U^H dA V`` meets
  ``1/(s_j - s_i)``; the rest has ``1/(s_i + s_j)``. The gradient of a gauge-invariant
  function (one that does not depend on the basis chosen inside a degenerate
  eigenspace, like a projector or the polar factor ``u vh``) is then finite and exact.
- Vectors are defined up to a phase (a sign for real inputs): their derivative is the
  one with ``Re(v_i^H dv_i) = 0`` and, for ``eigh``/``svd``, ``Im(v_i^H dv_i) = 0``
  (``svd`` puts a complex phase change on ``u``). Only gauge-invariant functions of
  them have well-defined derivatives.
- ``svd(full_matrices=True)``'s extra columns of ``u`` (rows of ``vh``) span the
  orthogonal complement; their derivative is the one that moves them only into the
  range (``U2^H dU2 = 0``), so ``U2 U2^H`` gets the exact derivative.
- ``eigh`` reads one triangle (``UPLO``; TF's ``eigh`` the lower one): the gradient is
  with respect to that triangle, zero on the other, real on the diagonal.
- ``eig`` always returns complex eigenvalues and unit-norm eigenvectors (TF's rule; NumPy
  returns real arrays when every eigenvalue is real, which no static dtype can follow);
  a real input gets a real gradient (the real part).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...ir.nodes import Aval
from .. import arrange as _arrange
from .. import elementwise as _ew
from .. import index as _index
from .. import reduce as _reduce
from .. import shape as _shape
from .. import stacking as _stacking
from ..numpy_dispatch import implements
from ..registry import Primitive, bind, operand, per_primitive
from .products import _mH, _mm, diagonal_p, diagonal_scatter_p
from .solve import LinAlgError, _result_dtype, _square, solve

__all__ = ["svd", "eigh", "eigvalsh", "eig", "eigvals", "qr", "pinv", "matrix_rank", "lstsq",
           "singular_values"]


# --- helpers on stacks of matrices -------------------------------------------------------

def _real_dtype(dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def _is_complex(x) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def _col(v):
    """A stack of vectors (..., k) as columns (..., k, 1): multiplying scales rows."""
    return _shape.reshape(v, tuple(v.shape) + (1,))


def _row(v):
    """A stack of vectors (..., k) as rows (..., 1, k): multiplying scales columns."""
    return _shape.reshape(v, tuple(v.shape[:-1]) + (1, v.shape[-1]))


def _diag_part(x):
    nd = len(x.shape)
    return bind(diagonal_p, x, offset=0, axis1=nd - 2, axis2=nd - 1)


def _diag_matrix(v):
    nd = len(v.shape)
    return bind(diagonal_scatter_p, v, offset=0, axis1=nd - 1, axis2=nd,
                shape=tuple(v.shape) + (v.shape[-1],))


def _columns(x, start: int, stop: int | None = None):
    return _index.getitem(x, (Ellipsis, slice(None), slice(start, stop)))


def _rows(x, start: int, stop: int | None = None):
    return _index.getitem(x, (Ellipsis, slice(start, stop), slice(None)))


def _tolerance(magnitudes, n: int):
    """The size below which a gap between spectrum values is rounding: ``n * eps *
    max|w|`` per matrix, shaped (..., 1, 1) to compare with a (..., n, n) stack."""
    eps = float(np.finfo(magnitudes.dtype).eps) * max(n, 1)
    top = _reduce.max(magnitudes, -1, True)
    return _col(top) * eps


def _safe_reciprocal(x, magnitude, tol):
    """``1/x``, and 0 where ``magnitude <= tol`` (a degenerate gap or a zero singular
    value). The double ``where`` keeps every derivative finite (no ``inf * 0``)."""
    degenerate = _ew.less_equal(magnitude, tol)
    safe = _ew.where(degenerate, _ew.ones_like(x), x)
    return _ew.where(degenerate, _ew.zeros_like(x), _ew.reciprocal(safe))


def _inverse_gaps(w):
    """``F[..., i, j] = 1 / (w_j - w_i)``, 0 on the diagonal and for degenerate pairs."""
    gaps = _row(w) - _col(w)
    return _safe_reciprocal(gaps, _ew.abs(gaps), _tolerance(_ew.abs(w), w.shape[-1]))


def _inverse_sums(s):
    """``H[..., i, j] = 1 / (s_i + s_j)`` off the diagonal (0 where both are zero)."""
    n = s.shape[-1]
    sums = _row(s) + _col(s)
    inverse = _safe_reciprocal(sums, sums, _tolerance(s, n))
    return inverse - _diag_matrix(_diag_part(inverse))


def _svd_gap_terms(s):
    """``(G + H, G - H)`` with ``G = 1/(s_j - s_i)`` and ``H = 1/(s_i + s_j)``:
    ``1/(s_j^2 - s_i^2)`` split so that only the Hermitian part of ``U^H dA V`` meets
    the gap. The anti-Hermitian part keeps ``1/(s_i + s_j)``, finite at repeated singular
    values (the polar factor ``u vh`` has an exact derivative there)."""
    g = _inverse_gaps(s)
    h = _inverse_sums(s)
    return g + h, g - h


def _leading(prim):
    """The op maps over leading dims: the batch axis is one more of them."""
    return lambda size, args, batched, **params: bind(prim, args[0], **params)


# --- svd -----------------------------------------------------------------------------------

def _svd_impl(a, full_matrices):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def _svd_shape(a, full_matrices):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    dtype = _result_dtype(a.dtype)
    return [Aval(batch + (m, m if full_matrices else k), dtype),
            Aval(batch + (k,), _real_dtype(dtype)),
            Aval(batch + (n if full_matrices else k, n), dtype)]


def _svd_parts(u, vh, k: int, full_matrices: bool):
    """The reduced ``U`` and ``V`` (= ``vh^H``), and the extra full-matrix parts."""
    if not full_matrices:
        return u, _mH(vh), None, None
    m, n = u.shape[-1], vh.shape[-2]
    u2 = _columns(u, k) if m > k else None
    vh2 = _rows(vh, k) if n > k else None
    return _columns(u, 0, k), _mH(_rows(vh, 0, k)), u2, vh2


def _singular_inverses(s):
    """``1/s``, 0 for singular values within rounding of zero."""
    tol = _shape.reshape(_tolerance(s, s.shape[-1]), tuple(s.shape[:-1]) + (1,))
    return _safe_reciprocal(s, s, tol)


def _svd_vjp(g, y, a, full_matrices):
    u, s, vh = y
    gu, gs, gvh = g
    m, n = a.shape[-2:]
    k = min(m, n)
    u1, v1, u2, vh2 = _svd_parts(u, vh, k, full_matrices)
    gu1, gv1, gu2, gvh2 = _svd_parts(gu, gvh, k, full_matrices)
    u_terms, v_terms = _svd_gap_terms(s)
    s_inv = _singular_inverses(s)
    j = _mm(_mH(u1), gu1)
    kk = _mm(_mH(v1), gv1)
    inner = (u_terms * (j - _mH(j)) + v_terms * (kk - _mH(kk))) * 0.5 + _diag_matrix(gs)
    if _is_complex(u):  # the phase of u_i: i Im(u_i^H gu_i) / s_i
        inner = inner + _diag_matrix(_ew.cast(_ew.imag(_diag_part(j)) * s_inv, u.dtype)
                                     * 1j)
    left = _mm(u1, inner)
    if m > k:  # gu's part outside U's span
        left = left + (gu1 - _mm(u1, j)) * _row(s_inv)
        if u2 is not None:
            left = left - _mm(_mm(u2, _mH(gu2)), u1) * _row(s_inv)
    grad = _mm(left, _mH(v1))
    if n > k:  # gv's part outside V's span
        outside = _mH(gv1) - _mm(_mH(kk), _mH(v1))
        if vh2 is not None:
            outside = outside - _mm(_mm(_mH(v1), _mH(gvh2)), vh2)
        grad = grad + _mm(u1, _col(s_inv) * outside)
    return (_ew.real(grad) if not _is_complex(a) and _is_complex(grad) else grad,)


def _svd_jvp(ts, y, a, full_matrices):
    u, s, vh = y
    da = ts[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    u1, v1, u2, vh2 = _svd_parts(u, vh, k, full_matrices)
    u_terms, v_terms = _svd_gap_terms(s)
    s_inv = _singular_inverses(s)
    da_v = _mm(da, v1)
    dp = _mm(_mH(u1), da_v)
    ds = _ew.real(_diag_part(dp))
    # F * (dP S + S dP^H) with F = 1/(s_j^2 - s_i^2), written as G * herm + H * anti
    herm = (dp + _mH(dp)) * 0.5
    anti = (dp - _mH(dp)) * 0.5
    du_inner = (u_terms * (herm + anti) + v_terms * (herm - anti)) * 0.5
    if _is_complex(dp):  # the phase change goes to u: i Im(dP_ii) / s_i
        du_inner = du_inner + _diag_matrix(
            _ew.cast(_ew.imag(_diag_part(dp)) * s_inv, dp.dtype) * 1j)
    du = _mm(u1, du_inner)
    dv = _mm(v1, (u_terms * (herm - anti) + v_terms * (herm + anti)) * 0.5)
    if m > k:
        du = du + (da_v - _mm(u1, dp)) * _row(s_inv)
        if u2 is not None:  # U2 moves only into U1's span
            du2 = -_mm(u1, _col(s_inv) * _mH(_mm(_mH(u2), da_v)))
            du = _stacking.concatenate([du, du2], -1)
    if n > k:
        dah_u = _mm(_mH(da), u1)
        dv = dv + (dah_u - _mm(v1, _mH(dp))) * _row(s_inv)
        if vh2 is not None:  # V2 moves only into V1's span
            dv2 = -_mm(v1, _col(s_inv) * _mm(_mH(dah_u), _mH(vh2)))
            dv = _stacking.concatenate([dv, dv2], -1)
    return du, ds, _mH(dv)


svd_p = Primitive(
    "svd", _svd_impl, multiple_results=True, vjp=_svd_vjp, jvp=_svd_jvp,
    shape_rule=_svd_shape, batch=per_primitive(_leading),
    template="linalg.svd({0}, full_matrices={full_matrices})",
)

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _matrices(a, name: str):
    a = operand(a)
    if len(a.shape) < 2:
        raise LinAlgError(f"{name}: {len(a.shape)}-dimensional array given; the array "
                          "must be at least two-dimensional.")
    if not np.issubdtype(a.dtype, np.inexact):
        a = _ew.cast(a, _result_dtype(a.dtype))
    return a


def singular_values(a):
    """The singular values of the matrices in the last two axes, largest first. Their
    gradient ``u diag(g) vh`` is defined also where singular values repeat."""
    a = _matrices(a, "svd")
    return bind(svd_p, a, full_matrices=False)[1]


def _svd_np(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd``: ``(U, S, Vh)`` with ``a = U diag(S) Vh``."""
    del hermitian  # NumPy's shortcut for Hermitian input: same values
    a = _matrices(a, "svd")
    if not compute_uv:
        return singular_values(a)
    return SVDResult(*bind(svd_p, a, full_matrices=bool(full_matrices)))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """TF's ``tf.linalg.svd``: ``s, u, v`` with ``tensor = u diag(s) v^H`` (``v``, not
    NumPy's ``vh``); only ``s`` when ``compute_uv=False``."""
    del name
    tensor = _matrices(tensor, "svd")
    if not compute_uv:
        return singular_values(tensor)
    u, s, vh = bind(svd_p, tensor, full_matrices=bool(full_matrices))
    return s, u, _mH(vh)


# --- eigh ----------------------------------------------------------------------------------

def _eigh_impl(a, UPLO):  # NumPy's name
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v


def _eigh_shape(a, UPLO):
    dtype = _result_dtype(a.dtype)
    return [Aval(tuple(a.shape[:-1]), _real_dtype(dtype)), Aval(tuple(a.shape), dtype)]


def _halved_triangle(x, UPLO):
    """The triangle eigh reads, with its diagonal halved: ``t + t^H`` is the Hermitian
    matrix eigh sees (real diagonal), and this map is its own adjoint."""
    tri = _arrange.tril if UPLO == "L" else _arrange.triu
    strict = -1 if UPLO == "L" else 1
    return (tri(x) + tri(x, strict)) * 0.5


def _eigh_vjp(g, y, a, UPLO):
    w, v = y
    gw, gv = g
    inner = _inverse_gaps(w) * _mm(_mH(v), gv) + _diag_matrix(_ew.cast(gw, v.dtype))
    full = _mm(_mm(v, inner), _mH(v))
    return (_halved_triangle(full + _mH(full), UPLO),)


def _eigh_jvp(ts, y, a, UPLO):
    w, v = y
    half = _halved_triangle(ts[0], UPLO)
    p = _mm(_mm(_mH(v), half + _mH(half)), v)
    return _ew.real(_diag_part(p)), _mm(v, _inverse_gaps(w) * p)


eigh_p = Primitive(
    "eigh", _eigh_impl, multiple_results=True, vjp=_eigh_vjp, jvp=_eigh_jvp,
    shape_rule=_eigh_shape, batch=per_primitive(_leading),
    template="linalg.eigh({0}, UPLO={UPLO})",
)

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _check_uplo(UPLO) -> str:
    if UPLO not in ("L", "U"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {UPLO!r}.")
    return UPLO


def _eigh_np(a, UPLO="L"):
    """``np.linalg.eigh``: ascending eigenvalues and orthonormal eigenvectors (columns)
    of the Hermitian matrices whose ``UPLO`` triangle ``a`` holds."""
    return EighResult(*bind(eigh_p, _square(_matrices(a, "eigh"), "eigh"),
                            UPLO=_check_uplo(UPLO)))


def _eigvalsh_np(a, UPLO="L"):
    return _eigh_np(a, UPLO)[0]


def eigh(tensor, name=None):
    """TF's ``tf.linalg.eigh``: ``e, v`` of self-adjoint matrices (lower triangle read)."""
    del name
    return tuple(_eigh_np(tensor, "L"))


def eigvalsh(tensor, name=None):
    """TF's ``tf.linalg.eigvalsh``: the ascending eigenvalues only."""
    del name
    return _eigh_np(tensor, "L")[0]


# --- eig -----------------------------------------------------------------------------------

def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(_result_dtype(dtype), np.complex64)


def _eig_impl(a):
    w, v = np.linalg.eig(a)
    dtype = _complex_dtype(np.asarray(a).dtype)
    return w.astype(dtype, copy=False), v.astype(dtype, copy=False)


def _eig_shape(a):
    dtype = _complex_dtype(a.dtype)
    return [Aval(tuple(a.shape[:-1]), dtype), Aval(tuple(a.shape), dtype)]


def _eig_vjp(g, y, a):
    w, v = y
    gw, gv = g
    vh_gv = _mm(_mH(v), gv)
    # The unit norm of each v_i: take out gv's part along Re(v_i^H dv_i).
    vh_gv = vh_gv - _mm(_mm(_mH(v), v), _diag_matrix(_ew.cast(_ew.real(_diag_part(vh_gv)),
                                                               v.dtype)))
    inner = _ew.conj(_inverse_gaps(w)) * vh_gv + _diag_matrix(gw)
    grad = _mm(solve(_mH(v), inner), _mH(v))
    return (grad if _is_complex(a) else _ew.real(grad),)


def _eig_jvp(ts, y, a):
    w, v = y
    da = ts[0]
    q = solve(v, _mm(da, v))
    dv = _mm(v, _inverse_gaps(w) * q)
    norm_change = _ew.real(_reduce.sum(_ew.conj(v) * dv, -2))
    dv = dv - v * _row(_ew.cast(norm_change, v.dtype))
    return _diag_part(q), dv


eig_p = Primitive(
    "eig", _eig_impl, multiple_results=True, vjp=_eig_vjp, jvp=_eig_jvp,
    shape_rule=_eig_shape, batch=per_primitive(_leading),
)

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _eig_np(a):
    """``np.linalg.eig``: eigenvalues and unit-norm eigenvectors (columns), always
    complex."""
    return EigResult(*bind(eig_p, _square(_matrices(a, "eig"), "eig")))


def _eigvals_np(a):
    return _eig_np(a)[0]


def eig(tensor, name=None):
    """TF's ``tf.linalg.eig``: complex ``e, v``."""
    del name
    return tuple(_eig_np(tensor))


def eigvals(tensor, name=None):
    """TF's ``tf.linalg.eigvals``: the complex eigenvalues only."""
    del name
    return _eig_np(tensor)[0]


# --- qr --------------------------------------------------------------------------------------

def _qr_impl(a, full):
    q, r = np.linalg.qr(a, mode="complete" if full else "reduced")
    return q, r


def _qr_shape(a, full):
    m, n = a.shape[-2:]
    k = m if full else min(m, n)
    batch = tuple(a.shape[:-2])
    dtype = _result_dtype(a.dtype)
    return [Aval(batch + (m, k), dtype), Aval(batch + (k, n), dtype)]


def _check_qr_differentiable(a, full: bool) -> None:
    m, n = a.shape[-2:]
    if full and m > n:  # TF raises too: Q's extra columns are any basis of a complement
        raise NotImplementedError(
            "qr: no derivative for full_matrices=True (mode='complete') when rows > "
            "columns; use the reduced decomposition.")


def _times_inverse_adjoint(x, r):
    """``x R^-H`` for a square upper triangular ``r``."""
    return _mH(solve(r, _mH(x)))


def _qr_omega(c):
    """``Q^H dQ`` from ``C = Q^H dA R^-1``: anti-Hermitian, its strictly lower part is
    ``C``'s (``dR R^-1`` is upper triangular), its diagonal imaginary (R's is real)."""
    lower = _arrange.tril(c, -1)
    omega = lower - _mH(lower)
    if _is_complex(c):
        omega = omega + _diag_matrix(_ew.cast(_ew.imag(_diag_part(c)), c.dtype) * 1j)
    return omega


def _qr_omega_adjoint(n):
    """The adjoint of ``_qr_omega``."""
    lower = _arrange.tril(n - _mH(n), -1)
    if _is_complex(n):
        lower = lower + _diag_matrix(_ew.cast(_ew.imag(_diag_part(n)), n.dtype) * 1j)
    return lower


def _qr_square_vjp(q, r, gq, gr):
    """The cotangent of ``a`` (rows >= columns, ``r`` square) from those of ``q``, ``r``."""
    n = _mm(_mH(q), gq) - _mm(gr, _mH(r))
    return _times_inverse_adjoint(gq + _mm(q, _qr_omega_adjoint(n) - n), r)


def _qr_square_jvp(q, r, da):
    e = _times_inverse_adjoint(da, _mH(r))  # dA R^-1
    c = _mm(_mH(q), e)
    omega = _qr_omega(c)
    return _mm(q, omega) + e - _mm(q, c), _mm(c - omega, r)


def _qr_vjp(g, y, a, full):
    _check_qr_differentiable(a, full)
    (q, r), (gq, gr) = y, g
    m, n = a.shape[-2:]
    if m >= n:
        return (_qr_square_vjp(q, r, gq, gr),)
    # wide: a = [x | rest] with x = q r1 and r2 = q^H rest
    rest, gr2 = _columns(a, m), _columns(gr, m)
    gx = _qr_square_vjp(q, _columns(r, 0, m), gq + _mm(rest, _mH(gr2)), _columns(gr, 0, m))
    return (_stacking.concatenate([gx, _mm(q, gr2)], -1),)


def _qr_jvp(ts, y, a, full):
    _check_qr_differentiable(a, full)
    (q, r), da = y, ts[0]
    m, n = a.shape[-2:]
    if m >= n:
        return _qr_square_jvp(q, r, da)
    dq, dr1 = _qr_square_jvp(q, _columns(r, 0, m), _columns(da, 0, m))
    dr2 = _mm(_mH(dq), _columns(a, m)) + _mm(_mH(q), _columns(da, m))
    return dq, _stacking.concatenate([dr1, dr2], -1)


qr_p = Primitive(
    "qr", _qr_impl, multiple_results=True, vjp=_qr_vjp, jvp=_qr_jvp,
    shape_rule=_qr_shape, batch=per_primitive(_leading),
)

QRResult = namedtuple("QRResult", ["Q", "R"])


def _qr_np(a, mode="reduced"):
    """``np.linalg.qr``: ``mode`` 'reduced', 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode {mode!r} is not supported on tensors; use 'reduced', "
                         "'complete' or 'r'.")
    q, r = bind(qr_p, _matrices(a, "qr"), full=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def qr(input, full_matrices=False, name=None):  # TF's name
    """TF's ``tf.linalg.qr``: ``q, r`` with orthonormal ``q`` and upper triangular
    ``r``."""
    del name
    return tuple(bind(qr_p, _matrices(input, "qr"), full=bool(full_matrices)))


# --- pinv, matrix_rank ---------------------------------------------------------------------

def _pinv_impl(a, rcond):
    return np.linalg.pinv(a, rcond=rcond)


def _pinv_vjp(g, p, a, rcond):
    # The fixed-rank derivative (Golub & Pereyra): dP = -P dA P + P P^H dA^H (I - A P)
    # + (I - P A) dA^H P^H P, transposed term by term.
    ph = _mH(p)
    gh = _mH(g)
    a_p = _mm(a, p)
    p_a = _mm(p, a)
    grad = (-_mm(_mm(ph, g), ph)
            + _mm(gh - _mm(a_p, gh), _mm(p, ph))
            + _mm(_mm(ph, p), gh - _mm(gh, p_a)))
    return (grad,)


def _pinv_jvp(ts, p, a, rcond):
    da = ts[0]
    dah = _mH(da)
    ph = _mH(p)
    return (-_mm(_mm(p, da), p)
            + _mm(_mm(p, ph), dah - _mm(dah, _mm(a, p)))
            + _mm(dah - _mm(_mm(p, a), dah), _mm(ph, p)))


def _pinv_shape(a, rcond):
    shape = tuple(a.shape)
    return Aval(shape[:-2] + (shape[-1], shape[-2]), _result_dtype(a.dtype))


pinv_p = Primitive(
    "pinv", _pinv_impl, vjp=_pinv_vjp, jvp=_pinv_jvp, shape_rule=_pinv_shape,
    batch=per_primitive(_leading), template="linalg.pinv({0}, rcond={rcond})",
)

_UNSET = object()


def _pinv_np(a, rcond=None, hermitian=False, *, rtol=_UNSET):
    """``np.linalg.pinv``: singular values at most ``rcond * max(s)`` count as zero
    (NumPy's defaults). The gradient is the fixed-rank one."""
    del hermitian  # NumPy's shortcut for Hermitian input: same values
    a = _matrices(a, "pinv")
    if rcond is None:
        if rtol is _UNSET:
            rcond = 1e-15
        elif rtol is None:
            rcond = _default_rcond(a.shape[-2], a.shape[-1], a.dtype)
        else:
            rcond = rtol
    return bind(pinv_p, a, rcond=float(rcond))


def _default_rcond(m: int, n: int, dtype) -> float:
    return float(np.finfo(dtype).eps) * max(m, n)


def pinv(a, rcond=None, validate_args=False, name=None):
    """TF's ``tf.linalg.pinv``: the default ``rcond`` is ``10 * max(m, n) * eps``."""
    del validate_args, name
    a = _matrices(a, "pinv")
    if rcond is None:
        rcond = 10.0 * _default_rcond(a.shape[-2], a.shape[-1], a.dtype)
    return bind(pinv_p, a, rcond=float(rcond))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # NumPy's name
    """``np.linalg.matrix_rank``: how many singular values exceed the tolerance (an
    integer array computed from the values; no gradient)."""
    value = A.numpy() if hasattr(A, "numpy") else np.asarray(A)
    if rtol is None:  # NumPy 1.26's matrix_rank has no rtol
        return np.linalg.matrix_rank(value, tol=tol, hermitian=hermitian)
    return np.linalg.matrix_rank(value, tol=tol, hermitian=hermitian, rtol=rtol)


# --- lstsq: composites -------------------------------------------------------------------

def _concrete(x, name: str) -> np.ndarray:
    value = getattr(x, "_value", None)
    if value is None:
        raise TypeError(f"{name}: the rank and residuals depend on the values; call it on "
                        "tensors, not inside @gt.function (use gt.linalg.lstsq there).")
    return np.asarray(value)


def _lstsq_np(a, b, rcond=None):
    """``np.linalg.lstsq``: ``(x, residuals, rank, s)``. ``x = pinv(a) @ b``, the
    residuals and ``s`` are differentiable (fixed rank); ``rank`` is an integer."""
    a = _matrices(a, "lstsq")
    b = operand(b)
    m, n = a.shape[-2:]
    if len(a.shape) != 2 or len(b.shape) not in (1, 2) or b.shape[0] != m:
        raise LinAlgError(f"lstsq: a must be 2-d and b's first axis must match its rows; "
                          f"got shapes {tuple(a.shape)} and {tuple(b.shape)}.")
    if rcond is None:
        rcond = _default_rcond(m, n, a.dtype)
    vector = len(b.shape) == 1
    rhs = _col(b) if vector else b
    x = _mm(bind(pinv_p, a, rcond=float(rcond)), rhs)
    s_values = np.linalg.svd(_concrete(a, "lstsq"), compute_uv=False)
    rank = int(np.sum(s_values > float(rcond) * np.max(s_values, initial=0.0)))
    if rank == n and m > n:
        residual = rhs - _mm(a, x)
        residuals = _reduce.sum(_ew.real(residual * _ew.conj(residual)), 0)
    else:
        residuals = np.empty((0,), _real_dtype(a.dtype))
    if vector:
        x = _shape.reshape(x, (n,))
    return x, residuals, rank, singular_values(a)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """TF's ``tf.linalg.lstsq`` (its ``fast`` path): the solution of the regularized normal
    equations, ``(A^H A + l2 I)^-1 A^H rhs`` (rows >= columns) or ``A^H (A A^H + l2
    I)^-1 rhs``; batch dims allowed."""
    del fast, name
    a = _matrices(matrix, "lstsq")
    rhs = operand(rhs)
    m, n = a.shape[-2:]
    ah = _mH(a)
    if m >= n:
        gram = _mm(ah, a)
        return solve(gram + _diag_matrix(_ew.zeros_like(_diag_part(gram)) + l2_regularizer),
                     _mm(ah, rhs))
    gram = _mm(a, ah)
    return _mm(ah, solve(gram + _diag_matrix(_ew.zeros_like(_diag_part(gram)) + l2_regularizer),
                         rhs))


implements(np.linalg.svd)(_svd_np)
implements(np.linalg.eigh)(_eigh_np)
implements(np.linalg.eigvalsh)(_eigvalsh_np)
implements(np.linalg.eig)(_eig_np)
implements(np.linalg.eigvals)(_eigvals_np)
implements(np.linalg.pinv)(_pinv_np)
implements(np.linalg.qr)(_qr_np)
implements(np.linalg.lstsq)(_lstsq_np)
implements(np.linalg.matrix_rank)(matrix_rank)
if hasattr(np.linalg, "svdvals"):
    implements(np.linalg.svdvals)(singular_values)
