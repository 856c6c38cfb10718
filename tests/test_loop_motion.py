"""Map-like work out of compiled loops (passes/loop_motion.py, codegen/control_flow.py).

Each loop form is run compiled (``@gt.function``, the tape around the call), eagerly
(Python control flow) and by central finite differences in float64; the generated code
is read to check the work moved out of the loop, so a rewrite that stops applying fails.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradtape as gt

T, N_IN, N_HIDDEN = 8, 3, 4


def _data(batch: int = 1, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, batch, N_IN))
    h0 = rng.normal(size=(batch, N_HIDDEN)) * 0.3
    wx = rng.normal(size=(N_IN, N_HIDDEN)) * 0.5
    wh = rng.normal(size=(N_HIDDEN, N_HIDDEN)) * 0.5
    return x, h0, wx, wh


# Its lines are named in tests/golden/loop_rnn_step.txt: keep it here.
def _rnn(count=None, reads_h: bool = False):
    """The benchmark's loop: ``t < len(x)`` (or ``t < count``, a shorter trip count)."""
    def loss(x, h0, wx, wh):
        def body(t, h):
            new = gt.tanh(x[t] @ wx + h @ wh)
            return t + 1, new + 0.5 * h if reads_h else new
        n = gt.shape(x)[0] if count is None else count
        _, h = gt.while_loop(lambda t, h: t < n, body, (gt.constant(0), h0))
        return gt.reduce_sum(h * h)
    return loss


def _scan_rnn(x, h0, wx, wh):
    hs = gt.scan(lambda h, xt: gt.tanh(xt @ wx + h @ wh), x, initializer=h0)
    return gt.reduce_sum(hs[-1] * hs[-1]) + 0.1 * gt.reduce_sum(hs)


def _column_rnn(x, h0, wx, wh):
    """``w @ x[t]``: column vectors, the weight on the left."""
    xc, hc = gt.transpose(x, [0, 2, 1]), gt.transpose(h0)

    def body(t, h):
        return t + 1, gt.tanh(gt.transpose(wx) @ xc[t] + gt.transpose(wh) @ h)
    _, h = gt.while_loop(lambda t, h: t < gt.shape(xc)[0], body, (gt.constant(0), hc))
    return gt.reduce_sum(h * h)


def _grads(loss, args, compiled: bool):
    fn = gt.function(loss) if compiled else loss
    tensors = [gt.constant(a) for a in args[:2]]
    weights = [gt.Variable(a) for a in args[2:]]
    with gt.GradientTape() as tape:
        value = fn(*tensors, *weights)
    grads = tape.gradient(value, weights,
                          unconnected_gradients=gt.UnconnectedGradients.ZERO)
    return value.numpy(), [g.numpy() for g in grads]


def _finite_differences(loss, args, eps: float = 1e-6):
    grads = []
    for k in (2, 3):
        g = np.zeros_like(args[k])
        for index in np.ndindex(args[k].shape):
            values = []
            for sign in (1, -1):
                moved = [a.copy() for a in args]
                moved[k][index] += sign * eps
                values.append(loss(*[gt.constant(a) for a in moved]).numpy())
            g[index] = (values[0] - values[1]) / (2 * eps)
        grads.append(g)
    return grads


def _column_batch_rnn(x, h0, wx, wh):
    """``w @ x[t]`` with ``x[t]`` a stack of columns (rows of 4 dimensions)."""
    xc = gt.reshape(x, (T, -1, N_IN, 1))
    hc = gt.reshape(h0, (-1, N_HIDDEN, 1))

    def body(t, h):
        return t + 1, gt.tanh(gt.transpose(wx) @ xc[t] + gt.transpose(wh) @ h)
    _, h = gt.while_loop(lambda t, h: t < gt.shape(xc)[0], body, (gt.constant(0), hc))
    return gt.reduce_sum(h * h)


FORMS = {
    "counter to len(x)": (_rnn(), 1),
    "trip count below len(x)": (_rnn(count=5), 1),
    "body also reads h": (_rnn(reads_h=True), 1),
    "batch of 2": (_rnn(), 2),
    "weight on the left": (_column_rnn, 1),
    "weight on the left, batch of columns": (_column_batch_rnn, 2),
    "no iteration": (_rnn(count=0), 1),
    "negative trip count": (_rnn(count=-2), 1),
    "scan": (_scan_rnn, 1),
}


