"""Runs the code blocks of a Markdown page, like a notebook: ``python tests/docs_blocks.py PAGE``.

The convention (docs/index.md's pages and the README follow it; the test of every page
is tests/test_docs_blocks.py):

- a ```` ```python ```` block runs; the blocks of one page run in order in one namespace,
  in a fresh interpreter whose working directory is a new empty folder;
- an ```` ```output ```` block right after a python block is what that block prints:
  the printed text must match it, line by line with trailing spaces ignored, and ``...``
  stands for any text (as doctest's ELLIPSIS);
- a block whose title starts with "output" (```` ```python title="output: ..." ````, for
  printed source that should be highlighted) is an output block too;
- a python block whose first line is a comment naming a file (``# model.py``) is
  compiled under that name, so tracebacks and gradtape's ``(file:line)`` comments name
  it as the page does;
- an ``output`` block right after a ``sh`` block whose one command is
  ``python SCRIPT.py [ARGS]`` is what the script prints, run from the repository root;
- a python block that is not meant to run (a fragment, a signature, code that needs
  TensorFlow or a cluster) has an HTML comment ``<!-- not run: REASON -->`` on the line
  before it; the reason is required;
- a page whose blocks need an optional extra says so once, anywhere on the page:
  ``<!-- requires: dask -->`` (the page is skipped where that module is missing);
- ``<!-- output of NumPy 2 -->`` on the line before an output block of generated code:
  its text is compared under NumPy 2 only (NumPy 1.26's promotion rules give other
  constants, as for the golden files);
- every other block names what it is, and is shown only: ``text`` (diagrams, printed IR,
  generated code shown as text), ``sh`` or ``bash`` (commands), ``dot``, ``toml``...
  A fence with no language is refused, so a block is never left out by accident.

Prints one JSON line: the blocks run, and the first failure (its line and what went
wrong), or null.
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import re
import shlex
import subprocess
import sys
import traceback
from dataclasses import dataclass

import numpy as np

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>.*?)\s*-->")
RUN_LANGUAGES = frozenset({"python", "py"})
OUTPUT_TITLE = re.compile(r'title="output')
# Before an output block of generated code: NumPy 1.26's value-based promotion records a
# mean's 1/n as an input where NumPy 2 keeps a literal, so that text is NumPy 2's (as the
# golden files are); under NumPy 1.26 the code still runs, its printed text is not compared.
NUMPY2_OUTPUT = re.compile(r"<!--\s*output of NumPy 2\s*-->")
NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
FILE_COMMENT = re.compile(r"#\s*(?P<file>[\w.-]+\.py)\s*$")
SHELL_LANGUAGES = frozenset({"sh", "bash"})
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    not_run: str | None  # the reason given, when the block is marked not to run
    is_output: bool = False  # shows what the block before it printed
    numpy2_only: bool = False  # its text is compared under NumPy 2 only


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a page, with their language and the not-run marker."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        language = opening["info"].strip().split(" ")[0].lstrip(".").lower()
        body = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        previous = lines[i - 1] if i > 0 else ""
        marker = NOT_RUN.search(previous)
        is_output = language == "output" or OUTPUT_TITLE.search(opening["info"]) is not None
        blocks.append(Block(i + 1, language, "\n".join(body) + "\n",
                            None if marker is None else marker["reason"], is_output,
                            NUMPY2_OUTPUT.search(previous) is not None))
        i = j + 1
    return blocks


def output_matches(printed: str, expected: str) -> bool:
    """``printed`` equals ``expected`` with trailing spaces ignored; ``...`` is a wildcard."""
    def norm(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(part) for part in norm(expected).split("..."))
    return re.fullmatch(pattern, norm(printed), re.DOTALL) is not None


def check_page(path: str) -> dict:
    """Runs the page's blocks; returns {"ran": n, "failure": None or {...}}."""
    with open(path, encoding="utf-8") as f:
        blocks = parse_blocks(f.read())
    namespace: dict = {"__name__": "__main__"}
    ran = 0
    printed: str | None = None  # what the last python block printed
    for block in blocks:
        failure = _check_block(block, namespace, printed)
        if failure is not None:
            return {"ran": ran, "failure": {"line": block.line, **failure}}
        if block.is_output:
            continue
        if block.language in RUN_LANGUAGES and block.not_run is None:
            printed, error = _run(block, namespace, path)
            ran += 1
            if error is not None:
                return {"ran": ran, "failure": {"line": block.line, "error": error}}
        elif block.language in SHELL_LANGUAGES:
            printed = _run_script(block)
        else:
            printed = None
    return {"ran": ran, "failure": None}


def _check_block(block: Block, namespace: dict, printed: str | None) -> dict | None:
    if not block.language:
        return {"error": "a fence with no language: name it (python, output, text, sh...)"}
    if block.not_run is not None and not block.not_run:
        return {"error": "<!-- not run: --> needs a reason"}
    if block.is_output:
        if printed is None:
            return {"error": "an output block that follows no python block that ran"}
        if (NUMPY2 or not block.numpy2_only) and not output_matches(printed, block.code):
            return {"error": "printed output differs", "expected": block.code,
                    "printed": printed}
    return None


def _run(block: Block, namespace: dict, path: str) -> tuple[str, str | None]:
    buffer = io.StringIO()
    named = FILE_COMMENT.match(block.code.split("\n", 1)[0])
    filename = named["file"] if named else f"{path}:{block.line}"
    code = compile(block.code, filename, "exec")
    # Register the block's text as that file's source, as an imported module's would be:
    # tracebacks and the generated code's comments quote the statements.
    linecache.cache[filename] = (len(block.code), None, block.code.splitlines(True), filename)
    try:
        with contextlib.redirect_stdout(buffer):
            exec(code, namespace)
    except BaseException:  # a failing block is the page's failure, whatever it raised
        return buffer.getvalue(), traceback.format_exc(limit=-3)
    return buffer.getvalue(), None


def _run_script(block: Block) -> str | None:
    """What ``python SCRIPT.py ARGS`` prints, when that is the block's one command."""
    lines = [line for line in block.code.splitlines() if line.strip()]
    if len(lines) != 1:
        return None
    words = shlex.split(lines[0].removeprefix("$ "))
    if len(words) < 2 or words[0] not in ("python", "python3") or not words[1].endswith(".py"):
        return None
    result = subprocess.run([sys.executable, *words[1:]], capture_output=True, text=True,
                            cwd=REPO, timeout=120)
    return result.stdout + (f"(exit {result.returncode})\n{result.stderr}"
                            if result.returncode else "")


if __name__ == "__main__":
    page = os.path.abspath(sys.argv[1])
    print(json.dumps(check_page(page)))
