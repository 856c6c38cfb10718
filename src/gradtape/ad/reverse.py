"""Reverse-mode autodiff as a Program -> Program transform.

Walking the forward equations backwards, each primitive's VJP rule is called on IR
values, so it *emits* the backward equations. The result is an ordinary program of the
same primitives: it can be printed, optimized, compiled, interpreted, or differentiated
again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.builder import Builder
from ..ir.dce import eliminate_dead_code
from ..ir.lower import is_differentiable_dtype
from ..ir.naming import op_cotangent_name
from ..ir.nodes import IRValue, Literal, Program, Var
from ..ir.walk import free_vars
from ..ops import elementwise as _ew
from ..ops import shape as _shape


def _accumulate(cts: dict, var: Var, ct: IRValue) -> None:
    if ct.dtype != var.dtype:
        ct = _ew.cast(ct, var.dtype)
    previous = cts.get(var)
    cts[var] = ct if previous is None else _ew.add(previous, ct)


def _name_cotangent(ct: IRValue | None, var: Var, prim_name: str | None,
                    forward_vars: set) -> None:
    """Name ``var``'s whole cotangent after it (``d_hidden``; ``d_matmul_out`` for an
    unnamed output of a matmul). A cotangent passed on unchanged (``x + b``) is named
    after the user's name nearest the sources; an op's name never replaces a name.
    Partial contributions keep their op names, and a forward value is never renamed."""
    if not isinstance(ct, Var) or ct in forward_vars:
        return
    if var.name is not None:
        ct.name = f"d_{var.name}"
    elif ct.name is None and prim_name is not None:
        ct.name = op_cotangent_name(prim_name)


def vjp_program(
    forward: Program, wrt: Sequence[Var], seeds: Sequence[IRValue | None]
) -> tuple[Program, list[Var]]:
    """Build the backward program of ``forward``.

    ``seeds[i]`` is the cotangent of ``forward.outputs[i]`` (an input Var, or a Literal
    for TF's implicit ones); ``None`` means the output is not differentiated. Returns
    the backward Program, whose outputs are the cotangents of ``wrt`` (``None`` where
    unconnected), and the forward vars it reads (its leading inputs, "residuals").
    The seed vars follow the residuals in its inputs.
    """
    wrt_set = set(wrt)
    forward_vars = set(forward.inputs).union(*(eqn.outs for eqn in forward.eqns))
    grads: dict[Var, IRValue] = {}
    cts: dict[Var, IRValue] = {}
    with Builder() as b:
        for out, seed in zip(forward.outputs, seeds):
            if isinstance(out, Var) and seed is not None and is_differentiable_dtype(out.dtype):
                if isinstance(seed, Literal) and seed.aval.shape:
                    # TF's implicit ones for a non-scalar target, as an array of the
                    # target's shape: rules may reshape or transpose their cotangent.
                    seed = _shape.broadcast_to(Literal(seed.value), seed.aval.shape)
                _accumulate(cts, out, seed)
        for eqn in reversed(forward.eqns):
            out_cts = []
            for out in eqn.outs:
                ct = cts.pop(out, None)
                if out in wrt_set:
                    grads[out] = ct
                _name_cotangent(ct, out, eqn.prim.name, forward_vars)
                out_cts.append(ct)
            if all(ct is None for ct in out_cts) or not eqn.prim.differentiable:
                continue
            b.loc = (eqn.loc, eqn.prim.name)
            if eqn.prim.multiple_results:
                g = tuple(_ew.zeros_like(o) if ct is None else ct
                          for o, ct in zip(eqn.outs, out_cts))
                y = eqn.outs
            else:
                g, y = out_cts[0], eqn.outs[0]
            in_cts = eqn.prim.vjp(g, y, *eqn.inputs, **eqn.params)
            for var, ct in zip(eqn.inputs, in_cts):
                if ct is None or isinstance(var, Literal):
                    continue
                if is_differentiable_dtype(var.dtype):
                    _accumulate(cts, var, ct)
        for var in wrt:
            if var not in grads:
                grads[var] = cts.get(var)
            _name_cotangent(grads[var], var, None, forward_vars)
        outputs = [grads[v] for v in wrt]
        program = b.program([], outputs)
    seed_vars = [s for s in seeds if isinstance(s, Var)]
    program = eliminate_dead_code(program)
    residuals = free_vars(program, exclude=set(seed_vars))
    program.inputs = residuals + seed_vars
    return program, residuals
