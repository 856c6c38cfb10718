"""Helpers for the pass tests: build programs, differentiate tape functions, compare."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import gradtape as gt
from gradtape.ad.reverse import vjp_program
from gradtape.compiler.build import seed_for
from gradtape.ir import interpreter
from gradtape.ir.builder import Builder, emit
from gradtape.ir.lower import Trace, prune
from gradtape.ir.nodes import Aval, Literal, Program, Var
from gradtape.ir.verifier import verify

# Tests whose premise is NumPy 2's promotion of Python and NumPy scalars (NEP 50). Under
# NumPy 1 value-based casting gives these programs other dtypes, and the passes, which
# only accept rewrites that keep every aval, leave them as they are.
needs_nep50 = pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="premise: NumPy 2's scalar promotion (NEP 50); NumPy 1 gives other dtypes",
)


def var(shape: tuple[int, ...], dtype: Any = np.float32) -> Var:
    return Var(Aval(tuple(shape), np.dtype(dtype)), "x")


def build(fn: Callable[..., Any], *inputs: Var) -> Program:
    """The program ``fn`` emits on ``inputs`` (its result: one value or a tuple)."""
    with Builder() as b:
        outs = fn(*inputs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    program = b.program(list(inputs), outs)
    verify(program)
    return program


def raw(prim, *args, **params):
    """Emit ``prim`` even where the op wrapper would skip it as a no-op."""
    return emit(prim, args, params)


def args_for(program: Program, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for v in program.inputs:
        if np.issubdtype(v.dtype, np.integer):
            out.append(rng.integers(-5, 5, size=v.shape).astype(v.dtype))
        elif v.dtype == np.bool_:
            out.append(rng.random(v.shape) > 0.5)
        else:
            out.append(rng.standard_normal(v.shape).astype(v.dtype))
    return out


def assert_same_results(before: Program, after: Program, args: Sequence[Any],
                        exact: bool = True) -> None:
    """Both programs give the same values, shapes and dtypes on ``args``."""
    expected = interpreter.run(before, args)
    got = interpreter.run(after, args)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        assert (e is None) == (g is None)
        if e is None:
            continue
        e, g = np.asarray(e), np.asarray(g)
        assert e.shape == g.shape
        assert e.dtype == g.dtype
        if exact:
            np.testing.assert_array_equal(g, e)
        else:
            # Reading a broadcast view instead of a copy may change NumPy's summation
            # order: allow rounding relative to the size of the values involved.
            rtol = 2e-5 if e.dtype in (np.float32, np.complex64) else 1e-12
            scale = max(1.0, float(np.max(np.abs(e), initial=0.0)))
            np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * scale)


def prims(program: Program) -> list[str]:
    return [eqn.prim.name for eqn in program.eqns]


def literal_values(program: Program) -> list[Any]:
    return [v.value for eqn in program.eqns for v in eqn.inputs if isinstance(v, Literal)]


def backward_of(f: Callable[..., Any], *arrays: np.ndarray) -> tuple[Program, list[Any]]:
    """The unoptimized backward program of scalar ``f`` and the arrays it takes."""
    xs = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = f(*xs)
    trace = Trace(prune(tape._records, [x._id for x in xs], [y._id]), xs, [y._id], (None,))
    forward, slot_vars = trace.to_program()
    wrt = [slot_vars[s] for s in trace.source_slots]
    seeds = [seed_for(forward.outputs[0].aval, None)]
    program, residuals = vjp_program(forward, wrt, seeds)
    slot_of = {id(v): s for s, v in enumerate(slot_vars)}
    args = [trace.value(slot_of[id(r)], xs) for r in residuals]
    verify(program)
    return program, args
