"""Linear algebra: matmul and its relatives, and ``np.linalg``'s decompositions.

Primitives: ``matmul`` (batched, NumPy broadcasting of the leading dims); ``matvec``
(``a @ x``) and ``vecmat`` (``x @ a``) for a 1-d ``x``, so that a product with a vector is
one recorded op, not a matmul between two reshapes; ``diagonal`` and
``diagonal_scatter``; and ``inv``, ``det``, ``slogdet``, ``solve``, ``cholesky`` over the
last two axes with any leading batch dims. ``dot``, ``tensordot``, ``inner``,
``outer``, ``vdot``, ``trace`` and ``norm`` are composites of those; ``einsum`` lives in
``contraction.py`` and is re-exported here.

Conventions (the same as JAX's):

- ``cholesky`` factors the symmetrized input ``(a + a^H) / 2``, so its gradient is the
  derivative of the function computed (symmetric, as in TF and PyTorch); for a
  symmetric input the result is NumPy's.
- ``norm``'s 2-norm gradient at the zero vector is NaN (0/0), as in JAX and TF.
- ``det``/``inv`` gradients of a singular matrix raise ``LinAlgError`` (TF raises too).
- ``slogdet``'s sign is not differentiable (for complex inputs only ``logabsdet``
  carries a gradient).

``gt.linalg`` (``namespace`` below) gathers NumPy's ``np.linalg`` and TF's ``tf.linalg``
names; there, like in both, ``trace`` and ``diagonal`` work on the last two axes, while
the top-level ``gt.trace``/``gt.diagonal`` follow ``np.trace``/``np.diagonal``.
"""

from __future__ import annotations

import functools
import types
from collections import namedtuple

import numpy as np

from ..errors import InvalidArgumentError
from ..ir.nodes import Aval
from . import elementwise as _ew
from . import reduce as _reduce
from . import shape as _shape
from .contraction import einsum
from .numpy_dispatch import implements, register_ufunc
from .registry import Primitive, bind, operand

__all__ = ["matmul", "dot", "vdot", "tensordot", "einsum", "outer", "inner", "trace",
           "diagonal", "norm"]

_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
LinAlgError = np.linalg.LinAlgError


def _operands(a, b):
    """Both arguments as tensors; with no tensor at all, both get TF's dtypes."""
    return operand(a), operand(b)


def matrix_transpose(x, conjugate: bool = False):
    """``x`` with its last two axes swapped (conjugated too if ``conjugate``)."""
    x = operand(x)
    nd = len(x.shape)
    if nd < 2:
        raise ValueError(f"matrix_transpose needs a tensor of rank >= 2, got rank {nd}.")
    out = _shape.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return _ew.conj(out) if conjugate else out


def adjoint(x):
    """Conjugate transpose of the last two axes (TF's ``tf.linalg.adjoint``)."""
    return matrix_transpose(x, conjugate=True)


_mT = matrix_transpose
_mH = adjoint


def _batch_shape(*shapes) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(tuple(s[:-2]) for s in shapes)))


# --- matmul ----------------------------------------------------------------------------

def _matmul_shape(a, b):
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}.")
    return Aval(_batch_shape(a.shape, b.shape) + (a.shape[-2], b.shape[-1]),
                np.result_type(a.dtype, b.dtype))


def _matmul_vjp(g, y, a, b):
    ga = _shape.unbroadcast(_mm(g, _mH(b)), a.shape)
    if len(b.shape) == 2 and len(a.shape) > 2:
        # A shared weight under a batch: one 2-d product, not a stack of them summed.
        k, m = a.shape[-1], g.shape[-1]
        gb = _mm(_mH(_shape.reshape(a, (-1, k))), _shape.reshape(g, (-1, m)))
    else:
        gb = _shape.unbroadcast(_mm(_mH(a), g), b.shape)
    return ga, gb


