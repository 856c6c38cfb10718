"""The tape, its generated code, @gt.function and the optimizers on CuPy arrays (GPU).

Skipped cleanly where CuPy or a CUDA device is absent (CI): at collection, before any
test runs. Every result is compared with the same computation on the same data in
NumPy, and checked to stay a ``cupy.ndarray``: nothing goes to the host until the user
reads a value (``.numpy()``).
"""

import numpy as np
import pytest

import gradtape as gt

cupy = pytest.importorskip("cupy")


def _device_count() -> int:
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # CUDARuntimeError: no driver or no device
        return 0


if not _device_count():
    pytest.skip("CuPy is installed but no CUDA device is available",
                allow_module_level=True)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

ROWS, COLS = 16, 3
W0 = np.array([0.1, -0.2, 0.3])


def on_gpu(t) -> bool:
    return isinstance(t._value, cupy.ndarray)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, COLS))
    y = (rng.random(ROWS) > 0.5).astype(np.float64)
    return x, y


def logistic_loss(x, y, w):
    z = gt.linalg.matvec(x, w)
    return gt.reduce_mean(gt.math.softplus(z) - y * z)


def loss_and_gradient(x, y, w0):
    w = gt.constant(w0)
    with gt.GradientTape() as tape:
        tape.watch(w)
        loss = logistic_loss(gt.constant(x), gt.constant(y), w)
    return loss, tape.gradient(loss, w)


def test_tensors_keep_cupy_arrays(data):
    x, _ = data
    t = gt.constant(cupy.asarray(x))
    v = gt.Variable(cupy.asarray(x))
    assert on_gpu(t) and on_gpu(v)
    assert t.dtype == np.float64 and t.shape == (ROWS, COLS)
    np.testing.assert_array_equal(t.numpy(), x)
    assert on_gpu(gt.constant(cupy.asarray(x), dtype="float32"))


@pytest.mark.parametrize("op", [
    lambda t: gt.matmul(t, gt.transpose(t)), lambda t: gt.exp(t),
    lambda t: gt.math.log(gt.exp(t)), lambda t: gt.reduce_sum(t, axis=1),
    lambda t: gt.reduce_mean(t), lambda t: gt.sigmoid(t), lambda t: gt.math.softplus(t),
    lambda t: gt.reshape(t, (COLS, ROWS)), lambda t: t[[0, 2, 2], 1:],
    lambda t: gt.math.cumsum(t, axis=0, exclusive=True, reverse=True),
    lambda t: gt.argmax(t, axis=1), lambda t: gt.sort(t, axis=0),
], ids=["matmul", "exp", "log", "sum", "mean", "sigmoid", "softplus", "reshape",
        "gather", "cumsum", "argmax", "sort"])
def test_eager_ops_run_on_the_gpu(data, op):
    x, _ = data
    got = op(gt.constant(cupy.asarray(x)))
    expected = op(gt.constant(x))
    assert on_gpu(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_tape_gradients_equal_numpys_and_stay_on_the_gpu(data, compile_mode):
    x, y = data
    expected_loss, expected = loss_and_gradient(x, y, W0)
    for _ in range(3):  # the first call interprets or compiles, later ones hit the cache
        loss, grad = loss_and_gradient(cupy.asarray(x), cupy.asarray(y), cupy.asarray(W0))
        assert on_gpu(grad)
        np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
        assert float(loss) == pytest.approx(float(expected_loss), abs=1e-12)


def test_gradient_of_a_gather_scatters_back_on_the_gpu(data, compile_mode):
    x, _ = data

    def gradient(as_array):
        t = gt.constant(as_array(x))
        with gt.GradientTape() as tape:
            tape.watch(t)
            loss = gt.reduce_sum(gt.square(t[[0, 2, 2]]))
        return tape.gradient(loss, t)

    got, expected = gradient(cupy.asarray), gradient(np.asarray)
    assert on_gpu(got)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_compiled_code_is_generated_for_cupy(data):
    x, y = data
    with gt.config(compile=True, compile_after=1):
        w = gt.constant(cupy.asarray(W0))
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(w)
            loss = logistic_loss(gt.constant(cupy.asarray(x)), gt.constant(cupy.asarray(y)), w)
        compiled = tape.gradient(loss, w)
        source = tape.inspect(loss, w).source
    with gt.config(compile=False):
        interpreted = tape.gradient(loss, w)
    assert "For cupy arrays" in source
    assert on_gpu(compiled) and on_gpu(interpreted)
    np.testing.assert_allclose(compiled.numpy(), interpreted.numpy(), rtol=1e-12)


def test_function_traces_and_runs_on_the_gpu(data, compile_mode):
    x, y = data

    @gt.function
    def loss_fn(x, y, w):
        return logistic_loss(x, y, w)

    expected = loss_fn(gt.constant(x), gt.constant(y), gt.constant(W0))
    for _ in range(2):
        got = loss_fn(gt.constant(cupy.asarray(x)), gt.constant(cupy.asarray(y)),
                      gt.constant(cupy.asarray(W0)))
        assert on_gpu(got)
        assert float(got) == pytest.approx(float(expected), abs=1e-12)


def test_an_optimizer_step_updates_cupy_variables(data):
    x, y = data

    def step(as_array):
        w = gt.Variable(as_array(W0))
        optimizer = gt.keras.optimizers.SGD(learning_rate=0.5)
        with gt.GradientTape() as tape:
            loss = logistic_loss(gt.constant(as_array(x)), gt.constant(as_array(y)), w)
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return w

    got, expected = step(cupy.asarray), step(np.asarray)
    assert on_gpu(got)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_mixing_cupy_and_numpy_raises_naming_the_fix(data):
    x, _ = data
    with pytest.raises(gt.errors.InvalidArgumentError) as info:
        gt.constant(cupy.asarray(x)) + gt.constant(x)
    assert "cupy.asarray(x)" in str(info.value) and "x.get()" in str(info.value)
    w = gt.Variable(W0)  # a NumPy variable with GPU data: the same error under a tape
    with gt.GradientTape():
        with pytest.raises(gt.errors.InvalidArgumentError, match="cupy.asarray"):
            gt.linalg.matvec(gt.constant(cupy.asarray(x)), w)
    scaled = gt.constant(cupy.asarray(x)) * 2.0  # scalars mix
    assert on_gpu(scaled)
