"""``scipy.linalg``'s matrix functions on tensors: ``solve_sylvester``, ``sqrtm`` and
``expm`` are primitives whose impls call SciPy (imported when first run: SciPy is an
optional extra); ``solve_triangular``, ``solve_banded`` and ``cholesky`` are composites
of gradtape ops. ``psd_pseudo`` (pseudo-inverse and pseudo-determinant of a PSD matrix,
NumPy only) serves ``multivariate_normal(allow_singular=True)``.

Every primitive maps over leading batch dims (the impl loops over them in NumPy), so
its batching rule is one equation.

Rules:
- ``X = solve_sylvester(A, B, Q)`` (``A X + X B = Q``): ``Z`` solving the adjoint
  equation ``A^H Z + Z B^H = G`` gives ``gQ = Z``, ``gA = -Z X^H``, ``gB = -X^H Z``.
- ``Y = sqrtm(A)``: ``Y dY + dY Y = dA``, a Sylvester equation in ``Y``.
- ``expm``: the derivative is the upper right block of ``expm([[A, dA], [0, A]])``
  (the VJP uses ``A^H`` and the cotangent).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ..ir.nodes import Aval
from . import arrange as _arrange
from . import elementwise as _ew
from . import index as _index
from . import reduce as _reduce
from . import shape as _shape
from . import stacking as _stacking
from .linalg.products import _batch_shape, _mH, _mm
from .linalg.solve import _result_dtype, _square, solve
from .registry import Primitive, bind, operand, per_primitive

__all__: list[str] = []


def require_scipy(module: str, what: str) -> Any:
    """``scipy.<module>``, or an ImportError saying which extra installs it."""
    try:
        return importlib.import_module(f"scipy.{module}")
    except ImportError as error:
        raise ImportError(f"{what} needs SciPy: install it with `pip install scipy` (or, "
                          "in gradtape's clone, `pip install -e '.[scipy]'`).") from error


def _per_matrix(fn, *arrays):
    """``fn`` applied to the matrices in the last two axes of ``arrays`` (batch dims
    broadcast), stacked back."""
    arrays = [np.asarray(a) for a in arrays]
    batch = _batch_shape(*(a.shape for a in arrays))
    if not batch:
        return fn(*arrays)
    arrays = [np.broadcast_to(a, batch + a.shape[-2:]) for a in arrays]
    outs = [fn(*(a[i] for a in arrays)) for i in np.ndindex(*batch)]
    return np.stack(outs).reshape(batch + outs[0].shape)


def _broadcast_batch_rule(prim):
    """Batched inputs keep their axis in front; unbatched ones get a size-1 axis (the
    impls broadcast batch dims)."""
    def rule(size, args, batched):
        lined = [a if f else _shape.reshape(a, (1,) + tuple(a.shape))
                 for a, f in zip(args, batched)]
        return bind(prim, *lined)

    return rule


def _real_like(grad, x):
    """TF's convention: the cotangent of a real input is real."""
    if np.issubdtype(grad.dtype, np.complexfloating) and \
            not np.issubdtype(x.dtype, np.complexfloating):
        return _ew.real(grad)
    return grad


# --- solve_sylvester ---------------------------------------------------------------------

def _sylvester_impl(a, b, q):
    linalg = require_scipy("linalg", "solve_sylvester")
    dtype = _result_dtype(np.result_type(a, b, q))
    return _per_matrix(linalg.solve_sylvester, a, b, q).astype(dtype, copy=False)


def _sylvester_shape(a, b, q):
    return Aval(_batch_shape(a.shape, b.shape, q.shape) + tuple(q.shape[-2:]),
                _result_dtype(np.result_type(a.dtype, b.dtype, q.dtype)))


def _sylvester_vjp(g, x, a, b, q):
    z = _sylvester(_mH(a), _mH(b), g)
    xh = _mH(x)
    return tuple(_shape.unbroadcast(_real_like(c, v), v.shape)
                 for c, v in ((-_mm(z, xh), a), (-_mm(xh, z), b), (z, q)))


def _sylvester_jvp(ts, x, a, b, q):
    ta, tb, tq = ts
    parts = [p for p in (None if tq is None else tq,
                         None if ta is None else -_mm(ta, x),
                         None if tb is None else -_mm(x, tb)) if p is not None]
    rhs = parts[0]
    for p in parts[1:]:
        rhs = rhs + p
    return _sylvester(a, b, rhs)


solve_sylvester_p = Primitive(
    "solve_sylvester", _sylvester_impl, vjp=_sylvester_vjp, jvp=_sylvester_jvp,
    shape_rule=_sylvester_shape, batch=per_primitive(_broadcast_batch_rule),
)


def _sylvester(a, b, q):
    return bind(solve_sylvester_p, a, b, q)


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """``X`` with ``a @ X + X @ b = q`` (``scipy.linalg.solve_sylvester``)."""
    a, b, q = _square(a, "solve_sylvester"), _square(b, "solve_sylvester"), operand(q)
    if len(q.shape) < 2 or q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ValueError(f"solve_sylvester: q of shape {tuple(q.shape)} does not fit a of "
                         f"shape {tuple(a.shape)} and b of shape {tuple(b.shape)}.")
    return _sylvester(a, b, q)