@pytest.mark.parametrize("form", FORMS)
def test_compiled_equals_eager_equals_finite_differences(form):
    loss, batch = FORMS[form]
    args = _data(batch)
    value, compiled = _grads(loss, args, compiled=True)
    eager_value, eager = _grads(loss, args, compiled=False)
    np.testing.assert_allclose(value, eager_value, rtol=1e-12)
    for c, e, fd in zip(compiled, eager, _finite_differences(loss, args)):
        np.testing.assert_allclose(c, e, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(c, fd, rtol=1e-6, atol=1e-8)


def test_trip_count_below_the_length_stops_there():
    # Five steps of eight: the gradient of the weights is that of the first five rows.
    args = _data()
    short = (args[0][:5],) + args[1:]
    _, cut = _grads(_rnn(count=5), args, compiled=True)
    _, whole_of_five = _grads(_rnn(), short, compiled=True)
    for a, b in zip(cut, whole_of_five):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _sources(tmp_path, loss, args):
    with gt.config(dump_dir=str(tmp_path)):
        _grads(loss, args, compiled=True)
    return {p.read_text() for p in tmp_path.iterdir()}


def _loop_lines(source: str) -> str:
    """The statements inside the ``while`` of ``source`` (its comments left out)."""
    inside = re.search(r"\n( +)while [^\n]*\n((?:\1 +[^\n]*\n)+)", source)
    assert inside is not None, source
    return "".join(line for line in inside.group(2).splitlines(True)
                   if not line.lstrip().startswith("#"))


def test_the_loops_keep_only_per_iteration_work(tmp_path):
    sources = _sources(tmp_path, _rnn(), _data())
    forward = next(s for s in sources if "also returning what its backward reads" in s)
    backward = next(s for s in sources if s.startswith(
        "# Generated by gradtape: the backward"))
    # x[t] @ wx is one product before the loop; the loop runs len(x) iterations with no
    # comparison; only the new h is written (x's rows and t are sliced and counted after
    # the loop, h's rows are the new h's shifted by one).
    assert re.search(r"\n    matmul_\d+ = x @ Variable_\d+\n", forward), forward
    body = _loop_lines(forward)
    assert body.count("@") == 1 and "less(" not in body and "break" not in body, forward
    # h and the new h: one stack of n + 1 rows, the new h computed into its row.
    assert "] = " not in body and re.search(r"tanh\(.*, out=rows_\d+\[k_\d+ \+ 1\]\)",
                                             body), forward
    assert "rows_read(x, 0, k_" in forward and "count_rows(k_" in forward, forward
    # The reversed loop: one matmul (h's cotangent); the weights' cotangents are one
    # product each after it, over the stacks.
    body = _loop_lines(backward)
    assert body.count("@") == 1 and "+ matmul" not in body, backward
    # tanh's derivative 1 - tanh_t ** 2 reads the stack alone: one op over it, before.
    assert "square(" not in body and "square(" in backward, backward
    assert backward.count(".reshape((-1, ") == 4, backward


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the golden files are NumPy 2's output (tests/codegen/test_golden.py skips alike)")
def test_golden_rnn_step_source(tmp_path):
    """The forward (with what its backward reads) and the backward of the RNN's step:
    a change to the loops' generated code changes this file on purpose."""
    import pathlib

    sources = sorted(_sources(tmp_path, _rnn(), _data()))
    text = "\n\n".join(s for s in sources if "what its backward reads" in s
                       or s.startswith("# Generated by gradtape: the backward"))
    golden = pathlib.Path(__file__).parent / "golden" / "loop_rnn_step.txt"
    assert text == golden.read_text()


def test_a_row_past_the_end_raises_as_eagerly():
    args = _data()
    loss = _rnn(count=T + 2)
    with pytest.raises(IndexError):
        _grads(loss, args, compiled=False)
    with pytest.raises(IndexError):
        _grads(loss, args, compiled=True)


def test_second_order_through_the_loop():
    """The gradient of the gradient's squared norm, nested tapes inside the function."""
    loss = _rnn(reads_h=True)
    args = _data()

    def grad_norm(x, h0, wx, wh):
        with gt.GradientTape() as inner:
            inner.watch([wx, wh])
            value = loss(x, h0, wx, wh)
        gx, gh = inner.gradient(value, [wx, wh])
        return gt.reduce_sum(gx * gx) + gt.reduce_sum(gh * gh)

    value, compiled = _grads(grad_norm, args, compiled=True)
    eager_value, eager = _grads(grad_norm, args, compiled=False)
    np.testing.assert_allclose(value, eager_value, rtol=1e-10)
    for c, e, fd in zip(compiled, eager, _finite_differences(grad_norm, args, 1e-5)):
        np.testing.assert_allclose(c, e, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(c, fd, rtol=1e-5, atol=1e-7)


def test_jacobian_through_the_loop():
    x, h0, wx, wh = _data(batch=2)

    def final_state(x, h0, wx, wh):
        def body(t, h):
            return t + 1, gt.tanh(x[t] @ wx + h @ wh)
        return gt.while_loop(lambda t, h: t < gt.shape(x)[0], body,
                             (gt.constant(0), h0))[1]

    def jacobians(fn):
        w = gt.Variable(wx)
        with gt.GradientTape() as tape:
            h = fn(gt.constant(x), gt.constant(h0), w, gt.constant(wh))
        return tape.jacobian(h, w).numpy()

    compiled, eager = jacobians(gt.function(final_state)), jacobians(final_state)
    assert compiled.shape == (2, N_HIDDEN, N_IN, N_HIDDEN)
    np.testing.assert_allclose(compiled, eager, rtol=1e-10, atol=1e-12)
    eps, fd = 1e-6, np.zeros_like(compiled)
    for index in np.ndindex(wx.shape):
        up, down = wx.copy(), wx.copy()
        up[index] += eps
        down[index] -= eps
        fd[(...,) + index] = (final_state(x, h0, up, wh).numpy()
                              - final_state(x, h0, down, wh).numpy()) / (2 * eps)
    np.testing.assert_allclose(compiled, fd, rtol=1e-6, atol=1e-8)


def test_a_loop_with_a_random_draw_keeps_its_row_reads():
    # An impure body: nothing is sliced after the loop or moved (the draw stays per step).
    x = gt.constant(np.ones((4, 1, 2)))

    @gt.function
    def noisy(x):
        def body(t, acc):
            return t + 1, acc + x[t] * gt.random.uniform([1, 2], dtype=gt.float64)
        return gt.while_loop(lambda t, a: t < gt.shape(x)[0], body,
                             (gt.constant(0), gt.zeros([1, 2], gt.float64)))[1]

    source = noisy.get_concrete_function(x).source
    assert "x[loop_var" in _loop_lines(source), source
    assert noisy(x).shape == (1, 2)


def test_rows_sliced_from_an_input_are_not_stale_when_it_changes():
    # The forward's stack of x's rows is a slice of x, not a copy per iteration: the
    # gradient must not see a write into the caller's array between the call and it.
    x, h0, wx, wh = _data()
    _, want = _grads(_rnn(), (x, h0, wx, wh), compiled=True)
    fn, weights = gt.function(_rnn()), [gt.Variable(wx), gt.Variable(wh)]
    mine = x.copy()
    with gt.GradientTape() as tape:
        value = fn(mine, h0, *weights)
    mine[:] = 7.0
    for got, w in zip(tape.gradient(value, weights), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12)


def _tensor_array_program(reads_back: bool):
    def rows(x, n):
        """Rows 0 .. n - 1 of 2 x (their running sum with ``reads_back``), zeros after."""
        ta = gt.TensorArray(gt.float64, size=gt.shape(x)[0])
        if reads_back:  # (else the loop starts from the trace's zeros: an input)
            ta = ta.write(0, x[0] * 2.0)

        def body(t, ta):
            value = x[t] * 2.0
            if reads_back:  # the body reads the buffer too: it must not be overwritten
                value = value + ta.read(t - 1)
            return t + 1, ta.write(t, value)
        start = gt.constant(1 if reads_back else 0)
        _, ta = gt.while_loop(lambda t, ta: t < n, body, (start, ta))
        return ta.stack()
    return rows


@pytest.mark.parametrize("reads_back", [False, True])
def test_tensor_array_writes_in_place_keep_every_value(reads_back):
    # The compiled loop owns a copy of the buffer it starts from (the trace's zeros, an
    # input of every call) and writes rows into it: a call writing fewer rows must not
    # see the rows an earlier call wrote.
    program = _tensor_array_program(reads_back)
    f = gt.function(program)
    x = np.arange(8.0).reshape(4, 2)
    for n in (4, 2, 3, 1, 4):
        want = np.zeros_like(x)
        want[:n] = 2.0 * x[:n] if not reads_back else np.cumsum(2.0 * x[:n], axis=0)
        np.testing.assert_array_equal(f(gt.constant(x), gt.constant(n)).numpy(), want)
        if not reads_back:  # (TF 2.21's eager TensorArray keeps only the last row here,
            # and gradtape's eager one with it; tf.function gives the running sum)
            np.testing.assert_array_equal(program(gt.constant(x), n).numpy(), want)
    source = f.get_concrete_function(gt.constant(x), gt.constant(4)).source
    assert ("row_write_in_place(" in source) is not reads_back, source


def test_tensor_array_gradient_through_in_place_writes():
    x = np.arange(6.0).reshape(3, 2) / 3.0
    program = _tensor_array_program(False)

    def loss(x):
        return gt.reduce_sum(gt.sin(program(x, 3)))

    def gradient(fn):
        xs = gt.Variable(x)
        with gt.GradientTape() as tape:
            value = fn(xs)
        return tape.gradient(value, xs).numpy()
    np.testing.assert_allclose(gradient(gt.function(loss)), 2.0 * np.cos(2.0 * x),
                               rtol=1e-12)
    np.testing.assert_allclose(gradient(loss), 2.0 * np.cos(2.0 * x), rtol=1e-12)


def test_a_scan_row_times_a_weight_is_one_product_before_the_loop(tmp_path):
    sources = _sources(tmp_path, _scan_rnn, _data(batch=2))
    forward = next(s for s in sources if "also returning what its backward reads" in s)
    assert re.search(r"\n    matmul_\d+ = \w+ @ Variable_\d+\n", forward), forward
    assert _loop_lines(forward).count(" @ ") == 1, forward  # h @ wh alone
