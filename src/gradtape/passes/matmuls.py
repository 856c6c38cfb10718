"""Matrix products NumPy would run off BLAS, written as the cheaper ops they are.

- ``(m, 1) @ (1, n)``: a product whose contracted axis has size one is an outer
  product, ``a * b`` broadcast (exactly: each element is one product either way). NumPy
  hands it to a GEMM whose packing costs several times the multiply; when an operand is
  a broadcast fill (the ones seeding ``gradient(u, x)``), the zeros-and-ones rules then
  turn ``ones * row`` into a broadcast view.
- ``fill @ x``, ``x @ fill``: a broadcast fill has zero strides, which BLAS cannot take,
  so NumPy multiplies in its own loop (7x a GEMV on a (1, 2000) @ (2000, 32)). Every row
  (column) of the result is ``c`` times the column (row) sums of ``x``: an unbroadcast
  sum, scaled, broadcast back. Autodiff writes these when a seed of ones meets a
  transposed product (``d_u.T @ h``, a second-order kernel gradient).

Only for floating-point operands of rank two or more (vectors contract differently);
the products with fills only for matrices. Not inside loop bodies and branches (``simplify``'s
``in_loop``): loop motion moves a per-iteration product out of its loop as one product,
which a multiply would keep in it.
"""

from __future__ import annotations

from ..ir.dtypes import is_inexact
from ..ir.nodes import Eqn, IRValue, Literal
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from ..ops.linalg.products import matmul_p
from .fills import is_one
from .fold import scalar_literal
from .rewrite import Rewriter, applies_when, rewrite

_multiply = _ew.multiply.primitive


def _matrices(eqn: Eqn, rank: int | None = None) -> bool:
    """Whether both operands are floating-point arrays of rank >= 2 (exactly ``rank``)."""
    a, b = eqn.inputs
    if isinstance(a, Literal) or isinstance(b, Literal) or not is_inexact(eqn.outs[0].dtype):
        return False
    ranks = (len(a.shape), len(b.shape))
    return ranks == (rank, rank) if rank else min(ranks) >= 2


def outer_product(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``a @ b`` -> ``a * b`` when the contracted axis has size one (batch axes broadcast
    alike in both)."""
    # The size first: one attribute read rejects almost every product (a cold build
    # asks this of each matmul it writes).
    if eqn.inputs[0].aval.shape[-1:] != (1,) or not _matrices(eqn):
        return None
    return rw.emit(_multiply, eqn.inputs, {})


def _scaled(total: IRValue, c, rw: Rewriter) -> IRValue | None:
    if is_one(c):
        return total
    return rw.emit(_multiply, (total, scalar_literal(c)), {})


@applies_when(fill=True)
def fill_product(eqn: Eqn, rw: Rewriter) -> IRValue | None:
    """``fill(c) @ x`` -> ``c * (column sums of x)`` broadcast to the rows, and
    ``x @ fill(c)`` -> ``c * (row sums of x)`` broadcast to the columns."""
    if not _matrices(eqn, rank=2):
        return None
    a, b = eqn.inputs
    out = eqn.outs[0]
    c_a, c_b = rw.fill(a), rw.fill(b)
    if c_a is not None and c_b is not None:
        return None  # both fills: folding makes the result a fill
    if c_a is not None:
        c, x, axis = c_a, b, 0
    elif c_b is not None:
        c, x, axis = c_b, a, 1
    else:
        return None
    if x.dtype != out.dtype or not c:
        return None  # a zero fill: a zero cotangent, which the product keeps as written
    kept = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    total = rw.emit(_shape.unbroadcast_p, (x,), {"axes": (axis,), "shape": kept})
    total = None if total is None else _scaled(total, c, rw)
    if total is None:
        return None
    if tuple(total.shape) == tuple(out.shape):
        return total
    return rw.emit(_shape.broadcast_to_p, (total,), {"shape": tuple(out.shape)})


RULES = {matmul_p: [outer_product, fill_product]}


def cheaper_matmuls(program):
    """``program`` with its outer products and products with fills rewritten (run DCE
    afterwards)."""
    return rewrite(program, RULES)

