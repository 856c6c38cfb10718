"""gt.random: TF's functions, dtypes and seeding rules (values are NumPy's, not TF's)."""

import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt

R = gt.random


@pytest.fixture(autouse=True)
def _unseed():
    yield
    R.set_seed(None)  # later tests draw unseeded, as without set_seed


def draws():
    return np.concatenate([R.normal([3]).numpy(), R.uniform([2]).numpy(),
                           R.truncated_normal([2]).numpy(),
                           R.uniform([2], maxval=100, dtype=gt.int32).numpy()])


def test_set_seed_replays_the_same_sequence():
    R.set_seed(0)
    first = draws()
    R.set_seed(0)
    np.testing.assert_array_equal(draws(), first)
    R.set_seed(1)
    assert not np.array_equal(draws(), first)


def test_seeded_values_are_the_same_in_every_run():
    code = ("import gradtape as gt; gt.random.set_seed(7); "
            "print(gt.random.normal([4]).numpy().tolist())")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    R.set_seed(7)
    assert runs[0].stdout.strip() == str(R.normal([4]).numpy().tolist())


def test_op_seeds_follow_tfs_rules():
    # tf.random.set_seed docs: the same op seed gives A1, A2 (a stream); set_seed restarts it.
    R.set_seed(1234)
    a1, a2 = R.uniform([1], seed=1), R.uniform([1], seed=1)
    b1 = R.uniform([1], seed=2)
    assert a1.numpy() != a2.numpy() and a1.numpy() != b1.numpy()
    R.set_seed(1234)
    assert R.uniform([1], seed=1).numpy() == a1.numpy()
    # An op seed without a global seed is deterministic too (TF's default global seed).
    R.set_seed(None)
    c = R.normal([2], seed=5).numpy()
    R.set_seed(None)
    np.testing.assert_array_equal(R.normal([2], seed=5).numpy(), c)


def test_normal_dtypes_shapes_and_moments():
    R.set_seed(3)
    x = R.normal([200, 500])
    assert x.dtype == np.float32 and x.shape == (200, 500)
    assert abs(float(np.mean(x.numpy()))) < 0.01 and abs(np.std(x.numpy()) - 1) < 0.01
    y = R.normal([100_000], mean=3.0, stddev=2.0, dtype=gt.float64).numpy()
    assert y.dtype == np.float64
    assert abs(y.mean() - 3) < 0.03 and abs(y.std() - 2) < 0.03
    assert R.normal([2], dtype=gt.float16).dtype == np.float16
    with pytest.raises(gt.errors.InvalidArgumentError, match="floating dtype"):
        R.normal([2], dtype=gt.int32)


def test_uniform_ranges_and_tfs_maxval_rule():
    R.set_seed(4)
    u = R.uniform([10_000]).numpy()
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.02
    v = R.uniform([10_000], minval=-2.0, maxval=3.0, dtype=gt.float64).numpy()
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 0.1
    ints = R.uniform([1000], minval=2, maxval=5, dtype=gt.int64).numpy()
    assert ints.dtype == np.int64 and set(ints.tolist()) == {2, 3, 4}
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype int32"):
        R.uniform([2], dtype=gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="minval < maxval"):
        R.uniform([2], minval=3, maxval=3, dtype=gt.int32)


def test_truncated_normal_stays_within_two_stddevs():
    R.set_seed(5)
    t = R.truncated_normal([100_000], mean=1.0, stddev=0.5, dtype=gt.float64).numpy()
    assert np.all(np.abs(t - 1.0) <= 1.0)
    # The standard normal cut at +-2 has standard deviation 0.8796.
    assert abs(t.std() / 0.5 - 0.8796) < 0.01 and abs(t.mean() - 1.0) < 0.01


def test_shuffle_permutes_the_first_axis():
    R.set_seed(6)
    x = np.arange(20).reshape(10, 2)
    s = R.shuffle(x).numpy()
    assert s.dtype == x.dtype and not np.array_equal(s, x)
    assert sorted(map(tuple, s.tolist())) == sorted(map(tuple, x.tolist()))
    with pytest.raises(gt.errors.InvalidArgumentError, match="rank >= 1"):
        R.shuffle(3)


