"""A sweep of gradtape ops and NumPy functions on chunked Dask arrays.

Each case computes a value and the gradient of a weighted sum of it on a Dask array
whose chunks are smaller than the array (reductions cross chunks), and on the same data
in NumPy: both must agree to 1e-12, the Dask results must be lazy ``dask.array.Array``
(nothing computed until read), in both compile modes. Ops Dask cannot run raise
``NotImplementedError`` naming the op (``UNSUPPORTED``), never a silent conversion.
"""

import warnings

import numpy as np
import pytest

import gradtape as gt

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask_testing import CountComputes  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

RNG = np.random.default_rng(1)
MATRIX = RNG.normal(size=(6, 4))
POSITIVE = RNG.uniform(0.5, 2.0, size=(6, 4))
_A = RNG.normal(size=(4, 4))
SPD = _A @ _A.T + 4 * np.eye(4)
INPUTS = {"x": MATRIX, "pos": POSITIVE, "spd": SPD}
CHUNKS = {"x": (3, 2), "pos": (3, 2), "spd": (2, 2)}

ROW_INDEX = np.array([4, 0, 4, 2, 4])  # repeated rows: their gradients accumulate
MASK = MATRIX[:, 0] > 0
OTHER = np.linspace(-1.0, 1.0, 24).reshape(6, 4)



