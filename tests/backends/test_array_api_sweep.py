"""Every gradtape op with an array-API standard equivalent, on ``array_api_strict``.

A table of ops with sample inputs: each runs on ``array_api_strict`` arrays (a library
with no NumPy fallbacks) and on NumPy arrays holding the same data. Values, gradients
(for a random upstream gradient) and, where cheap, second derivatives must agree with
NumPy's, stay ``array_api_strict`` arrays, and match central finite differences, in both
compile modes (generated code and the interpreter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_vjp_matches_differences

xp = pytest.importorskip("array_api_strict")

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

_RNG = np.random.default_rng(7)


def _normal(*shape: int) -> np.ndarray:
    return _RNG.normal(size=shape)


def _positive(*shape: int) -> np.ndarray:
    return _RNG.uniform(0.5, 2.0, size=shape)


def _unit(*shape: int) -> np.ndarray:
    return _RNG.uniform(-0.8, 0.8, size=shape)


def _spd(n: int) -> np.ndarray:
    a = _normal(n, n)
    return a @ a.T + n * np.eye(n)


def _distinct(*shape: int) -> np.ndarray:
    """Values far apart (no ties: sorting and max are differentiable there)."""
    return _RNG.permutation(np.prod(shape)).reshape(shape) * 0.37 - 1.1


class Case(NamedTuple):
    name: str
    f: Callable[..., Any]
    inputs: tuple  # NumPy arrays, made tensors of either library
    differentiable: bool = True
    second_order: bool = False
    rtol: float = 1e-12


def case(name, f, *inputs, differentiable=True, second_order=False, rtol=1e-12) -> Case:
    return Case(name, f, inputs, differentiable, second_order, rtol)


M = _normal(3, 4)
SQ = _normal(3, 3) + 3 * np.eye(3)
V = _normal(4)

CASES = [
    # elementwise, one argument
    *[case(name, getattr(gt, name), M, second_order=name in ("tanh", "sin", "exp"))
      for name in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "atan",
                   "asinh", "square", "negative", "sigmoid", "softplus", "abs", "sign",
                   "exp2", "cbrt")],
    *[case(name, getattr(gt, name), _positive(3, 4), second_order=name == "sqrt")
      for name in ("log", "log1p", "log2", "log10", "sqrt", "reciprocal")],
    *[case(name, getattr(gt, name), _unit(3, 4)) for name in ("asin", "acos", "atanh")],
    case("acosh", gt.acosh, _positive(3, 4) + 1.0),
    case("rsqrt", gt.math.rsqrt, _positive(3, 4)),
    case("relu", gt.relu, M),
    case("floor", gt.floor, M, differentiable=False),
    case("ceil", gt.ceil, M, differentiable=False),
    case("round", gt.round, M, differentiable=False),
    case("isfinite", gt.math.is_finite, M, differentiable=False),
    case("signbit-less", lambda x: gt.less(x, 0.0), M, differentiable=False),
    # elementwise, two arguments
    *[case(name, getattr(gt, name), M, _normal(4)) for name in (
        "add", "subtract", "multiply", "maximum", "minimum", "atan2", "hypot",
        "logaddexp")],
    case("divide", gt.divide, M, _positive(4)),
    case("pow", gt.pow, _positive(3, 4), _normal(4), second_order=True),
    case("mod", gt.math.floormod, M, _positive(4)),
    case("fmax", gt.fmax, M, _normal(4)),
    case("fmin", gt.fmin, M, _normal(4)),
    case("where", lambda x, y: gt.where(x > 0, x, y), M, _normal(3, 4)),
    case("clip", lambda x: gt.clip_by_value(x, -0.5, 0.5), M),
    case("equal-cast", lambda x, y: gt.cast(gt.greater_equal(x, y), "float64"), M, M.T.T,
         differentiable=False),
    # reductions
    case("reduce_sum", lambda x: gt.reduce_sum(x, axis=0), M),
    case("reduce_prod", lambda x: gt.reduce_prod(x, axis=1), _positive(3, 4)),
    case("reduce_mean", lambda x: gt.reduce_mean(x, axis=1, keepdims=True), M),
    case("reduce_max", lambda x: gt.reduce_max(x, axis=1), _distinct(3, 4)),
    case("reduce_min", lambda x: gt.reduce_min(x), _distinct(3, 4)),
    case("reduce_std", lambda x: gt.math.reduce_std(x, axis=0), M),
    case("reduce_variance", lambda x: gt.math.reduce_variance(x), M),
    case("logsumexp", lambda x: gt.reduce_logsumexp(x, axis=1), M, second_order=True),
    case("softmax", lambda x: gt.nn.softmax(x), M),
    case("log_softmax", lambda x: gt.nn.log_softmax(x, axis=0), M),
    case("sigmoid_xent", lambda x, z: gt.nn.sigmoid_cross_entropy_with_logits(
        labels=z, logits=x), M, _positive(3, 4), second_order=True),
    case("sparse_softmax_xent", lambda x: gt.nn.sparse_softmax_cross_entropy_with_logits(
        np.array([0, 3, 1]), x), M, second_order=True),
    case("cumsum", lambda x: gt.math.cumsum(x, axis=1), M),
    case("cumsum-reverse-exclusive",
         lambda x: gt.math.cumsum(x, axis=0, exclusive=True, reverse=True), M),
    case("cumprod", lambda x: gt.math.cumprod(x, axis=1), _positive(3, 4)),
    case("argmax", lambda x: gt.argmax(x, axis=1), _distinct(3, 4), differentiable=False),
    case("argmin", lambda x: gt.argmin(x), _distinct(3, 4), differentiable=False),
    case("sort", lambda x: gt.sort(x, axis=-1), _distinct(3, 4)),
    case("sort-descending", lambda x: gt.sort(x, direction="DESCENDING"), _distinct(3, 4)),
    case("argsort", lambda x: gt.argsort(x), _distinct(3, 4), differentiable=False),
    case("median", lambda x: np.median(x, axis=1), _distinct(3, 5)),
    case("quantile", lambda x: np.quantile(x, 0.3), _distinct(3, 4)),
    # shapes and arrangement
    case("reshape", lambda x: gt.reshape(x, (2, 6)), M),
    case("transpose", gt.transpose, M),
    case("expand_dims", lambda x: gt.expand_dims(x, 1), M),
    case("squeeze", lambda x: gt.squeeze(x, 0), _normal(1, 4)),
    case("broadcast_to", lambda x: gt.broadcast_to(x, (2, 3, 4)), M),
    case("concat", lambda x, y: gt.concat([x, y], axis=0), M, _normal(2, 4)),
    case("stack", lambda x, y: gt.stack([x, y], axis=1), M, _normal(3, 4)),
    case("flip", lambda x: gt.reverse(x, [1]), M),
    case("roll", lambda x: gt.roll(x, 2, axis=1), M),
    case("tile", lambda x: gt.tile(x, (2, 1)), M),
    case("repeat", lambda x: gt.repeat(x, 2, axis=0), M),
    case("moveaxis", lambda x: gt.moveaxis(x, 0, -1), _normal(2, 3, 4)),
    case("pad", lambda x: gt.pad(x, [[1, 0], [0, 2]]), M),
    case("tril", lambda x: gt.tril(x), SQ),
    case("triu", lambda x: gt.triu(x, 1), SQ),
    case("one_hot", lambda x: gt.one_hot(gt.argmax(x, axis=1), 4), _distinct(3, 4),
         differentiable=False),
    # indexing
    case("slice", lambda x: x[1:, ::2], M, second_order=True),
    case("int-index", lambda x: x[1, -1], M),
    case("newaxis-ellipsis", lambda x: x[None, ..., 1], M),
    case("negative-step", lambda x: x[::-1, 1:3], M),
    case("take", lambda x: gt.take(x, [2, 0, 2], axis=1), M),
    case("gather", lambda x: gt.gather(x, [1, 1, 0]), M, second_order=True),
    case("fancy-2d", lambda x: x[[0, 2, 0], [1, 1, 3]], M),
    case("boolean-mask", lambda x: gt.boolean_mask(x, np.array([True, False, True])), M),
    # products
    case("matmul", gt.matmul, M, _normal(4, 2), second_order=True),
    case("matvec", gt.linalg.matvec, M, V),
    case("tensordot", lambda x, y: gt.tensordot(x, y, axes=1), M, _normal(4, 2)),
    case("einsum-trace", lambda x: gt.einsum("ii->", x), SQ),
    case("outer", gt.linalg.outer, V, _normal(3)),
    case("trace", gt.linalg.trace, SQ),
    case("diag_part", gt.linalg.diag_part, SQ),
    case("matrix_transpose", gt.linalg.matrix_transpose, M),
    case("vector_norm", lambda x: gt.linalg.vector_norm(x, axis=-1), M),
    case("norm-fro", lambda x: gt.norm(x), M),
    # linear algebra
    case("inv", gt.linalg.inv, SQ, rtol=1e-10),
    case("solve", gt.linalg.solve, SQ, _normal(3, 2), rtol=1e-10),
    case("det", gt.linalg.det, SQ, rtol=1e-10),
    case("slogdet", lambda a: gt.linalg.slogdet(a)[1], SQ, rtol=1e-10),
    case("logdet", gt.linalg.logdet, _spd(3), rtol=1e-10),
    case("cholesky", gt.linalg.cholesky, _spd(3), rtol=1e-10),
    case("qr", lambda a: gt.linalg.qr(a)[1], _normal(4, 3), rtol=1e-10),
    case("svdvals", gt.linalg.svdvals, _normal(4, 3), rtol=1e-10),
    case("svd", lambda a: gt.abs(gt.linalg.svd(a)[1]), _normal(4, 3), rtol=1e-10),
    case("eigh", lambda a: gt.linalg.eigh(a)[0], _spd(3), rtol=1e-10),
    case("eigvalsh", gt.linalg.eigvalsh, _spd(3), rtol=1e-10),
    case("pinv", gt.linalg.pinv, _normal(4, 3), rtol=1e-10),
    case("matrix_norm", lambda a: gt.linalg.matrix_norm(a, ord="fro"), M),
    # FFT
    case("fft", lambda x: gt.abs(gt.signal.fft(gt.cast(x, "complex128"))), M),
    case("rfft", lambda x: gt.real(gt.signal.rfft(x)), _normal(3, 6)),
    case("irfft", lambda x: gt.signal.irfft(gt.signal.rfft(x)), _normal(3, 6)),
    case("ifft", lambda x: gt.imag(gt.signal.ifft(gt.cast(x, "complex128"))), M),
]


def is_strict(value: Any) -> bool:
    return type(value).__module__.startswith("array_api_strict")


def _flat(out: Any) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _upstream(out: Any) -> np.ndarray:
    return np.random.default_rng(3).normal(size=tuple(out.shape))


def _gradients(c: Case, as_array: Callable[[np.ndarray], Any]) -> tuple:
    """The output, the gradients for a random upstream ``u``, ``u``, and the generated
    source that computed them (None when the interpreter did)."""
    sources = [gt.constant(as_array(a)) for a in c.inputs]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        out = c.f(*sources)
    u = _upstream(out)
    grads = tape.gradient(out, sources, output_gradients=as_array(u))
    source = tape.inspect(out, sources, output_gradients=as_array(u)).source
    return out, grads, u, source


def _second_derivative(c: Case, as_array: Callable[[np.ndarray], Any]) -> list:
    """The gradient of ``sum(v * grad(sum(u * f(x)**2)))``: a Hessian-vector product."""
    sources = [gt.constant(as_array(a)) for a in c.inputs]
    with gt.GradientTape() as outer:
        outer.watch(sources)
        with gt.GradientTape() as inner:
            inner.watch(sources)
            out = c.f(*sources)
            # squared: even a linear op (a slice) has a second derivative then
            weighted = gt.reduce_sum(out * out * gt.constant(as_array(_upstream(out))))
        grads = inner.gradient(weighted, sources)
        total = gt.math.add_n([gt.reduce_sum(g * gt.constant(as_array(np.cos(a))))
                          for g, a in zip(grads, c.inputs)])
    return outer.gradient(total, sources)


def _assert_same(got: Any, expected: Any, rtol: float) -> None:
    assert is_strict(got._value), type(got._value)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_value_matches_numpy(c, compile_mode):
    expected = c.f(*[gt.constant(a) for a in c.inputs])
    got = c.f(*[gt.constant(xp.asarray(a)) for a in c.inputs])
    for g, e in zip(_flat(got), _flat(expected)):
        _assert_same(g, e, c.rtol)


DIFFERENTIABLE = [c for c in CASES if c.differentiable]


@pytest.mark.parametrize("c", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_gradient_matches_numpy_and_finite_differences(c, compile_mode):
    _, expected, u, _ = _gradients(c, np.asarray)
    for _ in range(2):  # the first call interprets or compiles, the second hits the cache
        _, got, _, source = _gradients(c, xp.asarray)
        for g, e in zip(got, expected):
            _assert_same(g, e, c.rtol)
    if compile_mode:  # generated for these arrays, every op a call into the namespace
        assert "For array_api_strict arrays" in source
    assert_vjp_matches_differences(
        lambda *ts: c.f(*[gt.constant(xp.asarray(t.numpy())) for t in ts]),
        c.inputs, u, [g.numpy() for g in got], np.random.default_rng(5), what=c.name)


SECOND_ORDER = [c for c in CASES if c.second_order]


@pytest.mark.parametrize("c", SECOND_ORDER, ids=[c.name for c in SECOND_ORDER])
def test_second_derivative_matches_numpy(c, compile_mode):
    expected = _second_derivative(c, np.asarray)
    got = _second_derivative(c, xp.asarray)
    for g, e in zip(got, expected):
        _assert_same(g, e, 1e-10)


# What has no array-API standard equivalent keeps raising a clear NotImplementedError
# (docs/scaling.md lists these).
UNSUPPORTED = {"convolve", "eig", "expm", "psd_pseudo", "solve_sylvester", "sqrtm",
               # TF's index helpers (segment layout, unique, searchsorted): NumPy only
               "last_occurrence", "searchsorted", "segment_layout", "unique", "unique_count",
               # pooling and resizing: strided views and NumPy buffers
               "max_pool", "avg_pool", "pool_argmax", "window_gather", "window_scatter",
               "avg_pool_transpose", "resize", "resize_transpose",
               # tf.nn's convolutions: strided views and NumPy buffers
               "conv_general"}


def test_only_ops_without_a_standard_equivalent_are_unsupported():
    import gc

    from gradtape.core.backends import kind_of
    from gradtape.ir.primitive import Primitive

    kind = kind_of(xp.asarray(np.ones(2)))
    # gradtape's own primitives (tests declare some of their own), less SciPy's special
    # functions (erf, lgamma, stdtr: no standard equivalent), declared on first use
    special = ("gradtape.scipy", "gradtape.ops.special", "gradtape.ops.stdtr")
    primitives = [o for o in gc.get_objects() if isinstance(o, Primitive) and (
        module := getattr(o.impl, "__module__", None) or "").startswith(
            ("gradtape.", "numpy")) and not module.startswith(special)]
    assert len(primitives) > 100
    assert {p.name for p in primitives if not kind.supports(p)} == UNSUPPORTED


@pytest.mark.parametrize("f", [
    lambda t: gt.linalg.eig(t), lambda t: gt.scipy.linalg.expm(t),
    lambda t: gt.scipy.linalg.sqrtm(t), lambda t: gt.math.erf(t),
], ids=["eig", "expm", "sqrtm", "erf"])
def test_an_op_without_a_standard_equivalent_raises_clearly(f):
    with pytest.raises(NotImplementedError, match="does not run on array_api_strict"):
        f(gt.constant(xp.asarray(SQ)))
