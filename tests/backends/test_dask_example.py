"""``examples/dask_logistic_regression.py``: on small Dask data it trains to the same
weights as the same loop on NumPy arrays of the same data, and as a script it runs on a
two-worker LocalCluster."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import dask  # after the importorskip
from dask_testing import CountComputes  # after the importorskip

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dask_logistic_regression.py"


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(EXAMPLE))  # __name__ is not "__main__": nothing runs


def test_training_on_dask_equals_training_on_numpy(example, capsys):
    X, y, w_true = example["make_data"](4_000, 5, 4)
    assert X.numblocks == (4, 1)
    with dask.config.set(scheduler="threads"), CountComputes() as computes:
        on_dask = example["train"](X, y, steps=12, log_every=4)
    assert computes.count == 12  # one pass over the data a step, logged steps included
    with dask.config.set(scheduler="threads"):
        on_numpy = example["train"](*dask.compute(X, y), steps=12, log_every=4)
    np.testing.assert_allclose(on_dask["w"], on_numpy["w"], rtol=1e-12, atol=1e-12)
    assert on_dask["b"] == pytest.approx(on_numpy["b"], abs=1e-12)
    assert list(on_dask["losses"]) == [0, 4, 8, 11]
    np.testing.assert_allclose(list(on_dask["losses"].values()),
                               list(on_numpy["losses"].values()), rtol=1e-12)
    assert on_dask["losses"][11] < on_dask["losses"][0] == pytest.approx(np.log(2))
    assert "step    8  loss" in capsys.readouterr().out


@pytest.mark.slow  # starts two worker processes
def test_script_trains_on_a_local_cluster():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--rows", "40000", "--chunks", "4", "--steps", "30"],
        capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "40,000 × 20 float64" in out and "in 4 chunks on 2 workers" in out
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
    assert len(losses) == 4 and losses[-1] < 0.9 * losses[0]
    error = float(out.rsplit("=", 1)[1])
    assert error < 0.25  # the weights the data were drawn with, within sampling error
