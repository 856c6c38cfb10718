"""Reductions: values equal NumPy's (through gt.* and NumPy dispatch), derivatives
match finite differences to 2nd order (3rd for a few) in reverse and forward mode, for
every axis form; ties in max/min, float32 and TF's aliases."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(3)

AXES = [None, 0, -1, (0, 2), (-1, 1), ()]

# name -> (gradtape op, NumPy reference); both take (x, axis=, keepdims=).
REDUCTIONS = {
    "sum": (gt.sum, np.sum),
    "mean": (gt.mean, np.mean),
    "prod": (gt.prod, np.prod),
    "max": (gt.max, np.max),
    "min": (gt.min, np.min),
    "var": (gt.var, np.var),
    "std": (gt.std, np.std),
    "logsumexp": (gt.logsumexp, None),
}


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _reference(name):
    return REDUCTIONS[name][1] or _logsumexp


def _distinct(shape):
    """Values with no ties and away from zero (max/min and std are smooth there)."""
    n = int(np.prod(shape))
    x = rng.permutation(n).reshape(shape) * 0.25 + 0.5
    return x * rng.choice([-1.0, 1.0], size=shape)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_values_and_second_order(name, axis, keepdims):
    op = REDUCTIONS[name][0]
    x = _distinct((2, 3, 4))
    expected = _reference(name)(x, axis=axis, keepdims=keepdims)
    out = op(gt.constant(x), axis=axis, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    if name == "std" and axis == ():
        return  # zero spread: the square root's infinite slope (tested below)
    check_grads(lambda t: op(t, axis=axis, keepdims=keepdims), [x], order=2)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("shape", [(), (5,), (3, 1)])
def test_small_shapes(name, shape):
    op = REDUCTIONS[name][0]
    x = _distinct(shape)
    np.testing.assert_allclose(op(gt.constant(x)).numpy(), _reference(name)(x), rtol=1e-12)
    if name == "std" and x.size == 1:
        return  # zero spread: the square root's infinite slope (tested below)
    check_grads(op, [x], order=2)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
def test_forward_mode(name, axis, check_jvp):
    op = REDUCTIONS[name][0]
    check_jvp(lambda t: op(t, axis=axis), [_distinct((2, 3, 4))])


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "var", "logsumexp"])
def test_third_order(name):
    op = REDUCTIONS[name][0]
    check_grads(lambda t: op(t, axis=1), [_distinct((2, 3))], order=3)


@pytest.mark.parametrize("name,func", [
    ("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
    ("amax", np.amax), ("min", np.min), ("amin", np.amin), ("var", np.var),
    ("std", np.std),
])
def test_numpy_functions_dispatch_and_record(name, func):
    x = _distinct((3, 4))
    t = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = func(t, axis=0, keepdims=True)
        loss = gt.sum(y * y)
    assert isinstance(y, gt.Tensor)
    np.testing.assert_allclose(y.numpy(), func(x, axis=0, keepdims=True), rtol=1e-12)
    assert tape.gradient(loss, t) is not None
    check_grads(lambda a: func(a, 1), [x], order=1)


def test_numpy_positional_arguments_and_unsupported_ones():
    x = _distinct((3, 4))
    t = gt.constant(x)
    np.testing.assert_allclose(np.sum(t, 1, None, None, True).numpy(),
                               np.sum(x, 1, None, None, True))
    np.testing.assert_allclose(np.var(t, 0, None, None, 1).numpy(), np.var(x, 0, None, None, 1))
    np.testing.assert_allclose(np.mean(t, dtype=np.float32).numpy(), np.mean(x, dtype=np.float32),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="out="):
        np.sum(t, out=np.empty(()))
    with pytest.raises(TypeError, match="initial="):
        np.max(t, initial=3.0)
    with pytest.raises(TypeError, match="where="):
        np.mean(t, where=x > 0)


def test_axis_errors():
    t = gt.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out of bounds"):
        gt.mean(t, axis=2)
    with pytest.raises(ValueError, match="Repeated axis"):
        gt.max(t, axis=(1, -1))


# --- max and min ties, logsumexp stability ----------------------------------------------

def test_max_min_split_the_gradient_among_ties_like_tensorflow():
    x = gt.constant(np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, -1.0]]))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        top = gt.reduce_max(x, axis=1)
        low = gt.reduce_min(x)
        whole = gt.max(x)
    np.testing.assert_allclose(tape.gradient(top, x).numpy(),
                               [[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    np.testing.assert_allclose(tape.gradient(low, x).numpy(), [[0, 0, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_allclose(tape.gradient(whole, x).numpy(),
                               [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]])


def test_logsumexp_is_stable_and_its_gradient_is_softmax():
    x = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0]])
    t = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(t)
        y = gt.reduce_logsumexp(t, axis=1)
    want = [1000.0 + np.log1p(np.exp(-1.0)), 1.0 + np.log1p(np.exp(-1.0))]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    shifted = np.exp(x - np.max(x, axis=1, keepdims=True))
    np.testing.assert_allclose(tape.gradient(y, t).numpy(),
                               shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-12)
    assert gt.logsumexp(gt.constant([-np.inf, -np.inf])).numpy() == -np.inf


# --- var/std, dtypes, aliases, argmax -----------------------------------------------------

@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_var_std_ddof(ddof):
    x = _distinct((3, 4))
    for op, ref in [(gt.var, np.var), (gt.std, np.std)]:
        np.testing.assert_allclose(op(gt.constant(x), axis=1, ddof=ddof).numpy(),
                                   ref(x, axis=1, ddof=ddof), rtol=1e-12)
        check_grads(lambda t, op=op: op(t, axis=1, ddof=ddof), [x], order=2)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_float32_stays_float32(name):
    op = REDUCTIONS[name][0]
    x = gt.constant(_distinct((3, 4)).astype(np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = op(x, axis=0)
    assert y.dtype == np.float32
    g = tape.gradient(y, x)
    assert g.dtype == np.float32


def test_float32_scans_stay_float32():
    x = gt.constant(_distinct((3, 4)).astype(np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.cumprod(x, 1) + gt.cumsum(x, 0)
    assert y.dtype == np.float32
    assert tape.gradient(y, x).dtype == np.float32


def test_integer_inputs_average_in_float64_like_numpy():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for op, ref in [(gt.mean, np.mean), (gt.var, np.var), (gt.std, np.std)]:
        out = op(gt.constant(x), axis=1)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), ref(x, axis=1))
    assert gt.sum(gt.constant(x)).dtype == np.sum(x).dtype
    np.testing.assert_array_equal(gt.cumsum(gt.constant(x), 1).numpy(), np.cumsum(x, 1))


def test_tensorflow_aliases_take_tensorflow_argument_names():
    x = _distinct((2, 3))
    t = gt.constant(x)
    pairs = [
        (gt.reduce_sum, np.sum), (gt.reduce_mean, np.mean), (gt.reduce_max, np.max),
        (gt.reduce_min, np.min), (gt.reduce_prod, np.prod), (gt.reduce_std, np.std),
        (gt.reduce_variance, np.var), (gt.reduce_logsumexp, _logsumexp),
    ]
    for alias, ref in pairs:
        out = alias(input_tensor=t, axis=1, keepdims=True, name="r")
        np.testing.assert_allclose(out.numpy(), ref(x, axis=1, keepdims=True), rtol=1e-12)


def test_tensor_mean_method():
    x = _distinct((2, 3))
    np.testing.assert_allclose(gt.constant(x).mean(axis=0).numpy(), x.mean(axis=0))


@pytest.mark.parametrize("op,func", [(gt.argmax, np.argmax), (gt.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argmax_argmin_are_int64_and_not_differentiable(op, func, axis):
    x = _distinct((3, 4))
    t = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(t)
        idx = op(t, axis=axis)
        as_float = gt.cast(idx, np.float64)
    tf_axis = 0 if axis is None else axis  # TF's default axis; NumPy's flattens
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx.numpy(), func(x, axis=tf_axis))
    np.testing.assert_array_equal(func(t, axis=axis).numpy(), func(x, axis=axis))
    assert tape.gradient(as_float, t) is None
    np.testing.assert_array_equal(op(t, axis=axis, keepdims=True).numpy(),
                                  func(x, axis=tf_axis, keepdims=True))
    np.testing.assert_array_equal(func(t, axis=axis, keepdims=True).numpy(),
                                  func(x, axis=axis, keepdims=True))
    assert op(t, 0, np.int32).dtype == np.int32  # TF's positional output_type


def test_compiled_and_interpreted_backward_agree(compile_mode):
    x = _distinct((3, 4))

    def f(t):
        return gt.sum(gt.prod(t, 0) * gt.max(t, 1, keepdims=True) + gt.cumprod(t, 1)
                      + gt.logsumexp(t, -1, keepdims=True) * gt.std(t, 0))

    for _ in range(3):  # interpreted first, then compiled (compile_after=1 in the fixture)
        check_grads(f, [x], order=2)


def test_std_gradient_at_zero_spread_is_nan_like_jax():
    x = gt.constant(np.array([2.0, 2.0, 2.0]))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.std(x)
    assert y.numpy() == 0.0
    with np.errstate(all="ignore"):
        assert np.all(np.isnan(tape.gradient(y, x).numpy()))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
def test_batching_rules(name, axis, check_batching):
    op = REDUCTIONS[name][0]
    check_batching(lambda t: op(t, axis=axis, keepdims=axis == 1), [_distinct((2, 3, 4))])


@pytest.mark.parametrize("op", [gt.cumsum, gt.cumprod, gt.argmax, gt.argmin])
@pytest.mark.parametrize("axis", [None, 0, -1], ids=str)
def test_scan_and_arg_batching_rules(op, axis, check_batching):
    check_batching(lambda t: op(t, axis), [_distinct((3, 4))])


def test_complex_gradients_follow_tensorflow_convention():
    # TF: the gradient of a real loss is dL/dRe + i dL/dIm (zeros in prod's input too).
    z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    z[0, 1] = 0.0
    ops = [lambda t: gt.prod(t, 1), lambda t: gt.cumprod(t, 1, reverse=True),
           lambda t: gt.cumsum(t, 0), lambda t: gt.mean(t * t, (0, 1))]
    eps = 1e-6
    for op in ops:
        def loss(t, op=op):
            y = op(t)
            return gt.sum(gt.real(y * gt.conj(y))) + gt.sum(gt.real(y))

        t = gt.constant(z)
        with gt.GradientTape() as tape:
            tape.watch(t)
            y = loss(t)
        numeric = np.zeros_like(z)
        for idx in np.ndindex(z.shape):
            for unit in (1.0, 1j):
                step = np.zeros_like(z)
                step[idx] = eps * unit
                diff = loss(gt.constant(z + step)).numpy() - loss(gt.constant(z - step)).numpy()
                numeric[idx] += diff / (2 * eps) * (1 if unit == 1.0 else 1j)
        np.testing.assert_allclose(tape.gradient(y, t).numpy(), numeric, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_shape_rules_agree_with_the_implementations(dtype):
    from gradtape.ir.nodes import Aval, Var
    from gradtape.ir.primitive import _eval_on_dummies
    from gradtape.ops import reduce as r
    from gradtape.ops import scan as s

    x = Var(Aval((2, 3, 4), np.dtype(dtype)))
    cases = [(p, dict(axis=axis, keepdims=k))
             for p in (r.sum_p, r.max_p, r.min_p, s.prod_p)
             for axis in ((0,), (0, 2), (0, 1, 2)) for k in (False, True)]
    cases += [(p, dict(axis=axis, keepdims=k)) for p in (r.argmax_p, r.argmin_p)
              for axis in (None, 1) for k in (False, True)]
    cases += [(p, dict(axis=1, exclusive=e, reverse=v)) for p in (s.cumsum_p, s.cumprod_p)
              for e in (False, True) for v in (False, True)]
    cases += [(s.shift_p, dict(axis=2, offset=-1))]
    if dtype == np.float32:
        cases += [(r.logsumexp_p, dict(axis=(1,), keepdims=k)) for k in (False, True)]
    for prim, params in cases:
        assert prim.shape_rule(x, **params) == _eval_on_dummies(prim, (x,), params), prim


# --- TF's names follow TF (measured in TF 2.21); NumPy's calls keep NumPy's rules ---------

@pytest.mark.parametrize("op,func", [(gt.argmax, np.argmax), (gt.argmin, np.argmin)])
def test_argmax_argmin_reduce_axis_0_by_default_like_tensorflow(op, func):
    t = gt.constant([[4, 5], [10, 1]])
    expected = [1, 0] if op is gt.argmax else [0, 1]
    assert op(t).numpy().tolist() == expected and op(t).dtype == np.int64
    assert func(t).numpy() == func(t.numpy())  # NumPy flattens
    with pytest.raises(ValueError, match="rank >= 1"):
        op(gt.constant(3.0))
    with pytest.raises(TypeError, match="output_type"):
        op(t, 0, np.float32)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint16])
def test_tensorflow_integer_reductions_keep_the_dtype(dtype):
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=dtype)
    t = gt.constant(x)
    results = {
        "reduce_sum": (gt.reduce_sum(t), np.sum(x)),
        "reduce_prod": (gt.reduce_prod(t, axis=1), np.prod(x, axis=1)),
        "cumsum": (gt.cumsum(t), np.cumsum(x, axis=0)),
        "cumprod": (gt.cumprod(t, axis=1), np.cumprod(x, axis=1)),
        "reduce_max": (gt.reduce_max(t), np.max(x)),
    }
    for name, (got, want) in results.items():
        assert got.dtype == dtype, name
        np.testing.assert_array_equal(got.numpy(), want.astype(dtype), err_msg=name)
    # NumPy's functions keep NumPy's widening, on tensors too.
    assert np.sum(t).dtype == np.sum(x).dtype and gt.sum(t).dtype == np.sum(x).dtype
    assert np.cumsum(t).dtype == np.cumsum(x).dtype


def test_tensorflow_integer_sum_wraps_around_like_int32():
    big = np.array([2**31 - 1, 1], dtype=np.int32)
    assert gt.reduce_sum(gt.constant(big)).numpy() == -(2**31)


def test_reduce_mean_of_integers_is_the_truncated_mean_like_tensorflow():
    t = gt.constant([[1, 2], [-1, -2], [3, 5]])
    assert gt.reduce_mean(gt.constant([1, 2])).numpy() == 1
    out = gt.reduce_mean(t, axis=1)
    assert out.dtype == np.int32 and out.numpy().tolist() == [1, -1, 4]  # towards zero
    kept = gt.reduce_mean(t, axis=0, keepdims=True)
    assert kept.numpy().tolist() == [[1, 1]]
    assert np.mean(t).dtype == np.float64 and gt.mean(t).dtype == np.float64  # NumPy


def test_cumsum_and_cumprod_scan_axis_0_by_default_like_tensorflow():
    x = _distinct((3, 2))
    t = gt.constant(x)
    np.testing.assert_allclose(gt.cumsum(t).numpy(), np.cumsum(x, axis=0))
    np.testing.assert_allclose(gt.cumprod(t).numpy(), np.cumprod(x, axis=0))
    np.testing.assert_allclose(gt.cumsum(t, axis=None).numpy(), np.cumsum(x))
    np.testing.assert_allclose(np.cumsum(t).numpy(), np.cumsum(x))  # NumPy flattens
    check_grads(lambda a: gt.cumprod(a) * gt.cumsum(a), [x], order=2)


@pytest.mark.parametrize("dtype,lowest,highest", [
    (np.float32, -np.inf, np.inf), (np.float64, -np.inf, np.inf),
    (np.int32, -(2**31), 2**31 - 1), (np.uint8, 0, 255),
])
def test_reduce_max_and_min_of_nothing_follow_tensorflow(dtype, lowest, highest):
    empty = gt.constant(np.zeros((0,), dtype))
    assert gt.reduce_max(empty).numpy() == lowest and gt.reduce_max(empty).dtype == dtype
    assert gt.reduce_min(empty).numpy() == highest and gt.reduce_min(empty).dtype == dtype
    rows = gt.reduce_max(gt.constant(np.zeros((3, 0), dtype)), axis=1, keepdims=True)
    assert rows.shape == (3, 1) and np.all(rows.numpy() == lowest)
    with pytest.raises(ValueError):
        np.max(empty)  # NumPy's rule for NumPy's function


def test_reduce_max_of_nothing_has_an_empty_gradient():
    x = gt.constant(np.zeros((2, 0)))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_max(x, axis=1)
    assert tape.gradient(y, x).shape == (2, 0)


@pytest.mark.parametrize("op", [gt.reduce_sum, gt.reduce_mean, gt.reduce_max, gt.reduce_min,
                                gt.reduce_prod, gt.reduce_logsumexp, gt.reduce_std])
def test_reductions_accept_a_tensor_axis_like_tensorflow(op):
    x = _distinct((2, 3))
    t = gt.constant(x)
    for axis in (gt.constant(0), gt.constant([1]), gt.constant([0, 1], dtype="int64")):
        expected = op(t, axis=[int(a) for a in np.atleast_1d(axis.numpy())])
        np.testing.assert_allclose(op(t, axis=axis).numpy(), expected.numpy())
    check_grads(lambda a: op(a, axis=gt.constant(1)), [x], order=1)
    with pytest.raises(TypeError, match="integers"):
        op(t, axis=gt.constant(0.0))


def test_scans_and_arg_reductions_accept_a_tensor_axis():
    x = _distinct((2, 3))
    t = gt.constant(x)
    np.testing.assert_allclose(gt.cumsum(t, gt.constant(1)).numpy(), np.cumsum(x, axis=1))
    assert gt.argmax(t, gt.constant(1)).numpy().tolist() == np.argmax(x, axis=1).tolist()
