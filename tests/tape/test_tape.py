"""GradientTape follows TensorFlow's semantics, bullet by bullet.

Expected values are derived by hand (in the comments) from TF's documentation and
were checked against TensorFlow 2.21's behaviour; no test imports TensorFlow.
"""

import logging

import numpy as np
import pytest

import gradtape as gt
from gradtape.tape import gradient_tape as tape_module


def value(t):
    return None if t is None else t.numpy()


@pytest.fixture
def fresh_warnings(monkeypatch):
    """TF logs some warnings a limited number of times per process: start counting anew."""
    monkeypatch.setattr(tape_module, "_warning_counts", {})


# --- recording --------------------------------------------------------------------------

def test_only_ops_inside_the_context_are_recorded():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        inside = x * x
    outside = x * x
    assert value(tape.gradient(inside, x)) == 6.0  # d(x^2)/dx = 2x
    assert tape.gradient(outside, x) is None


def test_results_computed_from_watched_tensors_are_tracked():
    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = gt.sin(y)
    # dz/dx = cos(x^2) * 2x
    assert np.isclose(value(tape.gradient(z, x)), np.cos(4.0) * 4.0)


def test_unwatched_constants_are_not_differentiated():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_watch_takes_nested_structures():
    a, b, c = gt.constant(1.0), gt.constant(2.0), gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b, (c,)]})
        y = a * b * c
    grads = tape.gradient(y, [a, b, c])
    assert [value(g) for g in grads] == [6.0, 3.0, 2.0]  # bc, ac, ab


def test_stop_recording_hides_ops_then_resumes():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * x
        seen = x * 2.0
    assert tape.gradient(hidden, x) is None
    assert value(tape.gradient(seen, x)) == 2.0


def test_reset_forgets_records_and_watches():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        before = x * x
        tape.reset()
        after = x * 4.0  # x is no longer watched
    assert tape.gradient([before, after], x) is None


def test_reset_keeps_recording():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        _ = x * x
        tape.reset()
        tape.watch(x)
        y = x * x * x
    assert value(tape.gradient(y, x)) == 27.0  # 3x^2


def test_non_persistent_gradient_inside_context_stops_recording():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        dy = tape.gradient(y, x)
        recording_after = tape._recording  # the used-up tape left the tape stack
    assert value(dy) == 6.0
    assert recording_after is False


def test_used_tape_entered_again_records_afresh():
    x = gt.constant(3.0)
    tape = gt.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    assert value(tape.gradient(y, x)) == 6.0
    with tape:
        tape.watch(x)
        z = x * x * x
    assert value(tape.gradient(z, x)) == 27.0


def test_entering_again_after_exit_keeps_the_recording():
    # TF: leaving the context and entering it again appends to the same tape.
    x = gt.constant(3.0)
    tape = gt.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    with tape:
        z = x * y  # x^3
    assert value(tape.gradient(z, x)) == 27.0


# --- watched variables ------------------------------------------------------------------

def test_watched_variables_are_in_creation_order():
    b = gt.Variable(1.0, name="b")
    a = gt.Variable(2.0, name="a")
    c = gt.Variable(3.0, name="c")
    with gt.GradientTape() as tape:
        _ = c * a + b  # read in the order c, a, b
    assert [v.name for v in tape.watched_variables()] == ["b:0", "a:0", "c:0"]


def test_explicitly_watched_variables_are_in_creation_order_too():
    b = gt.Variable(1.0, name="b")
    a = gt.Variable(2.0, name="a")
    with gt.GradientTape() as tape:
        tape.watch(a)
        tape.watch(b)
    assert [v.name for v in tape.watched_variables()] == ["b:0", "a:0"]


def test_reading_a_trainable_variable_watches_it():
    v = gt.Variable(3.0)
    with gt.GradientTape() as tape:
        y = v * v
    watched = tape.watched_variables()
    assert len(watched) == 1 and watched[0] is v
    assert value(tape.gradient(y, v)) == 6.0


