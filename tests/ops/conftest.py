"""Fixtures for op tests."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.tensor import Tensor


def _check_jvp(f, args, *, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    """Push random tangents through the JVP rules of every op ``f`` records and compare
    the output tangent with central finite differences (until forward mode exists, this
    is how JVP rules are tested)."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a, dtype=np.float64) for a in args]
    xs = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    tangents = {x._id: gt.constant(v) for x, v in zip(xs, vs)}
    for prim, in_ids, in_vals, params, out_ids, out_vals, _ in tape._records:
        ts = tuple(tangents.get(i) if i is not None else None for i in in_ids)
        if all(t is None for t in ts):
            continue
        inputs = [Tensor._wrap(v) if i is not None else v for i, v in zip(in_ids, in_vals)]
        out = prim.jvp(ts, Tensor._wrap(out_vals[0]), *inputs, **params)
        if out is not None:
            assert tuple(out.shape) == tuple(np.shape(out_vals[0])), prim.name
            tangents[out_ids[0]] = out
    analytic = tangents.get(y._id)
    analytic = np.zeros(y.shape) if analytic is None else np.asarray(analytic)
    plus = np.asarray(f(*[gt.constant(a + eps * v) for a, v in zip(arrays, vs)]))
    minus = np.asarray(f(*[gt.constant(a - eps * v) for a, v in zip(arrays, vs)]))
    np.testing.assert_allclose(analytic, (plus - minus) / (2 * eps), rtol=rtol, atol=atol)


@pytest.fixture
def check_jvp():
    return _check_jvp