def test_categorical_samples_softmax_of_the_logits():
    R.set_seed(8)
    samples = R.categorical(np.log([[0.2, 0.8], [0.9, 0.1]]), 20_000)
    assert samples.dtype == np.int64 and samples.shape == (2, 20_000)
    freq = samples.numpy().mean(axis=1)
    assert abs(freq[0] - 0.8) < 0.02 and abs(freq[1] - 0.1) < 0.02
    assert R.categorical([[0.0, 0.0]], 3, dtype=gt.int32).dtype == np.int32


def test_generator_from_seed_is_its_own_stream():
    g1, g2 = R.Generator.from_seed(11), R.Generator.from_seed(11)
    a = g1.normal([3])
    R.set_seed(0)  # the global seed does not touch generators
    np.testing.assert_array_equal(g2.normal([3]).numpy(), a.numpy())
    assert not np.array_equal(g1.normal([3]).numpy(), a.numpy())
    u = g1.uniform([100], minval=1.0, maxval=2.0).numpy()
    assert u.dtype == np.float32 and u.min() >= 1 and u.max() < 2
    assert np.all(np.abs(g1.truncated_normal([100]).numpy()) <= 2)
    assert g1.uniform([3], maxval=4, dtype=gt.int32).dtype == np.int32
    assert isinstance(R.get_global_generator(), R.Generator)
    left, right = g1.split(2)
    assert not np.array_equal(left.normal([3]).numpy(), right.normal([3]).numpy())


def test_stateless_functions_depend_on_the_seed_only():
    a = R.stateless_normal([4], seed=[1, 2])
    R.normal([5])
    np.testing.assert_array_equal(R.stateless_normal([4], seed=[1, 2]).numpy(), a.numpy())
    assert not np.array_equal(R.stateless_normal([4], seed=[2, 1]).numpy(), a.numpy())
    u = R.stateless_uniform([3], seed=gt.constant([3, 4]), minval=5.0, maxval=6.0)
    assert u.dtype == np.float32 and np.all((u.numpy() >= 5) & (u.numpy() < 6))
    assert R.stateless_uniform([3], seed=[1, 1], maxval=9, dtype=gt.int64).dtype == np.int64
    assert np.all(np.abs(R.stateless_truncated_normal([50], seed=[0, 0]).numpy()) <= 2)
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape \\[2\\]"):
        R.stateless_normal([2], seed=3)


def test_mean_and_stddev_tensors_are_differentiable():
    """TF's random ops differentiate in mean and stddev: checked against finite
    differences in float64 (a stateless draw is the same function at every call)."""

    def f(mean, stddev):
        x = R.stateless_normal([5], seed=[1, 2], mean=mean, stddev=stddev, dtype=gt.float64)
        return gt.reduce_sum(x * x)

    m, s = gt.constant(0.3, gt.float64), gt.constant(1.7, gt.float64)
    with gt.GradientTape() as tape:
        tape.watch([m, s])
        y = f(m, s)
    gm, gs = tape.gradient(y, [m, s])
    eps = 1e-6
    fd_m = (float(f(0.3 + eps, 1.7)) - float(f(0.3 - eps, 1.7))) / (2 * eps)
    fd_s = (float(f(0.3, 1.7 + eps)) - float(f(0.3, 1.7 - eps))) / (2 * eps)
    np.testing.assert_allclose([float(gm), float(gs)], [fd_m, fd_s], rtol=1e-6)

    lo, hi = gt.constant(1.0, gt.float64), gt.constant(3.0, gt.float64)
    with gt.GradientTape() as tape:
        tape.watch([lo, hi])
        u = R.stateless_uniform([4], seed=[5, 6], minval=lo, maxval=hi, dtype=gt.float64)
        total = gt.reduce_sum(u)
    unit = (u.numpy() - 1.0) / 2.0
    g_lo, g_hi = tape.gradient(total, [lo, hi])
    np.testing.assert_allclose([float(g_lo), float(g_hi)], [np.sum(1 - unit), np.sum(unit)])
