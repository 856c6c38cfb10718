"""gt.Variable: TF's variable API; updates never change what a tape recorded."""

import numpy as np
import pytest

import gradtape as gt


def test_construction_and_properties():
    v = gt.Variable(3.0, name="w")
    assert v.dtype == np.float32 and v.shape == () and v.numpy() == 3.0
    assert v.name == "w:0" and v.trainable
    assert gt.Variable(1.0).name == "Variable:0"  # TF's eager default
    frozen = gt.Variable([1, 2], trainable=False)
    assert not frozen.trainable and frozen.dtype == np.int32
    assert gt.Variable(lambda: np.zeros(3)).shape == (3,)  # callable initial value
    assert gt.Variable(1, dtype="float64").dtype == np.float64
    assert repr(v) == "<gt.Variable 'w:0' shape=() dtype=float32, numpy=3.0>"


def test_operators_like_a_tensor():
    v = gt.Variable(3.0)
    y = v ** 2
    assert isinstance(y, gt.Tensor) and not isinstance(y, gt.Variable)
    assert repr(y) == "Tensor(9.0, shape=(), dtype=float32)"
    np.testing.assert_array_equal(np.asarray(gt.Variable([1.0, 2.0])) * 2, [2.0, 4.0])


def test_assign_add_sub():
    v = gt.Variable([1.0, 2.0])
    assert v.assign([1, 2]) is v  # Python ints converted to the variable's dtype
    assert v.dtype == np.float32
    v.assign_add(gt.constant([1.0, 1.0]))
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    assert v.assign_sub([0.5, 0.5], read_value=False) is None
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.5])


def test_assign_checks_shape_and_dtype():
    v = gt.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\).*assign a value of shape"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="float64 tensor.*gt.cast"):
        v.assign(gt.constant([1.0, 2.0], dtype="float64"))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_variable_gradient():
    v = gt.Variable(3.0)
    with gt.GradientTape() as tape:
        y = v ** 2
    assert repr(tape.gradient(y, v)) == "Tensor(6.0, shape=(), dtype=float32)"


def test_read_value_is_recorded_as_the_variable():
    v = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        y = v.read_value() * 3.0
    assert tape.gradient(y, v).numpy() == 3.0


def test_assign_is_not_recorded():
    v = gt.Variable(2.0)
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        v.assign_add(x)
        y = v * 1.0
    assert tape.gradient(y, x) is None
    assert v.numpy() == 3.0


def test_assign_after_recording_keeps_the_recorded_value():
    # y = w^2 recorded at w = 2; the gradient is 2w = 4 whatever w becomes later.
    w = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        y = w * w
        w.assign(10.0)
    assert tape.gradient(y, w).numpy() == 4.0
    w.assign_add(5.0)
    assert tape.gradient(y, w).numpy() == 4.0
    assert y.numpy() == 4.0


def test_assign_never_writes_into_an_array_a_tape_holds():
    w = gt.Variable([1.0, 2.0])
    held = w._value  # the very array the tape's record will hold
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(w * w)
    w.assign_sub([1.0, 1.0])
    w.assign([7.0, 7.0])
    np.testing.assert_array_equal(held, [1.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [2.0, 4.0])


def test_assign_between_reads_sums_over_both_values():
    # TF sums over every read: z = w1 * w0^2 with w0 = 2, w1 = 10:
    # dz/dw = w1 * 2 w0 + w0^2 = 40 + 4 = 44.
    w = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        y = w * w
        w.assign(10.0)
        z = w * y
    assert tape.gradient(z, w).numpy() == 44.0


def test_assign_between_two_recordings_of_a_persistent_tape():
    w = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        y = w * w
    w.assign(10.0)
    with tape:
        z = w * y
    assert tape.gradient(z, w).numpy() == 44.0
    assert tape.gradient(y, w).numpy() == 4.0


def test_assign_add_before_use_differentiates_at_the_new_value():
    w = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        w.assign_add(1.0)
        y = w * w
    assert tape.gradient(y, w).numpy() == 6.0


def test_assigning_or_reading_numpy_inside_a_tape_watches_the_variable():
    a, b = gt.Variable(1.0), gt.Variable(2.0)
    with gt.GradientTape() as tape:
        a.assign(3.0)
        b.numpy()
    assert len(tape.watched_variables()) == 2


def test_unconnected_variable_zero():
    v = gt.Variable([1.0, 2.0])
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, v, unconnected_gradients="zero")
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_float64_variable_gradient_is_float64():
    v = gt.Variable(1.0, dtype="float64")
    with gt.GradientTape() as tape:
        y = gt.cast(v, "float32") * 2.0
    g = tape.gradient(y, v)
    assert g.dtype == np.float64 and g.numpy() == 2.0


def test_training_loop_updates():
    # Minimise (w - 3)^2 by gradient descent: w_{k+1} = w_k - 0.25 * 2 (w_k - 3).
    w = gt.Variable(0.0)
    for _ in range(20):
        with gt.GradientTape() as tape:
            loss = (w - 3.0) ** 2
        w.assign_sub(0.25 * tape.gradient(loss, w))
    assert np.isclose(w.numpy(), 3.0, atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda: gt.Variable(None),
    lambda: gt.Variable(None, dtype="float32"),
    lambda: gt.Variable([1.0, None]),
    lambda: gt.constant(None),
    lambda: gt.Variable(1.0).assign(None),
])
def test_none_values_are_not_supported(make):
    # TF: ValueError "None values not supported"; NumPy would make an object array (or
    # nan, given a float dtype).
    with pytest.raises(ValueError, match="None values not supported"):
        make()


def test_values_that_are_not_numbers_raise_type_error():
    with pytest.raises(TypeError, match="not numbers"):
        gt.constant([{}, 1])
