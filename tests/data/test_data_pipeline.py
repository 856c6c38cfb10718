"""gt.data: creation, transformations, TF's shuffle buffer and seeds, laziness and
bounded memory, Dask sources read chunk by chunk, iteration inside @gt.function."""

import itertools
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import gradtape as gt

Dataset = gt.data.Dataset


def _values(ds):
    return [np.asarray(e).tolist() for e in ds.as_numpy_iterator()]


# --- creation and dtypes -----------------------------------------------------------------
def test_from_tensor_slices_nests_and_tf_dtypes():
    ds = Dataset.from_tensor_slices(([1.0, 2.0], [3, 4], np.array([5.0, 6.0])))
    first = next(iter(ds))
    assert all(isinstance(t, gt.Tensor) for t in first)
    assert [t.dtype for t in first] == [gt.float32, gt.int32, gt.float64]
    assert [t.numpy().item() for t in first] == [1.0, 3, 5.0]
    dicts = list(Dataset.from_tensor_slices({"a": np.arange(3), "b": np.ones((3, 2))}))
    assert [d["a"].numpy().item() for d in dicts] == [0, 1, 2]
    assert dicts[0]["b"].shape == (2,)
    spec = Dataset.from_tensor_slices({"a": np.arange(3), "b": np.ones((3, 2))}).element_spec
    assert spec["b"] == gt.TensorSpec((2,), gt.float64)


def test_from_tensor_slices_refuses_mismatched_sizes():
    with pytest.raises(gt.errors.InvalidArgumentError, match="same size"):
        Dataset.from_tensor_slices((np.ones(3), np.ones(4)))


def test_from_tensors_range_zip_concatenate():
    assert _values(Dataset.from_tensors([1, 2])) == [[1, 2]]
    r = Dataset.range(2, 8, 2)
    assert _values(r) == [2, 4, 6] and next(iter(r)).dtype == gt.int64
    z = Dataset.zip((Dataset.range(3), Dataset.range(10, 20)))
    assert _values(z) == [[0, 10], [1, 11], [2, 12]] and z.cardinality() == 3
    zd = Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(5)})
    assert [(e["a"].item(), e["b"].item()) for e in zd.as_numpy_iterator()] == [(0, 0), (1, 1)]
    c = Dataset.range(2).concatenate(Dataset.range(5, 7))
    assert _values(c) == [0, 1, 5, 6] and len(c) == 4


def test_cardinality_and_len():
    ds = Dataset.range(10)
    assert ds.batch(3).cardinality() == 4 and ds.batch(3, drop_remainder=True).cardinality() == 3
    assert ds.repeat().cardinality() == gt.data.INFINITE_CARDINALITY == -1
    assert ds.filter(lambda x: x > 2).cardinality() == gt.data.UNKNOWN_CARDINALITY == -2
    assert gt.data.experimental.cardinality(ds.take(4)) == 4
    assert ds.repeat().take(7).cardinality() == 7 and ds.skip(3).cardinality() == 7
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(ds.filter(lambda x: x > 2))
    assert gt.data.AUTOTUNE == gt.data.experimental.AUTOTUNE == -1


# --- from_generator ----------------------------------------------------------------------
def test_from_generator_signature_and_args():
    def gen(n):
        for i in range(int(n)):
            yield i, [float(i)] * 2

    sig = (gt.TensorSpec((), gt.int32), gt.TensorSpec((2,), gt.float32))
    ds = Dataset.from_generator(gen, output_signature=sig, args=(3,))
    assert ds.element_spec == sig
    elements = list(ds)
    assert [e[0].dtype for e in elements] == [gt.int32] * 3
    assert elements[2][1].numpy().tolist() == [2.0, 2.0]
    old = Dataset.from_generator(gen, output_types=(gt.int64, gt.float32),
                                 output_shapes=((), (2,)), args=(2,))
    assert [(a.item(), b.tolist()) for a, b in old.as_numpy_iterator()] == \
        [(0, [0.0, 0.0]), (1, [1.0, 1.0])]
    assert old.element_spec[0] == gt.TensorSpec((), gt.int64)


def test_from_generator_refuses_what_the_signature_does_not_say():
    ds = Dataset.from_generator(lambda: iter([[1.0, 2.0, 3.0]]),
                                output_signature=gt.TensorSpec((2,), gt.float32))
    with pytest.raises(gt.errors.InvalidArgumentError, match="output_signature"):
        list(ds)
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(lambda: iter([1]))


def test_an_unbounded_generator_is_read_lazily():
    pulled = []

    def endless():
        for i in itertools.count():
            pulled.append(i)
            yield i

    ds = Dataset.from_generator(endless, output_signature=gt.TensorSpec((), gt.int64))
    out = _values(ds.map(lambda x: x * 2).batch(3).take(2))
    assert out == [[0, 2, 4], [6, 8, 10]]
    assert len(pulled) == 6  # nothing read ahead


