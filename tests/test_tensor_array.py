"""gt.TensorArray: TF's API and errors, and gradients through its loops (eager tapes,
nested tapes, @gt.function compiled and interpreted, jacobians, forward mode)."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import assert_same_gradients, assert_vjp_matches_differences
from tf_op_checks import check_first_and_second_order

# --- values and TF's API -------------------------------------------------------------------


def test_write_read_stack_and_properties():
    ta = gt.TensorArray(gt.float32, size=3)
    assert ta.dtype == gt.float32 and ta.dtype is gt.float32
    assert not ta.dynamic_size and ta.element_shape is None
    for i in range(3):
        ta = ta.write(i, [float(i), 10.0 * i])  # Python values take the array's dtype
    assert ta.element_shape == gt.TensorShape([2])
    stacked = ta.stack()
    assert stacked.dtype == np.float32 and stacked.shape == (3, 2)
    np.testing.assert_array_equal(stacked.numpy(), [[0, 0], [1, 10], [2, 20]])
    assert ta.size().numpy() == 3 and ta.size().dtype == np.int32
    np.testing.assert_array_equal(ta.read(1).numpy(), [1, 10])


def test_bare_write_changes_the_array_as_in_eager_tf():
    ta = gt.TensorArray(gt.float64, size=2)
    same = ta.write(0, 1.0)
    ta.write(1, 2.0)
    assert same is ta and ta.identity() is ta
    np.testing.assert_array_equal(ta.stack().numpy(), [1.0, 2.0])


def test_dynamic_size_grows_and_unwritten_elements_read_as_zeros():
    ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
    ta = ta.write(2, gt.constant([1.0, 2.0]))
    assert ta.size().numpy() == 3
    np.testing.assert_array_equal(ta.stack().numpy(), [[0, 0], [0, 0], [1, 2]])


def test_gather_concat_unstack_scatter_split():
    value = np.arange(12.0).reshape(4, 3)
    ta = gt.TensorArray(gt.float64, size=4).unstack(value)
    np.testing.assert_array_equal(ta.gather([3, 1]).numpy(), value[[3, 1]])
    np.testing.assert_array_equal(ta.concat().numpy(), value.reshape(-1))
    ta = gt.TensorArray(gt.float64, size=4).scatter(gt.constant([2, 0]), value[:2])
    np.testing.assert_array_equal(ta.stack().numpy(), [value[1], [0, 0, 0], value[0],
                                                       [0, 0, 0]])
    ta = gt.TensorArray(gt.float64, size=3, infer_shape=False, clear_after_read=False).split(
        np.arange(6.0), [1, 2, 3])
    np.testing.assert_array_equal(ta.read(2).numpy(), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(ta.concat().numpy(), np.arange(6.0))


def test_empty_stack_with_known_element_shape_and_close():
    ta = gt.TensorArray(gt.float32, size=0, element_shape=[2, 3])
    assert ta.element_shape == gt.TensorShape([2, 3])
    assert ta.stack().shape == (0, 2, 3) and ta.stack().dtype == np.float32
    ta = gt.TensorArray(gt.int32, size=2).write(0, 1).write(1, 2)
    assert ta.stack().dtype == np.int32
    ta.close()
    assert ta.size().numpy() == 0


def test_clear_after_read_false_reads_many_times():
    ta = gt.TensorArray(gt.float32, size=1, clear_after_read=False).write(0, 3.0)
    assert ta.read(0).numpy() == 3.0 and ta.read(0).numpy() == 3.0


# --- errors: TF's types and messages --------------------------------------------------------


def test_write_past_the_size_without_dynamic_size():
    ta = gt.TensorArray(gt.float32, size=2)
    with pytest.raises(gt.errors.OutOfRangeError, match="dynamic_size=True"):
        ta.write(2, 1.0)
    with pytest.raises(gt.errors.OutOfRangeError, match="negative"):
        ta.write(-1, 1.0)


def test_read_errors():
    ta = gt.TensorArray(gt.float32, size=2).write(0, [1.0])
    with pytest.raises(gt.errors.OutOfRangeError, match="size is: 2"):
        ta.read(5)
    ta.read(0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="clear_after_read"):
        ta.read(0)
    unknown = gt.TensorArray(gt.float32, size=2)
    with pytest.raises(gt.errors.InvalidArgumentError, match="not yet been written"):
        unknown.read(1)
    with pytest.raises(TypeError, match="integer index"):
        unknown.read(1.5)


def test_write_errors():
    ta = gt.TensorArray(gt.float32, size=3, element_shape=[None, 2])
    ta.write(0, np.zeros((4, 2), np.float32))
    with pytest.raises(gt.errors.InvalidArgumentError, match="already been written"):
        ta.write(0, np.zeros((4, 2), np.float32))
    with pytest.raises(gt.errors.InvalidArgumentError, match="TensorArray dtype is float32"):
        ta.write(1, gt.constant(np.zeros((4, 2))))  # a float64 tensor is not cast
    with pytest.raises(ValueError, match="Incompatible shape"):  # InvalidArgumentError
        ta.write(1, np.zeros((3, 2), np.float32))
    ta.read(0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="already been read"):
        ta.write(0, np.zeros((4, 2), np.float32))


def test_unstack_split_and_concat_errors():
    with pytest.raises(gt.errors.InvalidArgumentError, match="static size 2"):
        gt.TensorArray(gt.float32, size=2).unstack(np.zeros((3, 1), np.float32))
    with pytest.raises(gt.errors.InvalidArgumentError, match="sum of lengths"):
        gt.TensorArray(gt.float32, size=2).split(np.zeros(3, np.float32), [1, 1])
    ta = gt.TensorArray(gt.float32, size=2).write(0, 1.0).write(1, 2.0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="scalar shape at index 0"):
        ta.concat()


# --- gradients ------------------------------------------------------------------------------


def rnn(x, w):
    """TF's guide idiom: a loop writes each step's output, then the array is stacked."""
    outputs = gt.TensorArray(gt.float64, size=4)
    state = gt.zeros([2], dtype=gt.float64)
    for i in range(4):
        state = gt.tanh(gt.linalg.matvec(w, state) + x[i])
        outputs = outputs.write(i, state)
    stacked = outputs.stack()
    return gt.reduce_sum(stacked * stacked) + gt.reduce_sum(outputs.gather([1, 3])[0])


def _rnn_args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((4, 2)), 0.5 * rng.standard_normal((2, 2))]


def test_gradient_through_a_rnn_loop_matches_finite_differences():
    arrays = _rnn_args()
    x, w = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        tape.watch([x, w])
        y = rnn(x, w)
    grads = tape.gradient(y, [x, w])
    assert_vjp_matches_differences(rnn, arrays, np.ones(()), grads,
                                   np.random.default_rng(1))


def test_second_order_through_a_loop_matches_finite_differences():
    arrays = _rnn_args()

    def gradient_dot(x, w):  # <grad_x rnn, 1>: its gradient is a Hessian-vector product
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = rnn(x, w)
        return gt.reduce_sum(inner.gradient(y, x))

    x, w = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as outer:
        outer.watch([x, w])
        z = gradient_dot(x, w)
    grads = outer.gradient(z, [x, w])
    assert_vjp_matches_differences(gradient_dot, arrays, np.ones(()), grads,
                                   np.random.default_rng(2), rtol=1e-5)


def test_gradient_through_read_concat_unstack_and_scatter():
    def f(v):
        ta = gt.TensorArray(gt.float64, size=3).unstack(gt.sin(v))
        first = ta.read(0)
        joined = gt.TensorArray(gt.float64, size=2).scatter([1, 0], v[1:] * v[:2]).concat()
        return gt.reduce_sum(first * first) + gt.reduce_sum(gt.exp(joined))

    array = np.random.default_rng(3).standard_normal((3, 2))
    v = gt.constant(array)
    with gt.GradientTape() as tape:
        tape.watch(v)
        y = f(v)
    assert_vjp_matches_differences(f, [array], np.ones(()), [tape.gradient(y, v)],
                                   np.random.default_rng(4))


def test_function_loop_compiled_equals_interpreted_and_eager(compile_mode):
    traced = gt.function(rnn)
    x, w = [gt.constant(a) for a in _rnn_args()]
    results = []
    for f in (rnn, traced):
        with gt.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        results.append([y] + tape.gradient(y, [x, w]))
    assert_same_gradients(results[0], results[1], what=f"compile={compile_mode}")
    # Another call of the same trace: new values, not the trace-time ones.
    x2 = gt.constant(_rnn_args()[0] + 1.0)
    np.testing.assert_allclose(traced(x2, w).numpy(), rnn(x2, w).numpy(), rtol=1e-12)


def test_tf_guide_dynamic_rnn_with_a_tensor_range_loop():
    def rnn_step(inp, state):
        return inp + state

    @gt.function
    def dynamic_rnn(input_data, initial_state):
        input_data = gt.transpose(input_data, [1, 0, 2])  # [time, batch, features]
        max_seq_len = input_data.shape[0]
        states = gt.TensorArray(gt.float32, size=max_seq_len)
        state = initial_state
        for i in gt.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return gt.transpose(states.stack(), [1, 0, 2])

    data = np.random.default_rng(5).uniform(size=(2, 3, 4)).astype(np.float32)
    out = dynamic_rnn(gt.constant(data), gt.zeros([2, 4]))
    np.testing.assert_allclose(out.numpy(), np.cumsum(data, axis=1), rtol=1e-6)
    assert out.dtype == np.float32 and out.shape == (2, 3, 4)


def test_jacobian_and_forward_mode_through_a_loop():
    def f(x):
        ta = gt.TensorArray(gt.float64, size=0, dynamic_size=True)
        for i in range(3):
            ta = ta.write(i, gt.sin(x * (i + 1)))
        return ta.stack()

    array = np.array([0.3, -0.7])
    expected = np.stack([np.diag((i + 1) * np.cos(array * (i + 1))) for i in range(3)])
    jac = gt.jacobian(f)(gt.constant(array))
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-12)
    x = gt.constant(array)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.function(f)(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), expected, rtol=1e-12)
    _, tangent = gt.jvp(f, [x], [gt.constant(np.array([1.0, 0.0]))])
    np.testing.assert_allclose(tangent.numpy(), expected[..., 0], rtol=1e-12)


def test_an_array_made_outside_a_function_cannot_be_written_inside():
    outside = gt.TensorArray(gt.float32, size=2)

    @gt.function
    def f(x):
        outside.write(0, x)  # its element would be the trace's tensor on later calls
        return x

    with pytest.raises(NotImplementedError, match="created outside @gt.function"):
        f(gt.constant(1.0))


# --- a TensorArray carried by while_loop, cond and foldl (TF's canonical pattern) -------

def _write_scaled_rows(x):
    """TF's pattern: ``i * x`` written at ``i`` for i < 3, then stacked."""
    i, ta = gt.while_loop(lambda i, ta: i < 3,
                          lambda i, ta: (i + 1, ta.write(i, x * gt.cast(i, x.dtype))),
                          [0, gt.TensorArray(x.dtype, size=3)])
    assert int(i) == 3
    return ta.stack()


