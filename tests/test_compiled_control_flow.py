"""Loops and branches inside @gt.function compile to loop/switch equations: values and
gradients against eager Python control flow and finite differences in float64, first
and second order, forward mode, and a trip count / predicate that changes per call."""

import numpy as np
import pytest

import gradtape as gt
from gradient_checks import central_differences as _fd
from gradient_checks import traced_primitives as _prims

loop_p, switch_p = "loop", "switch"  # the primitives' names


# Its lines are named in tests/golden/loop_forward.txt: keep it here.
def newton(x, a):
    return gt.while_loop(lambda x: gt.abs(x * x - a) > 1e-4 * a,
                         lambda x: (x + a / x) / 2, [x])[0]




def test_newton_traces_once_and_stays_a_loop():
    f = gt.function(newton)
    for a in [2.0, 9.0, 100.0, 5.0, 1e4]:
        got = f(gt.constant(1.0, gt.float64), gt.constant(a, gt.float64)).numpy()
        assert abs(got - np.sqrt(a)) < 1e-3 * np.sqrt(a)
        assert got == pytest.approx(newton(gt.constant(1.0, gt.float64),
                                           gt.constant(a, gt.float64)).numpy(), rel=1e-12)
    assert f.experimental_get_tracing_count() == 1
    assert loop_p in _prims(f, gt.constant(1.0, gt.float64), gt.constant(2.0, gt.float64))
    source = f.get_concrete_function(gt.constant(1.0, gt.float64),
                                     gt.constant(2.0, gt.float64)).source
    assert "while True:" in source and "break" in source


@pytest.mark.parametrize("a", [2.0, 30.0])
def test_newton_gradient_matches_finite_differences(a):
    f = gt.function(newton)
    x0 = gt.constant(1.0, gt.float64)
    for _ in range(3):  # interpreted, then compiled
        av = gt.constant(a, gt.float64)
        with gt.GradientTape() as tape:
            tape.watch(av)
            y = f(x0, av)
        got = tape.gradient(y, av).numpy()
        want = _fd(lambda v: newton(x0, gt.constant(v, gt.float64)).numpy(), a)
        assert got == pytest.approx(want, rel=1e-6)
    assert loop_p in _prims(f, x0, av)


def rnn_loss(x, h0, wx, wh):
    def body(t, h):
        return t + 1, gt.tanh(x[t] @ wx + h @ wh)
    _, h = gt.while_loop(lambda t, h: t < x.shape[0], body, (gt.constant(0), h0))
    return gt.reduce_sum(h * h)


def _rnn_data(T=7, d=3, n=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(T, 1, d)), rng.normal(size=(1, n)),
            rng.normal(size=(d, n)) * 0.5, rng.normal(size=(n, n)) * 0.5)


def test_rnn_gradient_compiled_equals_eager_and_finite_differences():
    x, h0, wx, wh = _rnn_data()
    f = gt.function(rnn_loss)
    args = [gt.constant(v) for v in (x, h0, wx, wh)]
    ws = [gt.Variable(wx), gt.Variable(wh)]
    for _ in range(3):
        with gt.GradientTape() as tape:
            loss = f(args[0], args[1], *ws)
        grads = tape.gradient(loss, ws)
        with gt.GradientTape() as tape:
            eager = rnn_loss(args[0], args[1], *ws)
        want = tape.gradient(eager, ws)
        assert loss.numpy() == pytest.approx(eager.numpy(), rel=1e-12)
        for g, w in zip(grads, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10)
    fd = _fd(lambda v: rnn_loss(*[gt.constant(u) for u in (x, h0, wx, v)]).numpy(), wh)
    np.testing.assert_allclose(grads[1].numpy(), fd, rtol=1e-6, atol=1e-8)
    assert loop_p in _prims(f, *args[:2], *ws)