# (id, input name, function of a tensor). Outputs of a float dtype are differentiated.
CASES = [
    # elementwise math
    ("exp", "x", gt.exp), ("log", "pos", gt.math.log), ("sqrt", "pos", gt.sqrt),
    ("square", "x", gt.square), ("abs", "x", gt.abs), ("tanh", "x", gt.tanh),
    ("sin", "x", gt.sin), ("pow", "pos", lambda t: gt.pow(t, 1.5)),
    ("maximum", "x", lambda t: gt.maximum(t, OTHER)),
    ("minimum", "x", lambda t: gt.minimum(t, 0.1)),
    ("sign", "x", gt.sign), ("floor", "x", gt.floor),
    ("erf", "x", gt.math.erf), ("log1p", "pos", gt.math.log1p),
    ("sigmoid", "x", gt.sigmoid), ("softplus", "x", gt.math.softplus),
    ("elu", "x", gt.nn.elu), ("gelu", "x", gt.nn.gelu), ("silu", "x", gt.nn.silu),
    ("leaky_relu", "x", gt.nn.leaky_relu), ("relu6", "x", lambda t: gt.nn.relu6(3 * t)),
    ("np.hypot", "x", lambda t: np.hypot(t, 0.5)),
    ("np.arctan2", "x", lambda t: np.arctan2(t, OTHER + 2.0)),
    ("operators", "x", lambda t: (2.0 - t) * t / (t * t + 1.0) - t ** 2),
    # reductions
    ("sum", "x", lambda t: gt.reduce_sum(t, axis=0)),
    ("sum_all", "x", gt.reduce_sum),
    ("mean", "x", lambda t: gt.reduce_mean(t, axis=1, keepdims=True)),
    ("max", "x", lambda t: gt.reduce_max(t, axis=0)),
    ("min", "x", lambda t: gt.reduce_min(t)),
    ("prod", "pos", lambda t: gt.reduce_prod(t, axis=0)),
    ("variance", "x", lambda t: gt.math.reduce_variance(t, axis=0)),
    ("std", "x", lambda t: gt.math.reduce_std(t, axis=1)),
    ("logsumexp", "x", lambda t: gt.reduce_logsumexp(t, axis=1)),
    ("cumsum", "x", lambda t: gt.cumsum(t, axis=0)),
    ("cumsum_reverse", "x", lambda t: gt.math.cumsum(t, axis=1, exclusive=True, reverse=True)),
    ("cumprod", "pos", lambda t: gt.math.cumprod(t, axis=0)),
    ("norm", "x", lambda t: gt.norm(t, axis=1)),
    ("moments", "x", lambda t: gt.stack(gt.nn.moments(t, axes=[0]))),
    ("np.mean", "x", lambda t: np.mean(t, axis=0)),
    ("np.var", "x", lambda t: np.var(t)),
    ("np.std", "x", lambda t: np.std(t, axis=0)),
    ("np.prod", "pos", lambda t: np.prod(t, axis=1)),
    ("np.cumsum", "x", lambda t: np.cumsum(t, axis=1)),
    ("argmax", "x", lambda t: gt.argmax(t, axis=0)),
    ("argmin", "x", lambda t: gt.argmin(t, axis=1)),
    ("np.argmax", "x", lambda t: np.argmax(t, axis=1)),
    # selection
    ("where", "x", lambda t: gt.where(t > 0, t, 2 * t)),
    ("np.where", "x", lambda t: np.where(t > 0, t, 0.5 * t)),
    ("clip", "x", lambda t: gt.clip_by_value(t, -0.5, 0.5)),
    ("np.clip", "x", lambda t: np.clip(t, -0.5, 0.5)),
    # shapes
    ("concat", "x", lambda t: gt.concat([t, 2 * t], axis=0)),
    ("stack", "x", lambda t: gt.stack([t, t * t], axis=1)),
    ("reshape", "x", lambda t: gt.reshape(t, (4, 3, 2))),
    ("transpose", "x", gt.transpose),
    ("expand_dims", "x", lambda t: gt.expand_dims(t, 1)),
    ("squeeze", "x", lambda t: gt.squeeze(gt.reshape(t, (6, 1, 4)), axis=1)),
    ("tile", "x", lambda t: gt.tile(t, [2, 3])),
    ("pad", "x", lambda t: gt.pad(t, [[1, 2], [0, 1]])),
    ("pad_reflect", "x", lambda t: gt.pad(t, [[1, 1], [2, 0]], mode="REFLECT")),
    ("reverse", "x", lambda t: gt.reverse(t, axis=[0])),
    ("roll", "x", lambda t: gt.roll(t, shift=2, axis=0)),
    ("broadcast_to", "x", lambda t: gt.broadcast_to(t, (2, 6, 4))),
    ("np.concatenate", "x", lambda t: np.concatenate([t, t], axis=1)),
    ("np.swapaxes", "x", lambda t: np.swapaxes(t, 0, 1)),
    # indexing
    ("slices", "x", lambda t: t[1:5:2, ::-1]),
    ("int_index", "x", lambda t: t[2] * t[:, 1][3]),
    ("newaxis", "x", lambda t: t[None, :, 2]),
    ("fancy_rows", "x", lambda t: t[ROW_INDEX]),
    ("fancy_pairs", "x", lambda t: t[ROW_INDEX, np.array([0, 1, 0, 3, 0])]),
    ("fancy_slice", "x", lambda t: t[1:, [2, 2, 0]]),
    ("mask", "x", lambda t: t[MASK]),
    ("gather", "x", lambda t: gt.gather(t, ROW_INDEX)),
    ("gather_axis1", "x", lambda t: gt.gather(t, [3, 1, 3], axis=1)),
    ("gather_nd", "x", lambda t: gt.gather_nd(t, [[0, 1], [5, 3], [0, 1]])),
    ("boolean_mask", "x", lambda t: gt.boolean_mask(t, MASK)),
    ("np.take", "x", lambda t: np.take(t, ROW_INDEX, axis=0)),
    # the same, with Dask cotangents: the scatter-adds run on Dask arrays
    ("fancy_rows_squared", "x", lambda t: t[ROW_INDEX] ** 2),
    ("fancy_pairs_squared", "x",
     lambda t: gt.sin(t[ROW_INDEX, np.array([0, 1, 0, 3, 0])]) * t[0, 0]),
    ("fancy_2d_squared", "x", lambda t: gt.square(t[np.array([[1, 1], [0, 5]]), 2:])),
    ("gather_nd_squared", "x", lambda t: gt.square(gt.gather_nd(t, [[0, 1], [5, 3], [0, 1]]))),
    ("slices_squared", "x", lambda t: gt.square(t[1:5:2, ::-1]) + t[None, 2, ...] ** 3),
    # contractions
    ("matmul", "x", lambda t: gt.matmul(t, gt.transpose(t))),
    ("matmul_const", "x", lambda t: gt.matmul(OTHER.T, t)),
    ("matvec", "x", lambda t: gt.linalg.matvec(t, np.arange(4.0))),
    ("@", "x", lambda t: t @ OTHER.T),
    ("einsum", "x", lambda t: gt.einsum("ij,kj->ik", t, t)),
    ("einsum_trace", "spd", lambda t: gt.einsum("ii->", t)),
    ("tensordot", "x", lambda t: gt.tensordot(t, OTHER, axes=[[0], [0]])),
    ("np.dot", "x", lambda t: np.dot(t, OTHER.T)),
    ("outer", "x", lambda t: gt.linalg.outer(t[0], t[1])),
    # nn
    ("softmax", "x", gt.nn.softmax),
    ("softmax_axis0", "x", lambda t: gt.nn.softmax(t, axis=0)),
    ("log_softmax", "x", gt.nn.log_softmax),
    ("l2_loss", "x", gt.nn.l2_loss),
    ("l2_normalize", "x", lambda t: gt.nn.l2_normalize(t, axis=1)),
    ("softmax_xent", "x", lambda t: gt.nn.softmax_cross_entropy_with_logits(
        labels=gt.nn.softmax(OTHER), logits=t)),
    ("sparse_softmax_xent", "x", lambda t: gt.nn.sparse_softmax_cross_entropy_with_logits(
        labels=np.array([0, 3, 1, 1, 2, 0]), logits=t)),
    ("sigmoid_xent", "x", lambda t: gt.nn.sigmoid_cross_entropy_with_logits(
        labels=(OTHER > 0).astype(np.float64), logits=t)),
    ("keras_mse", "x", lambda t: gt.keras.losses.MeanSquaredError()(OTHER, t)),
    ("keras_bce", "x", lambda t: gt.keras.losses.BinaryCrossentropy(from_logits=True)(
        (OTHER > 0).astype(np.float64), t)),
    ("keras_cce", "x", lambda t: gt.keras.losses.CategoricalCrossentropy(from_logits=True)(
        gt.nn.softmax(OTHER), t)),
    # linear algebra
    ("inv", "spd", gt.linalg.inv),
    ("solve", "spd", lambda t: gt.linalg.solve(t, OTHER[:4])),
    ("cholesky", "spd", gt.linalg.cholesky),
    ("logdet", "spd", gt.linalg.logdet),
    ("det", "spd", gt.linalg.det),
    ("trace", "spd", gt.linalg.trace),
    ("diag_part", "spd", gt.linalg.diag_part),
    ("np.diagonal", "x", lambda t: np.diagonal(t, 1) * t[0, 1:4]),
    # sorting
    ("sort", "x", lambda t: gt.sort(t, axis=1)),
]

