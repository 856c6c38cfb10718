"""``jacobian`` and ``batch_jacobian``: one batched backward, not a loop of gradients.

Checked: results against finite differences and against the looping path
(``experimental_use_pfor=False``) on random programs; ``batch_jacobian`` against a
per-example loop, with ``prod(y)`` rows; chunking by ``parallel_iterations``; the
batched program's cache; TF's unconnected and persistence rules; jacobians under an
active tape or accumulator (Hessians as nested jacobians).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.ir.lower import SEED

rng = np.random.default_rng(0)


def jacobian_of(f, *arrays, persistent=False, **kwargs):
    xs = [gt.constant(a) for a in arrays]
    with gt.GradientTape(persistent=persistent) as tape:
        tape.watch(xs)
        y = f(*xs)
    return tape.jacobian(y, xs, **kwargs)


def jacobian_by_differences(f, arrays, k, eps=1e-6):
    """d f / d arrays[k] by central differences: shape f.shape + arrays[k].shape."""
    base = [np.asarray(a, dtype=np.float64) for a in arrays]
    out_shape = np.shape(f(*[gt.constant(a) for a in base]))
    columns = []
    for idx in np.ndindex(*base[k].shape):
        step = np.zeros_like(base[k])
        step[idx] = eps
        plus = [a + step if i == k else a for i, a in enumerate(base)]
        minus = [a - step if i == k else a for i, a in enumerate(base)]
        diff = (np.asarray(f(*[gt.constant(a) for a in plus]))
                - np.asarray(f(*[gt.constant(a) for a in minus]))) / (2 * eps)
        columns.append(diff)
    return np.stack(columns, axis=-1).reshape(out_shape + base[k].shape)


# --- jacobian ---------------------------------------------------------------------------

A = rng.standard_normal((4, 3))


def dense_tanh(x):
    return gt.tanh(gt.matmul(gt.constant(A), x))


@pytest.mark.parametrize("f, shape", [
    (dense_tanh, (3,)),
    (lambda x: gt.nn.softmax(x * x, axis=-1), (2, 3)),
    (lambda x: gt.cumsum(gt.sin(x), axis=0) * gt.reduce_max(x), (4,)),
    (lambda x: gt.transpose(gt.matmul(x, gt.transpose(x))) / (1.0 + x[0, 0] ** 2), (2, 3)),
    (lambda x: gt.gather(x, np.array([2, 0, 2])) * x[1], (3,)),
    (lambda x: gt.reduce_logsumexp(x, axis=1), (2, 3)),
    (lambda x: gt.linalg.inv(gt.matmul(x, gt.transpose(x)) + 2.0), (2, 2)),
    (lambda x: gt.reduce_sum(x ** 3), (3,)),  # a scalar target: the gradient
])
def test_jacobian_matches_differences_and_the_loop(f, shape):
    x = rng.uniform(0.2, 1.0, shape)
    expected = jacobian_by_differences(f, [x], 0)
    for _ in range(2):  # the second call runs the cached (compiled) batched backward
        (vectorized,) = jacobian_of(f, x)
        (looped,) = jacobian_of(f, x, persistent=True, experimental_use_pfor=False)
        assert vectorized.shape == expected.shape and vectorized.dtype == np.float64
        np.testing.assert_allclose(vectorized.numpy(), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(vectorized.numpy(), looped.numpy(), rtol=1e-12,
                                   atol=1e-14)


def test_several_sources_in_a_structure_and_their_dtypes():
    x = gt.constant(np.array([1.0, 2.0], np.float32))
    w = gt.Variable(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.matmul(w, x) * x
    jac = tape.jacobian(y, {"x": x, "w": w})
    assert set(jac) == {"x", "w"}
    assert jac["x"].shape == (2, 2) and jac["x"].dtype == np.float32
    assert jac["w"].shape == (2, 2, 2) and jac["w"].dtype == np.float32
    xs, ws = x.numpy(), w.numpy()
    np.testing.assert_allclose(jac["x"].numpy(), ws * xs[:, None] + np.diag(ws @ xs))
    expected_w = np.zeros((2, 2, 2), np.float32)
    for i in range(2):
        expected_w[i, i] = xs * xs[i]
    np.testing.assert_allclose(jac["w"].numpy(), expected_w)


@pytest.mark.parametrize("chunk", [1, 3, 5, 12, 100, None])
def test_parallel_iterations_bounds_the_rows_per_call(chunk):
    x = rng.standard_normal((3, 4))
    f = lambda t: gt.sin(t) * gt.reduce_sum(t, axis=1, keepdims=True)  # noqa: E731
    (full,) = jacobian_of(f, x)
    (chunked,) = jacobian_of(f, x, parallel_iterations=chunk)
    np.testing.assert_allclose(chunked.numpy(), full.numpy(), rtol=1e-13)
    rows = {key[1] for key in list(backward_cache._data) if key[0] == "batched"}
    assert min(chunk or 12, 12) in rows


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "4"])
def test_parallel_iterations_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="parallel_iterations"):
        jacobian_of(dense_tanh, np.ones(3), parallel_iterations=bad)


def test_the_batched_backward_is_cached_and_compiled_once():
    gt.clear_cache()
    x = rng.standard_normal(3)
    with gt.config(compile=True, compile_after=1):
        for _ in range(4):
            jacobian_of(dense_tanh, x)
            if _ == 0:
                first = gt.cache_info()
        last = gt.cache_info()
    keys = [key for key in list(backward_cache._data) if key[0] == "batched"]
    assert len(keys) == 1 and keys[0][1] == 4  # four rows: the target's size
    assert (last.misses, last.compiled) == (first.misses, first.compiled)
    assert last.compiled == 1  # only the batched backward ran, so only it was compiled
    batched = backward_cache._data[keys[0]]
    # The seeds are the identity: no matrix product with it, and it is not an input.
    code = "\n".join(line for line in batched.compiled.source.splitlines()
                     if not line.strip().startswith("#"))  # comments quote the user's code
    assert " @ " not in code and "matmul(" not in code and "import matmul" not in code
    assert all(f.kind != SEED for f in batched.feeds)


def test_fresh_tapes_of_one_structure_read_their_own_values():
    """Repeated structures take the whole-tape shortcut: values must still be current."""
    for seed in range(4):
        x = np.random.default_rng(seed).standard_normal(3)
        (j,) = jacobian_of(dense_tanh, x)
        t = np.tanh(A @ x)
        np.testing.assert_allclose(j.numpy(), (1 - t * t)[:, None] * A, rtol=1e-13)
        (j,) = jacobian_of(dense_tanh, x, parallel_iterations=3)  # two chunks
        np.testing.assert_allclose(j.numpy(), (1 - t * t)[:, None] * A, rtol=1e-13)


@pytest.mark.parametrize("target_shape", [(4,), (2, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_known_tape_takes_the_short_path_with_the_same_results(monkeypatch, target_shape,
                                                                 dtype):
    """One tensor source on a tape of a known structure: ``_known_jacobian`` answers
    from the second tape on, with its own values, and uses the tape up like TF."""
    from gradtape.tape import jacobians

    answered = []
    original = jacobians._known_jacobian
    monkeypatch.setattr(jacobians, "_known_jacobian",
                        lambda *a: answered.append(original(*a)) or answered[-1])
    gt.clear_cache()
    a = rng.standard_normal((4, 3)).astype(dtype)
    for seed in range(4):
        x_value = np.random.default_rng(seed).standard_normal(3).astype(dtype)
        x = gt.Variable(x_value)
        with gt.GradientTape() as tape:
            y = gt.reshape(gt.tanh(gt.matmul(a, x)), target_shape)
        j = tape.jacobian(y, x)
        t = np.tanh(a.astype(np.float64) @ x_value)
        assert j.dtype == dtype and j.shape == target_shape + (3,)
        np.testing.assert_allclose(j.numpy().reshape(4, 3), (1 - t * t)[:, None] * a,
                                   rtol=1e-4 if dtype == np.float32 else 1e-13,
                                   atol=1e-6 if dtype == np.float32 else 0)
        assert tape.watched_variables() == (x,)
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.jacobian(y, x)
    assert len(answered) == 4  # a used-up tape raises before looking
    assert answered[0] is None and answered[2] is not None and answered[3] is not None


def test_the_short_path_leaves_assigned_variables_to_the_general_one():
    v = gt.Variable(np.array([1.0, 2.0]))
    for _ in range(3):
        v.assign([1.0, 2.0])
        with gt.GradientTape() as tape:
            y = v * v
            v.assign_add([1.0, 1.0])
            y = y + v * 3.0
        # d/dv of v0**2 + 3 * (v0 + 1) summed over both reads of v: 2 v0 + 3
        np.testing.assert_allclose(tape.jacobian(y, v).numpy(), np.diag([5.0, 7.0]))


def test_jacobian_is_one_batched_call_not_a_loop(monkeypatch):
    from gradtape.compiler import build

    calls = []
    original = build.BackwardEntry.run
    monkeypatch.setattr(build.BackwardEntry, "run",
                        lambda self, args: calls.append(1) or original(self, args))
    jacobian_of(dense_tanh, rng.standard_normal(3))
    assert len(calls) == 1
    calls.clear()
    jacobian_of(dense_tanh, rng.standard_normal(3), parallel_iterations=3)
    assert len(calls) == 2  # ceil(4 / 3) chunks


def test_jacobian_of_a_source_by_itself_is_the_identity():
    x = gt.constant(rng.standard_normal((2, 2)))
    with gt.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(tape.jacobian(x, x).numpy(),
                                  np.eye(4).reshape(2, 2, 2, 2))


def test_variable_assigned_between_reads_sums_over_its_values():
    v = gt.Variable(np.array([1.0, 2.0]))
    with gt.GradientTape() as tape:
        y1 = v * v
        v.assign([3.0, 5.0])
        y = y1 + v * 10.0
    np.testing.assert_allclose(tape.jacobian(y, v).numpy(), np.diag([2.0, 4.0]) + 10 * np.eye(2))


def test_custom_gradient_is_batched_through_its_grad_fn():
    @gt.custom_gradient
    def clipped_square(x):
        def grad_fn(upstream):
            return gt.clip_by_value(upstream * 2.0 * x, -1.0, 1.0)

        return x * x, grad_fn

    x = np.array([0.1, 0.4, 2.0])
    (jac,) = jacobian_of(lambda t: clipped_square(t) * 3.0, x)
    np.testing.assert_allclose(jac.numpy(), np.diag(np.clip(6 * x, -1, 1)))


# --- unconnected and persistence: TF's rules -------------------------------------------------

def test_unconnected_sources():
    x, z = gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0, 5.0])
    n = gt.constant([1, 2])
    for mode, expect_zero in (("none", False), ("zero", True)):
        with gt.GradientTape() as tape:
            tape.watch([x, z, n])
            y = x * 2.0
        jx, jz, jn = tape.jacobian(y, [x, z, n], unconnected_gradients=mode)
        np.testing.assert_array_equal(jx.numpy(), 2 * np.eye(2))
        if expect_zero:
            assert jz.shape == (2, 3) and not jz.numpy().any()
            assert jn.shape == (2, 2)
        else:
            assert jz is None and jn is None


def test_unwatched_source_and_constant_target():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        y = gt.sin(x)
    assert tape.jacobian(y, x) is None
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.constant([1.0, 2.0, 3.0])
    assert tape.jacobian(y, x) is None
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.constant(np.zeros((0,)))
    assert tape.jacobian(y, x, unconnected_gradients="zero").shape == (0, 2)


def test_persistence_rules():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent"):
        tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0]))
    with pytest.raises(RuntimeError):
        tape.jacobian(y, x)  # a non-persistent tape is used up
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    for pfor in (True, False, True):
        np.testing.assert_array_equal(
            tape.jacobian(y, x, experimental_use_pfor=pfor).numpy(), np.diag([2.0, 4.0]))


# --- batch_jacobian -----------------------------------------------------------------------

W = rng.standard_normal((3, 2, 2))


def layer(x):
    """Per example: [b, 2, 3] -> [b, 2, 2], examples independent."""
    return gt.tanh(gt.einsum("bij,jkl->bil", x, gt.constant(W))) * x[:, :, :1]


@pytest.mark.parametrize("f, x_shape", [
    (layer, (5, 2, 3)),
    (lambda x: gt.nn.log_softmax(x * x, axis=-1), (4, 3)),
    (lambda x: gt.matmul(x, gt.constant(A.T)) ** 2, (6, 3)),
    (lambda x: gt.reduce_sum(x ** 3, axis=1, keepdims=True), (3, 4)),
])
def test_batch_jacobian_matches_a_per_example_loop(f, x_shape):
    x = rng.standard_normal(x_shape)
    xt = gt.constant(x)
    gt.clear_cache()
    for _ in range(2):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(xt)
            y = f(xt)
        bj = tape.batch_jacobian(y, xt)
        looped = tape.batch_jacobian(y, xt, experimental_use_pfor=False)
        np.testing.assert_allclose(bj.numpy(), looped.numpy(), rtol=1e-12, atol=1e-14)
    expected = []
    for b in range(x_shape[0]):
        # d y[b] / d x[b]: the full jacobian's diagonal block.
        expected.append(jacobian_by_differences(lambda t, b=b: f(t)[b], [x], 0)[
            (slice(None),) * (y.ndim - 1) + (b,)])
    expected = np.stack(expected)
    assert bj.shape == y.shape + x_shape[1:]
    np.testing.assert_allclose(bj.numpy(), expected, rtol=1e-6, atol=1e-8)
    # prod(y) rows, not batch * prod(y).
    rows = {key[1] for key in list(backward_cache._data) if key[0] == "batched"}
    assert rows == {int(np.prod(y.shape[1:]))}


def test_batch_jacobian_of_a_dense_layer_needs_no_matrix_product():
    """The seeds are eye(y) on every example: the generated backward scales W's rows."""
    w = gt.constant(rng.standard_normal((3, 4)))
    x = gt.constant(rng.standard_normal((6, 3)))
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.tanh(gt.matmul(x, w))
        bj = tape.batch_jacobian(y, x)
    t = np.tanh(x.numpy() @ w.numpy())
    np.testing.assert_allclose(bj.numpy(), (1 - t * t)[:, :, None] * w.numpy().T[None],
                               rtol=1e-13)
    (batched,) = [e for k, e in backward_cache._data.items() if k[0] == "batched"]
    assert " @ " not in batched.compiled.source and all(f.kind != SEED for f in batched.feeds)


