"""Linear algebra: matmul and its relatives (``products.py``), and ``np.linalg``'s
matrix functions with their gradient conventions (``solve.py``), and the decompositions
``svd``, ``eigh``, ``eig`` and ``pinv`` (``decompositions.py``).

``gt.linalg`` (``namespace`` below) gathers NumPy's ``np.linalg`` and TF's ``tf.linalg``
names; there, like in both, ``trace`` and ``diagonal`` work on the last two axes, while
the top-level ``gt.trace``/``gt.diagonal`` follow ``np.trace``/``np.diagonal``.
"""

from __future__ import annotations

import numpy as np

from ...core.namespaces import namespace as public_namespace
from ..contraction import einsum
from ..numpy_dispatch import implements
from .decompositions import (
    eig,
    eigh,
    eigvals,
    eigvalsh,
    lstsq,
    matrix_rank,
    pinv,
    qr,
    singular_values,
    svd,
)
from .products import (
    _linalg_diagonal,
    _linalg_trace,
    adjoint,
    diagonal,
    dot,
    inner,
    matmul,
    matrix_transpose,
    matvec,
    outer,
    tensordot,
    trace,
    vdot,
)
from .solve import (
    LinAlgError,
    _matrix_norm_np,
    _vector_norm_np,
    cholesky,
    det,
    inv,
    logdet,
    slogdet,
    solve,
    tf_norm,
)

__all__ = ["matmul", "dot", "vdot", "tensordot", "einsum", "outer", "inner", "trace",
           "diagonal", "norm"]

norm = tf_norm  # gt.norm is tf.norm; np.linalg.norm on tensors keeps NumPy's rules

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


# --- the gt.linalg namespace -----------------------------------------------------------

namespace = public_namespace(
    "gradtape.linalg",
    "Linear algebra under NumPy's np.linalg and TF's tf.linalg names. ``trace`` and "
    "``diagonal`` here work on the last two axes (like np.linalg and tf.linalg).", {
    "adjoint": adjoint, "cholesky": cholesky, "det": det, "diag_part": _linalg_diagonal,
    "diagonal": _linalg_diagonal, "einsum": einsum, "inv": inv, "logdet": logdet,
    "matmul": matmul, "matrix_norm": _matrix_norm_np, "matrix_transpose": matrix_transpose,
    "matvec": matvec, "norm": tf_norm, "outer": outer, "slogdet": slogdet, "solve": solve,
    "tensordot": tensordot, "trace": _linalg_trace, "vector_norm": _vector_norm_np,
    "LinAlgError": LinAlgError,
    "svd": svd, "eigh": eigh, "eigvalsh": eigvalsh, "eig": eig, "eigvals": eigvals,
    "pinv": pinv, "matrix_rank": matrix_rank, "svdvals": singular_values, "qr": qr,
    "lstsq": lstsq,
})
del _name, _op, _func
