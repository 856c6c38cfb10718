"""benchmarks/instruction_counts.py: its workloads compute the right numbers, and a count
is the counted steps alone.

The harness used to take the difference of two whole processes (N and 3N steps) and
divide it by 2N: anything that differed between the two processes before the first step
was charged to the steps, 1/60 of it to each. Now callgrind counts windows between two
marker calls inside one process.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SRC = Path(__file__).resolve().parent.parent / "src"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


workloads = _load("_instruction_workloads")
instruction_counts = _load("instruction_counts")


def test_the_harness_and_its_workloads_name_the_same_steps():
    assert (instruction_counts.WORKLOADS + instruction_counts.ON_REQUEST
            == list(workloads.WORKLOADS))


# pinn_step (counted on request) is the step test_benchmarks_smoke.py checks; building it
# here would take seconds.
@pytest.mark.parametrize("kind", instruction_counts.WORKLOADS)
def test_each_window_reports_the_collections_of_each_generation(kind, capsys):
    workloads.run(kind, 2, 3)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line in lines:
        assert [int(n) >= 0 for n in line.split()] == [True, True, True]


def _chain(y: float) -> float:
    for _ in range(20):
        y = np.sin(y) * y + np.cos(y) * 0.5
    return y


def test_scalar_chain_gradient_matches_finite_differences():
    x, h = float(workloads.x.numpy()), 1e-6
    expected = (_chain(x + h) - _chain(x - h)) / (2 * h)
    np.testing.assert_allclose(float(workloads.scalar_chain()), expected, rtol=1e-6)


def test_the_function_train_step_returns_the_loss_and_takes_an_sgd_step():
    w, b, data = workloads.w.numpy().copy(), workloads.b.numpy(), workloads.data
    h = np.tanh(data @ w + b)
    gh = 2 * (h @ w) @ w.T / (h @ w).size * (1 - h ** 2)  # d mean((h w)^2) / d h, into tanh
    gw = h.T @ (2 * (h @ w) / (h @ w).size) + data.T @ gh
    loss = float(workloads.function_train_step())
    np.testing.assert_allclose(loss, np.mean((h @ w) ** 2), rtol=1e-12)
    np.testing.assert_allclose(workloads.w.numpy(), w - 0.01 * gw, rtol=1e-10, atol=1e-14)


def test_the_environment_of_a_count_is_the_same_whatever_the_caller_set(monkeypatch):
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    monkeypatch.setenv("PYTHONMALLOC", "debug")
    env = instruction_counts.environment("SRC")
    assert env["PYTHONPATH"] == "SRC" and env["PYTHONHASHSEED"] == "0"
    assert "PYTHONOPTIMIZE" not in env and "PYTHONMALLOC" not in env


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_a_count_does_not_charge_start_up_work_to_the_steps(tmp_path):
    """A tree whose start-up work differs between processes (here: a sitecustomize that
    works in proportion to the steps asked for, millions of instructions a step) counts the
    same per step as the plain tree: the windows hold only steps."""
    (tmp_path / "gradtape").symlink_to(SRC / "gradtape")
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "steps = next(int(a) for a in sys.argv[1:] if a.isdigit())\n"
        "sum(range(200_000 * steps))\n")
    plain = instruction_counts.count(str(SRC), "function_train_step", 4, 2)
    noisy = instruction_counts.count(str(tmp_path), "function_train_step", 4, 2)
    assert len(plain.windows) == 2 and plain.spread < 0.02
    assert abs(noisy.per_step - plain.per_step) / plain.per_step < 0.02
    assert 100_000 < plain.per_step < 4_000_000
