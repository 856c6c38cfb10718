"""Elementwise fusion: which results to inline into the one expression that reads them.

An analysis, not a rewrite: the program keeps one equation per primitive (so it can
still be interpreted and differentiated), and the code generator writes each inlined
var's equation inside its consumer's expression instead of naming it. A result is
inlined when it comes from an elementwise primitive, is read exactly once, and is not
returned. ``a * b + c`` then needs no named temporary, and NumPy can reuse the
intermediate's buffer (its temporary elision works only on unnamed arrays). A value
with the user's name (``d_z``) that a non-elementwise op reads keeps its own line
(``d_z = ...; d_w = d_z @ features``): there it saves no temporary, and the name tells
the reader what the expression is.
"""

from __future__ import annotations

from ..ir.dtypes import size as _size
from ..ir.naming import is_users_name
from ..ir.nodes import Program, Var

# Expressions stay readable: at most this many primitives in one statement.
MAX_OPS_PER_EXPRESSION = 6
# A value is not carried into a later statement across an op that makes an array of at
# least this many bytes (a matmul): inlined there, the value and what it read would stay
# alive beside that array. An RNN's backward adds each step's weight gradient into the
# sum as it is made, instead of holding six of them for one long expression.
CARRY_LIMIT_BYTES = 1 << 20


def use_counts(program: Program) -> dict[Var, int]:
    """How often each var is read, counting a returned var as read once per output."""
    uses: dict[Var, int] = {}
    for eqn in program.eqns:
        for v in eqn.inputs:
            if isinstance(v, Var):
                uses[v] = uses.get(v, 0) + 1
    for v in program.outputs:
        if isinstance(v, Var):
            uses[v] = uses.get(v, 0) + 1
    return uses


def inline_vars(program: Program, max_ops: int = MAX_OPS_PER_EXPRESSION) -> set[Var]:
    """The vars whose defining equation is written inside their only consumer."""
    uses = use_counts(program)
    returned = {v for v in program.outputs if isinstance(v, Var)}
    candidates = set()
    for eqn in program.eqns:
        if not eqn.prim.elementwise:
            named = [v for v in eqn.inputs if isinstance(v, Var) and is_users_name(v.name)]
            candidates.difference_update(named)
            continue
        if not eqn.prim.multiple_results and len(eqn.outs) == 1:
            out = eqn.outs[0]
            if uses.get(out) == 1 and out not in returned:
                candidates.add(out)
    size: dict[Var, int] = {}  # var -> primitives in its expression if inlined
    made_at: dict[Var, int] = {}  # var -> big arrays made before its equation
    inlined: set[Var] = set()
    big = 0
    for eqn in program.eqns:
        total = 1
        for v in eqn.inputs:
            if v in candidates and total + size[v] <= max_ops and made_at[v] == big:
                inlined.add(v)
                total += size[v]
        for out in eqn.outs:
            size[out] = total
            made_at[out] = big
        if not eqn.prim.elementwise and any(_nbytes(out) >= CARRY_LIMIT_BYTES
                                            for out in eqn.outs):
            big += 1
    return inlined


def _nbytes(v: Var) -> int:
    return _size(v.shape) * v.dtype.itemsize