def test_batch_jacobian_chunks_and_unconnected_target():
    x = gt.constant(rng.standard_normal((4, 3)))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.sin(x) * gt.reduce_sum(x, axis=1, keepdims=True)
        c = gt.constant(np.ones((4, 2)))
    full = tape.batch_jacobian(y, x)
    for chunk in (1, 2):
        np.testing.assert_allclose(tape.batch_jacobian(y, x, parallel_iterations=chunk).numpy(),
                                   full.numpy(), rtol=1e-13)
    for mode in ("none", "zero"):
        zeros = tape.batch_jacobian(c, x, unconnected_gradients=mode)
        assert zeros.shape == (4, 2, 3) and not zeros.numpy().any()


def test_batch_jacobian_errors():
    x = gt.constant(np.ones((3, 2)))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="rank at least 2"):
        tape.batch_jacobian(gt.reduce_sum(y, axis=1), x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.batch_jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y[:2], x)


# --- under an active tape or accumulator ------------------------------------------------------

def test_hessian_as_a_jacobian_of_a_jacobian():
    x = gt.constant(rng.standard_normal(3))
    for _ in range(2):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(dense_tanh(x) ** 2)
            g = inner.jacobian(y, x)  # a scalar target: the gradient, as a recorded call
        assert "backward_call" in [r[0].name for r in outer._records]
        h = outer.jacobian(g, x)
    t = np.tanh(A @ x.numpy())
    expected = A.T @ np.diag(2 * (1 - t * t) * (1 - 3 * t * t)) @ A
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-10)