def test_memory_is_bounded_by_the_buffers():
    row = 10_000  # 80 kB per element

    def endless():
        for i in itertools.count():
            yield np.full(row, float(i))

    ds = Dataset.from_generator(endless, output_signature=gt.TensorSpec((row,), gt.float64))
    pipeline = ds.shuffle(8, seed=1).batch(4).take(300)  # 300 batches = 96 MB in all
    tracemalloc.start()
    try:
        for batch in pipeline:
            assert batch.shape == (4, row)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the buffer (8 elements) + a batch (4) and the one converted: ~16 elements.
    assert peak < 30 * row * 8, peak


# --- shuffle -----------------------------------------------------------------------------
def test_shuffle_buffer_of_one_keeps_the_order_and_a_small_buffer_stays_local():
    assert _values(Dataset.range(20).shuffle(1)) == list(range(20))
    for seed in range(20):
        out = _values(Dataset.range(50).shuffle(3, seed=seed))
        assert sorted(out) == list(range(50))
        # Element i enters the buffer after i - 2 outputs, so it comes at position >= i - 2,
        # and leaves it within a few draws with overwhelming probability.
        assert all(position >= value - 2 for position, value in enumerate(out))


def test_shuffle_first_output_is_uniform_over_the_buffer():
    gt.random.set_seed(0)
    firsts = [_values(Dataset.range(100).shuffle(4))[0] for _ in range(4000)]
    counts = np.bincount(firsts, minlength=5)
    assert counts[4:].sum() == 0  # only the first buffer_size elements can come first
    np.testing.assert_allclose(counts[:4] / 4000, 0.25, atol=0.03)


def test_shuffle_seeds_follow_tf():
    def order(**kwargs):
        return _values(Dataset.range(30).shuffle(30, **kwargs))

    gt.random.set_seed(5)
    assert order(seed=7) == order(seed=7)  # an op seed fixes the order
    assert order(seed=7) != order(seed=8)
    gt.random.set_seed(5)
    first_run = [order(), order()]
    gt.random.set_seed(5)
    assert [order(), order()] == first_run  # a global seed repeats the sequence
    assert first_run[0] != first_run[1]


def test_reshuffle_each_iteration():
    again = Dataset.range(30).shuffle(30, seed=1)
    assert _values(again) != _values(again)
    same = Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert _values(same) == _values(same)
    epochs = _values(Dataset.range(10).shuffle(10, seed=2).repeat(2))
    assert sorted(epochs[:10]) == sorted(epochs[10:]) == list(range(10))
    assert epochs[:10] != epochs[10:]


@pytest.mark.parametrize("drop", [False, True])
def test_gathered_batches_equal_element_by_element_batches(drop):
    x = np.random.default_rng(0).normal(size=(103, 3))
    fast = Dataset.from_tensor_slices((x, np.arange(103))).shuffle(17, seed=4)
    slow = Dataset.from_tensor_slices((x, np.arange(103))).shuffle(17, seed=4).map(
        lambda a, b: (a, b))  # a map in between: the element-by-element path
    for a, b in zip(fast.batch(10, drop_remainder=drop), slow.batch(10, drop_remainder=drop),
                    strict=True):
        np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
        np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())
    assert len(list(fast.batch(10, drop_remainder=drop))) == (10 if drop else 11)


@pytest.mark.parametrize("n, buffer_size", [(9000, 5000), (9000, 300), (50, 100),
                                             (40, 1), (1, 1)])
def test_gathered_shuffle_order_is_the_buffer_algorithm_s(n, buffer_size):
    # The gathered path computes the whole order at once (more than one block of 4,096
    # draws here); element by element runs TF's buffer algorithm a draw at a time.
    rows = np.arange(n)
    fast = Dataset.from_tensor_slices(rows).shuffle(buffer_size, seed=3).batch(n)
    slow = Dataset.from_tensor_slices(rows).shuffle(buffer_size, seed=3).map(lambda r: r)
    order = next(iter(fast)).numpy()
    assert order.tolist() == _values(slow)
    assert sorted(order.tolist()) == list(range(n))
    if buffer_size == 1:
        assert order.tolist() == list(range(n))


# --- transformations ---------------------------------------------------------------------
def test_map_passes_tuple_components_as_arguments_and_a_dict_as_one():
    pairs = Dataset.from_tensor_slices(([1.0, 2.0], [10.0, 20.0]))
    assert _values(pairs.map(lambda a, b: a + b, num_parallel_calls=gt.data.AUTOTUNE)) == \
        [11.0, 22.0]
    dicts = Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]})
    assert _values(dicts.map(lambda d: d["a"] * d["b"])) == [3, 8]


