"""``np.linalg``'s and ``tf.linalg``'s matrix functions: ``inv``, ``det``, ``slogdet``,
``solve``, ``cholesky`` over the last two axes with any leading batch dims, and ``norm``
(a composite).

Conventions (the same as JAX's):

- ``cholesky`` factors the symmetrized input ``(a + a^H) / 2``, so its gradient is the
  derivative of the function computed (symmetric, as in TF and PyTorch); for a
  symmetric input the result is NumPy's.
- ``norm``'s 2-norm gradient at the zero vector is NaN (0/0), as in JAX and TF.
- ``det``/``inv`` gradients of a singular matrix raise ``LinAlgError`` (TF raises too).
- ``slogdet``'s sign is not differentiable (for complex inputs only ``logabsdet``
  carries a gradient).
"""

from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np

from ...ir.nodes import Aval
from .. import arrange as _arrange
from .. import elementwise as _ew
from .. import reduce as _reduce
from .. import shape as _shape
from ..numpy_dispatch import implements
from ..registry import EVERY_INPUT, Primitive, bind, operand, per_primitive
from .products import (
    _NUMPY2,
    _batch_shape,
    _broadcasting_batch,
    _leading_batch,
    _mH,
    _mm,
    diagonal_p,
)

__all__ = ["norm", "tf_norm"]

LinAlgError = np.linalg.LinAlgError


# --- np.linalg: inv, det, slogdet, solve, cholesky -------------------------------------