def test_third_order_tensor_by_nested_jacobians():
    # f(x) = x0 * x1 * x2 * sum(x): its third derivative tensor, against differences.
    x0 = np.array([0.5, -1.0, 2.0])

    def f(t):
        return t[0] * t[1] * t[2] * gt.reduce_sum(t)

    def hessian(x_arr):
        x = gt.constant(x_arr)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = f(x)
            g = t1.gradient(y, x)
        return t2.jacobian(g, x)

    x = gt.constant(x0)
    with gt.GradientTape() as t3:
        t3.watch(x)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = f(x)
            g = t1.gradient(y, x)
        h = t2.jacobian(g, x)
    third = t3.jacobian(h, x).numpy()
    eps = 1e-5
    expected = np.stack([(hessian(x0 + eps * e).numpy() - hessian(x0 - eps * e).numpy())
                         / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(third, expected, rtol=1e-6, atol=1e-8)


def test_batch_jacobian_under_a_tape_is_differentiable():
    x = gt.constant(rng.standard_normal((4, 3)))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.sin(x) * 2.0
        bj = inner.batch_jacobian(y, x)  # [4, 3, 3] = diag(2 cos x) per example
        total = gt.reduce_sum(bj)
    np.testing.assert_allclose(outer.gradient(total, x).numpy(), -2 * np.sin(x.numpy()),
                               rtol=1e-12)


def test_jacobian_inside_an_accumulator_has_a_tangent():
    x = gt.constant(rng.standard_normal(3))
    v = gt.constant(rng.standard_normal(3))
    with gt.ForwardAccumulator(x, v) as acc:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.sin(x) * gt.reduce_sum(x)
        jac = tape.jacobian(y, x, parallel_iterations=2)  # two chunks, concatenated
    # d/dt J(x + t v): J = diag(cos x) s + sin x 1^T with s = sum(x).
    xs, vs = x.numpy(), v.numpy()
    expected = np.diag(-np.sin(xs) * vs) * xs.sum() + np.diag(np.cos(xs)) * vs.sum() \
        + np.outer(np.cos(xs) * vs, np.ones(3))
    np.testing.assert_allclose(acc.jvp(jac).numpy(), expected, rtol=1e-10)


# --- random programs: vectorized == looped == differences --------------------------------------

SHAPES = [(2, 3), (3,), ()]
UNARY = [gt.sin, gt.tanh, gt.sigmoid, gt.square, lambda a: gt.exp(gt.cos(a)),
         lambda a: a * 2.5]
BINARY = [gt.add, gt.multiply, gt.maximum, lambda a, b: a / (1.0 + b * b),
          lambda a, b: gt.where(a > b, a * b, a - b)]


def _reduce_or_view(kind, a):
    if a.shape != (2, 3):
        return gt.reduce_sum(a) if kind % 2 else gt.cumsum(gt.reshape(a, (-1,)), axis=0)[-1:]
    return [
        lambda: gt.reduce_sum(a, axis=0),
        lambda: gt.reduce_max(a, axis=1, keepdims=True),
        lambda: a[:, ::-1],
        lambda: gt.matmul(a, gt.constant(np.linspace(-1, 1, 9).reshape(3, 3))),
        lambda: gt.nn.softmax(a),
    ][kind % 5]()


@st.composite
def recipes(draw):
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(draw(st.integers(1, 2)))]
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20), st.integers(0, 20),
                                    st.integers(0, 20)), min_size=1, max_size=6))
    return shapes, steps, draw(st.integers(0, 20))