# --- sqrtm --------------------------------------------------------------------------------

def _sqrtm_one(a):
    linalg = require_scipy("linalg", "sqrtm")
    root = linalg.sqrtm(a)
    if isinstance(root, tuple):  # older SciPy: (sqrtm, errest) with disp=False
        root = root[0]
    if np.iscomplexobj(root) and not np.iscomplexobj(a):
        if np.any(np.abs(root.imag) > 1e-8 * max(1.0, float(np.abs(root).max()))):
            raise ValueError("sqrtm: this real matrix has no real square root (it has "
                             "negative eigenvalues); pass it as a complex tensor to get "
                             "the complex principal root.")
        root = root.real
    return root


def _sqrtm_impl(a):
    return _per_matrix(_sqrtm_one, a).astype(_result_dtype(np.asarray(a).dtype), copy=False)


sqrtm_p = Primitive(
    "sqrtm", _sqrtm_impl,
    vjp=lambda g, y, a: (_real_like(_sylvester(_mH(y), _mH(y), g), a),),
    jvp=lambda ts, y, a: _sylvester(y, y, ts[0]),
    shape_rule=lambda a: Aval(tuple(a.shape), _result_dtype(a.dtype)),
    batch=per_primitive(_broadcast_batch_rule),
)


def sqrtm(a: Any, disp: bool = True, blocksize: int = 64) -> Any:
    """The principal square root of square matrices (``scipy.linalg.sqrtm``). A real
    matrix needs a real root (no negative eigenvalues); else pass it as complex."""
    del blocksize
    if not disp:
        raise TypeError("sqrtm(disp=False) returns an error estimate gradtape does not "
                        "compute; call sqrtm(a).")
    return bind(sqrtm_p, _square(a, "sqrtm"))


# --- expm ---------------------------------------------------------------------------------

def _expm_impl(a):
    linalg = require_scipy("linalg", "expm")
    return np.asarray(linalg.expm(a)).astype(_result_dtype(np.asarray(a).dtype), copy=False)


def _upper_right_of_block_expm(a, e):
    """``expm([[a, e], [0, a]])[:n, n:]``: the derivative of expm at ``a`` along ``e``."""
    n = a.shape[-1]
    dtype = np.result_type(a.dtype, e.dtype)  # a complex cotangent makes a complex block
    a, e = (x if x.dtype == dtype else _ew.cast(x, dtype) for x in (a, e))
    top = _stacking.concatenate([a, e], axis=-1)
    bottom = _stacking.concatenate([_ew.zeros_like(a), a], axis=-1)
    block = bind(expm_p, _stacking.concatenate([top, bottom], axis=-2))
    rows = len(block.shape) - 2
    index = (_index._FULL,) * rows + (("slice", 0, n, None), ("slice", n, None, None))
    return bind(_index.getitem_p, block, index=index)


expm_p = Primitive(
    "expm", _expm_impl,
    vjp=lambda g, y, a: (_real_like(_upper_right_of_block_expm(_mH(a), g), a),),
    jvp=lambda ts, y, a: _upper_right_of_block_expm(a, ts[0]),
    shape_rule=lambda a: Aval(tuple(a.shape), _result_dtype(a.dtype)),
    batch=per_primitive(_broadcast_batch_rule),
)


def expm(a: Any) -> Any:
    """The matrix exponential of square matrices (``scipy.linalg.expm``)."""
    return bind(expm_p, _square(a, "expm"))


# --- composites: solve_triangular, cholesky ----------------------------------------------

_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """``x`` with ``a @ x = b`` reading only ``a``'s lower (or upper) triangle, as
    ``scipy.linalg.solve_triangular`` (``trans``: 0/'N', 1/'T' or 2/'C' solves with
    ``a``, ``a.T`` or ``a^H``); the other triangle gets no gradient."""
    del overwrite_b, check_finite
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', "
                         f"got {trans!r}.")
    a = _square(a, "solve_triangular")
    b = operand(b)
    if len(a.shape) != 2:
        raise ValueError("solve_triangular expects a 2-D matrix a.")
    if b.shape[0] != a.shape[0]:
        raise ValueError(f"solve_triangular: shapes of a {tuple(a.shape)} and b "
                         f"{tuple(b.shape)} are incompatible.")
    tri = _arrange.tril(a) if lower else _arrange.triu(a)
    if unit_diagonal:  # the diagonal is taken as ones: it is not read
        tri = tri - _arrange.tril(_arrange.triu(tri)) + np.eye(a.shape[0], dtype=a.dtype)
    kind = _TRANS[trans]
    if kind:
        tri = _shape.transpose(tri, (1, 0))
        if kind == 2:
            tri = _ew.conj(tri)
    return solve(tri, b)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """``scipy.linalg.cholesky``: the UPPER factor by default (``lower=True``: lower)."""
    del overwrite_a, check_finite
    from .linalg.solve import cholesky as _cholesky

    return _cholesky(a, upper=not lower)



