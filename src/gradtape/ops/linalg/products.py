"""Products of matrices and vectors, diagonals and traces.

Primitives: ``matmul`` (batched, NumPy broadcasting of the leading dims); ``matvec``
(``a @ x``) and ``vecmat`` (``x @ a``) for a 1-d ``x``, so that a product with a vector is
one recorded op, not a matmul between two reshapes; ``diagonal`` and
``diagonal_scatter``. ``dot``, ``tensordot``, ``inner``, ``outer``, ``vdot`` and
``trace`` are composites of those; ``einsum`` lives in ``contraction.py`` and is
re-exported here.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InvalidArgumentError
from ...core.promotion_warning import check_operands as check_promoted_variables
from ...ir.nodes import Aval
from .. import elementwise as _ew
from .. import reduce as _reduce
from .. import shape as _shape
from ..contraction import einsum
from ..numpy_dispatch import implements, register_ufunc
from ..registry import EVERY_INPUT, Primitive, bind, operand

__all__ = ["matmul", "dot", "vdot", "tensordot", "einsum", "outer", "inner", "trace",
           "diagonal"]

_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
LinAlgError = np.linalg.LinAlgError


# gt.config(dtype_promotion="tf")'s conversion of a NumPy operand beside matmul's tensor
# (ops/promotion.py); bind checks two tensors.
_prepare = None


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


# --- batching rules: the batch axis is a new leading axis --------------------------------

def _broadcasting_batch(prim):
    """Batch dims broadcast like elementwise ops (right-aligned): line the axis up."""
    def rule(size, args, batched):
        from .. import batch_rules

        return batch_rules.batch_elementwise(prim, size, args, batched)

    return rule


def _leading_batch(prim):
    """The op already maps over leading dims."""
    return lambda size, args, batched: bind(prim, args[0])


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
    return _broadcasting_batch(matmul_p)(size, args, batched)


matmul_p = Primitive("matmul", np.matmul, vjp=_matmul_vjp, jvp=_matmul_jvp,
                     shape_rule=_matmul_shape, batch=_matmul_batch, template="{0} @ {1}",
                     same_dtype=EVERY_INPUT, residuals=("in0", "in1"))


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


matvec_p = Primitive(
    "matvec", np.matmul, vjp=_matvec_vjp, same_dtype=EVERY_INPUT,
    jvp=lambda ts, y, a, x: _sum_of((None if ts[0] is None else _matvec(ts[0], x),
                                     None if ts[1] is None else _matvec(a, ts[1]))),
    shape_rule=lambda a, x: _vector_shape("matvec", a, x, -1),
    batch=_matvec_batch,
    template="{0} @ {1}",
)


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


vecmat_p = Primitive(
    "vecmat", np.matmul, vjp=_vecmat_vjp, same_dtype=EVERY_INPUT,
    jvp=lambda ts, y, x, a: _sum_of((None if ts[0] is None else _vecmat(ts[0], a),
                                     None if ts[1] is None else _vecmat(x, ts[1]))),
    shape_rule=lambda x, a: _vector_shape("vecmat", a, x, -2),
    batch=_vecmat_batch,
    template="{0} @ {1}",
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
    if _prepare:  # gt.config(dtype_promotion="tf"): tf.matmul's dtype rule
        a, b = _prepare(matmul_p, a, b)
    a, b = _operands(a, b)
    shape_a, shape_b = a.shape, b.shape  # each read once: a property call apiece
    rank_a, rank_b = len(shape_a), len(shape_b)
    flag_a, flag_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    if rank_a >= 2 and rank_b >= 2 and not (flag_a or flag_b) and output_type is None:
        if shape_a[-1] != shape_b[-2]:
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
    check_promoted_variables((a, b))  # the product reads reshapes, not the variable
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
    check_promoted_variables((a, b))
    return _ew.multiply(_shape.reshape(a, (-1, 1)), _shape.reshape(b, (-1,)))


def vdot(a, b):
    """``sum(conj(a) * b)`` over the flattened inputs (NumPy's ``vdot``)."""
    a, b = _operands(a, b)
    check_promoted_variables((a, b))
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
    batch=lambda size, args, batched, offset, axis1, axis2: bind(
        diagonal_p, args[0], offset=offset, axis1=axis1 + 1, axis2=axis2 + 1),
)
diagonal_scatter_p = Primitive(
    "diagonal_scatter", _scatter_impl,
    vjp=lambda g, y, x, offset, axis1, axis2, shape: (
        bind(diagonal_p, g, offset=offset, axis1=axis1, axis2=axis2),
    ),
    jvp=lambda ts, y, x, offset, axis1, axis2, shape: bind(
        diagonal_scatter_p, ts[0], offset=offset, axis1=axis1, axis2=axis2, shape=shape),
    shape_rule=lambda g, offset, axis1, axis2, shape: Aval(tuple(shape), g.dtype),
    batch=lambda size, args, batched, offset, axis1, axis2, shape: bind(
        diagonal_scatter_p, args[0], offset=offset, axis1=axis1 + 1, axis2=axis2 + 1,
        shape=(size,) + tuple(shape)),
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


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """Matrix-vector product over the last axes (TF's ``tf.linalg.matvec``)."""
    del name
    b = operand(b)
    if len(b.shape) == 1:  # one vector for every matrix: the matvec primitive
        return matmul(a, b, transpose_a=transpose_a, adjoint_a=adjoint_a)
    out = matmul(a, _shape.reshape(b, tuple(b.shape) + (1,)), transpose_a=transpose_a,
                 adjoint_a=adjoint_a)
    return _shape.reshape(out, tuple(out.shape[:-1]))
