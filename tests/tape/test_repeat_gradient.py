"""A persistent tape asked for the same gradient again only reruns its backward
(tape.py's repeat shortcut): same numbers as the first call, never stale ones."""

import numpy as np

import gradtape as gt


def _tape(w, x):
    tape = gt.GradientTape(persistent=True)
    with tape:
        y = gt.reduce_sum(gt.tanh(x @ w) ** 2)
    return tape, y


def test_repeated_calls_agree_with_the_first_and_with_numpy():
    rng = np.random.default_rng(0)
    w = gt.Variable(rng.standard_normal((3, 2)))
    x = gt.constant(rng.standard_normal((4, 3)))
    tape, y = _tape(w, x)
    t = np.tanh(x.numpy() @ w.numpy())
    expected = x.numpy().T @ (2 * t * (1 - t**2))
    hits = gt.cache_info().hits
    for _ in range(4):
        np.testing.assert_allclose(tape.gradient(y, w).numpy(), expected)
        g_list = tape.gradient(y, [w, x])
        assert isinstance(g_list, list) and len(g_list) == 2
        np.testing.assert_allclose(g_list[0].numpy(), expected)
        g_tuple = tape.gradient(y, (w,))
        assert isinstance(g_tuple, tuple)
        np.testing.assert_allclose(g_tuple[0].numpy(), expected)
    assert gt.cache_info().hits > hits


def test_an_assigned_variable_keeps_the_recorded_value():
    w = gt.Variable(np.array([1.0, 2.0]))
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(w * w)
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), [2.0, 4.0])
    w.assign([10.0, 20.0])  # TF: the gradient still uses the value read while recording
    for _ in range(2):
        np.testing.assert_allclose(tape.gradient(y, w).numpy(), [2.0, 4.0])


def test_recording_more_or_resetting_is_not_a_repeat():
    x = gt.constant(np.array([0.5, 1.5]))
    tape = gt.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.sin(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(x.numpy()))
    with tape:
        z = y * gt.reduce_sum(x)  # more records on the same tape
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(x.numpy()))
    np.testing.assert_allclose(
        tape.gradient(z, x).numpy(),
        np.cos(x.numpy()) * x.numpy().sum() + np.sin(x.numpy()).sum())


def test_unconnected_modes_are_part_of_the_call():
    a, b = gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = gt.reduce_sum(a * a)
    for _ in range(2):
        ga, gb = tape.gradient(y, [a, b])
        assert gb is None
        ga, gb = tape.gradient(y, [a, b], unconnected_gradients="zero")
        np.testing.assert_array_equal(gb.numpy(), [0.0, 0.0])
        np.testing.assert_array_equal(ga.numpy(), [2.0, 4.0])



def test_repeats_of_compiled_code_keep_fitting_results_that_need_it():
    """Once a repeat has seen the generated function's results need no fitting, later
    repeats wrap them as they are; results that need it (NumPy scalars from 0-d
    arithmetic under NumPy 2, made 0-d arrays as on the first call) are fitted every
    time."""
    v = gt.Variable(np.array([0.25, 2.0]))
    s = gt.Variable(1.5)  # 0-d: the generated arithmetic returns NumPy scalars
    c = gt.constant(np.array([3.0, 4.0]))
    with gt.config(compile_after=1):
        plain = gt.GradientTape(persistent=True)
        with plain:
            y = gt.reduce_sum(v * v * c)
        scalar = gt.GradientTape(persistent=True)
        with scalar:
            z = s * s * 3.0
        for _ in range(4):
            np.testing.assert_allclose(plain.gradient(y, v).numpy(), [1.5, 16.0])
            g = scalar.gradient(z, s)
            assert g.dtype == np.float32 and g.shape == ()
            assert g._value.__class__ is np.ndarray  # fitted like the first call
            np.testing.assert_allclose(g.numpy(), 9.0)
    assert plain._last[4] is not None  # results already fit: wrapped as they are
    # A NumPy scalar result (NumPy 2's 0-d arithmetic) is never taken as it is.
    _, entry, args, _, plain_from = scalar._last
    raw = entry.compiled.function(list(args))[0]
    assert (plain_from is None) == (raw.__class__ is not np.ndarray)
