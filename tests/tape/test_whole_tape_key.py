"""The whole-tape shortcut (lookup.py): a fresh tape that recorded the same structure
reuses the compiled backward without pruning or keying, and never a wrong one."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.tape import lookup


@pytest.fixture(autouse=True)
def _fresh_cache():
    gt.clear_cache()
    yield
    gt.clear_cache()


def _grad(fn, x):
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


def test_a_loop_of_fresh_tapes_hits_and_follows_the_new_values():
    w = gt.Variable(np.array([1.0, 2.0]))
    for step in range(5):
        x = gt.constant(np.array([0.5, -1.0]) * (step + 1))
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.tanh(w * x) * x)
        g = tape.gradient(loss, w).numpy()
        xv = x.numpy()
        np.testing.assert_allclose(g, (1 - np.tanh(w.numpy() * xv) ** 2) * xv * xv)
        w.assign_sub(0.1 * g)
    assert len(lookup._whole_tapes) == 1
    assert gt.cache_info().hits >= 3


def test_one_constant_twice_is_not_two_constants():
    x = gt.constant(np.array([1.0, 2.0]))
    c = gt.constant(np.array([3.0, 4.0]))
    d = gt.constant(np.array([5.0, 7.0]))
    same = _grad(lambda t: gt.reduce_sum(t * c * c), x)
    again = _grad(lambda t: gt.reduce_sum(t * c * c), x)
    other = _grad(lambda t: gt.reduce_sum(t * c * d), x)
    np.testing.assert_allclose(same, [9.0, 16.0])
    np.testing.assert_allclose(again, [9.0, 16.0])
    np.testing.assert_allclose(other, [15.0, 28.0])


def test_python_scalars_and_signed_zeros_are_part_of_the_structure():
    x = gt.constant(np.array([1.0, 2.0]))
    np.testing.assert_allclose(_grad(lambda t: gt.reduce_sum(t * 2.0), x), [2.0, 2.0])
    np.testing.assert_allclose(_grad(lambda t: gt.reduce_sum(t * 3.0), x), [3.0, 3.0])
    pos = _grad(lambda t: gt.reduce_sum(1.0 / (t * 0.0 + 0.0)), x)
    neg = _grad(lambda t: gt.reduce_sum(1.0 / (t * 0.0 - 0.0)), x)
    assert np.all(np.isnan(pos)) and np.all(np.isnan(neg))  # 0 * inf, either sign


def test_a_branch_taken_differently_is_another_structure():
    x = gt.constant(np.array([0.3, 0.7]))
    for flag in (True, False, True, False):
        g = _grad(lambda t, f=flag: gt.reduce_sum(gt.sin(t) if f else gt.cos(t)), x)
        expected = np.cos(x.numpy()) if flag else -np.sin(x.numpy())
        np.testing.assert_allclose(g, expected)


def test_watch_order_and_shapes_are_part_of_the_structure():
    a = gt.constant(np.array([1.0, 2.0]))
    b = gt.constant(np.array([3.0, 5.0]))
    for first, second in ((a, b), (b, a), (a, b)):
        with gt.GradientTape() as tape:
            tape.watch(first)
            tape.watch(second)
            y = gt.reduce_sum(a * a * b)
        ga, gb = tape.gradient(y, [a, b])
        np.testing.assert_allclose(ga.numpy(), 2 * a.numpy() * b.numpy())
        np.testing.assert_allclose(gb.numpy(), a.numpy() ** 2)
    y3 = _grad(lambda t: gt.reduce_sum(t * t), gt.constant(np.ones(3)))
    np.testing.assert_allclose(y3, 2 * np.ones(3))


def test_different_sources_on_the_same_structure():
    a = gt.constant(np.array([1.0, 2.0]))
    b = gt.constant(np.array([3.0, 5.0]))
    for wrt in (a, b, a):
        with gt.GradientTape() as tape:
            tape.watch([a, b])
            y = gt.reduce_sum(gt.exp(a) * b)
        g = tape.gradient(y, wrt).numpy()
        want = np.exp(a.numpy()) * b.numpy() if wrt is a else np.exp(a.numpy())
        np.testing.assert_allclose(g, want)


@pytest.mark.parametrize("structure", ["tensor", "list", "tuple"])
def test_the_short_gradient_path_answers_known_tapes_with_current_values(monkeypatch,
                                                                        structure):
    """From the second fresh tape of a structure on, ``_known_gradient`` answers: the
    gradients follow each tape's values, keep the sources' dtypes and structure, and
    the tape is used up as in TF."""
    from gradtape.tape import gradient_tape as tape_module

    answered = []
    original = tape_module._known_gradient
    monkeypatch.setattr(tape_module, "_known_gradient",
                        lambda *a: answered.append(original(*a)) or answered[-1])
    w = gt.Variable(np.array([1.0, 2.0], np.float32))
    b = gt.Variable(np.array(0.5, np.float32))
    unused = gt.Variable(np.array([3.0]))
    for step in range(4):
        x = np.array([0.5, -1.0], np.float32) * (step + 1)
        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.tanh(w * x + b) * x)
        sources = {"tensor": w, "list": [w, b, unused], "tuple": (w, b, unused)}[structure]
        grads = tape.gradient(loss, sources, unconnected_gradients="zero")
        d = (1 - np.tanh(np.array([1.0, 2.0]) * x + 0.5) ** 2) * x
        flat = [grads] if structure == "tensor" else list(grads)
        assert type(grads) is {"tensor": gt.Tensor, "list": list, "tuple": tuple}[structure]
        np.testing.assert_allclose(flat[0].numpy(), d * x, rtol=1e-5, atol=1e-6)
        assert flat[0].dtype == np.float32
        if structure != "tensor":
            np.testing.assert_allclose(flat[1].numpy(), d.sum(), rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(flat[2].numpy(), [0.0])  # unconnected: zeros
        assert [id(v) for v in tape.watched_variables()] == [id(w), id(b)]
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.gradient(loss, w)
    shortcut = answered[::2]  # the second call on each used-up tape looks too
    assert shortcut[0] is tape_module._UNKNOWN
    assert all(found is not tape_module._UNKNOWN for found in shortcut[2:])


def test_the_short_gradient_path_leaves_other_calls_to_the_general_one():
    x = gt.constant(np.array([1.0, 2.0]))
    n = gt.constant(np.array([1, 2]))
    for _ in range(3):
        with gt.GradientTape() as tape:
            tape.watch([x, n])
            y = gt.reduce_sum(x * x) + gt.cast(gt.reduce_sum(n), "float64")
        # An integer source and a source that is the target itself: the general path.
        gx, gn, gy = tape.gradient(y, [x, n, y])
        np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
        assert gn is None and float(gy) == 1.0


def _sum_of_squares_at_one_site(x):
    with gt.GradientTape() as tape:  # every call opens its tape here: one site
        tape.watch(x)
        y = gt.reduce_sum(x * x) * 0.5 + gt.reduce_sum(x[0])  # its backward knows x's shape
    return tape.gradient(y, x)


@pytest.mark.parametrize("value", [np.arange(3.0), np.arange(2.0).astype(np.float32),
                                   np.arange(6.0).reshape(2, 3)])
def test_a_site_reused_with_other_shapes_or_dtypes_gets_its_own_backward(value):
    """Tapes at one site record the same ops; only what they watch differs. The key
    must not be taken from the site's earlier tapes then (the gradient is x, plus one
    on x[0])."""
    for _ in range(3):
        g = _sum_of_squares_at_one_site(gt.constant(np.arange(2.0)))
        np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    expected = value.copy()
    expected[0] += 1
    for _ in range(3):
        g = _sum_of_squares_at_one_site(gt.constant(value))
        assert g.shape == value.shape and g.dtype == value.dtype
        np.testing.assert_array_equal(g.numpy(), expected)
    g = _sum_of_squares_at_one_site(gt.constant(np.arange(2.0)))
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
