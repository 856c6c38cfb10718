"""The tape, its generated code, jacobians, @gt.function and the optimizers on Dask arrays.

Every result is compared with the same computation on the same data in NumPy (to
1e-12), and checked to stay a lazy ``dask.array.Array``: nothing computes until the user
reads a value (``.numpy()``, ``float(t)``) or an optimizer applies a step.
"""

import glob
import os
import warnings

import numpy as np
import pytest

import gradtape as gt

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from dask_testing import CountComputes  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

ROWS, COLS = 40, 3



@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, COLS))
    y = (rng.random(ROWS) > 0.5).astype(np.float64)
    return x, y, da.from_array(x, chunks=(10, COLS)), da.from_array(y, chunks=10)


def logistic_loss(x, y, w):
    """Mean logistic loss, as Dask-GLM writes it: softplus(z) - y z."""
    z = gt.linalg.matvec(x, w)
    return gt.reduce_mean(gt.math.softplus(z) - y * z)


def loss_and_gradient(x, y, w0):
    w = gt.constant(w0)
    with gt.GradientTape() as tape:
        tape.watch(w)
        loss = logistic_loss(gt.constant(x), gt.constant(y), w)
    return loss, tape.gradient(loss, w)


W0 = np.array([0.1, -0.2, 0.3])


# --- tensors hold the Dask array ----------------------------------------------------------

def test_constant_and_variable_keep_the_dask_array(data):
    _, _, x, _ = data
    with CountComputes() as computes:
        t = gt.constant(x)
        v = gt.Variable(x)
        text = repr(t)
    assert t._value is x  # Dask arrays are immutable: no copy, no conversion
    assert isinstance(v._value, da.Array)
    assert t.shape == (ROWS, COLS) and t.dtype == np.float64
    assert "dask.array" in text
    assert computes.count == 0


def test_reading_a_value_computes_it(data):
    xn, _, x, _ = data
    t = gt.constant(x)
    with CountComputes() as computes:
        value = t.numpy()
        total = float(gt.reduce_sum(t))
    assert isinstance(value, np.ndarray)
    np.testing.assert_array_equal(value, xn)
    assert total == pytest.approx(xn.sum(), abs=1e-12)
    assert computes.count == 2


def test_constant_casts_lazily(data):
    xn, _, x, _ = data
    t = gt.constant(x, dtype="float32")
    assert isinstance(t._value, da.Array) and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), xn.astype(np.float32))


def test_unknown_chunk_sizes_raise_a_clear_error(data):
    _, _, x, _ = data
    filtered = x[x[:, 0] > 0]  # a boolean index: Dask does not know how many rows
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        gt.constant(filtered)
    t = gt.constant(filtered.compute_chunk_sizes())
    assert t.shape[1] == COLS


@pytest.mark.parametrize("op", [
    lambda t: gt.exp(t), lambda t: gt.math.log(gt.abs(t) + 1.0), lambda t: gt.sigmoid(t),
    lambda t: gt.math.softplus(t), lambda t: gt.nn.relu(t),
    lambda t: np.logaddexp(t, 0.5), lambda t: gt.reduce_sum(t, axis=0),
    lambda t: gt.reduce_mean(t), lambda t: gt.reduce_max(t, axis=1),
    lambda t: gt.transpose(t), lambda t: gt.reshape(t, (-1,)),
    lambda t: gt.matmul(t, gt.transpose(t)), lambda t: gt.cast(t, "float32"),
    lambda t: gt.broadcast_to(gt.reshape(t, (1, ROWS, COLS)), (2, ROWS, COLS)),
    lambda t: t[3:7, 1] * 2.0 - t[0:4, 0],
], ids=["exp", "log", "sigmoid", "softplus", "relu", "np.logaddexp", "sum", "mean", "max",
        "transpose", "reshape", "matmul", "cast", "broadcast_to", "slices"])
def test_eager_ops_run_in_dask(data, op):
    xn, _, x, _ = data
    with CountComputes() as computes:
        got = op(gt.constant(x))
    assert isinstance(got._value, da.Array)
    assert computes.count == 0
    expected = op(gt.constant(xn))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


# --- gradients ---------------------------------------------------------------------------------

def test_gradient_is_lazy_and_matches_numpy(data, compile_mode):
    xn, yn, x, y = data
    expected_loss, expected = loss_and_gradient(xn, yn, W0)
    for _ in range(3):  # interpreted or compiled on the first call, then cache hits
        with CountComputes() as computes:
            loss, grad = loss_and_gradient(x, y, W0)
        assert computes.count == 0
        assert isinstance(loss._value, da.Array) and isinstance(grad._value, da.Array)
        np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
        assert float(loss) == pytest.approx(float(expected_loss), abs=1e-12)


def test_gradient_matches_finite_differences(data):
    _, _, x, y = data

    def loss_at(w):
        return float(logistic_loss(gt.constant(x), gt.constant(y), gt.constant(w)))

    grad = loss_and_gradient(x, y, W0)[1].numpy()
    eps = 1e-6
    for i in range(COLS):
        step = np.zeros(COLS)
        step[i] = eps
        numeric = (loss_at(W0 + step) - loss_at(W0 - step)) / (2 * eps)
        assert grad[i] == pytest.approx(numeric, abs=1e-8)


