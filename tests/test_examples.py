"""The seed document's three examples, as scripts and as ``python -m gradtape``."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradtape import __main__ as cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(*args: str) -> str:
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def check_jacobian_output(text: str) -> None:
    """``Jacobian:`` then the (2, 3) float32 tensor [[2, 0, 0], [0, cos 2, 0]]."""
    match = re.search(r"Jacobian:\n Tensor\(\n\[\[(.*)\]\n \[(.*)\]\], shape=\(2, 3\), "
                      r"dtype=float32\)", text)
    assert match, text
    rows = [[float(v) for v in row.split()] for row in match.groups()]
    assert rows[0] == [2.0, 0.0, 0.0]
    assert rows[1][0] == 0.0 and rows[1][2] == 0.0
    # TF prints -0.41614684, the correctly rounded float32 cos(2). NumPy's float32 cos
    # may be one unit in the last place away (-0.4161468): allow exactly that much.
    assert abs(np.float32(rows[1][1]) - np.float32(np.cos(2.0))) <= np.spacing(np.float32(1.0))


FIRST = "First-order derivative (dy_dx): Tensor(75.0, shape=(), dtype=float32)"
SECOND = "Second-order derivative (d2y_dx2): Tensor(30.0, shape=(), dtype=float32)"
VARIABLE = "Tensor(6.0, shape=(), dtype=float32)"


def test_higher_order_script():
    assert run(str(EXAMPLES / "higher_order_derivatives.py")).splitlines() == [FIRST, SECOND]


def test_variable_gradient_script():
    assert run(str(EXAMPLES / "variable_gradient.py")).splitlines() == [VARIABLE]


def test_jacobian_script():
    out = run(str(EXAMPLES / "jacobian.py"))
    check_jacobian_output(out)
    assert len(out.splitlines()) == 4


def test_examples_are_tensorflow_code_with_the_import_changed():
    for name in ("higher_order_derivatives.py", "variable_gradient.py", "jacobian.py"):
        source = (EXAMPLES / name).read_text()
        assert "import gradtape as tf  # was: import tensorflow as tf" in source


def test_python_m_gradtape_runs_the_seed_examples():
    out = run("-m", "gradtape")
    lines = out.splitlines()
    assert FIRST in lines and SECOND in lines and VARIABLE in lines
    check_jacobian_output(out)
    # Each example is printed exactly as its script prints it.
    assert out.index(FIRST) < out.index(VARIABLE) < out.index("Jacobian:")
    # Then the generated backward code of a small model, with the demo's own line numbers,
    # and the side-by-side timing (checked against NumPy before it is timed).
    assert "def backward(" in out and "# h = gt.tanh(h @ w + b)   (demo.py:" in out
    assert out.index("Jacobian:") < out.index("def backward(") < out.index("hand-written")
    assert "gradtape, compiled" in out and "gradtape, interpreted" in out


def test_main_prints_the_same_as_the_scripts(capsys):
    assert cli.main([]) == 0
    printed = capsys.readouterr().out
    for name in ("higher_order_derivatives.py", "variable_gradient.py"):
        assert run(str(EXAMPLES / name)) in printed


def test_help_and_unknown_commands(capsys):
    assert cli.main(["--help"]) == 0
    assert "inspect SCRIPT.py" in capsys.readouterr().out
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_inspect_is_dispatched_to_cli_inspect(monkeypatch):
    import gradtape.cli.inspect

    seen = []
    monkeypatch.setattr(gradtape.cli.inspect, "main", lambda argv: seen.append(argv) or 7)
    assert cli.main(["inspect", "script.py", "--flag"]) == 7
    assert seen == [["script.py", "--flag"]]


def test_inspect_without_the_module_says_so(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gradtape.cli.inspect", None)  # import fails
    assert cli.main(["inspect", "script.py"]) == 2
    assert "inspect command is not available" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["higher_order_derivatives.py", "variable_gradient.py",
                                  "jacobian.py"])
def test_inspect_shows_the_generated_backward_of_an_example(name):
    out = run("-m", "gradtape", "inspect", str(EXAMPLES / name))
    assert "def backward(" in out
    assert f"({name}:" in out  # block comments name the user's file and line


# --- the docs stay true -------------------------------------------------------------------

DOCS = EXAMPLES.parent / "docs"


def test_getting_started_snippets_run(capsys):
    text = (DOCS / "getting-started.md").read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(block.replace("import gradtape as tf", "import gradtape as gt"), namespace)
    printed = capsys.readouterr().out
    assert printed.count("Tensor(6.0, shape=(), dtype=float32)") == 2
    assert namespace["dy_dx"].numpy() == 75.0 and namespace["d2y_dx2"].numpy() == 30.0
