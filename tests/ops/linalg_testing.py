"""Random matrices for the linear algebra tests."""

import numpy as np

rng = np.random.default_rng(4)


def randn(*shape):
    return rng.standard_normal(shape)


def spd(*shape):
    """Well-conditioned symmetric positive definite matrices of ``shape`` (..., n, n)."""
    m = rng.standard_normal(shape)
    n = shape[-1]
    return m @ np.swapaxes(m, -1, -2) / n + np.eye(n)


def well_conditioned(*shape):
    """Non-symmetric, invertible, with a positive determinant."""
    n = shape[-1]
    return rng.standard_normal(shape) * 0.3 + np.eye(n) * 1.5