def _matmul_jvp(ts, y, a, b):
    ta, tb = ts
    parts = [p for p in (None if ta is None else _mm(ta, b),
                         None if tb is None else _mm(a, tb)) if p is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


matmul_p = Primitive("matmul", np.matmul, vjp=_matmul_vjp, jvp=_matmul_jvp,
                     shape_rule=_matmul_shape)


def _mm(a, b):
    """matmul of operands of rank >= 2 (the primitive itself)."""
    if a.shape[-1] != b.shape[-2]:
        _matmul_shape(a, b)  # raises TF's InvalidArgumentError, not NumPy's gufunc error
    return bind(matmul_p, a, b)


# --- matvec and vecmat: a product with a vector, recorded as one op --------------------
# ``a @ x`` and ``x @ a`` for a 1-d ``x`` beside an ``a`` of rank >= 2 (NumPy's rules:
# batch dims of ``a`` stay). Each one's VJP for ``x`` is the other, so for a 2-d ``a``
# gradients print as ``g @ a`` and ``a @ g``, with no reshape and no transpose.
# ``vecmat`` does not conjugate ``x`` (NumPy 2.2's ``np.vecmat`` does).

def _vector_shape(name: str, a, x, inner: int):
    if len(x.shape) != 1 or len(a.shape) < 2:
        raise ValueError(f"{name}: needs a vector and a tensor of rank >= 2, got shapes "
                         f"{tuple(x.shape)} and {tuple(a.shape)}.")
    if a.shape[inner] != x.shape[0]:
        operands = (a.shape, x.shape) if name == "matvec" else (x.shape, a.shape)
        raise InvalidArgumentError(
            f"{name}: inner dimensions differ: {operands[0]} @ {operands[1]}.")
    keep = tuple(a.shape[:-1]) if inner == -1 else tuple(a.shape[:-2]) + (a.shape[-1],)
    return Aval(keep, np.result_type(a.dtype, x.dtype))


def _matvec_vjp(g, y, a, x):
    ga = _shape.reshape(g, tuple(g.shape) + (1,)) * _ew.conj(x)  # g x^H, a's shape
    # a^H g summed over a's batch dims: one product over the stacked rows.
    rows = _shape.reshape(a, (-1, a.shape[-1]))
    return ga, _vecmat(_shape.reshape(g, (-1,)), _ew.conj(rows))


def _vecmat_vjp(g, y, x, a):
    nd = len(a.shape)
    x_column = _shape.reshape(_ew.conj(x), (x.shape[0], 1))
    ga = x_column * _shape.reshape(g, tuple(g.shape[:-1]) + (1, g.shape[-1]))  # x^* g^T
    # conj(a) g summed over a's batch dims: a's rows axis in front, the rest stacked.
    cols = _shape.reshape(_shape.transpose(a, (nd - 2,) + tuple(range(nd - 2)) + (nd - 1,)),
                          (a.shape[-2], -1))
    return _matvec(_ew.conj(cols), _shape.reshape(g, (-1,))), ga


def _sum_of(parts):
    parts = [p for p in parts if p is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


matvec_p = Primitive(
    "matvec", np.matmul, vjp=_matvec_vjp,
    jvp=lambda ts, y, a, x: _sum_of((None if ts[0] is None else _matvec(ts[0], x),
                                     None if ts[1] is None else _matvec(a, ts[1]))),
    shape_rule=lambda a, x: _vector_shape("matvec", a, x, -1),
)
vecmat_p = Primitive(
    "vecmat", np.matmul, vjp=_vecmat_vjp,
    jvp=lambda ts, y, x, a: _sum_of((None if ts[0] is None else _vecmat(ts[0], a),
                                     None if ts[1] is None else _vecmat(x, ts[1]))),
    shape_rule=lambda x, a: _vector_shape("vecmat", a, x, -2),
)


def _matvec(a, x):
    """``a @ x`` for ``a`` of rank >= 2 and a 1-d ``x`` (the primitive itself)."""
    if a.shape[-1] != x.shape[0]:
        _vector_shape("matvec", a, x, -1)  # raises TF's InvalidArgumentError
    return bind(matvec_p, a, x)


def _vecmat(x, a):
    """``x @ a`` for a 1-d ``x`` and ``a`` of rank >= 2 (the primitive itself)."""
    if a.shape[-2] != x.shape[0]:
        _vector_shape("vecmat", a, x, -2)  # raises TF's InvalidArgumentError
    return bind(vecmat_p, x, a)


def _with_vector(matrix, vector, vector_first: bool, transpose: bool, adjoint: bool):
    """``op(matrix) @ vector`` (or ``vector @ op(matrix)``) as one product: a transposed
    matrix swaps matvec for vecmat instead of recording a transpose."""
    if adjoint:
        matrix, transpose = _ew.conj(matrix), True
    if vector_first != transpose:
        return _vecmat(vector, matrix)  # x @ a, or a^T @ x
    return _matvec(matrix, vector)  # a @ x, or x @ a^T


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """Matrix product with NumPy's semantics (1-d operands, broadcast batch dims) and
    TF's ``transpose_*``/``adjoint_*`` flags."""
    del a_is_sparse, b_is_sparse, name
    a, b = _operands(a, b)
    rank_a, rank_b = len(a.shape), len(b.shape)
    flag_a, flag_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    if rank_a >= 2 and rank_b >= 2 and not (flag_a or flag_b) and output_type is None:
        if a.shape[-1] != b.shape[-2]:
            _matmul_shape(a, b)  # raises TF's InvalidArgumentError, not NumPy's gufunc error
        return bind(matmul_p, a, b)  # the usual product, without the cases below
    if rank_a == 0 or rank_b == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions "
                         "(scalars need multiply, not matmul).")
    out = None
    if rank_b == 1 and rank_a >= 2 and not flag_b:
        out = _with_vector(a, b, False, bool(transpose_a), bool(adjoint_a))
    elif rank_a == 1 and rank_b >= 2 and not flag_a:
        out = _with_vector(b, a, True, bool(transpose_b), bool(adjoint_b))
    if out is not None:
        return out if output_type is None else _ew.cast(out, output_type)
    if transpose_a or adjoint_a:
        a = matrix_transpose(a, conjugate=bool(adjoint_a))
    if transpose_b or adjoint_b:
        b = matrix_transpose(b, conjugate=bool(adjoint_b))
    vector_a, vector_b = len(a.shape) == 1, len(b.shape) == 1
    if vector_a:
        a = _shape.reshape(a, (1, a.shape[0]))
    if vector_b:
        b = _shape.reshape(b, (b.shape[0], 1))
    out = _mm(a, b)
    if vector_a or vector_b:
        shape = out.shape[:-2] + (() if vector_a else out.shape[-2:-1]) + (
            () if vector_b else out.shape[-1:])
        out = _shape.reshape(out, shape)
    return out if output_type is None else _ew.cast(out, output_type)


register_ufunc(np.matmul, matmul)
if not isinstance(np.matmul, np.ufunc):  # a plain function in some NumPy versions
    implements(np.matmul)(matmul)


# --- dot, tensordot, inner, outer, vdot (composites) ----------------------------------

def dot(a, b):
    """NumPy's ``dot``: products of scalars, matmul up to 2-d, else a sum over the last
    axis of ``a`` and the second-to-last of ``b``."""
    a, b = _operands(a, b)
    if len(a.shape) == 0 or len(b.shape) == 0:
        return _ew.multiply(a, b)
    if len(b.shape) <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([len(a.shape) - 1], [len(b.shape) - 2]))


