"""tools/layout_check.py: the repository's layout rules hold, and the check sees what it
claims to (cycles, upward imports of the package root, oversized modules)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "layout_check.py")


def run_check(src: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, TOOL, src, *args], capture_output=True,
                          text=True, timeout=120)


def test_the_project_passes_the_layout_check():
    result = run_check(os.path.join(ROOT, "src"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cycles 0; upward imports of the package root: 0;" in result.stdout


def write_package(tmp_path, files: dict[str, str]) -> str:
    """A throwaway `gradtape` package under tmp_path/src, from {relative path: source}."""
    src = tmp_path / "src"
    for rel, text in files.items():
        path = src / "gradtape" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(src)


ROOT_INIT = """\
from .core import helper as _helper
VALUE = 1
"""


@pytest.mark.parametrize("statement", [
    "import gradtape",
    "import gradtape as gt",
    "from gradtape import VALUE",
    "from .. import VALUE",
    "def late():\n    from .. import VALUE\n",
])
def test_an_import_of_the_root_from_below_is_reported(tmp_path, statement):
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT,
        "core/__init__.py": "",
        "core/helper.py": statement + "\n",
    })
    result = run_check(src)
    assert result.returncode == 1
    assert "upward import: " in result.stdout
    assert "gradtape.core.helper imports the package root" in result.stdout
    assert "upward imports of the package root: 1;" in result.stdout


def test_importing_a_sibling_package_through_the_root_is_not_a_root_import(tmp_path):
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT,
        "core/__init__.py": "",
        "core/helper.py": "from gradtape import ir\nfrom ..ir import nodes\n",
        "ir/__init__.py": "",
        "ir/nodes.py": "",
    })
    result = run_check(src)
    assert "cycles 0; upward imports of the package root: 0;" in result.stdout


def test_the_program_above_the_root_may_import_it(tmp_path):
    # __main__ and cli/ are never imported by the root: importing it is importing downward.
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT,
        "__main__.py": "import gradtape\nfrom gradtape.cli import demo\n",
        "core/__init__.py": "",
        "core/helper.py": "",
        "cli/__init__.py": "",
        "cli/demo.py": "import gradtape as gt\n",
    })
    result = run_check(src)
    assert "cycles 0; upward imports of the package root: 0;" in result.stdout


def test_a_cycle_between_packages_and_an_oversized_module_are_reported(tmp_path):
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT,
        "core/__init__.py": "",
        "core/helper.py": "from ..ir import nodes\n",
        "ir/__init__.py": "",
        "ir/nodes.py": "from ..core import helper\n" + "x = 1\n" * 30,
    })
    result = run_check(src, "--max-lines", "20")
    assert result.returncode == 1
    assert "cycle: gradtape.core -> gradtape.ir" in result.stdout
    assert "modules over 20 lines: 1 gradtape/ir/nodes.py:31" in result.stdout


LAYERS = """\
# Architecture

| package | what it holds | imports |
|---|---|---|
| `core/` | foundations | nothing of gradtape's |
| `ir/` | programs | `core` |
| `tape/` | the tape | everything above |
"""


def layered_package(tmp_path, core_helper: str, extra: dict[str, str] | None = None):
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT,
        "core/__init__.py": "",
        "core/helper.py": core_helper,
        "ir/__init__.py": "",
        "ir/nodes.py": "from ..core import helper\n",
        "tape/__init__.py": "",
        "tape/record.py": "from ..ir import nodes\nfrom ..core import helper\n",
        **(extra or {}),
    })
    layers = tmp_path / "architecture.md"
    layers.write_text(LAYERS)
    return src, str(layers)


def test_imports_the_layer_table_allows_pass(tmp_path):
    src, layers = layered_package(tmp_path, "")
    result = run_check(src, "--layers", layers)
    assert "imports against the layer table: 0; flat modules: 0;" in result.stdout


def test_an_import_upward_past_the_layer_table_is_reported(tmp_path):
    # ir -> tape: tape is above ir in the table.
    src, layers = layered_package(tmp_path, "", {"ir/late.py": "from ..tape import record\n"})
    result = run_check(src, "--layers", layers)
    assert result.returncode == 1
    assert ("against the layer table: gradtape.ir imports gradtape.tape, which its row "
            "does not allow") in result.stdout


def test_an_import_the_row_does_not_name_is_reported_without_a_cycle(tmp_path):
    # ir's row allows core only; ir -> a package listed below it but not in its row.
    table = LAYERS.replace("| `ir/` | programs | `core` |",
                           "| `ops/` | ops | `core` |\n| `ir/` | programs | `core` |")
    src = write_package(tmp_path, {
        "__init__.py": ROOT_INIT, "core/__init__.py": "", "core/helper.py": "",
        "ops/__init__.py": "", "ops/add.py": "",
        "ir/__init__.py": "", "ir/nodes.py": "from ..ops import add\n",
        "tape/__init__.py": "",
    })
    (tmp_path / "layers.md").write_text(table)
    result = run_check(src, "--layers", str(tmp_path / "layers.md"))
    assert result.returncode == 1
    assert "cycles 0;" in result.stdout
    assert "gradtape.ir imports gradtape.ops, which its row does not allow" in result.stdout


def test_a_package_without_a_row_and_a_flat_module_are_reported(tmp_path):
    src, layers = layered_package(tmp_path, "", {
        "keras/__init__.py": "", "transforms.py": "from .core import helper\n",
        "testing.py": "from .core import helper\n",  # a public namespace shim: allowed
    })
    result = run_check(src, "--layers", layers)
    assert result.returncode == 1
    assert "gradtape.keras has no row in the layer table" in result.stdout
    assert "flat module: gradtape.transforms" in result.stdout
    assert "flat module: gradtape.testing" not in result.stdout
    assert "flat modules: 1;" in result.stdout
