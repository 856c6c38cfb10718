"""Shape ops: values equal NumPy's, NumPy's functions dispatch to them and record, and
derivatives match finite differences to 2nd order (3rd for a few), forward and reverse."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.testing import check_grads

rng = np.random.default_rng(2)

# name -> (function written with NumPy calls, input shapes). The same function runs on
# arrays (the expected values) and on tensors (through NumPy's dispatch to gradtape).
CASES = {
    "reshape": (lambda a: np.reshape(a, (6, -1)), [(3, 4)]),
    "transpose": (lambda a: np.transpose(a, (2, 0, 1)), [(2, 3, 4)]),
    "broadcast_to": (lambda a: np.broadcast_to(a, (2, 3, 4)), [(3, 1)]),
    "expand_dims": (lambda a: np.expand_dims(a, (0, -1)), [(3, 4)]),
    "squeeze all": (lambda a: np.squeeze(a), [(1, 3, 1, 2)]),
    "squeeze axis": (lambda a: np.squeeze(a, axis=2), [(1, 3, 1, 2)]),
    "squeeze axes": (lambda a: np.squeeze(a, axis=(0, -2)), [(1, 3, 1, 2)]),
    "ravel": (np.ravel, [(2, 3, 4)]),
    "ravel scalar": (np.ravel, [()]),
    "swapaxes": (lambda a: np.swapaxes(a, 0, -1), [(2, 3, 4)]),
    "moveaxis": (lambda a: np.moveaxis(a, 0, -1), [(2, 3, 4)]),
    "moveaxis many": (lambda a: np.moveaxis(a, (0, 1), (-1, 0)), [(2, 3, 4)]),
    "concatenate axis 0": (lambda a, b: np.concatenate([a, b]), [(2, 3), (4, 3)]),
    "concatenate axis -1": (lambda a, b, c: np.concatenate([a, b, c], axis=-1),
                            [(2, 1), (2, 3), (2, 2)]),
    "concatenate axis None": (lambda a, b: np.concatenate([a, b], axis=None),
                              [(2, 3), (4,)]),
    "concatenate same": (lambda a: np.concatenate([a, a * 2.0], axis=1), [(2, 3)]),
    "stack": (lambda a, b: np.stack([a, b]), [(2, 3), (2, 3)]),
    "stack axis -1": (lambda a, b: np.stack([a, b], axis=-1), [(2, 3), (2, 3)]),
    "stack axis 1": (lambda a, b, c: np.stack([a, b, c], axis=1), [(4,), (4,), (4,)]),
    "hstack 1d": (lambda a, b: np.hstack([a, b]), [(2,), (3,)]),
    "hstack 2d": (lambda a, b: np.hstack([a, b]), [(2, 1), (2, 3)]),
    "vstack 1d": (lambda a, b: np.vstack([a, b]), [(3,), (3,)]),
    "vstack 2d": (lambda a, b: np.vstack([a, b]), [(1, 3), (2, 3)]),
    "dstack": (lambda a, b: np.dstack([a, b]), [(2, 3), (2, 3)]),
    "column_stack": (lambda a, b: np.column_stack([a, b]), [(3,), (3, 2)]),
    "atleast_2d": (lambda a: np.atleast_2d(a), [(3,)]),
    "atleast_3d": (lambda a: np.atleast_3d(a), [(2, 3)]),
    "split sections": (lambda a: np.stack(np.split(a, 2, axis=1)), [(3, 4)]),
    "split indices": (lambda a: np.concatenate(np.split(a, [1, 3]), axis=None), [(5, 2)]),
    "split odd indices": (lambda a: np.concatenate(np.split(a, [3, 1, -1]), axis=None),
                          [(5,)]),
    "array_split": (lambda a: np.concatenate(np.array_split(a, 3, axis=-1), axis=None),
                    [(2, 7)]),
    "hsplit": (lambda a: np.stack(np.hsplit(a, 2)), [(2, 4)]),
    "vsplit": (lambda a: np.stack(np.vsplit(a, [1])[1:]), [(3, 4)]),
    "tile int": (lambda a: np.tile(a, 3), [(2,)]),
    "tile more reps": (lambda a: np.tile(a, (2, 1, 3)), [(2, 3)]),
    "tile fewer reps": (lambda a: np.tile(a, 2), [(2, 3)]),
    "repeat flat": (lambda a: np.repeat(a, 2), [(2, 3)]),
    "repeat axis": (lambda a: np.repeat(a, 3, axis=1), [(2, 3)]),
    "repeat counts": (lambda a: np.repeat(a, [1, 0, 3], axis=-1), [(2, 3)]),
    "flip all": (np.flip, [(2, 3, 4)]),
    "flip axis": (lambda a: np.flip(a, 1), [(2, 3, 4)]),
    "flip axes": (lambda a: np.flip(a, (0, 2)), [(2, 3, 4)]),
    "fliplr": (np.fliplr, [(2, 3)]),
    "flipud": (np.flipud, [(2, 3)]),
    "roll flat": (lambda a: np.roll(a, 4), [(2, 3)]),
    "roll axis": (lambda a: np.roll(a, -1, axis=1), [(2, 3)]),
    "roll big shift": (lambda a: np.roll(a, 7, axis=0), [(3, 2)]),
    "roll axes": (lambda a: np.roll(a, (1, 2, -1), axis=(0, 1, 0)), [(3, 4)]),
    "pad int": (lambda a: np.pad(a, 1), [(2, 3)]),
    "pad pairs": (lambda a: np.pad(a, ((0, 2), (1, 0))), [(2, 3)]),
    "pad value": (lambda a: np.pad(a, (2, 1), constant_values=-3.5), [(3,)]),
    "pad edge": (lambda a: np.pad(a, ((1, 2), (3, 0)), mode="edge"), [(2, 3)]),
    "pad reflect": (lambda a: np.pad(a, ((2, 2), (1, 3)), mode="reflect"), [(3, 3)]),
    "pad reflect wide": (lambda a: np.pad(a, 5, mode="reflect"), [(3,)]),
    "pad symmetric": (lambda a: np.pad(a, ((2, 1), (3, 3)), mode="symmetric"), [(3, 2)]),
    "pad wrap": (lambda a: np.pad(a, ((1, 4),), mode="wrap"), [(3,)]),
    "triu": (np.triu, [(3, 4)]),
    "triu k": (lambda a: np.triu(a, 1), [(4, 3)]),
    "triu batched": (lambda a: np.triu(a, -1), [(2, 3, 3)]),
    "triu 1d": (np.triu, [(3,)]),
    "tril": (np.tril, [(3, 4)]),
    "tril k": (lambda a: np.tril(a, -1), [(2, 4, 3)]),
}


def _args(shapes):
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_dispatch(name):
    fn, shapes = CASES[name]
    arrays = _args(shapes)
    expected = fn(*arrays)
    out = fn(*[gt.constant(a) for a in arrays])
    assert isinstance(out, gt.Tensor)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("name", list(CASES))
def test_grads_second_order(name):
    fn, shapes = CASES[name]
    check_grads(lambda *ts: gt.sin(fn(*ts)), _args(shapes), order=2)


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_rules(name, check_jvp):
    fn, shapes = CASES[name]
    check_jvp(lambda *ts: gt.sin(fn(*ts)), _args(shapes))


@pytest.mark.parametrize("name", ["concatenate axis -1", "pad reflect", "triu k", "roll axes",
                                  "tile more reps", "split indices"])
def test_grads_third_order(name):
    fn, shapes = CASES[name]
    check_grads(lambda *ts: fn(*ts) ** 3, _args(shapes), order=3)


def test_dispatch_records_on_the_tape():
    a, b = gt.constant(np.ones((2, 3))), gt.constant(np.ones((1, 3)))
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        y = np.concatenate([a * 2.0, b * 3.0])
        z = gt.reduce_sum(np.flip(np.pad(y, 1), 0) * np.arange(5.0)[:, None])
    # Padded row r has weight 4 - r after the flip; y's rows are padded rows 1..3.
    ga, gb = tape.gradient(z, [a, b])
    np.testing.assert_array_equal(ga.numpy(), [[6.0] * 3, [4.0] * 3])
    np.testing.assert_array_equal(gb.numpy(), [[3.0] * 3])


def test_concatenate_promotes_dtypes_and_casts_gradients():
    a = gt.constant(np.ones(2, dtype=np.float32))
    b = gt.constant(np.ones(3, dtype=np.float64))
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        y = gt.concatenate([a, b])
        z = gt.reduce_sum(y * np.arange(5.0))
    assert y.dtype == np.float64
    ga, gb = tape.gradient(z, [a, b])
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    np.testing.assert_array_equal(ga.numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(gb.numpy(), [2.0, 3.0, 4.0])


def test_float32_preserved():
    x = gt.constant(np.ones((2, 3), np.float32))
    for out in [gt.stack([x, x]), gt.tile(x, 2), gt.repeat(x, 2), gt.pad(x, 1),
                gt.roll(x, 1), gt.flip(x), gt.triu(x), gt.squeeze(x[None])]:
        assert out.dtype == np.float32


# --- TensorFlow names and signatures ----------------------------------------------------

def test_tf_aliases():
    a = rng.standard_normal((2, 6))
    x = gt.constant(a)
    np.testing.assert_array_equal(gt.concat([x, x], axis=1).numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(gt.concat([x, x], -1).numpy(), np.concatenate([a, a], -1))
    pieces = gt.unstack(x, axis=1)
    assert len(pieces) == 6 and pieces[2].shape == (2,)
    np.testing.assert_array_equal(pieces[2].numpy(), a[:, 2])
    np.testing.assert_array_equal(gt.tile(x, multiples=[2, 1]).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(gt.reverse(x, [1]).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(gt.reverse(x, axis=[-1, 0]).numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(gt.squeeze(x[:, None], axis=[1]).numpy(), a)
    np.testing.assert_array_equal(gt.transpose(x, perm=[1, 0]).numpy(), a.T)
    np.testing.assert_array_equal(
        gt.pad(x, paddings=[[1, 0], [2, 2]], mode="REFLECT").numpy(),
        np.pad(a, ((1, 0), (2, 2)), mode="reflect"),
    )
    np.testing.assert_array_equal(
        gt.pad(x, [[0, 1], [0, 0]], constant_values=7.0).numpy(),
        np.pad(a, ((0, 1), (0, 0)), constant_values=7.0),
    )
    np.testing.assert_array_equal(gt.roll(x, shift=[1, -2], axis=[0, 1]).numpy(),
                                  np.roll(a, (1, -2), axis=(0, 1)))
    np.testing.assert_array_equal(gt.repeat(x, repeats=2, axis=0).numpy(), np.repeat(a, 2, 0))
    np.testing.assert_array_equal(gt.flatten(x).numpy(), a.ravel())


def test_split_follows_tf_and_np_split_follows_numpy():
    a = rng.standard_normal((2, 6))
    x = gt.constant(a)
    sizes = [p.shape for p in gt.split(x, [1, -1, 2], axis=1)]
    assert sizes == [(2, 1), (2, 3), (2, 2)]
    np.testing.assert_array_equal(gt.split(x, [1, -1, 2], axis=1)[1].numpy(), a[:, 1:4])
    np.testing.assert_array_equal(gt.split(x, 3, axis=1)[2].numpy(), a[:, 4:])
    assert [p.shape for p in np.split(x, [1, 4], axis=1)] == [(2, 1), (2, 3), (2, 2)]
    assert [p.shape for p in gt.array_split(x, 4, axis=1)] == [(2, 2), (2, 2), (2, 1), (2, 1)]
    with gt.GradientTape() as tape:
        tape.watch(x)
        first, second = gt.split(x, 2, axis=0)
        y = gt.reduce_sum(first * 2.0 + second * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[2.0] * 6, [3.0] * 6])


def test_shape_errors():
    x = gt.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="squeeze"):
        gt.squeeze(x, axis=0)
    with pytest.raises(ValueError, match="same shape"):
        gt.concatenate([x, gt.constant(np.ones((2, 2)))], axis=0)
    with pytest.raises(ValueError, match="same shape"):
        gt.stack([x, x[:, :2]])
    with pytest.raises(ValueError, match="zero-dimensional"):
        gt.concatenate([x[0, 0], x[0, 1]])
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="equal"):
        gt.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="add up"):
        gt.split(x, [1, 1], axis=1)
    with pytest.raises(ValueError):
        gt.repeat(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="negative"):
        gt.pad(x, -1)
    with pytest.raises(NotImplementedError, match="mode"):
        gt.pad(x, 1, mode="mean")
    with pytest.raises(ValueError):
        gt.moveaxis(x, (0, 0), (0, 1))
    with pytest.raises(ValueError, match="num"):
        gt.unstack(x, num=3)


def test_jacobian_helpers_stack_and_moveaxis():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.stack([x[0] ** 2, gt.sin(x[1])])
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(),
                               [[2.0, 0.0, 0.0], [0.0, np.cos(2.0), 0.0]], rtol=1e-6)


# --- batching rules: vectorized over a leading axis, as jacobians use them ---------------

BATCH_CASES = {
    "reshape": (lambda a: gt.reshape(a, (6, -1)), [(3, 4)]),
    "transpose": (lambda a: gt.transpose(a, (2, 0, 1)), [(2, 3, 4)]),
    "broadcast_to": (lambda a: gt.broadcast_to(a, (2, 3, 4)), [(3, 1)]),
    "unbroadcast": (lambda a: gt.unbroadcast(a, (3, 1)), [(2, 3, 4)]),
    "identity": (gt.identity, [(2, 3)]),
    "concatenate": (lambda a, b: gt.concatenate([a, b, a], axis=-1), [(2, 1), (2, 3)]),
    "stack": (lambda a, b: gt.stack([a, b], axis=1), [(2, 3), (2, 3)]),
    "split": (lambda a: gt.split(a, [1, 2], axis=1)[1], [(2, 3)]),
    "pad": (lambda a: gt.pad(a, ((1, 0), (2, 3))), [(2, 3)]),
    "pad reflect": (lambda a: gt.pad(a, 2, mode="reflect"), [(3, 3)]),
    "triu": (lambda a: gt.triu(a, 1), [(3, 4)]),
    "tril": (lambda a: gt.tril(a, -1), [(2, 3, 3)]),
    "roll": (lambda a: gt.roll(a, (1, -1), axis=(0, 1)), [(3, 4)]),
    "tile": (lambda a: gt.tile(a, (2, 1, 3)), [(2, 3)]),
    "repeat": (lambda a: gt.repeat(a, 2, axis=0), [(2, 3)]),
    "repeat counts": (lambda a: gt.repeat(a, [2, 0, 1], axis=1), [(2, 3)]),
    "flip": (lambda a: gt.flip(a, 1), [(2, 3)]),
    "moveaxis": (lambda a: gt.moveaxis(a, 0, -1), [(2, 3, 4)]),
    "squeeze": (lambda a: gt.squeeze(a), [(1, 3, 1)]),
}


@pytest.mark.parametrize("name", list(BATCH_CASES))
def test_batching_rules(name, check_batching):
    fn, shapes = BATCH_CASES[name]
    check_batching(fn, _args(shapes))


def test_concatenate_batching_with_unbatched_inputs(check_batching):
    check_batching(lambda a, b: gt.concatenate([a, b], axis=0), _args([(2, 3), (1, 3)]),
                   [False, True])


def test_reshape_with_two_unknown_sizes_raises_tensorflows_message():
    x = gt.constant(np.arange(6.0))
    with pytest.raises(ValueError, match="Only one input size may be -1, not both 0 and 1"):
        gt.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="not both 1 and 2"):
        gt.reshape(x, (2, -1, -1))
    assert gt.reshape(x, (2, -1)).shape == (2, 3)