def test_compiled_code_is_generated_for_dask(data, tmp_path):
    """The NumPy and the Dask calls of one structure run two generated functions: the
    Dask one names its array kind, never writes into buffers, and is what runs."""
    xn, yn, x, y = data
    with gt.config(compile=True, compile_after=1, dump_dir=str(tmp_path)):
        gt.clear_cache()
        numpy_grad = loss_and_gradient(xn, yn, W0)[1]
        dask_grad = loss_and_gradient(x, y, W0)[1]
        numpy_again = loss_and_gradient(xn, yn, W0)[1]
    assert isinstance(numpy_grad._value, np.ndarray)
    assert isinstance(numpy_again._value, np.ndarray)
    assert isinstance(dask_grad._value, da.Array)
    np.testing.assert_allclose(dask_grad.numpy(), numpy_grad.numpy(), rtol=1e-12, atol=1e-12)
    sources = [open(p).read() for p in glob.glob(os.path.join(tmp_path, "backward_*.py"))]
    dask_sources = [s for s in sources if "For dask.array arrays" in s]
    assert len(sources) == 2 and len(dask_sources) == 1
    assert "out=" not in dask_sources[0]


def test_inspect_shows_the_dask_source(data):
    _, _, x, y = data
    w = gt.constant(W0)
    with gt.GradientTape() as tape:
        tape.watch(w)
        loss = logistic_loss(gt.constant(x), gt.constant(y), w)
    source = tape.inspect(loss, w).source
    assert "For dask.array arrays" in source and "def backward(" in source


def test_persistent_tape_reuses_its_backward(data, compile_mode):
    xn, yn, x, y = data
    w = gt.constant(W0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(w)
        loss = logistic_loss(gt.constant(x), gt.constant(y), w)
    first = tape.gradient(loss, w)
    hits = gt.cache_info().hits
    second = tape.gradient(loss, w)
    assert gt.cache_info().hits == hits + 1
    assert isinstance(second._value, da.Array)
    expected = loss_and_gradient(xn, yn, W0)[1].numpy()
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_dask_output_gradients(data, compile_mode):
    xn, _, x, _ = data
    seed_n = np.linspace(-1.0, 1.0, ROWS)
    results = []
    for xs, seed in ((xn, seed_n), (x, da.from_array(seed_n, chunks=10))):
        w = gt.constant(W0)
        with gt.GradientTape() as tape:
            tape.watch(w)
            z = gt.tanh(gt.linalg.matvec(gt.constant(xs), w))
        results.append(tape.gradient(z, w, output_gradients=gt.constant(seed)))
    assert isinstance(results[1]._value, da.Array)
    np.testing.assert_allclose(results[1].numpy(), results[0].numpy(), rtol=1e-12, atol=1e-12)


def second_order(x):
    w = gt.constant(W0)
    with gt.GradientTape() as outer:
        outer.watch(w)
        with gt.GradientTape() as inner:
            inner.watch(w)
            loss = gt.reduce_sum(gt.math.softplus(gt.linalg.matvec(gt.constant(x), w)))
        grad = inner.gradient(loss, w)
        norm = gt.reduce_sum(grad * grad)
    return grad, outer.gradient(norm, w)


def test_nested_tapes(data, compile_mode):
    xn, _, x, _ = data
    with CountComputes() as computes:
        grad, hess_vec = second_order(x)
    assert computes.count == 0
    assert isinstance(grad._value, da.Array) and isinstance(hess_vec._value, da.Array)
    expected_grad, expected_hv = second_order(xn)
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hess_vec.numpy(), expected_hv.numpy(), rtol=1e-12, atol=1e-12)


def jacobian_of_probabilities(x):
    w = gt.constant(W0)
    with gt.GradientTape() as tape:
        tape.watch(w)
        p = gt.sigmoid(gt.linalg.matvec(gt.constant(x), w))
    return tape.jacobian(p, w)