def test_rnn_backward_is_a_reversed_loop_reading_weights_unstacked():
    x, h0, wx, wh = _rnn_data()
    f = gt.function(rnn_loss)
    ws = [gt.Variable(wx), gt.Variable(wh)]
    with gt.GradientTape() as tape:
        loss = f(gt.constant(x), gt.constant(h0), *ws)
    tape.gradient(loss, ws)
    concrete = f.get_concrete_function(gt.constant(x), gt.constant(h0), *ws)
    backward = concrete.backward_source
    assert "while" in backward and "- 1 -" in backward  # iterates the stacks backwards
    loops = [e for e in concrete._gradient.program.eqns if e.prim.name == loop_p]
    assert len(loops) == 1
    # The backward reads the weights as invariants; only per-step values are stacked.
    stacked = [v.aval.shape for v in concrete._gradient.residual_forward.program.outputs
               if len(v.aval.shape) and v.aval.shape[0] == x.shape[0]
               and v.aval.shape[1:] != x.shape[1:]]
    assert all(s[1:] != wh.shape for s in stacked)


def test_trip_count_changes_between_calls_is_never_stale():
    f = gt.function(rnn_loss)
    for T in (3, 5, 3, 8):  # a new shape retraces; the loop itself is per call
        x, h0, wx, wh = _rnn_data(T=T, seed=T)
        w = gt.Variable(wh)
        with gt.GradientTape() as tape:
            loss = f(gt.constant(x), gt.constant(h0), gt.constant(wx), w)
        g = tape.gradient(loss, w).numpy()
        fd = _fd(lambda v, x=x, h0=h0, wx=wx: rnn_loss(
            gt.constant(x), gt.constant(h0), gt.constant(wx), gt.constant(v)).numpy(), wh)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        assert loop_p in _prims(f, gt.constant(x), gt.constant(h0), gt.constant(wx), w)


def test_counted_loop_with_trip_count_argument():
    @gt.function
    def power(x, n):
        return gt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x),
                             (gt.constant(0), gt.ones_like(x)))[1]
    x = gt.constant(1.3, gt.float64)
    for n in (0, 1, 4, 7):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = power(x, gt.constant(n))
        assert y.numpy() == pytest.approx(1.3 ** n)
        assert tape.gradient(y, x).numpy() == pytest.approx(n * 1.3 ** max(n - 1, 0))
    assert power.experimental_get_tracing_count() == 1


def test_maximum_iterations_is_a_bound():
    @gt.function
    def f(x, m):
        return gt.while_loop(lambda y: y < 1e9, lambda y: y * 2.0, [x],
                             maximum_iterations=m)[0]
    for m in (0, 3, 5):
        assert f(gt.constant(1.0), gt.constant(m)).numpy() == 2.0 ** m
    assert f.experimental_get_tracing_count() == 1


def test_second_derivative_of_a_loop():
    def cube_by_loop(x):
        return gt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x),
                             (gt.constant(0), gt.ones_like(x)))[1]
    f = gt.function(cube_by_loop)
    x = gt.constant(1.7, gt.float64)
    for _ in range(2):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            dy = inner.gradient(y, x)
        d2 = outer.gradient(dy, x)
        assert dy.numpy() == pytest.approx(3 * 1.7 ** 2)
        assert d2.numpy() == pytest.approx(6 * 1.7)
    assert loop_p in _prims(f, x)


def test_second_derivative_inside_the_function():
    @gt.function
    def hessian_of_loop(x, w):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                y = rnn_loss(x, gt.zeros((1, 2), gt.float64), gt.ones((1, 2), gt.float64)
                             * 0.3, w)
            g = inner.gradient(y, w)
            s = gt.reduce_sum(g * g)
        return outer.gradient(s, w)
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(4, 1, 1)), gt.Variable(rng.normal(size=(2, 2)) * 0.5)

    def s_of(wv):
        wt = gt.constant(wv)
        with gt.GradientTape() as t:
            t.watch(wt)
            y = rnn_loss(gt.constant(x), gt.zeros((1, 2), gt.float64),
                         gt.ones((1, 2), gt.float64) * 0.3, wt)
        g = t.gradient(y, wt).numpy()
        return float((g * g).sum())
    got = hessian_of_loop(gt.constant(x), w).numpy()
    np.testing.assert_allclose(got, _fd(s_of, w.numpy()), rtol=1e-5, atol=1e-7)


def test_forward_mode_through_a_compiled_loop():
    f = gt.function(newton)
    x0, a = gt.constant(1.0, gt.float64), gt.constant(7.0, gt.float64)
    f(x0, a)
    with gt.autodiff.ForwardAccumulator(a, gt.constant(1.0, gt.float64)) as acc:
        y = f(x0, a)
    want = _fd(lambda v: newton(x0, gt.constant(v, gt.float64)).numpy(), 7.0)
    assert acc.jvp(y).numpy() == pytest.approx(want, rel=1e-6)
    assert loop_p in _prims(f, x0, a)