def test_non_trainable_variables_are_not_watched_on_read():
    v = gt.Variable(2.0, trainable=False)
    with gt.GradientTape() as tape:
        y = v * v
    assert tape.watched_variables() == ()
    assert tape.gradient(y, v) is None


def test_non_trainable_variable_can_be_watched_explicitly():
    v = gt.Variable(2.0, trainable=False)
    with gt.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert len(tape.watched_variables()) == 1
    assert value(tape.gradient(y, v)) == 4.0


def test_watch_accessed_variables_false_watches_only_what_is_asked():
    a, b = gt.Variable(2.0), gt.Variable(5.0)
    with gt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(b)
        y = a * a + b * b
    assert tape.watched_variables()[0] is b and len(tape.watched_variables()) == 1
    ga, gb = tape.gradient(y, [a, b])
    assert ga is None and value(gb) == 10.0


def test_variables_read_while_recording_is_stopped_are_not_watched():
    v = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        with tape.stop_recording():
            _ = v * v
    assert tape.watched_variables() == ()


def test_watched_variables_outlive_the_one_gradient():
    v = gt.Variable(1.0)
    with gt.GradientTape() as tape:
        y = v * v
    tape.gradient(y, v)
    assert tape.watched_variables()[0] is v


def test_unread_variable_gets_none():
    a, b = gt.Variable(2.0), gt.Variable(5.0)
    with gt.GradientTape() as tape:
        y = a * a
    ga, gb = tape.gradient(y, [a, b])
    assert value(ga) == 4.0 and gb is None


# --- gradient: structures -------------------------------------------------------------

def test_sources_come_back_in_their_structure():
    a = gt.constant(1.0)
    b = gt.constant([2.0, 3.0])
    c = gt.constant(4.0)
    with gt.GradientTape() as tape:
        tape.watch([a, b, c])
        y = a * gt.reduce_sum(b) + c * c
    grads = tape.gradient(y, {"z": a, "b": [b, (c,)]})
    assert list(grads) == ["z", "b"]  # the caller's key order
    assert value(grads["z"]) == 5.0  # sum(b)
    np.testing.assert_array_equal(value(grads["b"][0]), [1.0, 1.0])  # a
    assert isinstance(grads["b"][1], tuple) and value(grads["b"][1][0]) == 8.0  # 2c


def test_tuple_sources_give_a_tuple():
    x, a = gt.constant(3.0), gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch([x, a])
        y = x * a
    grads = tape.gradient(y, (x, a))
    assert isinstance(grads, tuple) and [value(g) for g in grads] == [1.0, 3.0]


def test_a_structure_of_targets_is_summed():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = 3.0 * x
    # d/dx (x^2 + 3x + 3x) = 2x + 6
    assert value(tape.gradient({"a": y1, "b": [y2, y2]}, x)) == 12.0


def test_a_vector_target_is_summed():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(value(tape.gradient(y, x)), [2.0, 4.0])


def test_a_target_that_is_a_source_gets_ones():
    x = gt.constant([3.0, 4.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(value(tape.gradient(x, x)), [1.0, 1.0])


def test_a_target_that_is_a_source_even_unwatched_gets_one():
    z = gt.constant(2.0)
    with gt.GradientTape() as tape:
        _ = z * z
    assert value(tape.gradient(z, z)) == 1.0


def test_source_in_a_list_of_targets_adds_one():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert value(tape.gradient([x, y], x)) == 7.0  # 1 + 2x


def test_same_source_twice():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert [value(g) for g in tape.gradient(y, [x, x])] == [6.0, 6.0]


def test_an_intermediate_result_can_be_a_source():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * 2.0
    assert value(tape.gradient(z, y)) == 2.0


def test_an_unwatched_input_of_a_recorded_op_gets_none():
    x, c = gt.constant(2.0), gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * c
    gx, gc = tape.gradient(y, [x, c])
    assert value(gx) == 3.0 and gc is None


def test_empty_sources_and_targets():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, []) == []
    assert tape.gradient([], x) is None


# --- output_gradients and unconnected_gradients -------------------------------------------

def test_output_gradients_give_a_vector_jacobian_product(compile_mode):
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=gt.constant([10.0, 100.0]))
    np.testing.assert_array_equal(value(g), [20.0, 400.0])  # u * 2x