def _tensordot_axes(axes, nd_a: int, nd_b: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(nd_a, nd_b):
            raise ValueError(f"tensordot: axes={n} does not fit ranks {nd_a} and {nd_b}.")
        return list(range(nd_a - n, nd_a)), list(range(n))
    axes_a, axes_b = axes
    axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("tensordot: shape-mismatch for sum (different numbers of axes).")
    return ([_shape._normalize_axis(int(i), nd_a) for i in axes_a],
            [_shape._normalize_axis(int(i), nd_b) for i in axes_b])


def tensordot(a, b, axes=2):
    """Sum of products over ``axes`` (an int: the last n of ``a`` with the first n of
    ``b``; or a pair of axis lists), as one matmul between transposed reshapes."""
    a, b = _operands(a, b)
    axes_a, axes_b = _tensordot_axes(axes, len(a.shape), len(b.shape))
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise InvalidArgumentError(f"tensordot: shape-mismatch for sum: {a.shape} axis "
                                       f"{i} vs {b.shape} axis {j}.")
    free_a = [i for i in range(len(a.shape)) if i not in axes_a]
    free_b = [j for j in range(len(b.shape)) if j not in axes_b]
    k = int(np.prod([a.shape[i] for i in axes_a], dtype=np.int64))
    rows = int(np.prod([a.shape[i] for i in free_a], dtype=np.int64))
    cols = int(np.prod([b.shape[j] for j in free_b], dtype=np.int64))
    a2 = _shape.reshape(_shape.transpose(a, tuple(free_a + axes_a)), (rows, k))
    b2 = _shape.reshape(_shape.transpose(b, tuple(axes_b + free_b)), (k, cols))
    out_shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b)
    return _shape.reshape(_mm(a2, b2), out_shape)