# --- pseudo-inverse and pseudo-determinant of a PSD matrix (multivariate_normal) ------------

def _psd_pseudo_impl(a):
    """``(pinv, log pseudo-det, rank, cutoff)`` of ``(a + a^T) / 2`` from its eigenvalues,
    with SciPy's ``_PSD`` cutoff (``1e6 * eps * max |eigenvalue|`` in float64)."""
    a = np.asarray(a, np.result_type(a, np.float64))
    s, u = np.linalg.eigh((a + np.swapaxes(a, -1, -2)) / 2)
    factor = 1e3 if s.dtype == np.float32 else 1e6
    cutoff = factor * np.finfo(s.dtype).eps * np.abs(s).max(axis=-1)
    if np.any(s.min(axis=-1) < -cutoff):
        raise ValueError("the input matrix must be positive semidefinite")
    keep = s > cutoff[..., None]
    inverse = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    pinv = (u * inverse[..., None, :]) @ np.swapaxes(u, -1, -2)
    logpdet = np.sum(np.log(np.where(keep, s, 1.0)), axis=-1)
    return pinv, logpdet, keep.sum(axis=-1).astype(s.dtype), cutoff


def _psd_pseudo_shape(a):
    dtype = np.result_type(a.dtype, np.float64)
    batch = tuple(a.shape[:-2])
    return [Aval(tuple(a.shape), dtype), Aval(batch, dtype), Aval(batch, dtype),
            Aval(batch, dtype)]


def _symmetric(m):
    return (m + _mH(m)) * 0.5


def _psd_pseudo_vjp(g, outs, a):
    """The transpose of ``dP = -P dA P + P P dA^T (I - A P) + (I - P A) dA^T P P`` (the
    pseudo-inverse's differential at constant rank, Golub and Pereyra), plus
    ``d log pdet = tr(P dA)``; symmetrized, as the impl symmetrizes its input."""
    gp, glog = g[0], g[1]
    p = outs[0]
    s = _symmetric(a)
    pp = _mm(p, p)
    gpt = _mH(gp)
    grad = (-_mm(_mm(p, gp), p) + _mm(gpt, pp) - _mm(_mm(s, p), _mm(gpt, pp))
            + _mm(pp, gpt) - _mm(_mm(pp, gpt), _mm(p, s)))
    grad = grad + _trailing_scalar(glog) * p  # d log pdet = tr(P dA)
    return (_symmetric(grad),)


def _trailing_scalar(v):
    return _shape.reshape(v, tuple(v.shape) + (1, 1))


def _psd_pseudo_jvp(ts, outs, a):
    p = outs[0]
    s = _symmetric(a)
    da = _symmetric(ts[0])
    pp = _mm(p, p)
    dp = (-_mm(_mm(p, da), p) + _mm(pp, da) - _mm(_mm(pp, da), _mm(s, p))
          + _mm(da, pp) - _mm(_mm(p, s), _mm(da, pp)))
    dlog = _reduce.sum(_reduce.sum(p * da, -1), -1)
    zeros = _ew.zeros_like(outs[2])
    return dp, dlog, zeros, zeros


psd_pseudo_p = Primitive(
    "psd_pseudo", _psd_pseudo_impl, multiple_results=True,
    vjp=_psd_pseudo_vjp, jvp=_psd_pseudo_jvp, shape_rule=_psd_pseudo_shape,
    batch=lambda size, args, batched: bind(psd_pseudo_p, args[0]),
)


def psd_pseudo(a: Any):
    """``(pinv, log pseudo-determinant, rank, cutoff)`` of a symmetric positive
    semidefinite matrix (rank and cutoff are not differentiable)."""
    return bind(psd_pseudo_p, _square(a, "psd_pseudo"))


def solve_banded(l_and_u: Any, ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """``x`` with ``a @ x = b`` for the banded ``a`` stored as ``ab`` (SciPy's layout:
    ``a[i, j] = ab[u + i - j, j]``); entries of ``ab`` outside the band get no gradient."""
    del overwrite_ab, overwrite_b, check_finite
    lower, upper = (int(n) for n in l_and_u)
    ab, b = operand(ab), operand(b)
    if len(ab.shape) != 2 or ab.shape[0] != lower + upper + 1:
        raise ValueError(f"solve_banded: invalid values for the number of lower and upper "
                         f"diagonals: l+u+1 ({lower + upper + 1}) does not equal "
                         f"ab.shape[0] ({ab.shape[0] if ab.shape else 0}).")
    n = ab.shape[1]
    if b.shape[0] != n:
        raise ValueError(f"solve_banded: shapes of ab {tuple(ab.shape)} and b "
                         f"{tuple(b.shape)} are incompatible.")
    i, j = np.indices((n, n))
    rows = upper + i - j
    in_band = (rows >= 0) & (rows <= lower + upper)
    dense = _index.getitem(ab, (np.clip(rows, 0, lower + upper), j))
    dense = dense * in_band.astype(ab.dtype)  # a constant mask: the band only
    return solve(dense, b)
