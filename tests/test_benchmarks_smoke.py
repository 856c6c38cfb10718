"""The benchmark workloads compute correct gradients with gradtape (no timing here).

benchmarks/gradient.py times gradtape against hand-written NumPy gradients; these tests
import its workloads and check gradtape's gradients equal the hand-written ones, on the
first (uncompiled) call and on later (compiled) calls.
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
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up here
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


gradient = _load("gradient")
harness = sys.modules["_harness"]


@pytest.mark.parametrize("build", gradient.WORKLOADS, ids=lambda b: b.__name__)
def test_gradtape_matches_hand_written(build):
    w = build()
    for name in (harness.HAND, harness.GRADTAPE):
        try:
            step = w.makers[name]()
            results = [step() for _ in range(3)]  # interpreted, then compiled
        except harness.Skip as why:
            pytest.skip(str(why))
        for i, got in enumerate(results):
            harness.assert_close(got, w.expected, f"{w.title} / {name} call {i}",
                                 w.rtol, w.atol)


def test_hand_written_scalar_chain_matches_finite_differences():
    x, h = 0.7, 1e-6
    ops = SimpleNamespace(sin=math.sin, cos=math.cos)
    f = gradient.chain_loss
    numeric = (f(ops, [x + h], ()) - f(ops, [x - h], ())) / (2 * h)
    assert gradient.chain_hand_math(x)[0] == pytest.approx(numeric, rel=1e-5)
    assert float(gradient.chain_hand(np.float64(x))[0]) == pytest.approx(numeric, rel=1e-5)


def test_main_runs_quick_without_peers(capsys):
    results = gradient.main(["--quick", "--no-peers", "--only", "chain"])
    assert [r.title for r in results] == [gradient.chain_workload().title]
    assert set(results[0].times) >= {harness.HAND, harness.GRADTAPE}
    assert "| gradtape |" in capsys.readouterr().out