def test_body_shape_change_raises_tf_value_error():
    @gt.function
    def f(x):
        return gt.while_loop(lambda y: gt.reduce_sum(y) < 10.0,
                             lambda y: gt.concat([y, y], 0), [x])
    with pytest.raises(ValueError, match="shape_invariants"):
        f(gt.ones([2]))


def test_body_dtype_change_raises_tf_type_error():
    @gt.function
    def f(x):
        return gt.while_loop(lambda y: y < 10, lambda y: gt.cast(y, gt.float32) * 2.0, [x])
    with pytest.raises(TypeError, match="keep its dtype"):
        f(gt.constant(1))


def test_random_draw_in_a_body_is_drawn_every_iteration():
    @gt.function
    def draws(n):
        _, out = gt.while_loop(lambda i, acc: i < n,
                               lambda i, acc: (i + 1, acc + gt.one_hot(i, 4)
                                               * gt.random.uniform([])),
                               (gt.constant(0), gt.zeros([4])))
        return out
    values = draws(gt.constant(4)).numpy()
    assert len(set(values.tolist())) == 4
    assert loop_p in _prims(draws, gt.constant(4))
    assert draws(gt.constant(4)).numpy().tolist() != values.tolist()  # drawn anew per call


# --- cond / switch_case / case ---------------------------------------------------------


def test_cond_branch_not_taken_gives_zero_gradient():
    # TF's testOfFunctionCond: the gradient through the branch not taken is 0.0.
    @gt.function
    def f(k, y):
        return gt.cond(k > 1, lambda: 3.0 * y, lambda: gt.constant(0.0))
    y = gt.constant(2.0)
    for k, want_value, want_grad in [(0, 0.0, 0.0), (3, 6.0, 3.0), (0, 0.0, 0.0)]:
        with gt.GradientTape() as tape:
            tape.watch(y)
            r = f(gt.constant(k), y)
        g = tape.gradient(r, y)
        assert r.numpy() == want_value
        assert g is not None and g.numpy() == want_grad
    assert f.experimental_get_tracing_count() == 1
    assert switch_p in _prims(f, gt.constant(0), y)


def test_cond_gradients_match_finite_differences_first_and_second_order():
    def g(x):
        return gt.cond(gt.reduce_sum(x) > 0, lambda: gt.reduce_sum(gt.sin(x) * x),
                       lambda: gt.reduce_sum(x ** 3))
    f = gt.function(g)
    for xv in ([0.3, 0.5], [-0.4, -0.2]):
        x = gt.constant(xv, gt.float64)
        for _ in range(2):
            with gt.GradientTape() as outer:
                outer.watch(x)
                with gt.GradientTape() as inner:
                    inner.watch(x)
                    y = f(x)
                d = inner.gradient(y, x)
                s = gt.reduce_sum(d)
            d2 = outer.gradient(s, x)

            def grad_sum(v):
                t = gt.constant(v)
                with gt.GradientTape() as tp:
                    tp.watch(t)
                    out = g(t)
                return float(tp.gradient(out, t).numpy().sum())
            np.testing.assert_allclose(d.numpy(), _fd(lambda v: g(gt.constant(v)).numpy(),
                                                      xv), rtol=1e-6)
            np.testing.assert_allclose(d2.numpy(), _fd(grad_sum, xv), rtol=1e-5)
    assert f.experimental_get_tracing_count() == 1


def test_switch_case_and_case_are_run_time_values():
    @gt.function
    def f(i, x):
        return gt.switch_case(i, [lambda: x, lambda: x * 2.0, lambda: x * 3.0])

    @gt.function
    def h(x):
        return gt.case([(x < 0.0, lambda: -x), (x < 1.0, lambda: x * 10.0)],
                       default=lambda: x + 100.0)
    x = gt.constant(2.0)
    assert [f(gt.constant(i), x).numpy() for i in (0, 1, 2, 7)] == [2.0, 4.0, 6.0, 6.0]
    assert f.experimental_get_tracing_count() == 1
    assert [h(gt.constant(v)).numpy() for v in (-2.0, 0.5, 3.0)] == [2.0, 5.0, 103.0]
    assert h.experimental_get_tracing_count() == 1