def _rows_and_gradient(x):
    with gt.GradientTape() as tape:
        tape.watch(x)
        rows = _write_scaled_rows(x)
        y = gt.reduce_sum(rows * rows)
    return rows, tape.gradient(y, x)


def test_a_tensor_array_is_a_while_loop_variable_eagerly_and_in_a_function():
    """TF: ``[[0, 0], [1, 2], [2, 4]]``; d/dx sum(rows**2) = 2 x (0 + 1 + 4) = 10 x."""
    traced = gt.function(_rows_and_gradient)
    for x in ([1.0, 2.0], [1.0, 2.0], [3.0, -1.0]):  # a trace, then compiled calls
        for rows, grad in (_rows_and_gradient(gt.constant(x)), traced(gt.constant(x))):
            np.testing.assert_array_equal(rows, np.outer([0, 1, 2], x))
            np.testing.assert_allclose(grad, 10 * np.asarray(x), rtol=1e-6)


def test_the_gradient_through_a_loop_carried_tensor_array_is_three_per_element():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(_write_scaled_rows(x))
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 3.0])


def test_the_loop_carried_tensor_array_gradient_matches_finite_differences():
    check_first_and_second_order(lambda x: gt.sin(_write_scaled_rows(x)),
                                 np.array([0.3, -1.2]))


