"""The training and physics examples run as scripts and reach what they claim."""

import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradtape as gt

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_script(name: str) -> str:
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name))  # __name__ is not "__main__": no run


def test_logistic_regression_script_converges():
    out = run_script("logistic_regression.py")
    losses = [float(v) for v in re.findall(r"step\s+\d+\s+loss ([\d.]+)", out)]
    assert len(losses) >= 4 and losses[0] == pytest.approx(np.log(2), abs=1e-4)
    final = re.search(r"final loss ([\d.]+)\s+accuracy ([\d.]+)", out)
    assert final, out
    assert float(final.group(1)) < 0.25 and float(final.group(2)) > 0.9


def test_logistic_regression_reaches_the_optimum():
    example = load("logistic_regression.py")
    result = example["train"](steps=300, log_every=1000)
    losses = result["losses"]
    assert all(b <= a + 1e-12 for a, b in zip(losses[5:], losses[6:]))  # settles downhill
    # At the optimum the gradient vanishes; check it with NumPy, outside gradtape.
    x, y = example["make_data"]()
    w_b = _fit_by_newton(x, y)
    z = x @ w_b[:3] + w_b[3]
    best = float(np.mean(np.logaddexp(0.0, z) - y * z))
    assert best - 1e-9 <= result["final_loss"] < best + 1e-4


def _fit_by_newton(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    a = np.hstack([x, np.ones((len(x), 1))])
    theta = np.zeros(4)
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-(a @ theta)))
        grad = a.T @ (p - y) / len(y)
        hess = (a * (p * (1 - p))[:, None]).T @ a / len(y)
        theta -= np.linalg.solve(hess, grad)
    return theta


def test_spring_chain_script_conserves_energy():
    out = run_script("spring_chain.py")
    drift = float(re.search(r"max relative energy drift ([\d.e+-]+)", out).group(1))
    peak = float(re.search(r"peak kinetic energy ([\d.]+)", out).group(1))
    assert peak > 1.0  # the chain really moved
    assert drift < 1e-3


def test_spring_chain_forces_are_the_negative_gradient():
    example = load("spring_chain.py")
    rng = np.random.default_rng(0)
    p = np.stack([0.25 * np.arange(1, 9), np.zeros(8)], axis=1) + 0.05 * rng.standard_normal(
        (8, 2))
    _, grad_u = example["energy_and_gradient"](p)

    def u(q):
        return float(example["potential_energy"](gt.constant(q)))

    numeric = np.zeros_like(p)
    for i in np.ndindex(p.shape):
        step = np.zeros_like(p)
        step[i] = 1e-6
        numeric[i] = (u(p + step) - u(p - step)) / 2e-6
    np.testing.assert_allclose(grad_u.numpy(), numeric, rtol=1e-6, atol=1e-6)


def test_spring_chain_energy_error_is_second_order_in_dt():
    simulate = load("spring_chain.py")["simulate"]
    coarse = simulate(steps=250, dt=4e-3, report_every=10**9)
    fine = simulate(steps=500, dt=2e-3, report_every=10**9)
    ratio = coarse["max_drift"] / fine["max_drift"]
    assert 2.5 < ratio < 6.0  # velocity Verlet: error ~ dt**2


# --- TF's "Basic training loops" guide, ported by changing the import ------------------------

def test_tf_guide_training_loop_is_tf_code_with_the_import_changed():
    source = (EXAMPLES / "tf_guide_training_loop.py").read_text()
    assert "import gradtape as tf  # was: import tensorflow as tf" in source
    code = [line for line in source.splitlines() if line.strip() and
            not line.lstrip().startswith("#")]
    assert sum("gradtape" in line for line in code) == 1  # only the import names it


def test_tf_guide_training_loop_script_learns_and_is_reproducible():
    out = run_script("tf_guide_training_loop.py")
    assert out == run_script("tf_guide_training_loop.py")  # tf.random.set_seed: same data
    losses = [float(v) for v in re.findall(r"loss=([\d.]+)", out)]
    assert len(losses) == 10 and all(b < a for a, b in zip(losses, losses[1:]))
    w, b = (float(v) for v in re.findall(r"W=([\d.]+) b=([\d.]+)", out)[-1])
    assert abs(w - 3.0) < 0.2 and abs(b - 2.0) < 0.3


def test_tf_guide_training_loop_reaches_least_squares():
    example = load("tf_guide_training_loop.py")
    result = example["train"](epochs=300, log=False)
    x, y = (t.numpy().astype(np.float64) for t in example["make_data"]())
    w, b = np.polyfit(x, y, 1)
    model = result["model"]
    assert float(model.w.numpy()) == pytest.approx(w, abs=1e-4)
    assert float(model.b.numpy()) == pytest.approx(b, abs=1e-4)
    assert [v.name for v in model.trainable_variables] == ["Variable:0", "Variable:0"]


# --- a small CNN on synthetic digits (Conv2D, MaxPooling2D under @tf.function) ---------------

def test_cnn_training_is_tf_code_with_the_import_changed():
    source = (EXAMPLES / "cnn_training.py").read_text()
    assert "import gradtape as tf  # was: import tensorflow as tf" in source
    code = [line for line in source.splitlines() if line.strip() and
            not line.lstrip().startswith("#")]
    assert sum("gradtape" in line for line in code) == 1


def test_cnn_training_script_learns_the_digits():
    out = run_script("cnn_training.py")
    losses = [float(v) for v in re.findall(r"loss=([\d.]+)", out)]
    accuracies = [float(v) for v in re.findall(r"test accuracy=([\d.]+)", out)]
    assert len(losses) == 8 and losses[-1] < 0.5 * losses[0]
    assert accuracies[-1] > 0.75  # ten classes: chance is 0.1


def test_cnn_training_compiled_step_equals_eager():
    example = load("cnn_training.py")
    x, y = example["make_digits"](16, seed=3)
    model = example["make_model"]()
    loss_fn = gt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss_and_grads(images, labels):
        with gt.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        return loss, tape.gradient(loss, model.trainable_variables)

    eager_loss, eager = loss_and_grads(gt.constant(x), gt.constant(y))
    compiled = gt.function(loss_and_grads)
    for _ in range(2):
        loss, grads = compiled(gt.constant(x), gt.constant(y))
        np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-6)
        for a, b in zip(grads, eager):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