def test_cond_branch_dtype_mismatch_raises_type_error():
    @gt.function
    def f(p):
        return gt.cond(p, lambda: gt.constant(1.0), lambda: gt.constant(1))
    with pytest.raises(TypeError, match="dtypes"):
        f(gt.constant(True))


def test_cond_forward_mode():
    @gt.function
    def f(x):
        return gt.cond(x > 0.0, lambda: x * x, lambda: -x)
    for v, want in [(3.0, 6.0), (-2.0, -1.0)]:
        x = gt.constant(v, gt.float64)
        with gt.autodiff.ForwardAccumulator(x, gt.constant(1.0, gt.float64)) as acc:
            y = f(x)
        assert acc.jvp(y).numpy() == want
    assert switch_p in _prims(f, x)


def test_eager_control_flow_still_runs_python():
    calls = []

    def body(y):
        calls.append(1)
        return y + 1.0
    gt.while_loop(lambda y: y < 3.0, body, [gt.constant(0.0)])
    assert len(calls) == 3


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the golden files are NumPy 2's output: NumPy 1's value-based casting turns the "
    "loop's Python scalars into float64 inputs (tests/codegen/test_golden.py skips alike)")
def test_golden_loop_forward_source():
    import pathlib

    f = gt.function(newton)
    source = f.get_concrete_function(gt.constant(1.0, gt.float64),
                                     gt.constant(2.0, gt.float64)).source
    golden = pathlib.Path(__file__).parent / "golden" / "loop_forward.txt"
    assert source == golden.read_text()


# --- scan / foldl / foldr / map_fn -----------------------------------------------------


def _scan_programs():
    return {
        "scan": lambda x, w: gt.reduce_sum(gt.scan(lambda a, e: gt.sin(a * w + e), x,
                                                   initializer=gt.zeros_like(x[0]))),
        "scan_reverse": lambda x, w: gt.reduce_sum(gt.scan(
            lambda a, e: a * w + e * e, x, initializer=gt.ones_like(x[0]), reverse=True)
            * gt.reshape(gt.range(1.0, 6.0, dtype=gt.float64), [5, 1])),
        "scan_no_init": lambda x, w: gt.reduce_sum(gt.scan(lambda a, e: gt.tanh(a + e * w),
                                                           x) ** 2),
        "foldl": lambda x, w: gt.reduce_sum(gt.foldl(lambda a, e: a * w + gt.cos(e), x,
                                                     initializer=gt.ones_like(x[0]))),
        "foldr": lambda x, w: gt.reduce_sum(gt.foldr(lambda a, e: a * w - e, x,
                                                     initializer=gt.ones_like(x[0])) ** 2),
        "map_fn": lambda x, w: gt.reduce_sum(gt.map_fn(lambda e: gt.exp(e * w), x)),
    }


@pytest.mark.parametrize("name", sorted(_scan_programs()))
def test_scan_family_compiles_to_a_loop_with_exact_gradients(name):
    program = _scan_programs()[name]
    f = gt.function(program)
    rng = np.random.default_rng(7)
    xv, wv = rng.normal(size=(5, 2)), rng.normal(size=(2,)) * 0.7
    x, w = gt.constant(xv), gt.constant(wv)
    assert loop_p in _prims(f, x, w)
    for _ in range(3):
        with gt.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        gx, gw = tape.gradient(y, [x, w])
        assert y.numpy() == pytest.approx(program(x, w).numpy(), rel=1e-12)
        np.testing.assert_allclose(
            gw.numpy(), _fd(lambda v: program(x, gt.constant(v)).numpy(), wv), rtol=1e-6)
        np.testing.assert_allclose(
            gx.numpy(), _fd(lambda v: program(gt.constant(v), w).numpy(), xv), rtol=1e-6,
            atol=1e-9)