def test_tensor_arrays_nested_in_loop_variables_and_growing():
    x = gt.constant([1.0, 2.0])
    out = gt.while_loop(
        lambda s: s["i"] < 3,
        lambda s: {"i": s["i"] + 1, "pair": (s["pair"][0].write(s["i"], x + 1.0),
                                             s["pair"][1] + 0.5)},
        {"i": 0, "pair": (gt.TensorArray(gt.float32, size=0, dynamic_size=True), 0.0)},
        shape_invariants={"i": gt.TensorShape([]), "pair": (gt.TensorShape([2]),
                                                           gt.TensorShape([]))})
    np.testing.assert_array_equal(out["pair"][0].stack(), [[2, 3]] * 3)
    assert float(out["pair"][1]) == 1.5
    grown = gt.while_loop(lambda ta: ta.size() < 4, lambda ta: ta.write(ta.size(), 2.0),
                          gt.TensorArray(gt.float32, size=0, dynamic_size=True))
    np.testing.assert_array_equal(grown.stack(), [2.0] * 4)


def test_a_loop_reads_an_unstacked_tensor_array_and_python_loop_variables():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        source = gt.TensorArray(gt.float32, size=3).unstack(x)
        _, total, counts = gt.while_loop(
            lambda i, total, counts: i < 3,
            lambda i, total, counts: (i + 1, total + source.read(i) ** 2,
                                      [counts[0] + 1, counts[1] * 2.0]),
            [0, 0.0, [0, 1.0]])
    assert float(total) == 14.0
    assert int(counts[0]) == 3 and float(counts[1]) == 8.0
    np.testing.assert_array_equal(tape.gradient(total, x), [2.0, 4.0, 6.0])


