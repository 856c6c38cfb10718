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