def test_filter_repeat_take_skip_take_while_enumerate():
    ds = Dataset.range(10)
    assert _values(ds.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert _values(ds.take(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert _values(ds.skip(7)) == [7, 8, 9] and _values(ds.take(-1)) == list(range(10))
    assert _values(ds.take_while(lambda x: x < 4)) == [0, 1, 2, 3]
    assert [(i.item(), v.item()) for i, v in ds.take(2).enumerate(5).as_numpy_iterator()] \
        == [(5, 0), (6, 1)]
    with pytest.raises(gt.errors.InvalidArgumentError, match="scalar bool"):
        list(ds.filter(lambda x: x))


def test_batch_unbatch_and_spec():
    ds = Dataset.from_tensor_slices(np.arange(10, dtype=np.float32).reshape(5, 2))
    batches = _values(ds.batch(2))
    assert batches == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9]]]
    assert ds.batch(2).element_spec == gt.TensorSpec((None, 2), gt.float32)
    assert ds.batch(2, drop_remainder=True).element_spec == gt.TensorSpec((2, 2), gt.float32)
    assert _values(ds.batch(2).unbatch()) == _values(ds)


def test_padded_batch():
    ds = Dataset.range(1, 5).map(lambda x: gt.fill([x], x))
    assert _values(ds.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    padded = _values(ds.padded_batch(2, padded_shapes=[5], padding_values=np.int64(-1)))
    assert padded[0] == [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]]


def test_window_flat_map_and_interleave():
    windows = Dataset.range(7).window(3, shift=2)
    assert [[w.item() for w in win.as_numpy_iterator()] for win in windows] == \
        [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    batched = Dataset.range(7).window(3, shift=1, drop_remainder=True).flat_map(
        lambda w: w.batch(3))
    assert _values(batched) == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    assert _values(Dataset.range(8).window(2, stride=2).flat_map(lambda w: w.batch(2))) == \
        [[0, 2], [2, 4], [4, 6], [6]]
    inter = Dataset.range(1, 4).interleave(lambda x: Dataset.from_tensors(x).repeat(3),
                                           cycle_length=2, block_length=2)
    assert _values(inter) == [1, 1, 2, 2, 1, 2, 3, 3, 3]  # TF's documented order


def test_cache_prefetch_reduce_apply():
    calls = []
    ds = Dataset.range(4).map(lambda x: calls.append(1) or x * 10).cache()
    assert _values(ds) == _values(ds) == [0, 10, 20, 30]
    assert len(calls) == 4  # the second pass read the cache
    assert _values(Dataset.range(3).prefetch(gt.data.AUTOTUNE)) == [0, 1, 2]
    assert Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x).numpy() == 10
    assert _values(Dataset.range(4).apply(lambda d: d.skip(2))) == [2, 3]
    with pytest.raises(NotImplementedError, match="in memory"):
        Dataset.range(3).cache("somefile")


def test_bad_sizes_are_refused():
    with pytest.raises(gt.errors.InvalidArgumentError, match="batch_size"):
        Dataset.range(3).batch(0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="buffer_size"):
        Dataset.range(3).shuffle(0)


# --- Dask sources ------------------------------------------------------------------------
def test_a_dask_array_is_read_one_chunk_at_a_time():
    da = pytest.importorskip("dask.array")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
    from dask_testing import CountComputes

    x = da.arange(40.0, chunks=10).reshape(20, 2).rechunk((5, 2))
    y = np.arange(20)
    ds = Dataset.from_tensor_slices((x, y)).batch(3)
    with CountComputes() as counter:
        iterator = iter(ds)
        first = next(iterator)
        assert counter.count == 1  # one chunk of 5 rows, not the array
        rest = list(iterator)
    assert counter.count == 4  # one compute per chunk
    got = np.concatenate([first[0].numpy()] + [b[0].numpy() for b in rest])
    np.testing.assert_array_equal(got, np.arange(40.0).reshape(20, 2))


# --- inside @gt.function -----------------------------------------------------------------
def test_iteration_inside_a_function_reads_the_dataset_at_every_call():
    ds = Dataset.from_tensor_slices(np.arange(12.0)).shuffle(12, seed=3).batch(4)
    eager = Dataset.from_tensor_slices(np.arange(12.0)).shuffle(12, seed=3).batch(4)
    expected = [[b.numpy().tolist() for b in eager] for _ in range(3)]

    @gt.function
    def batches():
        return [b * 1.0 for b in ds]

    got = [[b.numpy().tolist() for b in batches()] for _ in range(3)]
    assert got == expected and got[0] != got[1]


def test_gradients_through_a_dataset_loop_inside_a_function():
    w = gt.Variable(2.0, dtype=gt.float64)
    ds = Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0]))

    @gt.function
    def loss():
        total = gt.constant(0.0, gt.float64)
        for x in ds:
            total = total + (w * x) ** 2
        return total

    with gt.GradientTape() as tape:
        value = loss()
    assert value.numpy() == pytest.approx(4.0 * 14.0)
    assert tape.gradient(value, w).numpy() == pytest.approx(2 * 2.0 * 14.0)  # d/dw w²Σx²


def test_an_infinite_dataset_inside_a_function_says_what_to_do():
    @gt.function
    def f():
        return [x for x in Dataset.range(3).repeat()]

    with pytest.raises(gt.errors.InvalidArgumentError, match="take"):
        f()