@functools.lru_cache(maxsize=64)
def _result_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype np.linalg gives for ``dtype`` (integers -> float64; float32 stays)."""
    return np.linalg.inv(np.eye(1, dtype=dtype)).dtype


def _square(a, name: str):
    a = operand(a)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{name}: the last 2 dimensions of the array must be square, "
                          f"got shape {tuple(a.shape)}.")
    return a


def _trailing(v, nd_extra: int = 2):
    """``v`` with ``nd_extra`` size-1 axes appended (a batch of scalars -> of matrices)."""
    return _shape.reshape(v, tuple(v.shape) + (1,) * nd_extra)


def _trace_last(x):
    return _reduce.sum(bind(diagonal_p, x, offset=0, axis1=len(x.shape) - 2,
                            axis2=len(x.shape) - 1), -1)


inv_p = Primitive(
    "inv", np.linalg.inv,
    vjp=lambda g, y, a: (-_mm(_mm(_mH(y), g), _mH(y)),),
    jvp=lambda ts, y, a: -_mm(_mm(y, ts[0]), y),
    shape_rule=lambda a: Aval(tuple(a.shape), _result_dtype(a.dtype)),
    batch=per_primitive(_leading_batch),
)


def inv(a, adjoint=False, name=None):
    """Inverse of the square matrices in the last two axes (TF's ``adjoint`` inverts
    their conjugate transposes)."""
    del name
    a = _square(a, "inv")
    return bind(inv_p, _mH(a) if adjoint else a)


det_p = Primitive(
    "det", np.linalg.det,
    vjp=lambda g, y, a: (_trailing(g * _ew.conj(y)) * _mH(inv(a)),),
    jvp=lambda ts, y, a: y * _trace_last(_solve(a, ts[0])),
    shape_rule=lambda a: Aval(tuple(a.shape[:-2]), _result_dtype(a.dtype)),
    batch=per_primitive(_leading_batch),
)


def det(a, name=None):
    """Determinant of the square matrices in the last two axes."""
    del name
    return bind(det_p, _square(a, "det"))


def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def _slogdet_shape(a):
    dtype = _result_dtype(a.dtype)
    batch = tuple(a.shape[:-2])
    return [Aval(batch, dtype), Aval(batch, np.empty(0, dtype).real.dtype)]


slogdet_p = Primitive(
    "slogdet", _slogdet_impl, multiple_results=True,
    vjp=lambda g, y, a: (_trailing(g[1]) * _mH(inv(a)),),
    jvp=lambda ts, y, a: (None, _ew.real(_trace_last(_solve(a, ts[0])))),
    shape_rule=_slogdet_shape,
    batch=per_primitive(_leading_batch),
)

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def slogdet(a, name=None):
    """``(sign, logabsdet)`` of the determinants, without overflow. Only ``logabsdet``
    is differentiable."""
    del name
    return SlogdetResult(*bind(slogdet_p, _square(a, "slogdet")))


def logdet(matrix, name=None):
    """``log(det(matrix))`` of Hermitian positive definite matrices, via Cholesky
    (TF's ``tf.linalg.logdet``)."""
    del name
    chol = cholesky(matrix)
    diag = bind(diagonal_p, chol, offset=0, axis1=len(chol.shape) - 2,
                axis2=len(chol.shape) - 1)
    return _ew.real(_reduce.sum(_ew.log(diag), -1)) * 2.0


def _solve_impl(a, b):
    batch = _batch_shape(np.shape(a), np.shape(b))
    a = np.broadcast_to(a, batch + np.shape(a)[-2:])
    b = np.broadcast_to(b, batch + np.shape(b)[-2:])
    return np.linalg.solve(a, b)  # equal ranks: b is a stack of matrices in any NumPy


def _solve_shape(a, b):
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: shapes {a.shape} and {b.shape} do not match.")
    return Aval(_batch_shape(a.shape, b.shape) + tuple(b.shape[-2:]),
                _result_dtype(np.result_type(a.dtype, b.dtype)))


def _solve_vjp(g, x, a, b):
    gb = _solve(_mH(a), g)
    return (_shape.unbroadcast(-_mm(gb, _mH(x)), a.shape), _shape.unbroadcast(gb, b.shape))


def _solve_jvp(ts, x, a, b):
    ta, tb = ts
    rhs = tb
    if ta is not None:
        rhs = -_mm(ta, x) if rhs is None else rhs - _mm(ta, x)
    return _solve(a, rhs)


solve_p = Primitive("solve", _solve_impl, vjp=_solve_vjp, jvp=_solve_jvp,
                    shape_rule=_solve_shape, batch=per_primitive(_broadcasting_batch),
                    same_dtype=EVERY_INPUT)


def _solve(a, b):
    return bind(solve_p, a, b)


def solve(a, b, adjoint=False, name=None):
    """``x`` with ``a @ x = b`` for the square matrices in ``a``'s last two axes.

    ``b`` is a vector when it is 1-d (NumPy 2's rule; NumPy 1's when ``b.ndim ==
    a.ndim - 1``), else a stack of matrices; batch dims broadcast. TF's ``adjoint``
    solves with ``a``'s conjugate transpose."""
    del name
    a = _square(a, "solve")
    b = operand(b)
    if adjoint:
        a = _mH(a)
    vector = len(b.shape) == 1 if _NUMPY2 else len(b.shape) == len(a.shape) - 1
    if not vector and len(b.shape) < 2:
        raise ValueError(
            f"solve: b of shape {tuple(b.shape)} is read as a stack of matrices beside a of "
            f"shape {tuple(a.shape)} (NumPy 1's rule) and has too few dimensions; give b "
            "as a.shape[:-1] for vectors, or add a trailing axis of size 1.")
    if vector:
        b = _shape.reshape(b, tuple(b.shape) + (1,))
    out = _solve(a, b)
    return _shape.reshape(out, tuple(out.shape[:-1])) if vector else out


def _cholesky_impl(a):
    a = np.asarray(a)
    return np.linalg.cholesky((a + np.conj(np.swapaxes(a, -1, -2))) / 2)


def _phi(x):
    """The lower triangle with the diagonal halved."""
    return (_arrange.tril(x) + _arrange.tril(x, -1)) * 0.5


def _cholesky_vjp(g, chol, a):
    # Murray (2016), symmetrized as in TF and PyTorch: S = L^-H phi(L^H g) L^-1.
    lh = _mH(chol)
    p = _phi(_mm(lh, g))
    s = _mH(_solve(lh, _mH(_solve(lh, p))))
    return ((s + _mH(s)) * 0.5,)


def _cholesky_jvp(ts, chol, a):
    t = ts[0]
    sym = (t + _mH(t)) * 0.5
    inner = _mH(_solve(chol, _mH(_solve(chol, sym))))  # L^-1 sym L^-H
    return _mm(chol, _phi(inner))


cholesky_p = Primitive(
    "cholesky", _cholesky_impl, vjp=_cholesky_vjp, jvp=_cholesky_jvp,
    shape_rule=lambda a: Aval(tuple(a.shape), _result_dtype(a.dtype)),
    batch=per_primitive(_leading_batch),
)


def cholesky(a, upper=False, name=None):
    """Lower Cholesky factor ``L`` (``L @ L^H = a``) of Hermitian positive definite
    matrices; ``upper=True`` gives ``L^H``. The input is symmetrized first (JAX's rule),
    so the gradient is symmetric."""
    del name
    out = bind(cholesky_p, _square(a, "cholesky"))
    return _mH(out) if upper else out


# --- norm ------------------------------------------------------------------------------

def _abs_squared(x):
    if np.issubdtype(x.dtype, np.complexfloating):
        return _ew.real(x * _ew.conj(x))
    return _ew.square(x)


def _vector_norm(x, ord, axis: int, keepdims: bool):
    if ord is None or ord == 2 or ord == "euclidean":
        return _ew.sqrt(_reduce.sum(_abs_squared(x), axis, keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors.")
    if ord == np.inf:
        return _reduce.max(_ew.abs(x), axis, keepdims)
    if ord == -np.inf:
        return _reduce.min(_ew.abs(x), axis, keepdims)
    if ord == 0:  # a count: no gradient
        nonzero = _ew.cast(_ew.not_equal(x, 0), np.empty(0, x.dtype).real.dtype)
        return _reduce.sum(nonzero, axis, keepdims)
    if ord == 1:
        return _reduce.sum(_ew.abs(x), axis, keepdims)
    p = float(ord)
    return _ew.power(_reduce.sum(_ew.power(_ew.abs(x), p), axis, keepdims), 1.0 / p)


def _matrix_norm(x, ord, row: int, col: int, keepdims: bool):
    if ord in (None, "fro", "f", "euclidean"):
        out = _ew.sqrt(_reduce.sum(_abs_squared(x), (row, col)))
    elif ord in (1, -1):
        pick = _reduce.max if ord == 1 else _reduce.min
        out = pick(_reduce.sum(_ew.abs(x), row), col - 1 if col > row else col)
    elif ord in (np.inf, -np.inf):
        pick = _reduce.max if ord == np.inf else _reduce.min
        out = pick(_reduce.sum(_ew.abs(x), col), row - 1 if row > col else row)
    elif ord in (2, -2, "nuc"):
        out = _spectral_norm(x, ord, row, col)
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    if keepdims:
        out = _shape.reshape(out, _reduce.keepdims_shape(x.shape, (row, col)))
    return out


def _spectral_norm(x, ord, row: int, col: int):
    """The largest (2), smallest (-2) or summed ('nuc') singular values of the matrices
    in axes ``row`` and ``col``."""
    from .decompositions import singular_values  # decompositions builds on this module

    rest = tuple(i for i in range(len(x.shape)) if i not in (row, col))
    s = singular_values(_shape.transpose(x, rest + (row, col)))
    if ord == "nuc":
        return _reduce.sum(s, -1)
    return (_reduce.max if ord == 2 else _reduce.min)(s, -1)


def norm(x, ord=None, axis=None, keepdims=False, name=None):
    """Vector or matrix norm (``np.linalg.norm``'s rules; TF's ``'euclidean'`` is the
    2-norm/Frobenius norm). The 2-norm's gradient at zero is NaN (0/0), as in JAX."""
    del name
    x = operand(x)
    if not np.issubdtype(x.dtype, np.inexact):
        x = _ew.cast(x, np.float64)
    nd = len(x.shape)
    if axis is None:
        flat = (ord is None or ord == "euclidean" or (ord in ("fro", "f") and nd == 2)
                or (ord == 2 and nd == 1))
        if flat:
            out = _ew.sqrt(_reduce.sum(_abs_squared(x)))
            return _shape.reshape(out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(_shape._normalize_axis(int(a), nd) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], bool(keepdims))
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError("norm: duplicate axes given.")
        return _matrix_norm(x, ord, axes[0], axes[1], bool(keepdims))
    raise ValueError("Improper number of dimensions to norm.")


_TF_MATRIX_NORMS = ("euclidean", "fro", 1, 2, np.inf)


def _check_tf_norm_args(ord, axis) -> bool:
    """TF's argument checks of ``tf.norm``; whether ``axis`` names a matrix norm."""
    matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if matrix:
        if not all(isinstance(a, (int, np.integer)) for a in axis) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if ord not in _TF_MATRIX_NORMS or isinstance(ord, bool):
            raise ValueError(f"'ord' must be a supported matrix norm in "
                             f"{list(_TF_MATRIX_NORMS)}, got {ord!r}")
        return True
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                         f"integers, got {axis}")
    positive = isinstance(ord, (int, float, np.number)) and not isinstance(ord, bool) \
        and ord > 0
    if ord != "euclidean" and not positive:
        raise ValueError(f"'ord' must be a supported vector norm (positive or "
                         f"'euclidean'), got {ord!r}")
    return False


def tf_norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """TF's ``tf.norm``: with ``axis=None`` the whole tensor is one vector (any rank);
    an int ``axis`` is a vector norm, a pair a matrix norm (``'fro'``/``'euclidean'``,
    1, 2, inf). Orders must be positive (NumPy's negative and ``'nuc'`` ones are
    ``np.linalg.norm``'s)."""
    del name
    matrix = _check_tf_norm_args(ord, axis)
    x = operand(tensor)
    if not np.issubdtype(x.dtype, np.inexact):
        x = _ew.cast(x, np.float64)
    nd = len(x.shape)
    keepdims = bool(keepdims)
    if matrix:
        row, col = (_shape._normalize_axis(int(a), nd) for a in axis)
        return _matrix_norm(x, "fro" if ord == "euclidean" else ord, row, col, keepdims)
    vector_ord = None if ord == "euclidean" else ord
    if axis is not None:
        return _vector_norm(x, vector_ord, _shape._normalize_axis(int(axis), nd), keepdims)
    out = _vector_norm(_shape.reshape(x, (-1,)), vector_ord, 0, False)
    return _shape.reshape(out, (1,) * nd) if keepdims else out


def _vector_norm_np(x, /, *, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm``: ``axis=None`` (or a tuple) norms the flattened axes."""
    x = operand(x)
    nd = len(x.shape)
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(sorted(_shape._normalize_axis(int(a), nd) for a in axes))
    if len(axes) == 1:
        return norm(x, ord, axes[0], keepdims)
    rest = tuple(i for i in range(nd) if i not in axes)
    moved = _shape.transpose(x, rest + axes)
    flat = _shape.reshape(moved, tuple(x.shape[i] for i in rest) + (-1,))
    out = norm(flat, ord, -1, False)
    if keepdims:
        out = _shape.reshape(out, _reduce.keepdims_shape(x.shape, axes))
    return out


def _matrix_norm_np(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord, (-2, -1), keepdims)


implements(np.linalg.norm)(norm)
implements(np.linalg.inv)(inv)
implements(np.linalg.det)(det)
implements(np.linalg.slogdet)(slogdet)
implements(np.linalg.solve)(solve)
implements(np.linalg.cholesky)(cholesky)
