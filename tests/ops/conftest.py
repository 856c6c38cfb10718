"""Fixtures for op tests."""

import numpy as np
import pytest

import gradtape as gt


def _check_jvp(f, args, *, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    """Forward mode (``gt.jvp``, the ops' JVP rules) against central finite differences
    along random tangents."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=np.float64) for a in args]
    vs = [rng.standard_normal(a.shape) for a in arrays]
    _, jv = gt.jvp(f, [gt.constant(a) for a in arrays], [gt.constant(v) for v in vs])
    plus = np.asarray(f(*[gt.constant(a + eps * v) for a, v in zip(arrays, vs)]))
    minus = np.asarray(f(*[gt.constant(a - eps * v) for a, v in zip(arrays, vs)]))
    assert jv.shape == plus.shape and jv.dtype == plus.dtype
    np.testing.assert_allclose(jv.numpy(), (plus - minus) / (2 * eps), rtol=rtol, atol=atol)


@pytest.fixture
def check_jvp():
    return _check_jvp


def _check_batching(f, args, batched=None, *, size=3, seed=0):
    """``f`` traced to a Program on IR values, vectorized over a leading axis of ``size``
    (``ir/batching``), equals the Program run once per batch element, and used the
    primitives' own batching rules (not the per-element fallback). Integer ``args`` (index
    arrays) are program inputs too; ``batched[i]`` says which inputs get the batch axis
    (default: the floating ones)."""
    from gradtape.ad import batching
    from gradtape.ir import interpreter
    from gradtape.ir.builder import Builder
    from gradtape.ir.nodes import Aval, Var

    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a) for a in args]
    if batched is None:
        batched = [a.dtype.kind == "f" for a in arrays]
    inputs = [Var(Aval(a.shape, a.dtype)) for a in arrays]
    with Builder() as b:
        out = f(*inputs)
    program = b.program(inputs, [out])
    values = [rng.standard_normal((size,) + a.shape) if flag else a
              for a, flag in zip(arrays, batched)]
    vectorized = batching.batch_program(program, batched, size)
    result = interpreter.run(vectorized, values)[0]
    expected = np.stack([
        interpreter.run(program, [v[i] if flag else v for v, flag in zip(values, batched)])[0]
        for i in range(size)
    ])
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    assert len(vectorized.eqns) <= 2 * len(program.eqns) + 1, "fell back to a loop"


@pytest.fixture
def check_batching():
    return _check_batching
