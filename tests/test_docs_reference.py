"""The generated API reference (docs/reference/, mkdocstrings): every `::: name` it
renders names a public object with a docstring, and every page is in the nav."""

import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)


def _directives() -> list[str]:
    return [name for page in sorted(REFERENCE.glob("*.md"))
            for name in DIRECTIVE.findall(page.read_text())]


def _resolve(dotted: str):
    module_name, _, attr = dotted.rpartition(".")
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError:
        return getattr(importlib.import_module(module_name), attr)


def test_reference_renders_the_main_names():
    names = set(_directives())
    for expected in ("gradtape.GradientTape", "gradtape.function", "gradtape.keras.Model",
                     "gradtape.keras.layers", "gradtape.optimizers", "gradtape.errors"):
        assert expected in names


@pytest.mark.parametrize("dotted", _directives())
def test_each_directive_names_a_documented_public_object(dotted):
    assert not any(part.startswith("_") for part in dotted.split("."))
    obj = _resolve(dotted)
    assert (obj.__doc__ or "").strip(), f"{dotted} has no docstring to render"


def test_every_reference_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in REFERENCE.glob("*.md"):
        assert f"reference/{page.name}" in nav
