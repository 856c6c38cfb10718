"""The @gt.function examples run as scripts and show what they claim."""

import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_script(*args: str) -> str:
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name))  # __name__ is not "__main__": no run


def test_mlp_classifier_script_prints_each_epoch_and_learns():
    out = run_script(str(EXAMPLES / "mlp_classifier.py"))
    epochs = re.findall(r"epoch\s+(\d+)\s+loss ([\d.]+)\s+accuracy ([\d.]+)", out)
    assert [int(e) for e, _, _ in epochs] == list(range(1, 21))
    losses = [float(loss) for _, loss, _ in epochs]
    assert losses[-1] < losses[0] / 3
    final = re.search(r"full data: loss ([\d.]+)\s+accuracy ([\d.]+)\s+\(1 trace of "
                      r"train_step, 240 steps\)", out)
    assert final, out
    assert float(final.group(2)) > 0.9


def test_mlp_classifier_traces_its_step_once_and_matches_an_eager_step():
    example = load("mlp_classifier.py")
    result = example["train"](epochs=2, verbose=False)
    assert result["traces"] == 1 and result["steps"] == 24
    assert result["history"][1][0] < result["history"][0][0]

    # One step of the example's model under @gt.function equals the eager step.
    import gradtape as gt

    x, y = example["make_spirals"](per_class=16)
    x, y = gt.constant(x), gt.constant(y)
    states = []
    for decorate in (False, True):
        variables = example["make_model"]()
        optimizer = gt.optimizers.Adam(0.02)

        def step(x, y, variables=variables, optimizer=optimizer):
            with gt.GradientTape() as tape:
                logits = example["predict"](variables, x)
                loss, _ = example["loss_and_accuracy"](logits, y)
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        step = gt.function(step) if decorate else step
        losses = [float(step(x, y)) for _ in range(3)]
        states.append((losses, [v.numpy() for v in variables]))
    assert states[0][0] == states[1][0]
    for a, b in zip(states[0][1], states[1][1]):
        np.testing.assert_array_equal(a, b)


def test_inspect_model_prints_backward_and_forward_code():
    out = run_script(str(EXAMPLES / "inspect_model.py"))
    assert out.count("def backward(") == 2
    assert out.count("def forward(") == 2
    assert "{ lambda x_1:float64[8,3]" in out
    assert "(inspect_model.py:32)" in out  # comments point at the model's lines
    before, after = (float(v) for v in re.search(
        r"loss before the first step ([\d.]+), before the second ([\d.]+)", out).groups())
    assert after < before


def test_inspect_model_sources_compile_and_the_step_holds_its_gradient():
    result = load("inspect_model.py")["main"]()
    for key in ("tape", "forward", "backward", "train_step"):
        compile(result[key], key, "exec")  # the printed sources are valid Python
    step = result["train_step"]
    assert "tanh" in step and "square(" in step  # forward and the tanh derivative
    assert "SGD_learning_rate" in step and "SGD_iteration" in step


def test_gradtape_inspect_command_shows_traced_functions():
    out = run_script("-m", "gradtape", "inspect", str(EXAMPLES / "inspect_model.py"))
    assert "@gt.function trace(s) by" in out
    assert "@gt.function train_step ----" in out
    assert "# forward IR" in out and "# backward IR" in out