def _program(steps, pick):
    def f(*xs):
        values = list(xs)
        for kind, k, i, j in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            if kind == 0:
                values.append(UNARY[k % len(UNARY)](a))
            elif kind == 1:
                values.append(BINARY[k % len(BINARY)](a, b))
            else:
                values.append(_reduce_or_view(k, a))
        return gt.broadcast_to(values[-1 - pick % len(values)], (2, 3)) + values[-1] * 0.5
    return f


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes(), st.integers(0, 2 ** 16))
def test_random_programs(recipe, seed):
    shapes, steps, pick = recipe
    f = _program(steps, pick)
    values = np.random.default_rng(seed)
    arrays = [values.uniform(-1, 1, s) for s in shapes]
    vectorized = jacobian_of(f, *arrays, unconnected_gradients="zero")
    looped = jacobian_of(f, *arrays, persistent=True, experimental_use_pfor=False,
                         unconnected_gradients="zero")
    for k, (j, ref) in enumerate(zip(vectorized, looped)):
        np.testing.assert_allclose(j.numpy(), ref.numpy(), rtol=1e-12, atol=1e-14)
        probe = np.random.default_rng(seed + k).standard_normal(np.shape(arrays[k]))
        eps = 1e-6
        plus = [a + eps * probe if i == k else a for i, a in enumerate(arrays)]
        minus = [a - eps * probe if i == k else a for i, a in enumerate(arrays)]
        numeric = (np.asarray(f(*map(gt.constant, plus)))
                   - np.asarray(f(*map(gt.constant, minus)))) / (2 * eps)
        analytic = np.tensordot(j.numpy(), probe, axes=probe.ndim)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