def inner(a, b):
    """NumPy's ``inner``: sum of products over the last axes of ``a`` and ``b``."""
    a, b = _operands(a, b)
    if len(a.shape) == 0 or len(b.shape) == 0:
        return _ew.multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b):
    """Outer product of the flattened ``a`` and ``b``."""
    a, b = _operands(a, b)
    return _ew.multiply(_shape.reshape(a, (-1, 1)), _shape.reshape(b, (-1,)))


def vdot(a, b):
    """``sum(conj(a) * b)`` over the flattened inputs (NumPy's ``vdot``)."""
    a, b = _operands(a, b)
    return matmul(_ew.conj(_shape.reshape(a, (-1,))), _shape.reshape(b, (-1,)))


@implements(np.dot)
def _np_dot(a, b, out=None):
    _no_out("dot", out)
    return dot(a, b)


implements(np.vdot)(vdot)
implements(np.tensordot)(tensordot)
implements(np.inner)(inner)


@implements(np.outer)
def _np_outer(a, b, out=None):
    _no_out("outer", out)
    return outer(a, b)


def _no_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"numpy.{name}(..., out=) cannot write into a tensor: tensors are "
                        "immutable.")


# --- diagonal and trace ----------------------------------------------------------------

def _diagonal_impl(x, offset, axis1, axis2):
    return np.diagonal(x, offset, axis1, axis2)


def _diagonal_shape(x, offset, axis1, axis2):
    # The diagonal of a zero-strided view: the shape without touching real data.
    probe = np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return Aval(np.diagonal(probe, offset, axis1, axis2).shape, x.dtype)


