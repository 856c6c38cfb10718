"""The generated source of a few programs, pinned in tests/golden/, and deterministic.

To accept a deliberate change of the generated code, regenerate the files with
``GRADTAPE_UPDATE_GOLDEN=1 python -m pytest tests/codegen/test_golden.py`` and review
the diff.
"""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from golden_programs import FORWARD_PROGRAMS, PROGRAMS

import gradtape as gt
from gradtape.compiler.cache import backward_cache

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("GRADTAPE_UPDATE_GOLDEN") == "1"


def _source(name: str) -> str:
    if name in FORWARD_PROGRAMS:
        function, args = FORWARD_PROGRAMS[name]()
        return function.get_source(*args)
    tape, target, sources, *inspected = PROGRAMS[name]()
    # A program that takes its gradient where it holds its tensors shows their names.
    return inspected[0] if inspected else tape.inspect(target, sources).source


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the golden files are NumPy 2's output; NumPy 1's value-based casting turns some "
    "Python scalars beside 0-d tensors into inputs (determinism is still tested below)",
)
@pytest.mark.parametrize("name", list(PROGRAMS) + list(FORWARD_PROGRAMS))
def test_generated_source_matches_golden_file(name):
    source = _source(name)
    path = GOLDEN_DIR / f"{name}.txt"
    if UPDATE:
        path.write_text(source)
    assert path.exists(), f"missing {path}: run with GRADTAPE_UPDATE_GOLDEN=1 to create it"
    assert source == path.read_text()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_golden_program_compiled_equals_interpreted(name):
    results = []
    for compiled in (False, True):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            tape, target, sources, *_ = PROGRAMS[name]()
            before = gt.cache_info().compiled  # nested_tapes: its inner gradient's backward
            grads = tape.gradient(target, sources)
            assert gt.cache_info().compiled == before + int(compiled)
            results.append([g.numpy() for g in grads])
    for interpreted, generated in zip(*results):
        np.testing.assert_allclose(generated, interpreted, rtol=1e-6)


@pytest.mark.parametrize("name", list(FORWARD_PROGRAMS))
def test_golden_function_compiled_equals_interpreted(name):
    """Three calls after the same set_seed: the same results (random draws included)."""
    results = []
    for compiled in (False, True):
        with gt.config(compile=compiled):
            function, args = FORWARD_PROGRAMS[name]()
            gt.random.set_seed(0)
            results.append([function(*args).numpy() for _ in range(3)])
    gt.random.set_seed(None)
    for interpreted, generated in zip(*results):
        np.testing.assert_allclose(generated, interpreted, rtol=1e-6)
    assert len({float(r) for r in results[1]}) == 3  # every call its own draws (or step)


def test_the_running_function_is_the_inspected_source():
    gt.clear_cache()
    with gt.config(compile_after=1):
        tape, target, sources, _ = PROGRAMS["mlp"]()
        tape.gradient(target, sources)
    (entry,) = backward_cache.entries()
    assert entry.compiled.source == tape.inspect(target, sources).source


def _sources_in_subprocess(hash_seed: str) -> str:
    here = str(pathlib.Path(__file__).resolve().parent)
    # The package under test, also when PYTHONPATH is relative to another directory.
    package_root = str(pathlib.Path(gt.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path[:0] = [{here!r}, {package_root!r}]\n"
        "from golden_programs import FORWARD_PROGRAMS, PROGRAMS\n"
        "for name, make in PROGRAMS.items():\n"
        "    tape, target, sources, *inspected = make()\n"
        "    print(inspected[0] if inspected else tape.inspect(target, sources).source,\n"
        "          end='\\x00')\n"
        "for name, make in FORWARD_PROGRAMS.items():\n"
        "    function, args = make()\n"
        "    print(function.get_source(*args), end='\\x00')\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=here)
    return out.stdout


def test_generation_is_identical_across_processes_and_hash_seeds():
    names = list(PROGRAMS) + list(FORWARD_PROGRAMS)
    here = "\x00".join(_source(name) for name in names) + "\x00"
    assert _sources_in_subprocess("0") == here
    assert _sources_in_subprocess("4242") == here


def _without_places(text: str) -> list[str]:
    """Lines stripped of indentation, with ``(file.py:12)`` as ``(...)``: the docs'
    example lives in ``model.py``, the golden program in golden_programs.py."""
    return [re.sub(r"\([\w.]+:\d+\)", "(...)", line.strip())
            for line in text.strip().splitlines()]


@pytest.mark.parametrize("golden, first_line", [
    ("compiler_docs", "# Generated by gradtape: the backward function"),
    ("compiler_docs_fusion", "def backward(feeds):"),
])
def test_the_compiler_page_shows_the_golden_source(golden, first_line):
    """docs/compiler.md's listings of generated code are these golden files, so the page
    cannot go stale."""
    page = (GOLDEN_DIR.parent.parent / "docs" / "compiler.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.S)
              if b.strip().startswith(first_line)]
    assert len(blocks) == 1
    expected = (GOLDEN_DIR / f"{golden}.txt").read_text()
    if not expected.startswith(first_line):
        expected = expected[expected.index(first_line):]
    assert _without_places(blocks[0]) == _without_places(expected)