def test_output_gradients_per_target_with_none_meaning_ones():
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y1, y2 = x * x, x * 2.0
    # 5 * 2x + 1 * 2
    assert value(tape.gradient([y1, y2], x, output_gradients=[gt.constant(5.0), None])) == 32.0


def test_a_scalar_output_gradient_broadcasts_over_the_target():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(value(tape.gradient(y, x, output_gradients=2.0)), [4.0, 8.0])


def test_numpy_output_gradients_take_the_target_dtype():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=np.array([1.0, 2.0]))  # float64 array
    assert g.dtype == np.float32
    np.testing.assert_array_equal(value(g), [2.0, 8.0])


@pytest.mark.parametrize("mode", ["zero", gt.UnconnectedGradients.ZERO])
def test_unconnected_zero_gives_zeros_of_the_source(mode):
    x, z = gt.constant(3.0), gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch([x, z])
        y = x * x
    gx, gz = tape.gradient(y, [x, z], unconnected_gradients=mode)
    assert value(gx) == 6.0
    assert gz.dtype == np.float32
    np.testing.assert_array_equal(value(gz), [0.0, 0.0])


@pytest.mark.parametrize("mode", ["none", gt.UnconnectedGradients.NONE])
def test_unconnected_none_gives_none(mode):
    x, z = gt.constant(3.0), gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch([x, z])
        y = x * x
    assert tape.gradient(y, z, unconnected_gradients=mode) is None


def test_unconnected_zero_for_an_integer_source_is_integer_zeros(caplog):
    z = gt.constant([1, 2])
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch([x, z])
        y = x * x
    gz = tape.gradient(y, z, unconnected_gradients="zero")
    assert gz.dtype == np.int32
    np.testing.assert_array_equal(value(gz), [0, 0])


def test_a_constant_target_is_unconnected():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.constant(2.0)
    assert tape.gradient(y, x) is None
    assert value(tape.gradient(y, x, unconnected_gradients="zero")) == 0.0


def test_an_integer_target_is_unconnected():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.cast(x, "int32")
    assert tape.gradient(y, x) is None
    g = tape.gradient(y, x, unconnected_gradients="zero")
    assert g.dtype == np.float32 and value(g) == 0.0


# --- dtypes ----------------------------------------------------------------------------

def test_integer_sources_give_none_with_a_warning(caplog, fresh_warnings):
    xi, x = gt.constant(3), gt.constant(3.0)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        with gt.GradientTape() as tape:
            tape.watch([xi, x])
            y = gt.cast(xi, "float32") * x
    assert "must be floating" in caplog.text and "int32" in caplog.text
    gi, gx = tape.gradient(y, [xi, x])
    assert gi is None and value(gx) == 3.0


def test_integer_variable_gives_none_with_a_warning(caplog):
    v = gt.Variable(2)
    with gt.GradientTape() as tape:
        y = v * v
    assert tape.watched_variables()[0] is v  # TF watches it all the same
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        assert tape.gradient(y, v) is None
    assert "must be floating" in caplog.text


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_gradients_take_the_source_dtype(dtype):
    x = gt.constant(2.0, dtype=dtype)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)
    assert g.dtype == np.dtype(dtype) and value(g) == 4.0