# Ops whose NumPy implementation Dask has no equivalent for: they raise
# NotImplementedError (docs/scaling.md lists them).
UNSUPPORTED = {"det", "sort"}


def weights(shape):
    """Fixed, distinct weights: the gradient of sum(y * w) checks every element."""
    size = int(np.prod(shape))
    return np.cos(np.arange(1.0, size + 1.0)).reshape(shape)


def value_and_gradient(fn, array):
    x = gt.constant(array)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        if not np.issubdtype(y.dtype, np.floating):
            return y, None
        loss = gt.reduce_sum(y * weights(y.shape))
    return y, tape.gradient(loss, x)


@pytest.mark.parametrize("name,input_name,fn", CASES, ids=[c[0] for c in CASES])
def test_op_on_dask_matches_numpy(name, input_name, fn, compile_mode):
    array = INPUTS[input_name]
    lazy = da.from_array(array, chunks=CHUNKS[input_name])
    if name in UNSUPPORTED:  # refused before Dask's fallback computes anything
        with CountComputes() as computes, warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(NotImplementedError, match="does not run on dask.array"):
                value_and_gradient(fn, lazy)
        assert computes.count == 0
        return
    expected, expected_grad = value_and_gradient(fn, array)
    for _ in range(2):  # interpreted or compiled on the first call, then cached
        with CountComputes() as computes:
            got, grad = value_and_gradient(fn, lazy)
        assert computes.count == 0
        assert isinstance(got._value, da.Array)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
        if expected_grad is None:
            assert grad is None
            continue
        assert isinstance(grad._value, da.Array)
        np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12,
                                   atol=1e-12)


