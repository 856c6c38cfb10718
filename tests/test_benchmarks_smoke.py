"""The benchmark workloads compute correct results with gradtape (no timing here).

The scripts in benchmarks/ time gradtape against hand-written NumPy code; these tests
import their workloads and check that gradtape's gradients, Hessians, Jacobians and
training steps equal the hand-written ones, on the first (uncompiled) call and on later
(compiled) calls.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        if name in sys.modules:  # function.py imports gradient.py by its plain name
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up here
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


gradient = _load("gradient")
higher_order = _load("higher_order")
function = _load("function")
eager_overhead = _load("eager_overhead")
harness = sys.modules["_harness"]

# The per-example loop is a slow comparison row, not a gradtape feature.
CHECKED = (harness.HAND, harness.GRADTAPE, function.FUNCTION, "gradtape eager tape")
WORKLOADS = [*gradient.WORKLOADS, *higher_order.WORKLOADS, *function.WORKLOADS]


@pytest.mark.parametrize("build", WORKLOADS,
                         ids=lambda b: f"{b.__module__}.{b.__name__}")
def test_gradtape_matches_hand_written(build):
    w = build()
    names = [name for name in CHECKED if name in w.makers]
    assert harness.HAND in names and len(names) >= 2
    skipped = []
    for name in names:
        try:
            harness.checked(w.title, name, w.makers[name], w.expected, w.rtol, w.atol)
        except harness.Skip as why:
            skipped.append(f"{name}: {why}")
    if len(skipped) == len(names) - 1:
        pytest.skip("; ".join(skipped))


def test_hand_written_scalar_chain_matches_finite_differences():
    x, h = 0.7, 1e-6
    ops = SimpleNamespace(sin=math.sin, cos=math.cos)
    f = gradient.chain_loss
    numeric = (f(ops, [x + h], ()) - f(ops, [x - h], ())) / (2 * h)
    assert gradient.chain_hand_math(x)[0] == pytest.approx(numeric, rel=1e-5)
    assert float(gradient.chain_hand(np.float64(x))[0]) == pytest.approx(numeric, rel=1e-5)


def test_hand_written_hessian_matches_finite_differences_of_the_gradient():
    a, x = higher_order._data()

    def grad(v):
        return a.T @ (1 - np.tanh(a @ v) ** 2)

    h = 1e-6
    numeric = np.stack([(grad(x + h * e) - grad(x - h * e)) / (2 * h)
                        for e in np.eye(len(x))], axis=1)
    np.testing.assert_allclose(higher_order.hessian_hand(a, x), numeric, atol=1e-7)


def test_main_runs_quick_without_peers(capsys):
    results = gradient.main(["--quick", "--no-peers", "--only", "chain"])
    assert [r.title for r in results] == [gradient.chain_workload().title]
    assert set(results[0].times) >= {harness.HAND, harness.GRADTAPE}
    assert "| gradtape |" in capsys.readouterr().out


@pytest.mark.parametrize("x", [np.float64(1.0000001), np.full((2, 3), 1.0000001, np.float32)])
def test_eager_overhead_loops_compute_the_same_values(x):
    def product(a, b):
        return a * b

    loops = eager_overhead.op_loops(x, product, product)
    numpy_value = loops["NumPy"]()
    np.testing.assert_array_equal(loops["gradtape, no tape"]().numpy(), numpy_value)
    tape, recorded = loops["gradtape, recorded"]()
    np.testing.assert_array_equal(recorded.numpy(), numpy_value)
    assert len(tape._records) == eager_overhead.OPS_PER_LOOP  # every op was recorded


def test_scale_benchmark_gradients_agree():
    """benchmarks/scale.py: gradtape's tape and @gt.function gradients of Dask-GLM's
    logistic loss equal Dask-GLM's hand-written gradient and the NumPy one."""
    pytest.importorskip("dask.array")
    import dask

    scale = _load("scale")
    X, y = scale.lazy_data(3_000, 4, 700)
    with dask.config.set(scheduler="threads"):
        results = {name: fn() for name, fn in scale.dask_implementations(X, y, 4).items()}
        X_np, y_np = dask.compute(X, y)
        # every form submits the hand-written gradient's graph (one count for all)
        assert len(set(scale.dask_graphs(X, y, 4).values())) == 1
    results[scale.HAND_NUMPY] = scale.hand_written_numpy_gradient(X_np, y_np,
                                                                  scale.start_weights(4))
    scale.check_equal(results, scale.HAND_NUMPY)
    w = scale.start_weights(4)
    p = 1.0 / (1.0 + np.exp(-(X_np @ w)))
    # The loss's gradient by central differences, to be sure the formulation is right.
    def loss(v):
        z = X_np @ v
        return np.sum(np.logaddexp(0.0, z) - y_np * z)
    h = 1e-6
    numeric = [(loss(w + h * e) - loss(w - h * e)) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(X_np.T @ (p - y_np), numeric, rtol=1e-6)


def test_programs_benchmark_runs_quick_and_its_floor_trains():
    """benchmarks/programs.py at a tiny size: the workloads time, TF and PyTorch are
    skipped cleanly when absent, and the NumPy floor's hand-written MLP step lowers the
    loss."""
    programs = _load("programs")
    results = programs.main(["--quick", "--no-peers"])
    assert [set(r.times) for r in results[:2]] == [{programs.NUMPY, programs.GRADTAPE}] * 2
    assert all(r.skipped == {programs.TF: "--no-peers"} for r in results[:2])
    cnn = results[2]  # the CNN step: gradtape eager and compiled timed, peers skipped
    assert set(cnn.times) == {programs.GT_EAGER, programs.GT_FUNCTION}
    assert set(cnn.skipped) == {programs.TF_EAGER, programs.TF_FUNCTION, programs.TORCH}
    gru = results[3]  # the GRU step
    assert set(gru.times) == {"gradtape eager", "gradtape compiled"}
    assert gru.skipped == {programs.TF: "--no-peers"}
    x, y = programs.make_data(256, 8, 3)
    assert programs.numpy_epoch(x, y, 64) == 4
    import gradtape as gt
    assert programs.dataset_epoch(gt.data, x, y, 50, 64)() == 4
    y = (x[:, 0] > 0.5).astype(np.int64)  # a learnable label
    epoch = programs.numpy_fit_epoch(x, y, 32, 16, 2)
    losses = [epoch() for _ in range(300)]
    assert np.mean(losses[-20:]) < np.mean(losses[:20]) - 0.1


def test_programs_benchmark_compares_both_thread_settings_in_child_processes():
    """--compare-threads runs the script at one thread and at the defaults, one fresh
    process each, and reports both settings' times per implementation."""
    programs = _load("programs")
    settings = programs.compare_threads(["--quick", "--no-peers", "--repeats", "1"], 1)
    assert [label for label, _ in settings] == ["1 thread", "default threads"]
    for _, results in settings:
        assert [set(r.times) for r in results] == [{programs.NUMPY, programs.GRADTAPE}] * 2
        assert all(t > 0 for r in results for t in r.times.values())
    table = programs.report_settings(settings)
    assert "| gradtape | " in table and "default threads: best s" in table


def test_the_cold_build_benchmark_times_this_checkout():
    cold_build = _load("cold_build")
    milliseconds = cold_build.cold_build_ms(str(BENCHMARKS.parent / "src"))
    assert 0.0 < milliseconds < 10_000.0  # a time per call was measured and printed


def test_pinn_benchmark_derivatives_match_finite_differences():
    """benchmarks/pinn.py's nested tapes inside @gt.function: u_x, u_t and u_xx of a
    Keras MLP, and the loss gradient of a kernel, against central differences (float64)."""
    import gradtape as gt

    pinn = _load("pinn")
    gt.keras.utils.set_random_seed(1)
    model = gt.keras.Sequential([gt.keras.Input((2,), dtype="float64")] + [
        gt.keras.layers.Dense(8, activation="tanh", dtype="float64") for _ in range(2)] + [
        gt.keras.layers.Dense(1, dtype="float64")])
    rng = np.random.default_rng(3)
    x0, t0 = rng.uniform(-1, 1, (5, 1)), rng.uniform(0, 1, (5, 1))

    @gt.function
    def derivatives(x, t):
        with gt.GradientTape() as tape:
            with gt.GradientTape() as second:
                second.watch(x)
                with gt.GradientTape(persistent=True) as first:
                    first.watch([x, t])
                    u = model(gt.concat([x, t], axis=1))
                u_x, u_t = first.gradient(u, x), first.gradient(u, t)
            u_xx = second.gradient(u_x, x)
            loss = gt.reduce_mean(gt.square(u_t + u * u_x - pinn.NU * u_xx))
        return u_x, u_t, u_xx, tape.gradient(loss, model.trainable_variables[0])

    def u(x, t):
        return model(gt.constant(np.concatenate([x, t], axis=1))).numpy()

    h = 1e-4
    u_x_fd = (u(x0 + h, t0) - u(x0 - h, t0)) / (2 * h)
    u_t_fd = (u(x0, t0 + h) - u(x0, t0 - h)) / (2 * h)
    u_xx_fd = (u(x0 + h, t0) - 2 * u(x0, t0) + u(x0 - h, t0)) / h**2
    for _ in range(3):  # traced, then compiled
        u_x, u_t, u_xx, d_kernel = derivatives(gt.constant(x0), gt.constant(t0))
        np.testing.assert_allclose(u_x.numpy(), u_x_fd, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(u_t.numpy(), u_t_fd, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(u_xx.numpy(), u_xx_fd, rtol=1e-4, atol=1e-6)

    kernel = model.trainable_variables[0]
    k0 = kernel.numpy().copy()

    def loss_at(k):
        kernel.assign(k)
        u_x, u_t, u_xx, _ = derivatives(gt.constant(x0), gt.constant(t0))
        residual = u_t.numpy() + u(x0, t0) * u_x.numpy() - pinn.NU * u_xx.numpy()
        return np.mean(residual**2)

    step = np.zeros_like(k0)
    step[1, 3] = 1e-6
    expected = (loss_at(k0 + step) - loss_at(k0 - step)) / 2e-6
    kernel.assign(k0)
    np.testing.assert_allclose(d_kernel.numpy()[1, 3], expected, rtol=1e-5)


def test_pinn_benchmark_steps_train_quick():
    import gradtape as gt

    pinn = _load("pinn")
    x, t = pinn.collocation(64)
    step, _ = pinn.make_step(gt)
    losses = [float(step(gt.constant(x), gt.constant(t))) for _ in range(30)]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


@pytest.mark.parametrize("workload", ["mlp", "cnn", "rnn", "deep"])
def test_memory_benchmark_runs_each_variant_in_a_fresh_process(workload):
    """benchmarks/memory.py --quick: NumPy and both gradtape variants report a peak on
    each workload (the size itself is not asserted: it depends on the allocator)."""
    memory = _load("memory")
    rows = {row["variant"]: row for row in (memory.run(name, quick=True, workload=workload)
                                            for name in ("numpy", "gradtape_eager",
                                                         "gradtape_function"))}
    for name, row in rows.items():
        assert "peak_mib" in row, (name, row)
        assert math.isfinite(row["peak_mib"])


@pytest.mark.parametrize("workload", ["cnn", "rnn"])
def test_the_memory_benchmark_steps_compute_the_same_gradients(workload):
    """The hand-written NumPy steps of the CNN and RNN workloads are the gradients the
    eager tape and @gt.function compute (float32, quick sizes)."""
    memory = _load("memory")
    by_hand = memory._variant("numpy", True, workload)()
    for variant in ("gradtape_eager", "gradtape_function"):
        step = memory._variant(variant, True, workload)
        for got, want in zip(step(), by_hand):
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("workload", ["mlp", "deep"])
def test_the_memory_benchmark_recompute_variants_compute_the_plain_gradients(workload):
    """benchmarks/memory.py --recompute: each recompute_grad configuration (blocks of 1,
    2 and 4 layers, eager and compiled) gives the plain eager tape's gradients, so the
    peaks it reports are of the same computation (float32, quick sizes)."""
    memory = _load("memory")
    plain = [g.numpy() for g in memory._variant("gradtape_eager", True, workload)()]
    for variant in memory.RECOMPUTE:
        got = memory._variant(variant, True, workload)()
        for g, want in zip(got, plain):
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-8, err_msg=variant)
