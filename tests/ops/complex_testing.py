"""TF's complex gradient convention, checked numerically: for a real loss L of complex
inputs, the gradient is dL/dRe + i dL/dIm."""

import numpy as np

import gradtape as gt


def real_loss(y):
    """A real loss that reads both parts of a complex ``y``."""
    return gt.sum(gt.real(y * gt.conj(y))) + gt.sum(gt.real(y))


def numeric_complex_gradient(f, args, k, eps=1e-6):
    """dL/dRe + i dL/dIm of the real ``f(*args)`` with respect to ``args[k]``, by central
    differences along both parts of every element."""
    g = np.zeros_like(args[k])
    for idx in np.ndindex(args[k].shape):
        for unit in (1.0, 1j):
            p = [v.copy() for v in args]
            m = [v.copy() for v in args]
            p[k][idx] += eps * unit
            m[k][idx] -= eps * unit
            diff = f(*map(gt.constant, p)).numpy() - f(*map(gt.constant, m)).numpy()
            g[idx] += diff / (2 * eps) * (1 if unit == 1.0 else 1j)
    return g
