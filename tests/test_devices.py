"""TF's device and tf.config functions on a CPU-only library, and gt.config still a
context manager with them as attributes."""

import numpy as np
import pytest

import gradtape as gt


def test_physical_and_logical_devices():
    assert gt.config.list_physical_devices("GPU") == []
    assert gt.config.list_physical_devices("TPU") == []
    cpus = gt.config.list_physical_devices("CPU")
    assert cpus == [gt.config.PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")]
    assert repr(cpus[0]) == \
        "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert gt.config.list_physical_devices() == cpus
    assert gt.config.list_logical_devices("cpu") == [
        gt.config.LogicalDevice(name="/device:CPU:0", device_type="CPU")]
    assert gt.config.list_logical_devices("GPU") == []
    with pytest.raises(TypeError, match="device_type"):
        gt.config.list_physical_devices(0)


@pytest.mark.parametrize("name", ["CPU:0", "/CPU:0", "/device:CPU:0", "cpu:0", "GPU:0",
                                  "/GPU:1", "/job:localhost/replica:0/task:0/device:CPU:0",
                                  "", None])
def test_device_scopes_run_on_the_cpu(name):
    with gt.device(name):
        a = gt.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = gt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = gt.matmul(a, b)
    np.testing.assert_array_equal(c.numpy(), [[22.0, 28.0], [49.0, 64.0]])
    assert c.device == a.device == "/job:localhost/replica:0/task:0/device:CPU:0"


def test_malformed_device_names_raise():
    with pytest.raises(ValueError, match="malformed device spec"):
        gt.device("CPU:zero")
    with pytest.raises(TypeError):
        gt.device(3)


def test_config_is_still_a_context_manager_next_to_tf_functions():
    before = gt.config().compile
    with gt.config(compile=not before):
        assert gt.config().compile is (not before)
    assert gt.config().compile is before
    assert gt.config.functions_run_eagerly() is False
    gt.config.run_functions_eagerly(True)
    try:
        assert gt.config.functions_run_eagerly() is True
        calls = []

        @gt.function
        def f(x):
            calls.append(1)
            return x * 2.0

        x = gt.constant(3.0, dtype=gt.float64)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        f(x)
        assert float(y) == 6.0 and float(tape.gradient(y, x)) == 2.0
        assert len(calls) == 2 and f.experimental_get_tracing_count() == 0
    finally:
        gt.config.run_functions_eagerly(False)
    assert gt.config.functions_run_eagerly() is False
