"""Every code block of docs/ and the README runs, and printed output shown in an
``output`` block is what the code prints (convention: tests/docs_blocks.py)."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from docs_blocks import output_matches, parse_blocks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "tests", "docs_blocks.py")
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [os.path.join(ROOT, "README.md")]


def page_id(path: str) -> str:
    return os.path.relpath(path, ROOT)


# A page that needs an optional extra says so: <!-- requires: dask, scipy -->
REQUIRES = re.compile(r"<!--\s*requires:\s*(?P<modules>[\w., ]+?)\s*-->")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_block_of_the_page_runs(page, tmp_path):
    with open(page, encoding="utf-8") as file:
        for found in REQUIRES.finditer(file.read()):
            for module in found["modules"].split(","):
                pytest.importorskip(module.strip(), reason=f"{page_id(page)} needs it")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH", "")]),
        GRADTAPE_REPO=ROOT)
    result = subprocess.run([sys.executable, RUNNER, page], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=240)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    failure = report["failure"]
    assert failure is None, f"{page_id(page)}:{failure['line']}: " + "\n".join(
        f"{key}:\n{value}" for key, value in failure.items() if key != "line")


def test_the_pages_have_blocks_that_run():
    # A page set whose blocks were all marked not to run would pass without running code.
    runnable = sum(1 for page in PAGES for block in parse_blocks(open(page).read())
                   if block.language == "python" and block.not_run is None)
    assert runnable >= 30


def test_the_parser_reads_languages_markers_and_indented_fences():
    text = ("intro\n"
            "```python\nx = 1\n```\n"
            "```output\n1\n```\n"
            "<!-- not run: needs TensorFlow -->\n"
            "```python\nimport tensorflow\n```\n"
            "1. a list item\n\n"
            "    ```sh\n    pip install .\n    ```\n"
            "```\nplain\n```\n")
    blocks = parse_blocks(text)
    assert [(b.line, b.language, b.not_run) for b in blocks] == [
        (2, "python", None), (5, "output", None), (9, "python", "needs TensorFlow"),
        (14, "sh", None), (17, "", None)]
    assert blocks[3].code == "pip install .\n"


def test_output_comparison_ignores_trailing_spaces_and_expands_ellipses():
    assert output_matches("a = 1   \nb = 2\n", "a = 1\nb = 2")
    assert output_matches("took 0.123 s\n", "took ... s")
    assert not output_matches("hits 44\n", "hits 66")
    assert not output_matches("a\nb\n", "a")