def test_generated_dask_code_scatter_adds_without_buffers(tmp_path):
    """Gradients of fancy indexing with Dask cotangents: the generated Dask function
    calls scatter_add's Dask implementation (no zeros buffer, no np.add.at), runs
    without falling back to the interpreter, and repeated indices accumulate."""
    array = INPUTS["x"]
    lazy = da.from_array(array, chunks=CHUNKS["x"])

    def fn(t):
        return gt.square(t[ROW_INDEX, 1:]) + gt.gather(t, ROW_INDEX)[:, :3] * t[0, 0]

    with gt.config(compile=True, compile_after=1, dump_dir=str(tmp_path)):
        gt.clear_cache()
        expected = value_and_gradient(fn, array)[1]
        with CountComputes() as computes, warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            grad = value_and_gradient(fn, lazy)[1]
        assert computes.count == 0
    sources = [p.read_text() for p in tmp_path.glob("backward_*.py")]
    dask_sources = [s for s in sources if "For dask.array arrays" in s]
    assert len(dask_sources) == 1
    assert "scatter_add_impl(" in dask_sources[0]
    assert "add.at" not in dask_sources[0] and "zeros(" not in dask_sources[0]
    assert isinstance(grad._value, da.Array)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_dask_scatter_add_keeps_the_dtype(dtype):
    """bincount sums in float64: the result is cast back; complex parts add separately."""
    from gradtape.core.backends import kind_of
    from gradtape.ops.index import scatter_add_p

    updates = (np.arange(1.0, 6.0) * (1 + 2j if dtype == "complex128" else 1)).astype(dtype)
    index = (("array", 0),)
    lazy = da.from_array(updates, chunks=2)
    impl = kind_of(lazy).impl(scatter_add_p)
    got = impl(lazy, ROW_INDEX, index=index, shape=(6,))
    expected = scatter_add_p.impl(updates, ROW_INDEX, index=index, shape=(6,))
    assert isinstance(got, da.Array) and got.dtype == expected.dtype
    np.testing.assert_allclose(got.compute(), expected, rtol=1e-6)


@pytest.mark.parametrize("shape,offset,axis1,axis2", [
    ((3, 4, 5), 1, 0, 2), ((3, 4, 5), -2, 2, 1), ((4, 4), 0, 0, 1), ((2, 5, 3), -1, 1, 2),
])
def test_dask_diagonal_scatter_matches_numpy(shape, offset, axis1, axis2):
    """The gradient of a diagonal (trace, logdet) on Dask: no buffer written into."""
    from gradtape.core.backends import kind_of
    from gradtape.ops.linalg.products import diagonal_scatter_p

    g = RNG.normal(size=np.diagonal(np.zeros(shape), offset, axis1, axis2).shape)
    params = dict(offset=offset, axis1=axis1, axis2=axis2, shape=shape)
    lazy = da.from_array(g, chunks=2)
    got = kind_of(lazy).impl(diagonal_scatter_p)(lazy, **params)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), diagonal_scatter_p.impl(g, **params))