def test_gradient_through_a_cast_comes_back_in_the_source_dtype():
    h = gt.constant(2.0, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(h)
        y = gt.cast(h, "float32") * 3.0
    g = tape.gradient(y, h)
    assert g.dtype == np.float64 and value(g) == 3.0

    f16 = gt.constant([1.0, 2.0], dtype="float16")
    with gt.GradientTape() as tape:
        tape.watch(f16)
        y = gt.reduce_sum(gt.cast(f16, "float32") ** 2)
    g = tape.gradient(y, f16)
    assert g.dtype == np.float16
    np.testing.assert_array_equal(value(g), [2.0, 4.0])


# --- complex numbers: TF's conjugate convention ------------------------------------------

def test_complex_gradient_of_a_real_function_is_twice_d_by_dconj():
    # f = z * conj(z) = |z|^2; TF returns 2 * df/dconj(z) = 2z.
    z = gt.constant(1.0 + 2.0j)
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = gt.real(z * gt.conj(z))
    g = tape.gradient(y, z)
    assert g.dtype == np.complex128 and value(g) == 2.0 + 4.0j


def test_complex_gradient_of_a_holomorphic_function_is_the_conjugate_derivative():
    # d(z^2)/dz = 2z; TF returns conj(2z) = 2 - 4j.
    z = gt.constant(1.0 + 2.0j)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = z * z
        e = gt.exp(z)
    assert value(tape.gradient(y, z)) == 2.0 - 4.0j
    # With an upstream gradient u the result is u * conj(f'(z)): 1j * (2 - 4j) = 4 + 2j.
    assert value(tape.gradient(y, z, output_gradients=gt.constant(1j))) == 4.0 + 2.0j
    assert np.isclose(value(tape.gradient(e, z)), np.conj(np.exp(1.0 + 2.0j)))


def test_complex_gradient_of_the_imaginary_part_is_i():
    z = gt.constant(1.0 + 2.0j)
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = gt.imag(z)
    assert value(tape.gradient(y, z)) == 1j


def test_real_source_through_complex_intermediates_gets_a_real_gradient():
    # real((r + i r)^2) = r^2 - r^2 = 0 for every r: derivative 0, dtype of r.
    r = gt.constant(2.0, dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(r)
        z = gt.cast(r, "complex128") * (1.0 + 1.0j)
        y = gt.real(z * z)
    g = tape.gradient(y, r)
    assert g.dtype == np.float64 and value(g) == 0.0


# --- persistent tapes ------------------------------------------------------------------

def test_persistent_tape_gives_several_gradients():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert value(tape.gradient(z, x)) == 108.0  # 4x^3
    assert value(tape.gradient(y, x)) == 6.0
    assert value(tape.gradient(z, x)) == 108.0


def test_gradient_inside_a_persistent_context_warns_once(caplog, fresh_warnings):
    x = gt.constant(3.0)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        for _ in range(2):
            with gt.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = x * x
                g1 = tape.gradient(y, x)
                g2 = tape.gradient(y, x)
    assert caplog.text.count("persistent tape inside its context") == 1
    assert value(g1) == value(g2) == 6.0


def test_gradient_inside_a_persistent_context_is_recorded():
    # That is why TF warns: the gradient computation lands on the tape (2nd order).
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    assert value(dy) == 27.0  # 3x^2
    assert value(tape.gradient(dy, x)) == 18.0  # 6x


# --- jacobian and batch_jacobian -----------------------------------------------------------

def test_jacobian_shapes_and_values():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    s = gt.constant(2.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y = gt.reduce_sum(x * x, axis=1) * s  # y_i = s * sum_j x_ij^2, shape (2,)
        yy = x * s
    jx = tape.jacobian(y, x)
    assert jx.shape == (2, 2, 2)
    # dy_i/dx_kl = 2 s x_kl if i == k
    np.testing.assert_array_equal(value(jx), [[[4.0, 8.0], [0.0, 0.0]],
                                              [[0.0, 0.0], [12.0, 16.0]]])
    js = tape.jacobian(y, s)
    np.testing.assert_array_equal(value(js), [5.0, 25.0])  # sum_j x_ij^2
    jxx, jss = tape.jacobian(yy, [x, s])
    assert jxx.shape == (2, 2, 2, 2) and jss.shape == (2, 2)
    np.testing.assert_array_equal(value(jss), value(x))


def test_jacobian_of_a_scalar_is_the_gradient():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(x * x)
    np.testing.assert_array_equal(value(tape.jacobian(y, x)), [2.0, 4.0])


def test_jacobian_of_a_target_that_is_the_source_is_the_identity():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(value(tape.jacobian(x, x)), np.eye(2))


def test_jacobian_sources_keep_their_structure():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    j = tape.jacobian(y, {"a": x})
    np.testing.assert_array_equal(value(j["a"]), [[2.0, 0.0], [0.0, 4.0]])


def test_jacobian_unconnected_none_or_zero():
    x, z = gt.constant([1.0, 2.0]), gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * x
    assert tape.jacobian(y, z) is None
    j = tape.jacobian(y, z, unconnected_gradients="zero")
    assert j.shape == (2, 3) and not value(j).any()


def test_jacobian_with_pfor_off_needs_and_uses_a_persistent_tape():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    j = tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_array_equal(value(j), [[2.0, 0.0], [0.0, 4.0]])


def test_jacobian_of_an_integer_source_is_none(caplog):
    x = gt.constant([1, 2])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.jacobian(y, x) is None


def test_jacobian_complex_follows_the_conjugate_convention():
    z = gt.constant([1.0 + 2.0j, 3.0 - 1.0j])
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = z * z
    # diag(conj(2z))
    np.testing.assert_array_equal(value(tape.jacobian(y, z)), [[2 - 4j, 0], [0, 6 + 2j]])


def test_batch_jacobian_shape_and_values():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        a, b = x[:, 0], x[:, 1]
        y = gt.stack([a * b, a ** 2, gt.sin(b)], axis=1)  # (3, 3)
    j = tape.batch_jacobian(y, x)
    assert j.shape == (3, 3, 2)
    # per example: [[b, a], [2a, 0], [0, cos b]]
    for i, (ai, bi) in enumerate(value(x)):
        np.testing.assert_allclose(value(j)[i], [[bi, ai], [2 * ai, 0], [0, np.cos(bi)]],
                                   rtol=1e-6)


def test_batch_jacobian_higher_rank_shape():
    x = gt.constant(np.ones((2, 3, 4), np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reshape(x * 2.0, (2, 12, 1))
    j = tape.batch_jacobian(y, x)
    assert j.shape == (2, 12, 1, 3, 4)
    # y[b, 4i + k, 0] = 2 x[b, i, k]
    expected = 2.0 * np.eye(12).reshape(12, 1, 3, 4)
    np.testing.assert_array_equal(value(j)[1], expected)


def test_batch_jacobian_unconnected_is_zeros_whatever_the_mode():
    x, z = gt.constant(np.ones((2, 3), np.float32)), gt.constant(np.ones((2, 4), np.float32))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    for mode in ("none", "zero"):
        j = tape.batch_jacobian(y, z, unconnected_gradients=mode)
        assert j.shape == (2, 3, 4) and not value(j).any()


def test_batch_jacobian_assumes_examples_do_not_interact():
    # Like TF, each row is the gradient of the batch-summed target: with
    # y_i = x_i * sum(x), every entry is sum(x) + sum(x) = 6 at x = [1, 2].
    x = gt.constant([[1.0], [2.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * gt.reduce_sum(x)
    np.testing.assert_array_equal(value(tape.batch_jacobian(y, x)), [[[6.0]], [[6.0]]])


def test_batch_jacobian_with_pfor_off_on_a_persistent_tape():
    x = gt.constant([[1.0, 2.0]])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    j = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_array_equal(value(j), [[[2.0, 0.0], [0.0, 4.0]]])
