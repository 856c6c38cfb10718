"""CuPy's rules (``ops/backends/cupy.py``) checked where no GPU is: run with NumPy standing
in for CuPy (the same functions), they must equal gradtape's NumPy implementations.
``test_cupy_backend.py`` runs them on CuPy where a GPU is."""

import numpy as np
import pytest

from gradtape.core.backends import ArrayKind
from gradtape.ops.backends.rules import _LIBRARY_RULES
from gradtape.ops.index import parse_index

STAND_IN = ArrayKind("cupy", np, protocols=True)
X = np.random.default_rng(4).normal(size=(4, 5))


def rule(name):
    return _LIBRARY_RULES["cupy"][name](STAND_IN)


def numpy_impl(name):
    import gc

    from gradtape.ir.primitive import Primitive

    return next(o for o in gc.get_objects() if isinstance(o, Primitive) and o.name == name).impl


@pytest.mark.parametrize("name,args,params", [
    ("argmax", (X,), dict(axis=1, keepdims=False)),
    ("argmin", (X,), dict(axis=None, keepdims=False)),
    ("cumsum", (X,), dict(axis=1, exclusive=True, reverse=True)),
    ("cumprod", (X,), dict(axis=0, exclusive=False, reverse=True)),
    ("shift", (X,), dict(axis=1, offset=-2, fill=0.5)),
    ("linear_recurrence", (X, X[::-1]), dict(axis=1, reverse=False)),
    ("one_hot", (np.array([0, 3, 5]),), dict(depth=4, on_value=1.0, off_value=-1.0,
                                            axis=0, dtype=np.dtype(np.float64))),
    ("cholesky", (X @ X.T + 4 * np.eye(4),), {}),
    ("argsort", (np.round(X),), dict(axis=1, kind="stable", descending=True)),
    ("argsort", (np.round(X),), dict(axis=0, kind="stable", descending=False)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_cupy_rule_equals_the_numpy_implementation(name, args, params):
    got, expected = rule(name)(*args, **params), numpy_impl(name)(*args, **params)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("index", [(slice(1, None), [0, 2, 2]), (2, slice(None, None, -1)),
                                   ([[0, 1]], [3, 3])])
def test_cupy_getitem_rule_equals_numpy_indexing(index):
    template, arrays = parse_index(index, X.shape)
    got = rule("getitem")(X, *arrays, index=template)
    np.testing.assert_array_equal(got, X[index])


def test_cupy_refuses_scipy_matrix_functions_clearly():
    with pytest.raises(NotImplementedError, match="does not run on cupy arrays"):
        rule("expm")(X[:4, :4])
