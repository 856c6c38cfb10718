"""A TensorArray carried by a loop inside @gt.function compiles to one buffer (the
``row_write`` primitive): values equal eager, gradients equal finite differences in
float64 at first and second order, forward mode, and TF's errors."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import central_differences as _fd
from gradient_checks import traced_primitives as _prims


def rnn_outputs(x, wx, wh):
    """TF's guide RNN: each step's state written into a TensorArray, stacked."""
    n = x.shape[0]
    h = gt.zeros((wh.shape[0],), gt.float64)
    outputs = gt.TensorArray(gt.float64, size=n)
    for t in gt.range(n):
        h = gt.tanh(gt.linalg.matvec(wx, x[t], transpose_a=True) + gt.linalg.matvec(wh, h))
        outputs = outputs.write(t, h)
    return outputs.stack()


def rnn_loss(x, wx, wh):
    out = rnn_outputs(x, wx, wh)
    return gt.reduce_sum(out * out * gt.range(1.0, 1.0 + out.shape[0], dtype=gt.float64)[:, None])


def _data(seed=0, T=6, d=3, n=2):
    rng = np.random.default_rng(seed)
    return (gt.constant(rng.normal(size=(T, d))), gt.constant(rng.normal(size=(d, n)) * .5),
            gt.constant(rng.normal(size=(n, n)) * .5))


def test_tensor_array_in_a_loop_is_a_buffer_not_unrolled():
    x, wx, wh = _data()
    f = gt.function(rnn_outputs)
    got = f(x, wx, wh).numpy()
    np.testing.assert_allclose(got, rnn_outputs(x, wx, wh).numpy(), rtol=1e-12)
    prims = _prims(f, x, wx, wh)
    assert "loop" in prims and "row_write" in prims
    assert "stack" not in prims and "concatenate" not in prims  # no per-row unrolling


def test_gradients_match_finite_differences_and_eager():
    x, wx, wh = _data()
    f = gt.function(rnn_loss)
    for _ in range(3):  # interpreted, then compiled
        with gt.GradientTape() as tape:
            tape.watch([x, wx, wh])
            y = f(x, wx, wh)
        got = tape.gradient(y, [x, wx, wh])
    with gt.GradientTape() as tape:
        tape.watch([x, wx, wh])
        y_eager = rnn_loss(x, wx, wh)
    eager = tape.gradient(y_eager, [x, wx, wh])
    assert y.numpy() == pytest.approx(y_eager.numpy(), rel=1e-12)
    args = [x.numpy(), wx.numpy(), wh.numpy()]
    for k, g in enumerate(got):
        def at(v, k=k):
            vals = list(args)
            vals[k] = v
            return rnn_loss(*(gt.constant(a) for a in vals)).numpy()
        np.testing.assert_allclose(g.numpy(), _fd(at, args[k]), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g.numpy(), eager[k].numpy(), rtol=1e-10)


def test_second_derivative_through_the_buffer():
    def loss(a):
        ta = gt.TensorArray(gt.float64, size=3)
        for i in gt.range(3):
            ta = ta.write(i, a * gt.cast(i + 1, gt.float64) * a)
        s = ta.stack()
        return gt.reduce_sum(s * s)  # sum (i+1)^2 a^4 = 14 a^4

    f = gt.function(loss)
    a = gt.constant(0.7, gt.float64)
    with gt.GradientTape() as outer:
        outer.watch(a)
        with gt.GradientTape() as inner:
            inner.watch(a)
            y = f(a)
        g = inner.gradient(y, a)
    h = outer.gradient(g, a)
    assert "row_write" in _prims(f, a)
    assert y.numpy() == pytest.approx(14 * 0.7 ** 4, rel=1e-12)
    assert g.numpy() == pytest.approx(56 * 0.7 ** 3, rel=1e-12)
    assert h.numpy() == pytest.approx(168 * 0.7 ** 2, rel=1e-12)


def test_forward_mode_through_the_buffer():
    x, wx, wh = _data(seed=1)
    f = gt.function(rnn_loss)
    tangent = gt.constant(np.random.default_rng(2).normal(size=wh.shape))
    with gt.autodiff.ForwardAccumulator(wh, tangent) as acc:
        y = f(x, wx, wh)
    want = np.sum(_fd(lambda v: rnn_loss(x, wx, gt.constant(v)).numpy(), wh.numpy())
                  * tangent.numpy())
    assert acc.jvp(y).numpy() == pytest.approx(want, rel=1e-6)


def test_while_loop_reads_an_unstacked_array_and_writes_another():
    def cumulative(x):
        n = x.shape[0]
        inputs = gt.TensorArray(gt.float64, size=n, element_shape=(2,)).unstack(x)
        out = gt.TensorArray(gt.float64, size=n, element_shape=(2,))

        def body(i, acc, out):
            acc = acc + inputs.read(i)
            return i + 1, acc, out.write(i, acc * acc)
        _, _, out = gt.while_loop(lambda i, acc, out: i < n, body,
                                  (gt.constant(0), gt.zeros((2,), gt.float64), out))
        return out.stack()

    x = gt.constant(np.arange(8.0).reshape(4, 2))
    f = gt.function(cumulative)
    want = np.cumsum(x.numpy(), axis=0) ** 2
    np.testing.assert_allclose(f(x).numpy(), want)
    np.testing.assert_allclose(cumulative(x).numpy(), want)
    assert "row_write" in _prims(f, x)


def test_rows_never_written_read_as_zeros_and_size_is_static():
    @gt.function
    def evens(x):
        ta = gt.TensorArray(gt.float64, size=4)
        for i in gt.range(2):
            ta = ta.write(2 * i, x * gt.cast(i + 1, gt.float64))
        return ta.stack(), ta.size(), ta.read(2)

    stacked, size, row = evens(gt.constant([1.0, 2.0], gt.float64))  # one dtype, as TF requires
    np.testing.assert_array_equal(stacked.numpy(), [[1, 2], [0, 0], [2, 4], [0, 0]])
    assert int(size) == 4
    np.testing.assert_array_equal(row.numpy(), [2, 4])


def test_write_past_the_end_raises_out_of_range():
    @gt.function
    def too_far(n):
        ta = gt.TensorArray(gt.float64, size=2)
        for i in gt.range(n):
            ta = ta.write(i, gt.cast(i, gt.float64))
        return ta.stack()

    np.testing.assert_array_equal(too_far(gt.constant(2)).numpy(), [0.0, 1.0])
    with pytest.raises(gt.errors.OutOfRangeError, match="index 2"):
        too_far(gt.constant(3))


def test_write_of_another_dtype_raises_tf_error_inside_the_loop():
    @gt.function
    def wrong(x):
        ta = gt.TensorArray(gt.float32, size=2)
        for i in gt.range(2):
            ta = ta.write(i, x)
        return ta.stack()

    with pytest.raises(gt.errors.InvalidArgumentError, match="dtype"):
        wrong(gt.constant([1.0], gt.float64))


def test_dynamic_size_array_grows_its_buffer_and_its_size_is_never_stale():
    @gt.function
    def squares(n):
        ta = gt.TensorArray(gt.float64, size=0, dynamic_size=True)
        for i in gt.range(n):
            ta = ta.write(i, gt.cast(i * i, gt.float64))
        return ta.stack()

    for n in [4, 4, 40, 2, 4]:  # 40 rows: the buffer doubles past its 16 spare rows
        np.testing.assert_array_equal(squares(gt.constant(n)).numpy(),
                                      np.arange(n) ** 2.0)
    # The size is the result's shape: one trace per size, as for an input shape.
    assert squares.experimental_get_tracing_count() == 3
    assert {"loop", "row_write"} <= _prims(squares, gt.constant(4))


def test_dynamic_size_gradient_matches_finite_differences():
    def powers(x, n):
        ta = gt.TensorArray(gt.float64, size=1, dynamic_size=True).write(0, x)
        p = x
        for i in gt.range(1, n):
            p = p * x
            ta = ta.write(i, gt.sin(p))
        return gt.reduce_sum(ta.stack() * gt.constant([1.0, 2.0, 3.0, 4.0]))

    f = gt.function(powers)
    x, n = gt.constant(0.8, gt.float64), gt.constant(4)
    for _ in range(2):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x, n)
        g = tape.gradient(y, x)
    want = _fd(lambda v: powers(gt.constant(v), n).numpy(), 0.8)
    assert y.numpy() == pytest.approx(powers(x, n).numpy(), rel=1e-12)
    assert g.numpy() == pytest.approx(want, rel=1e-7)
    assert "row_write" in _prims(f, x, n)


def test_jacobian_through_the_buffer_matches_finite_differences():
    x, wx, wh = _data(seed=3, T=4)
    f = gt.function(rnn_outputs)
    with gt.GradientTape() as tape:
        tape.watch(wh)
        out = f(x, wx, wh)
    jac = tape.jacobian(out, wh).numpy()
    want = np.stack([_fd(lambda v, i=i: rnn_outputs(x, wx, gt.constant(v)).numpy()[i],
                         wh.numpy()) for i in np.ndindex(out.shape)])
    np.testing.assert_allclose(jac.reshape(want.shape), want, rtol=1e-6, atol=1e-9)


def test_row_write_batching_rule_writes_each_elements_row():
    from gradtape.ops.stacking import row_write_p

    buffers = gt.constant(np.zeros((2, 3, 2)))
    values = gt.constant(np.arange(4.0).reshape(2, 2))
    out = row_write_p.batch(2, [buffers, gt.constant(1), values], [True, False, True])
    want = np.zeros((2, 3, 2))
    want[:, 1] = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(out.numpy(), want)


def test_a_loops_array_returned_by_a_cond_stays_a_tensor_array():
    @gt.function
    def f(x, flag):
        ta = gt.TensorArray(gt.float64, size=2)
        for i in gt.range(2):
            ta = ta.write(i, x * gt.cast(i + 1, gt.float64))
        chosen = gt.cond(flag, lambda: ta, lambda: ta)
        return chosen.stack(), chosen.read(1)

    stacked, row = f(gt.constant(1.5, gt.float64), gt.constant(True))
    np.testing.assert_array_equal(stacked.numpy(), [1.5, 3.0])
    assert row.numpy() == 3.0


def test_row_write_on_array_api_arrays_matches_numpy():
    xp = pytest.importorskip("array_api_strict")
    from gradtape.ops.stacking import row_write

    for index, grow in [(1, False), (3, True)]:
        want = row_write(gt.constant(np.zeros((2, 3))), index, gt.constant(np.ones(3)),
                         grow=grow).numpy()
        got = row_write(gt.constant(xp.zeros((2, 3))), index, gt.constant(xp.ones((3,))),
                        grow=grow)
        np.testing.assert_array_equal(np.asarray(got._value), want)
    with pytest.raises(gt.errors.OutOfRangeError, match="index 2"):
        row_write(gt.constant(xp.zeros((2, 3))), 2, gt.constant(xp.ones((3,))))
