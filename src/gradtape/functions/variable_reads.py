"""``variable_read``: a variable's value after an ``assign*`` inside a ``@gt.function``
trace, ``strip_reads``, which leaves it out of the code that runs, and the checks of an
assignment while tracing (``check_assignable``)."""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Eqn, Program
from ..ops.registry import Primitive


def _read_impl(assigned: Any, variable: Any) -> Any:
    return assigned


def _batch_read(size: int, args: list, batched: list) -> Any:
    """Batching rule: both operands with the batch axis, then the same read."""
    from ..ops.registry import bind
    from ..ops.shape import broadcast_to

    a, v = (x if is_batched else broadcast_to(x, (size,) + tuple(x.shape))
            for x, is_batched in zip(args, batched))
    return bind(variable_read_p, a, v)


# ``variable_read(assigned, variable)``: the variable's value after an assignment inside
# the trace. The value is ``assigned``; derivatives go to ``variable`` (the input holding
# its value at call time), as an eager read of the variable gives them. Executed code
# never contains it (``strip_reads``): it matters only to autodiff of the trace.
variable_read_p = Primitive(
    "variable_read", _read_impl,
    kind_neutral=True,
    vjp=lambda g, y, assigned, variable: (None, g),
    jvp=lambda tangents, y, assigned, variable: tangents[1],
    shape_rule=lambda assigned, variable: assigned.aval,
    batch=_batch_read,
)


def strip_reads(program: Program) -> Program:
    """``program`` with every ``variable_read`` replaced by the value assigned."""
    subst: dict[Any, Any] = {}
    eqns = []
    for eqn in program.eqns:
        if eqn.prim is variable_read_p:
            value = eqn.inputs[0]
            subst[eqn.outs[0]] = subst.get(value, value)
            continue
        if subst and any(v in subst for v in eqn.inputs):
            eqn = Eqn(eqn.prim, [subst.get(v, v) for v in eqn.inputs], eqn.outs, eqn.params,
                      eqn.loc)
        eqns.append(eqn)
    if not subst:
        return program
    outputs = [subst.get(v, v) if v is not None else None for v in program.outputs]
    return Program(program.inputs, eqns, outputs)


def check_assignable(variable: Any, value: Any) -> None:
    """Variable._new_value's checks, without reading the tensor's value."""
    if value.dtype != variable.dtype:
        raise ValueError(
            f"Cannot assign a {value.dtype.name} tensor to variable {variable.name!r} of "
            f"dtype {variable.dtype.name}; convert it first with gt.cast(value, "
            f"'{variable.dtype.name}')."
        )
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError(
            f"Cannot assign value to variable {variable.name!r}: shape mismatch. The "
            f"variable shape {tuple(variable.shape)} and the assigned value shape "
            f"{tuple(value.shape)} are incompatible; assign a value of shape "
            f"{tuple(variable.shape)}."
        )
