"""Indexing: x[index] with NumPy's semantics, scatter-add, take, take_along_axis, gather.

Values equal NumPy's; gradients match finite differences to 2nd order (3rd for a few);
repeated indices accumulate; the compiled backward is reused for new index values."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.ops.index import getitem_p, parse_index
from gradtape.ops.registry import bind
from gradtape.testing import check_grads

rng = np.random.default_rng(1)
X = rng.standard_normal((4, 5, 6))
MASK = X[:, :, 0] > 0

# Each index is applied to X (shape 4, 5, 6).
INDICES = {
    "int": 2,
    "negative int": -1,
    "ints": (1, -2, 3),
    "slice": slice(1, 3),
    "negative step": slice(None, None, -1),
    "strided": (slice(3, 0, -2), slice(None, None, 2)),
    "slice past end": slice(2, 10),
    "empty slice": slice(3, 1),
    "newaxis": (None, 1, None),
    "ellipsis": (Ellipsis, 2),
    "ellipsis middle": (0, Ellipsis, slice(1, 4)),
    "int array": [0, 3, 1],
    "repeated": np.array([1, 1, 1, 2]),
    "negative array": [-1, 0, -1],
    "2d array": np.array([[0, 1], [3, 3]]),
    "arrays broadcast": (np.array([[0], [2]]), np.array([1, 4, 4])),
    "array then slice": ([0, 2], slice(1, 3)),
    "slice then array": (slice(None), [4, 0, 4]),
    "separated arrays": ([0, 1], slice(None), [2, 5]),
    "int and array apart": (1, slice(None), [0, 5]),
    "newaxis between arrays": ([0, 1], None, [2, 3]),
    "ellipsis array": (Ellipsis, [5, 0, 5]),
    "mask": MASK,
    "mask and slice": (MASK, slice(1, 3)),
    "1d mask": (slice(None), np.array([True, False, True, True, False])),
    "mask after array": ([0, 2], np.array([False, True, False, False, True])),
    "scalar result": (1, 2, 3),
    "empty array": np.array([], dtype=int),
}


@pytest.mark.parametrize("name", list(INDICES))
def test_getitem_value_and_grads(name):
    index = INDICES[name]
    x = gt.constant(X)
    expected = X[index]
    out = x[index]
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.shape == expected.shape
    check_grads(lambda t: t[index], [X], order=2)


@pytest.mark.parametrize("name", ["strided", "separated arrays", "mask", "repeated"])
def test_getitem_third_order(name):
    index = INDICES[name]
    check_grads(lambda t: t[index] ** 3, [X], order=3)


@pytest.mark.parametrize("name", ["strided", "separated arrays", "mask", "repeated"])
def test_getitem_jvp(name, check_jvp):
    index = INDICES[name]
    check_jvp(lambda t: t[index] * t[index], [X])


def test_repeated_indices_accumulate():
    x = gt.constant([10.0, 20.0, 30.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(x[[0, 2, 0, 0]] * gt.constant([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [8.0, 0.0, 2.0])


def test_repeated_rows_and_mask_gradient_by_hand():
    x = gt.constant(np.arange(6.0).reshape(3, 2))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        rows = x[[2, 2, 1]]  # row 2 twice
        masked = x[x > 2.5]  # elements 3, 4, 5
        y = gt.reduce_sum(rows) + gt.reduce_sum(masked * masked)
    np.testing.assert_array_equal(
        tape.gradient(y, x).numpy(), [[0.0, 0.0], [1.0, 1.0 + 6.0], [2.0 + 8.0, 2.0 + 10.0]]
    )
    # Second order of a repeated gather: d/dx sum(x[i]**2 for i in [0, 0]) = 4 x[0].
    v = gt.constant([3.0, 5.0])
    with gt.GradientTape() as outer:
        outer.watch(v)
        with gt.GradientTape() as inner:
            inner.watch(v)
            z = gt.reduce_sum(v[[0, 0]] ** 2)
        g = inner.gradient(z, v)
    np.testing.assert_array_equal(g.numpy(), [12.0, 0.0])
    np.testing.assert_array_equal(outer.jacobian(g, v).numpy(), [[4.0, 0.0], [0.0, 0.0]])


def test_scalar_result_and_integer_tensor_index():
    x = gt.constant(np.arange(12.0).reshape(3, 4))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x[gt.constant(1), np.int64(2)]
    assert y.shape == ()
    assert float(y) == 6.0
    expected = np.zeros((3, 4))
    expected[1, 2] = 1.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected)
    idx = gt.constant([2, 0])  # an int32 tensor as an index array
    np.testing.assert_array_equal(x[idx].numpy(), x.numpy()[[2, 0]])
    np.testing.assert_array_equal(x[x[:, 0] > 1.0].numpy(), x.numpy()[[1, 2]])


def test_new_index_values_reuse_the_compiled_backward():
    x = gt.constant(X)

    def grad_for(index):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(x[index, 1:3] * 2.0)
        return tape.gradient(y, x).numpy()

    first = grad_for(np.array([0, 1, 1]))
    size = len(backward_cache)
    second = grad_for(np.array([3, 3, 2]))
    assert len(backward_cache) == size
    expected = np.zeros_like(X)
    np.add.at(expected, (np.array([3, 3, 2]), slice(1, 3)), 2.0)
    np.testing.assert_array_equal(second, expected)
    assert not np.array_equal(first, second)


def test_index_errors():
    x = gt.constant(X)
    with pytest.raises(IndexError, match="boolean index"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x[[0.5]]
    with pytest.raises(IndexError):
        x[7]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(TypeError, match="boolean scalar"):
        x[True]


def test_whole_index_returns_the_tensor():
    x = gt.constant(X)
    assert x[...] is x
    assert x[:] is x
    assert x[()] is x


def test_iteration_uses_getitem():
    x = gt.constant(np.arange(6.0).reshape(3, 2))
    with gt.GradientTape() as tape:
        tape.watch(x)
        rows = list(x)
        y = rows[0][1] * rows[2][0]
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0, 4], [0, 0], [1, 0]])


# --- take, take_along_axis, gather -------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("indices", [[1, 0, 1], np.array([[2, 0], [0, 0]]), 3])
def test_take(axis, indices):
    expected = np.take(X, indices, axis=axis)
    np.testing.assert_array_equal(gt.take(gt.constant(X), indices, axis=axis).numpy(), expected)
    check_grads(lambda t: gt.take(t, indices, axis=axis), [X], order=2)


def test_take_numpy_dispatch_records():
    x = gt.constant(X)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = np.take(x, [0, 0], axis=2)
        z = np.take_along_axis(x, np.zeros((4, 5, 1), dtype=int), axis=-1)
        total = gt.reduce_sum(y) + gt.reduce_sum(z)
    expected = np.zeros_like(X)
    expected[:, :, 0] = 3.0
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), expected)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_along_axis(axis):
    if axis is None:
        idx = np.array([5, 0, 5, 100])
    else:
        shape = list(X.shape)
        shape[axis] = 3
        idx = rng.integers(0, X.shape[axis], size=shape)
    expected = np.take_along_axis(X, idx, axis=axis)
    np.testing.assert_array_equal(gt.take_along_axis(X, idx, axis).numpy(), expected)
    check_grads(lambda t: gt.take_along_axis(t, idx, axis), [X], order=2)


def test_take_along_axis_broadcasts_like_numpy():
    a = rng.standard_normal((1, 5))
    idx = np.array([[0, 4], [1, 1], [3, 2]])
    np.testing.assert_array_equal(gt.take_along_axis(a, idx, 1).numpy(),
                                  np.take_along_axis(a, idx, 1))
    check_grads(lambda t: gt.take_along_axis(t, idx, 1), [a], order=2)
    with pytest.raises(ValueError):
        gt.take_along_axis(a, np.array([0, 1]), 1)


def test_gather_like_tf():
    params = gt.constant(X)
    np.testing.assert_array_equal(gt.gather(params, [3, 0]).numpy(), X[[3, 0]])
    np.testing.assert_array_equal(gt.gather(params, [[1], [2]], axis=2).numpy(),
                                  np.take(X, [[1], [2]], axis=2))
    check_grads(lambda t: gt.gather(t, [1, 1, 0], axis=1), [X], order=2)


@pytest.mark.parametrize("axis", [1, 2])
def test_gather_batch_dims(axis):
    idx = rng.integers(0, X.shape[axis], size=(4, 2, 3))
    expected = np.stack([np.take(X[b], idx[b], axis=axis - 1) for b in range(4)])
    out = gt.gather(gt.constant(X), idx, axis=axis, batch_dims=1)
    np.testing.assert_array_equal(out.numpy(), expected)
    check_grads(lambda t: gt.gather(t, idx, axis=axis, batch_dims=1), [X], order=2)
    with pytest.raises(ValueError):
        gt.gather(X, idx[:3], axis=axis, batch_dims=1)


def test_gather_out_of_range_raises_tfs_invalid_argument():
    # TF: "indices[1] = 7 is not in [0, 4)" as InvalidArgumentError, eagerly.
    params = gt.constant(X)  # shape (4, 5, 6)
    invalid = gt.errors.InvalidArgumentError
    with pytest.raises(invalid, match=r"indices\[1\] = 7 is not in \[0, 4\)"):
        gt.gather(params, [0, 7])
    with pytest.raises(invalid, match=r"indices\[0, 1\] = -6"):
        gt.gather(params, gt.constant([[1, -6]]), axis=1)
    with pytest.raises(invalid, match=r"indices\[1, 1\] = 5 .*axis 1"):
        gt.gather_nd(X, np.array([[0, 1], [3, 5]]))
    # The boundary cases still gather: the last index, and negative ones from the end.
    np.testing.assert_array_equal(gt.gather(params, [3, -4]).numpy(), X[[3, 0]])


def test_gather_nd_and_boolean_mask():
    idx = np.array([[0, 1], [3, 4], [0, 1]])
    np.testing.assert_array_equal(gt.gather_nd(X, idx).numpy(), X[[0, 3, 0], [1, 4, 1]])
    check_grads(lambda t: gt.gather_nd(t, idx), [X], order=2)
    with pytest.raises(NotImplementedError):
        gt.gather_nd(X, idx, batch_dims=1)
    mask = np.array([True, False, True, True, False])
    np.testing.assert_array_equal(gt.boolean_mask(X, mask, axis=1).numpy(), X[:, mask])
    check_grads(lambda t: gt.boolean_mask(t, MASK), [X], order=2)


def test_scatter_add_is_differentiable(check_jvp):
    g = rng.standard_normal((3, 6))
    arrays = (np.array([1, 1, 0]),)
    template = (("array", 0), ("slice", None, None, None))
    out = gt.scatter_add(g, arrays, template, (2, 6))
    np.testing.assert_allclose(out.numpy(), [g[2], g[0] + g[1]])
    check_grads(lambda t: gt.scatter_add(t * t, arrays, template, (2, 6)), [g], order=3)
    check_jvp(lambda t: gt.scatter_add(t * t, arrays, template, (2, 6)), [g])


# --- batching rules: vectorized over a leading axis, as jacobians use them ---------------

I2 = np.array([[0, 2], [3, 3]])
BATCH_INDICES = {
    "basic": (1, slice(None, None, -1), None),
    "ellipsis": (Ellipsis, slice(2, 0, -1)),
    "adjacent arrays": (slice(None), I2, I2),
    "separated arrays": (I2, slice(None), I2),
    "int and array apart": (1, slice(None), I2),
    "newaxis between": (I2, None, I2),
    "mask": (MASK,),
}


@pytest.mark.parametrize("name", list(BATCH_INDICES))
def test_batching_rules(name, check_batching):
    template, arrays = parse_index(BATCH_INDICES[name], X.shape)
    check_batching(lambda x, *idx: bind(getitem_p, x, *idx, index=template), [X, *arrays])
    g = np.zeros(X[BATCH_INDICES[name]].shape)
    check_batching(lambda u, *idx: gt.scatter_add(u, idx, template, X.shape), [g, *arrays])


def test_batching_composites(check_batching):
    check_batching(lambda x, i: gt.take_along_axis(x, i, 1), [X, np.zeros((4, 2, 6), int)])
    check_batching(lambda x, i: gt.gather(x, i, axis=2, batch_dims=1), [X, np.ones((4, 3), int)])
    check_batching(lambda x, i: gt.take(x, i, axis=-1), [X, I2])


def test_a_tuple_inside_the_index_is_an_index_array_like_numpys():
    x = np.arange(24.0).reshape(2, 3, 4)
    index = ((0, 1, 0), (2, 2, 1))
    np.testing.assert_array_equal(gt.constant(x)[index].numpy(), x[index])
    check_grads(lambda t: t[(1, 0), :, (3, 3)] * t[(1, 0), :, (3, 3)], [x], order=2)