def test_tape_inside_the_function_sees_the_loop_and_its_variables():
    # TF's train step: the tape opened inside the function, weights as variables.
    w = gt.Variable(np.array([[0.5, 0.2], [-0.3, 0.8]]))

    @gt.function
    def step(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, gt.tanh(h @ w)),
                              (0, x))[1]
            loss = gt.reduce_sum(y * y)
        return tape.gradient(loss, [x, w])

    def loss_of(xv, wv):
        h = xv
        for _ in range(3):
            h = np.tanh(h @ wv)
        return float((h * h).sum())
    xv = np.array([[1.0, -0.5]])
    for _ in range(2):
        gx, gw = step(gt.constant(xv))
        np.testing.assert_allclose(gx.numpy(), _fd(lambda v: loss_of(v, w.numpy()), xv),
                                   rtol=1e-6)
        np.testing.assert_allclose(gw.numpy(), _fd(lambda v: loss_of(xv, v), w.numpy()),
                                   rtol=1e-6)
    assert loop_p in _prims(step, gt.constant(xv))


def test_jacobian_of_a_compiled_loop():
    def f(x):
        return gt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, gt.sin(y) * x),
                             (0, x))[1]
    fc = gt.function(f)
    xv = np.array([0.3, 0.7, -0.4])
    x = gt.constant(xv)
    for pfor in (True, False):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = fc(x)
        got = tape.jacobian(y, x, experimental_use_pfor=pfor).numpy()
        want = np.stack([_fd(lambda v, k=k: f(gt.constant(v)).numpy()[k], xv)
                         for k in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert loop_p in _prims(fc, x)


def test_keras_fori_loop_compiles_with_run_time_bounds():
    from gradtape import keras

    @gt.function
    def f(x, n):
        return keras.ops.fori_loop(0, n, lambda i, v: v * x + gt.cast(i, x.dtype),
                                   gt.zeros_like(x))
    x = gt.constant(2.0, gt.float64)
    for n, want, want_grad in [(2, 1.0, 0.0), (3, 4.0, 1.0), (5, 26.0, 23.0)]:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x, gt.constant(n))
        # v_n = sum_i i * x^(n-1-i); d/dx at x = 2
        assert y.numpy() == want
        assert tape.gradient(y, x).numpy() == pytest.approx(want_grad)
    assert f.experimental_get_tracing_count() == 1
    assert loop_p in _prims(f, x, gt.constant(3))
    assert keras.ops.fori_loop(0, 3, lambda i, v: v * 2.0 + i, 0.0) == 4.0  # eager: Python


def test_python_reads_the_loop_result_while_tracing():
    # The trace runs the loop for its values: a Python branch on the result sees them.
    @gt.function
    def f(a):
        root = newton(gt.constant(1.0, gt.float64), a)
        return root * 2.0 if root > 2.0 else root - 1.0
    assert f(gt.constant(9.0, gt.float64)).numpy() == pytest.approx(6.0, rel=1e-4)
    assert f(gt.constant(2.0, gt.float64)).numpy() == pytest.approx(np.sqrt(2) - 1, rel=1e-4)


def _nested(x, w):
    def outer_body(i, y):
        inner = gt.while_loop(lambda j, z: j < i + 1, lambda j, z: (j + 1, gt.sin(z * w)),
                              (0, y))[1]
        return i + 1, gt.cond(gt.reduce_sum(inner) > 0, lambda: inner * w,
                              lambda: inner - w)
    return gt.reduce_sum(gt.while_loop(lambda i, y: i < 3, outer_body, (0, x))[1] ** 2)


def test_loop_and_cond_inside_a_loop_first_and_second_order():
    # The inner loop runs 1, 2, 3 times: its stacks cannot be stacked by the outer loop,
    # whose backward computes the inner loop again.
    f = gt.function(_nested)
    xv, wv = np.array([0.3, -0.8]), np.array([1.1, 0.7])
    x, w = gt.constant(xv), gt.constant(wv)
    for _ in range(3):
        with gt.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        gx, gw = tape.gradient(y, [x, w])
        assert y.numpy() == pytest.approx(_nested(x, w).numpy(), rel=1e-12)
        np.testing.assert_allclose(
            gx.numpy(), _fd(lambda v: _nested(gt.constant(v), w).numpy(), xv), rtol=1e-6)
        np.testing.assert_allclose(
            gw.numpy(), _fd(lambda v: _nested(x, gt.constant(v)).numpy(), wv), rtol=1e-6)
    with gt.GradientTape() as outer:
        outer.watch(w)
        with gt.GradientTape() as inner:
            inner.watch(w)
            y = f(x, w)
        s = gt.reduce_sum(inner.gradient(y, w))

    def grad_sum(v):
        wt = gt.constant(v)
        with gt.GradientTape() as t:
            t.watch(wt)
            out = _nested(x, wt)
        return float(t.gradient(out, wt).numpy().sum())
    np.testing.assert_allclose(outer.gradient(s, w).numpy(), _fd(grad_sum, wv), rtol=1e-5)
    assert {loop_p, switch_p} <= _prims(f, x, w)


def test_while_loop_options_and_structures_compiled():
    x = gt.constant(1.5, gt.float64)

    @gt.function
    def no_backprop(x):
        return gt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x),
                             back_prop=False)[1]

    @gt.function
    def dict_state(x):
        out = gt.while_loop(lambda s: s["i"] < 4,
                            lambda s: [{"i": s["i"] + 1, "y": s["y"] * x}],
                            [{"i": gt.constant(0), "y": x}], maximum_iterations=2)
        return out[0]["y"]

    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = no_backprop(x)
        b = dict_state(x)
    assert a.numpy() == pytest.approx(1.5 ** 4)
    g = tape.gradient(a, x, unconnected_gradients="zero")
    assert g.numpy() == 0.0
    assert b.numpy() == pytest.approx(1.5 ** 3)  # a Python bound of 2 iterations
    assert tape.gradient(b, x).numpy() == pytest.approx(3 * 1.5 ** 2)
    assert loop_p in _prims(no_backprop, x) and loop_p in _prims(dict_state, x)