def test_back_prop_false_stops_the_tensor_arrays_gradients():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        _, ta = gt.while_loop(lambda i, ta: i < 2, lambda i, ta: (i + 1, ta.write(i, x * 2.0)),
                              [0, gt.TensorArray(gt.float32, size=2)], back_prop=False)
        y = gt.reduce_sum(ta.stack())
    np.testing.assert_array_equal(ta.stack(), [[2, 4], [2, 4]])
    assert tape.gradient(y, x) is None


def test_the_body_must_return_a_tensor_array_for_one():
    x = gt.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="TensorArray and the body returns Tensor"):
        gt.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, x).stack()),
                      [0, gt.TensorArray(gt.float32, size=3)])


def test_tensor_arrays_from_cond_and_foldl():
    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        ta = gt.cond(x > 1, lambda: gt.TensorArray(gt.float32, size=1).write(0, x * x),
                     lambda: gt.TensorArray(gt.float32, size=1).write(0, -x))
        folded = gt.foldl(lambda ta, e: ta.write(ta.size(), e * x), gt.constant([1.0, 3.0]),
                          initializer=gt.TensorArray(gt.float32, size=0, dynamic_size=True))
        y = gt.reduce_sum(ta.stack()) + gt.reduce_sum(folded.stack())
    np.testing.assert_array_equal(folded.stack(), [2.0, 6.0])
    assert float(y) == 12.0
    assert float(tape.gradient(y, x)) == 2 * 2.0 + 4.0
