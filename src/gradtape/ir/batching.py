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

from .builder import Builder
from .nodes import Aval, Literal, Program, Var


def batch_program(program: Program, batched_inputs: Sequence[bool], size: int) -> Program:
    """``program`` vectorized over a leading axis of length ``size`` on the flagged inputs.

    Every output of the result is batched (unbatched ones are broadcast), so output
    ``i`` has shape ``(size,) + program.outputs[i].shape``; ``None`` outputs stay None.
    """
    from ..ops import shape as shape_ops
    from ..ops.registry import bind

    env: dict[Var, tuple] = {}
    inputs = []
    for var, is_batched in zip(program.inputs, batched_inputs):
        aval = Aval((size,) + tuple(var.shape), var.dtype) if is_batched else var.aval
        new = Var(aval, var.hint)
        env[var] = (new, is_batched)
        inputs.append(new)
    with Builder() as b:
        for eqn in program.eqns:
            args, flags = [], []
            for x in eqn.inputs:
                if isinstance(x, Literal):
                    args.append(x)
                    flags.append(False)
                else:
                    new, is_batched = env[x]
                    args.append(new)
                    flags.append(is_batched)
            b.loc = eqn.loc
            if any(flags):
                outs = rule_for(eqn.prim)(size, args, flags, **eqn.params)
            else:
                outs = bind(eqn.prim, *args, **eqn.params)
            outs = outs if eqn.prim.multiple_results else (outs,)
            for old, new in zip(eqn.outs, outs):
                env[old] = (new, any(flags))
        outputs = []
        for out in program.outputs:
            if out is None:
                outputs.append(None)
                continue
            if isinstance(out, Literal):
                new, is_batched = out, False
            else:
                new, is_batched = env[out]
            if not is_batched:
                new = shape_ops.broadcast_to(new, (size,) + tuple(out.shape))
            outputs.append(new)
    return Program(inputs, b.eqns, outputs)


def rule_for(prim):
    rule = getattr(prim, "batch", None)
    if rule is not None:
        return rule
    if prim.elementwise:
        return lambda size, args, batched, **params: batch_elementwise(
            prim, size, args, batched, **params
        )
    return lambda size, args, batched, **params: batch_by_loop(
        prim, size, args, batched, **params
    )


def batch_elementwise(prim, size, args, batched, **params):
    """Elementwise ops broadcast: give batched inputs the full rank so that the batch
    axis lines up in front of every other input's axes."""
    from ..ops import shape as shape_ops
    from ..ops.registry import bind

    rank = max(len(a.shape) - int(f) for a, f in zip(args, batched))
    aligned = []
    for a, f in zip(args, batched):
        if f and len(a.shape) - 1 < rank:
            logical = tuple(a.shape[1:])
            a = shape_ops.reshape(a, (size,) + (1,) * (rank - len(logical)) + logical)
        aligned.append(a)
    return bind(prim, *aligned, **params)


def move_batch_axis_to_front(x, axis: int):
    """``x`` with its axis ``axis`` moved to 0 (for rules whose op put the batch elsewhere)."""
    from ..ops import shape as shape_ops

    if axis == 0:
        return x
    perm = (axis,) + tuple(i for i in range(len(x.shape)) if i != axis)
    return shape_ops.transpose(x, perm)


def batch_by_loop(prim, size, args, batched, **params):
    """Fallback: apply ``prim`` to each batch element and stack the results."""
    from .. import ops
    from ..ops.registry import bind

    per_element = []
    for i in range(size):
        sliced = [ops.getitem(a, i) if f else a for a, f in zip(args, batched)]
        per_element.append(bind(prim, *sliced, **params))
    if prim.multiple_results:
        count = len(per_element[0])
        return tuple(ops.stack([outs[k] for outs in per_element]) for k in range(count))
    return ops.stack(per_element)


# --- the identity basis ---------------------------------------------------------------------

def specialize_identity(program: Program, identity: Var) -> Program:
    """``program`` given that input ``identity`` is the identity matrix ``eye(n)``: the
    seed of a jacobian of a vector target, all rows at once.

    Products with it become what one writes by hand: ``I @ B -> B``, and with
    ``D = I * v`` (a diagonal matrix), ``D @ B -> v[:, None] * B``. The rewritten
    equations stay in the program (dead-code elimination removes those nothing reads),
    so any other use of ``I`` or ``D`` still sees their values.
    """
    from ..ops import elementwise as ew
    from ..ops import shape as shape_ops
    from ..ops.registry import bind

    n = identity.shape[0]
    if identity.shape != (n, n):
        return program
    env: dict = {v: v for v in program.inputs}
    eye = {identity}  # vars equal to eye(n)
    diagonal: dict = {}  # var -> v (shape (n,)): the var equals diag(v)

    def as_vector(w):
        """``w`` as the diagonal it scales ``eye(n)`` to, if it is one (None if not)."""
        if tuple(w.shape) in ((n,), (1, n), (n, 1)):
            return w if tuple(w.shape) == (n,) else shape_ops.reshape(w, (n,))
        return None

    def fitted(value, out):
        return value if value.dtype == out.dtype else ew.cast(value, out.dtype)

    with Builder() as b:
        for eqn in program.eqns:
            ins = [x if isinstance(x, Literal) else env[x] for x in eqn.inputs]
            name = eqn.prim.name
            replacement = None
            if name == "matmul" and len(ins[0].shape) == 2 and len(ins[1].shape) == 2:
                left, right = ins
                if left in eye:
                    replacement = right
                elif right in eye:
                    replacement = left
                elif left in diagonal:
                    replacement = ew.multiply(shape_ops.reshape(diagonal[left], (n, 1)), right)
                elif right in diagonal:
                    replacement = ew.multiply(left, shape_ops.reshape(diagonal[right], (1, n)))
            b.loc = eqn.loc
            if replacement is not None:
                out = eqn.outs[0]
                env[out] = fitted(replacement, out)
                continue
            outs = bind(eqn.prim, *ins, **eqn.params)
            outs = outs if eqn.prim.multiple_results else (outs,)
            env.update(zip(eqn.outs, outs))
            out = outs[0]
            if name == "transpose" and ins[0] in eye:
                eye.add(out)
            elif name == "transpose" and ins[0] in diagonal:
                diagonal[out] = diagonal[ins[0]]
            elif name == "multiply" and len(ins) == 2 and out.shape == (n, n):
                for this, other in (ins, ins[::-1]):
                    scale = as_vector(other) if this in eye else None
                    if scale is None and this in diagonal and other.shape == ():
                        scale = ew.multiply(diagonal[this], other)
                    if scale is not None:
                        diagonal[out] = scale
                        break
            elif name == "negative" and ins[0] in diagonal:
                diagonal[out] = ew.negative(diagonal[ins[0]])
        outputs = [o if o is None or isinstance(o, Literal) else env[o]
                   for o in program.outputs]
    return Program(program.inputs, b.eqns, outputs)
