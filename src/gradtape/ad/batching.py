"""Batching: vectorize a Program over a new leading axis (the IR's ``vmap``).

``jacobian`` runs a backward program once for a whole basis of cotangents instead of
once per row: the cotangent input gets a leading axis and every equation that reads a
batched value is rewritten by its primitive's batching rule. A batched value always
carries the batch at axis 0; values that don't depend on a batched input are left as
they are (NumPy broadcasting lines them up from the right).

Rule signature: ``rule(size, args, batched, **params)`` returns the output(s), batched
at axis 0. ``args`` are IR values; ``batched[i]`` says whether ``args[i]`` has the batch
axis. Elementwise primitives share one rule; any primitive without a rule falls back
to one equation per batch element (correct, and slow: give hot primitives a rule).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.builder import Builder
from ..ir.nodes import Aval, Literal, Program, Var
from ..ir.walk import keep_literal, read_outputs, walk


def batch_program(program: Program, batched_inputs: Sequence[bool], size: int,
                  broadcast: Sequence[bool] | None = None) -> Program:
    """``program`` vectorized over a leading axis of length ``size`` on the flagged inputs.

    Every output of the result is batched (unbatched ones are broadcast), so output
    ``i`` has shape ``(size,) + program.outputs[i].shape``; ``None`` outputs stay None.
    ``broadcast[i]`` false leaves output ``i`` as it is when it does not depend on a
    batched input (a loop body's carry that stays the same for every element).
    """
    from ..ops import shape as shape_ops
    from ..ops.registry import bind

    inputs = []
    for var, is_batched in zip(program.inputs, batched_inputs):
        aval = Aval((size,) + tuple(var.shape), var.dtype) if is_batched else var.aval
        new = Var(aval, var.hint)
        new.name = var.name  # the rows of the same value: the same name in the code
        inputs.append((new, is_batched))
    new_inputs = {new for new, _ in inputs}

    def batch_eqn(eqn, pairs: list):
        """``(new value, batched?)`` of each output of ``eqn``."""
        args = [new for new, _ in pairs]
        flags = [is_batched for _, is_batched in pairs]
        b.loc = eqn.loc
        if any(flags):
            outs = rule_for(eqn.prim)(size, args, flags, **eqn.params)
        else:
            outs = bind(eqn.prim, *args, **eqn.params)
        batched = any(flags)
        if eqn.prim.multiple_results:
            return [(new, batched) for new in outs]
        if isinstance(outs, Var) and outs.name is None and outs not in new_inputs:
            outs.name = eqn.outs[0].name
        return (outs, batched)

    with Builder() as b:
        env = walk(program, inputs, batch_eqn, _unbatched)
        outputs = []
        for out in program.outputs:
            if out is None:
                outputs.append(None)
                continue
            new, is_batched = _unbatched(out) if isinstance(out, Literal) else env[out]
            if not is_batched and (broadcast is None or broadcast[len(outputs)]):
                new = shape_ops.broadcast_to(new, (size,) + tuple(out.shape))
            outputs.append(new)
    return Program([new for new, _ in inputs], b.eqns, outputs)


def batched_outputs(program: Program, batched_inputs: Sequence[bool]) -> list[bool]:
    """Which outputs ``batch_program`` batches: those reading, through any chain of
    equations, a batched input (a ``Literal`` output never is)."""
    batched = {v for v, flag in zip(program.inputs, batched_inputs) if flag}
    for eqn in program.eqns:
        if any(isinstance(v, Var) and v in batched for v in eqn.inputs):
            batched.update(eqn.outs)
    return [isinstance(v, Var) and v in batched for v in program.outputs]


def _unbatched(literal: Literal) -> tuple:
    return (literal, False)


def rule_for(prim):
    """``prim``'s declared batching rule, else the elementwise one or the loop."""
    from ..ops.batch_rules import batch_by_loop, batch_elementwise

    rule = prim.batch
    if rule is not None:
        return rule
    if prim.elementwise:
        return lambda size, args, batched, **params: batch_elementwise(
            prim, size, args, batched, **params
        )
    return lambda size, args, batched, **params: batch_by_loop(
        prim, size, args, batched, **params
    )


# --- the identity basis ---------------------------------------------------------------------

def specialize_identity(program: Program, identity: Var) -> Program:
    """``program`` given that input ``identity`` holds one-hot seeds: shape
    ``(n, *mid, n)``, value ``1`` where the first and last indices agree, for every
    middle index. That is ``eye(n)`` for a jacobian of a vector target, all rows at once,
    and ``eye(n)`` broadcast over the examples for a ``batch_jacobian``.

    Products with it become what one writes by hand: ``I @ B -> B``, and with a scaled
    basis ``D = I * v``, ``D @ B -> v[..., None] * B``. The rewritten equations stay in
    the program (dead-code elimination removes those nothing reads), so any other use of
    the seeds still sees their values.
    """
    from ..ops import elementwise as ew
    from ..ops import shape as shape_ops
    from ..ops.registry import bind

    full = tuple(identity.shape)
    if len(full) < 2 or full[0] != full[-1]:
        return program
    n, mid = full[0], full[1:-1]
    size = int(np.prod(mid, dtype=np.int64))
    merged_shape = (n * size, n)
    # var -> (v, merged): the var is the basis scaled by v (None: by ones; v broadcasts
    # to (*mid, n)), in shape `full`, or with its leading axes merged (`merged_shape`).
    facts: dict = {identity: (None, False)}

    def scale_of(w):
        """The scale ``w`` multiplies the basis by, as a value over (*mid, n), if it
        does not vary along the first axis (where the basis is one-hot)."""
        shape = tuple(w.shape)
        if len(shape) < len(full):
            return w
        if shape[0] == 1:
            return shape_ops.reshape(w, shape[1:])
        if shape[0] == n and all(d == 1 for d in shape[1:]):
            return shape_ops.reshape(w, (n,))  # varies along the first axis = the last
        return None

    def times(v, w):
        return w if v is None else ew.multiply(v, w)

    def contract(v, b, merged):
        """``basis(v) @ b`` for a 2-d ``b`` of shape (n, p): row (j, m) is v[m, j] * b[j]."""
        p = b.shape[1]
        if not mid and v is not None:  # diag(v) @ b
            v = shape_ops.broadcast_to(v, (n,)) if tuple(v.shape) != (n,) else v
            return ew.multiply(shape_ops.reshape(v, (n, 1)), b)
        rows = shape_ops.reshape(b, (n, 1, p))
        if v is None:
            out = shape_ops.broadcast_to(rows, (n, size, p))
        else:
            v = shape_ops.broadcast_to(v, mid + (n,)) if tuple(v.shape) != mid + (n,) else v
            if mid:
                v = shape_ops.transpose(v, (len(mid),) + tuple(range(len(mid))))
            out = ew.multiply(shape_ops.reshape(v, (n, size, 1)), rows)
        return shape_ops.reshape(out, (n * size, p) if merged else (n,) + mid + (p,))

    def rewrite(name, ins):
        """The replacement of a product with a known basis, or None."""
        if name != "matmul" or len(ins[1].shape) != 2:
            return None
        left, right = ins
        if left in facts and right.shape[0] == n:
            v, merged = facts[left]
            if not mid and v is None:
                return right
            return contract(v, right, merged)
        if right in facts and not mid and len(left.shape) == 2:
            v, _ = facts[right]
            return left if v is None else ew.multiply(left, shape_ops.reshape(v, (1, n)))
        return None

    def learn(name, ins, out, params):
        """What an equation's output is, if it is the basis scaled."""
        shape = tuple(out.shape)
        if name == "multiply" and shape == full:
            for this, other in (ins, ins[::-1]):
                if this in facts and not facts[this][1]:
                    scale = scale_of(other)
                    if scale is not None:
                        facts[out] = (times(facts[this][0], scale), False)
                        return
        elif name == "negative" and ins[0] in facts and facts[ins[0]][0] is not None:
            v, merged = facts[ins[0]]
            facts[out] = (ew.negative(v), merged)
        elif name == "transpose" and ins[0] in facts and not mid and \
                tuple(params["axes"]) == (1, 0):
            facts[out] = facts[ins[0]]  # a scaled identity matrix is symmetric
        elif name == "reshape" and ins[0] in facts:
            v, merged = facts[ins[0]]
            if shape == (merged_shape if merged else full):
                facts[out] = (v, merged)
            elif mid and shape == (full if merged else merged_shape):
                facts[out] = (v, not merged)

    def apply(eqn, ins: list):
        b.loc = eqn.loc
        replacement = rewrite(eqn.prim.name, ins)
        if replacement is not None:
            out = eqn.outs[0]
            if replacement.dtype != out.dtype:
                replacement = ew.cast(replacement, out.dtype)
            return replacement
        outs = bind(eqn.prim, *ins, **eqn.params)
        learn(eqn.prim.name, ins, outs[0] if eqn.prim.multiple_results else outs,
              eqn.params)
        return outs

    with Builder() as b:
        env = walk(program, program.inputs, apply, keep_literal)
        outputs = read_outputs(program, env, keep_literal)
    return Program(program.inputs, b.eqns, outputs)