def _scatter_impl(g, offset, axis1, axis2, shape):
    out = np.zeros(shape, np.asarray(g).dtype)
    n = np.shape(g)[-1]
    i = np.arange(n)
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writes land in out
    moved[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


diagonal_p = Primitive(
    "diagonal", _diagonal_impl,
    vjp=lambda g, y, x, offset, axis1, axis2: (
        bind(diagonal_scatter_p, g, offset=offset, axis1=axis1, axis2=axis2,
             shape=tuple(x.shape)),
    ),
    jvp=lambda ts, y, x, offset, axis1, axis2: bind(
        diagonal_p, ts[0], offset=offset, axis1=axis1, axis2=axis2),
    shape_rule=_diagonal_shape,
)
diagonal_scatter_p = Primitive(
    "diagonal_scatter", _scatter_impl,
    vjp=lambda g, y, x, offset, axis1, axis2, shape: (
        bind(diagonal_p, g, offset=offset, axis1=axis1, axis2=axis2),
    ),
    jvp=lambda ts, y, x, offset, axis1, axis2, shape: bind(
        diagonal_scatter_p, ts[0], offset=offset, axis1=axis1, axis2=axis2, shape=shape),
    shape_rule=lambda g, offset, axis1, axis2, shape: Aval(tuple(shape), g.dtype),
)


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of ``a`` over ``axis1``/``axis2`` (offset above/below the main one),
    as the last axis of the result (NumPy's ``diagonal``)."""
    a = operand(a)
    nd = len(a.shape)
    if nd < 2:
        raise ValueError("diagonal needs a tensor of rank >= 2.")
    axis1 = _shape._normalize_axis(int(axis1), nd)
    axis2 = _shape._normalize_axis(int(axis2), nd)
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same.")
    return bind(diagonal_p, a, offset=int(offset), axis1=axis1, axis2=axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum of the diagonal over ``axis1``/``axis2`` (NumPy's ``trace``: the first two
    axes by default; ``gt.linalg.trace`` uses the last two, like TF)."""
    a = operand(a)
    if dtype is not None:
        a = _ew.cast(a, dtype)
    return _reduce.sum(diagonal(a, offset, axis1, axis2), -1)


@implements(np.trace)
def _np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _no_out("trace", out)
    return trace(a, offset, axis1, axis2, dtype)


def _linalg_trace(x, offset=0, dtype=None, name=None):
    """Trace over the last two axes (``np.linalg.trace``, ``tf.linalg.trace``)."""
    del name
    return trace(x, offset, -2, -1, dtype)


def _linalg_diagonal(x, offset=0, k=None, name=None):
    """Diagonal of the last two axes (``np.linalg.diagonal``; ``k`` is TF's offset)."""
    del name
    return diagonal(x, offset if k is None else k, -2, -1)


# --- np.linalg: inv, det, slogdet, solve, cholesky -------------------------------------

@functools.cache
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
                    shape_rule=_solve_shape)


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
    return (_shape.tril(x) + _shape.tril(x, -1)) * 0.5


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
        raise NotImplementedError(
            f"norm ord={ord!r} needs singular values, which gradtape does not "
            "differentiate yet; use ord='fro', 1 or inf.")
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    if keepdims:
        out = _shape.reshape(out, _reduce.keepdims_shape(x.shape, (row, col)))
    return out


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


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """Matrix-vector product over the last axes (TF's ``tf.linalg.matvec``)."""
    del name
    b = operand(b)
    if len(b.shape) == 1:  # one vector for every matrix: the matvec primitive
        return matmul(a, b, transpose_a=transpose_a, adjoint_a=adjoint_a)
    out = matmul(a, _shape.reshape(b, tuple(b.shape) + (1,)), transpose_a=transpose_a,
                 adjoint_a=adjoint_a)
    return _shape.reshape(out, tuple(out.shape[:-1]))


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
# NumPy 2's array-API additions to np.linalg, where they exist.
for _name, _op in [("matmul", matmul), ("outer", outer), ("trace", _linalg_trace),
                   ("diagonal", _linalg_diagonal), ("matrix_transpose", matrix_transpose),
                   ("vector_norm", _vector_norm_np), ("matrix_norm", _matrix_norm_np)]:
    _func = getattr(np.linalg, _name, None)
    if _func is not None and not isinstance(_func, np.ufunc):
        implements(_func)(_op)
_tensordot = getattr(np.linalg, "tensordot", None)
if _tensordot is not None:
    implements(_tensordot)(lambda x1, x2, /, *, axes=2: tensordot(x1, x2, axes))
if hasattr(np, "matrix_transpose"):
    implements(np.matrix_transpose)(matrix_transpose)



# --- batching rules: the batch axis is a new leading axis --------------------------------

def _broadcasting_batch(prim):
    """Batch dims broadcast like elementwise ops (right-aligned): line the axis up."""
    def rule(size, args, batched):
        from ..ir import batching

        return batching.batch_elementwise(prim, size, args, batched)

    return rule


def _leading_batch(prim):
    """The op already maps over leading dims."""
    return lambda size, args, batched: bind(prim, args[0])


def _matmul_batch(size, args, batched):
    """One 2-d product where a batched matrix meets an unbatched one, instead of a stack
    of ``size`` small products (``matvec`` and ``vecmat`` have rules of their own)."""
    (a, b), (fa, fb) = args, batched
    if fa != fb and len(a.shape) - fa == 2 and len(b.shape) - fb == 2:
        if fa:  # (size, m, k) @ (k, n) -> (size * m, k) @ (k, n)
            m, k = a.shape[1:]
            out = _mm(_shape.reshape(a, (size * m, k)), b)
            return _shape.reshape(out, (size, m, b.shape[1]))
        m, (k, n) = a.shape[0], b.shape[1:]
        if n == 1:  # (m, k) @ (size, k, 1) -> (size, k) @ (k, m)
            out = _mm(_shape.reshape(b, (size, k)), _shape.transpose(a, (1, 0)))
            return _shape.reshape(out, (size, m, 1))
        # (m, k) @ (size, k, n) -> (m, k) @ (k, size * n)
        stacked = _shape.reshape(_shape.transpose(b, (1, 0, 2)), (k, size * n))
        out = _shape.reshape(_mm(a, stacked), (m, size, n))
        return _shape.transpose(out, (1, 0, 2))
    return _matmul_broadcast(size, args, batched)


_matmul_broadcast = _broadcasting_batch(matmul_p)
matmul_p.batch = _matmul_batch


def _matvec_batch(size, args, batched):
    """A batch of vectors against one ``a`` is one 2-d product ``x_b @ a.T`` (the rows
    of a jacobian); batched matrices take the vector as they are; both batched pair up
    as a matmul with the vectors as columns."""
    (a, x), (fa, fx) = args, batched
    if not fx:
        return _matvec(a, x)  # a's batch dims lead already
    if not fa:
        rows = _shape.reshape(a, (-1, a.shape[-1]))
        out = _mm(x, _shape.transpose(rows, (1, 0)))
        return _shape.reshape(out, (size,) + tuple(a.shape[:-1]))
    columns = _shape.reshape(x, (size,) + (1,) * (len(a.shape) - 3) + (x.shape[1], 1))
    out = _mm(a, columns)
    return _shape.reshape(out, tuple(out.shape[:-1]))


def _vecmat_batch(size, args, batched):
    """``x_b @ a`` is one 2-d product for a batch of vectors against a 2-d ``a`` (else a
    broadcast matmul); batched matrices take the vector as they are."""
    (x, a), (fx, fa) = args, batched
    if not fx:
        return _vecmat(x, a)
    if not fa and len(a.shape) == 2:
        return _mm(x, a)
    ones = len(a.shape) - 2 - int(fa)  # a's own batch dims
    rows = _shape.reshape(x, (size,) + (1,) * ones + (1, x.shape[1]))
    out = _mm(rows, a)
    return _shape.reshape(out, tuple(out.shape[:-2]) + (out.shape[-1],))


matvec_p.batch = _matvec_batch
vecmat_p.batch = _vecmat_batch
solve_p.batch = _broadcasting_batch(solve_p)
for _prim in (inv_p, det_p, slogdet_p, cholesky_p):
    _prim.batch = _leading_batch(_prim)
diagonal_p.batch = lambda size, args, batched, offset, axis1, axis2: bind(
    diagonal_p, args[0], offset=offset, axis1=axis1 + 1, axis2=axis2 + 1)
diagonal_scatter_p.batch = lambda size, args, batched, offset, axis1, axis2, shape: bind(
    diagonal_scatter_p, args[0], offset=offset, axis1=axis1 + 1, axis2=axis2 + 1,
    shape=(size,) + tuple(shape))

# --- the gt.linalg namespace -----------------------------------------------------------

namespace = types.ModuleType(
    "gradtape.linalg",
    "Linear algebra under NumPy's np.linalg and TF's tf.linalg names. ``trace`` and "
    "``diagonal`` here work on the last two axes (like np.linalg and tf.linalg).",
)
for _name, _op in {
    "adjoint": adjoint, "cholesky": cholesky, "det": det, "diag_part": _linalg_diagonal,
    "diagonal": _linalg_diagonal, "einsum": einsum, "inv": inv, "logdet": logdet,
    "matmul": matmul, "matrix_norm": _matrix_norm_np, "matrix_transpose": matrix_transpose,
    "matvec": matvec, "norm": norm, "outer": outer, "slogdet": slogdet, "solve": solve,
    "tensordot": tensordot, "trace": _linalg_trace, "vector_norm": _vector_norm_np,
    "LinAlgError": LinAlgError,
}.items():
    setattr(namespace, _name, _op)
namespace.__all__ = sorted(n for n in vars(namespace) if not n.startswith("_"))
del _name, _op, _func, _prim