def test_jacobian(data, compile_mode):
    xn, _, x, _ = data
    with CountComputes() as computes:
        jac = jacobian_of_probabilities(x)
    assert computes.count == 0
    assert isinstance(jac._value, da.Array) and jac.shape == (ROWS, COLS)
    expected = jacobian_of_probabilities(xn)
    np.testing.assert_allclose(jac.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_function_traces_a_dask_step_once(data, compile_mode):
    xn, yn, x, y = data

    @gt.function
    def step(xs, ys, w):
        with gt.GradientTape() as tape:
            loss = logistic_loss(xs, ys, w)
        return loss, tape.gradient(loss, w)

    w = gt.Variable(W0)
    reference = gt.Variable(W0)
    xt, yt = gt.constant(x), gt.constant(y)
    for _ in range(3):
        with CountComputes() as computes:
            loss, grad = step(xt, yt, w)
        assert computes.count == 0
        assert isinstance(grad._value, da.Array)
        expected_loss, expected = step(gt.constant(xn), gt.constant(yn), reference)
        np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
        assert float(loss) == pytest.approx(float(expected_loss), abs=1e-12)
    # One trace for the Dask calls, one for the NumPy ones (another variable).
    assert step.experimental_get_tracing_count() == 2


@pytest.mark.parametrize("make_optimizer", [
    lambda: gt.keras.optimizers.SGD(learning_rate=0.5, momentum=0.9),
    lambda: gt.keras.optimizers.Adam(learning_rate=0.1),
], ids=["SGD", "Adam"])
def test_optimizer_steps_on_dask_data(data, make_optimizer, compile_mode):
    """Small NumPy parameters, chunked Dask data: each step computes its gradients in
    one dask.compute call, and the parameters stay NumPy arrays."""
    xn, yn, x, y = data
    results = []
    for xs, ys in ((x, y), (xn, yn)):
        w = gt.Variable(W0, name="w")
        b = gt.Variable(0.0, dtype="float64", name="b")
        optimizer = make_optimizer()
        xt, yt = gt.constant(xs), gt.constant(ys)
        for _ in range(4):
            with gt.GradientTape() as tape:
                z = gt.linalg.matvec(xt, w) + b
                loss = gt.reduce_mean(gt.math.softplus(z) - yt * z)
            grads = tape.gradient(loss, [w, b])
            with CountComputes() as computes:
                optimizer.apply_gradients(zip(grads, [w, b]))
            assert computes.count == (1 if xs is x else 0)
        assert isinstance(w._value, np.ndarray)
        results.append((w.numpy(), b.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-12)


def test_an_op_that_would_convert_to_numpy_raises(data):
    """np.sort has no Dask implementation: Dask would compute the whole array behind
    the user's back. gradtape refuses, naming the op."""
    _, _, x, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dask's own warning about the fallback
        with pytest.raises(NotImplementedError, match="does not run on dask.array"):
            gt.sort(gt.constant(x), axis=0)


def test_generated_modules_find_dask_implementations():
    from gradtape.codegen import runtime

    impl = runtime.namespace_impl("dask.array", "sum")
    x = da.ones((4, 3), chunks=2)
    out = impl(x, axis=(0,), keepdims=False)
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), np.full(3, 4.0))


def test_sigmoid_runs_blockwise_without_overflow_warnings():
    """On Dask, sigmoid is NumPy's implementation on each block (one task a chunk), so
    its errstate holds where the block is computed: no warning below x = -709."""
    xn = np.array([-1000.0, -40.0, 0.0, 2.5, 1000.0, -745.0])
    x = gt.constant(da.from_array(xn, chunks=2))
    out = gt.sigmoid(x)
    assert isinstance(out._value, da.Array)
    assert [k.split("-")[0] for k in out._value.__dask_graph__().layers].count("_sigmoid_impl") == 1
    np.testing.assert_allclose(out.numpy(), gt.sigmoid(gt.constant(xn)).numpy(), rtol=1e-15)


def test_dask_variable_assigned_numpy_values_stays_dask_and_chunked():
    v = gt.Variable(da.from_array(np.ones(4), chunks=2))
    v.assign(np.arange(4.0))
    assert isinstance(v._value, da.Array) and v._value.chunks == ((2, 2),)
    v.assign_add([1.0, 1.0, 1.0, 1.0])
    assert isinstance(v._value, da.Array)
    np.testing.assert_array_equal(v.numpy(), np.arange(4.0) + 1)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "RMSprop"])
def test_optimizer_on_a_dask_variable_keeps_its_graph_bounded(optimizer):
    # Each step's value must be persisted chunks, not a graph of every earlier step
    # (which grew with the steps and recomputed them all), with one pass over the data
    # per step (Adam's NumPy slots read the lazy gradient once each before).
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(12, 4)), rng.normal(size=12)

    def train(x, y, w, steps):
        opt = getattr(gt.keras.optimizers, optimizer)(learning_rate=0.05)
        for _ in range(steps):
            with gt.GradientTape() as tape:
                loss = gt.reduce_mean((gt.linalg.matvec(gt.constant(x), w) - y) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
        return w

    expected = train(x, y, gt.Variable(np.zeros(4)), 12).numpy()
    w = gt.Variable(da.zeros(4, chunks=2))
    xd, yd = da.from_array(x, chunks=(4, 4)), da.from_array(y, chunks=4)
    with CountComputes() as computes:
        train(xd, yd, w, 12)
    assert isinstance(w._value, da.Array)
    assert len(w._value.__dask_graph__()) == 2  # its two persisted chunks
    assert computes.count <= 2 * 12  # the gradient's compute and the persist
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)


def test_a_raw_dask_operand_beside_a_tensor_is_not_computed():
    # The operand check read the dtype through np.asarray, computing the whole array.
    x = np.arange(6.0).reshape(2, 3)
    with CountComputes() as computes:
        result = gt.constant(x) - da.from_array(x * 3, chunks=(1, 3))
    assert computes.count == 0 and isinstance(result._value, da.Array)
    np.testing.assert_array_equal(result.numpy(), -2 * x)
