"""``examples/gru_sequence.py``: the script runs, and the GRU learns the masked sums
(far below guessing the mean, and the padding really skipped)."""

import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gru_sequence.py"


def test_gru_sequence_script_learns_the_sums():
    result = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    losses = [float(v) for v in re.findall(r"epoch\s+\d+\s+loss ([\d.]+)", result.stdout)]
    assert len(losses) == 12 and losses[-1] < losses[0] / 20
    test_loss, baseline = map(float, re.search(
        r"test loss ([\d.]+)\s+\(guessing the mean: ([\d.]+)\)", result.stdout).groups())
    assert test_loss < baseline / 50


def test_the_trained_gru_ignores_the_padding():
    example = runpy.run_path(str(EXAMPLE))  # __name__ is not "__main__": no run
    model = example["train"](epochs=6)["model"]
    x, y = example["make_sequences"](64, seed=5)
    short = x.copy()
    short[:, 3:] = 0.0  # only three real steps
    predicted = model.predict(short, verbose=0)[:, 0]
    np.testing.assert_allclose(predicted, short[:, :, 0].sum(axis=1), atol=0.35)
    # a masked step changes nothing: the same prediction with trailing zeros dropped
    np.testing.assert_allclose(model.predict(short[:, :3], verbose=0)[:, 0], predicted,
                               atol=1e-5)
