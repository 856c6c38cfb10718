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
