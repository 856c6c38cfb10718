"""Algebraic simplification: folding, zeros and ones, signs, no-op shapes, regrouped
products, merged selects, cheaper matrix products, in one walk.

Each rule set lives in its own module (``fold``, ``zeros_ones``, ``signs``,
``noop_shapes``, ``regroup``, ``selects``, ``matmuls``) and can run alone; together they share one
walk, so a chain such as
``broadcast_to(reshape(1.0)) * g -> g -> reshape(g) to g's shape -> g`` resolves in a
single pass: every equation sees its inputs already simplified.
"""

from __future__ import annotations

from ..ir.nodes import Program
from . import fold, matmuls, noop_shapes, regroup, selects, signs, zeros_ones
from .fold import fold_fill, literal_operands
from .rewrite import merge_rules, rewrite

RULES = merge_rules(zeros_ones.RULES, fold.RULES, signs.RULES, noop_shapes.RULES,
                    regroup.RULES, selects.RULES, matmuls.RULES)
# Inside loop bodies the products stay products: loop motion moves a per-iteration
# outer product (a weight's cotangent, ``x_t.T @ g_t``) out of the loop as one product.
RULES_IN_LOOPS = merge_rules(zeros_ones.RULES, fold.RULES, signs.RULES, noop_shapes.RULES,
                             regroup.RULES, selects.RULES)
LATE = (literal_operands, noop_shapes.implicit_broadcasts)


def simplify(program: Program, in_loop: bool = False) -> Program:
    """``program`` with every simplification rule applied (run DCE afterwards);
    ``in_loop``: a loop body's or branch's, without ``matmuls``' rules."""
    return rewrite(program, RULES_IN_LOOPS if in_loop else RULES, generic=(fold_fill,),
                   late=LATE)