def test_shape_invariants_that_let_a_shape_change_keep_python_loops():
    @gt.function
    def grow(x):
        return gt.while_loop(lambda y: gt.size(y) < 8, lambda y: gt.concat([y, y], 0), [x],
                             shape_invariants=[gt.TensorShape([None])])[0]
    assert grow(gt.ones([2])).numpy().tolist() == [1.0] * 8
    assert loop_p not in _prims(grow, gt.ones([2]))


def test_a_body_that_stays_python_gives_the_random_streams_back():
    # The shape changes under shape_invariants: Python's loop runs after the body was
    # traced once; the draw that trace made must not move the stream the call draws from.
    gt.random.set_seed(5)

    @gt.function
    def grow(x):
        return gt.while_loop(lambda y: gt.size(y) < 8,
                             lambda y: gt.concat([y, gt.random.uniform(gt.shape(y))], 0),
                             [x], shape_invariants=[gt.TensorShape([None])])[0]
    first = grow(gt.ones([2])).numpy()
    assert first.shape == (8,) and len(set(first[2:].tolist())) == 6


def test_case_with_a_vector_predicate_raises_tf_type_error_inside_a_function():
    @gt.function
    def f(x):
        return gt.case([(x > 0.0, lambda: x)], default=lambda: -x)
    with pytest.raises(TypeError, match="scalar bool"):
        f(gt.constant([1.0, -1.0]))


def test_verifier_and_passes_work_inside_bodies():
    from gradtape.ir.nodes import Eqn, Program
    from gradtape.ir.verifier import VerificationError, verify
    from gradtape.passes.pipeline import optimize

    @gt.function
    def f(x, w):
        def body(i, y):
            twice = (y * w + 0.0) * 1.0  # a fold inside the body: x + 0 and x * 1
            return i + 1, gt.sin(twice) + gt.sin(twice)  # and a common subexpression
        return gt.while_loop(lambda i, y: i < 3, body, (0, x))[1]
    x, w = gt.constant([0.2, 0.4], gt.float64), gt.constant([1.5, -0.5], gt.float64)
    program = f.get_concrete_function(x, w).program
    loop = next(e for e in program.eqns if e.prim.name == loop_p)
    body_prims = [e.prim.name for e in optimize(program, verify=True).eqns[
        program.eqns.index(loop)].params["body"].eqns]
    assert body_prims.count("sin") == 1  # CSE inside the body
    assert "add" in body_prims and body_prims.count("multiply") <= 2
    verify(program)
    broken_body = loop.params["body"]
    stray = Program(broken_body.inputs[:1], broken_body.eqns, broken_body.outputs)
    eqns = [Eqn(e.prim, e.inputs, e.outs, dict(e.params, body=stray), e.loc)
            if e is loop else e for e in program.eqns]
    with pytest.raises(VerificationError, match="loop"):
        verify(Program(program.inputs, eqns, program.outputs))
