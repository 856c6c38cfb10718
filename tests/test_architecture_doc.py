"""docs/architecture.md names files, modules, functions and classes; each must exist, so
the map cannot drift from the code. Every package's docstring states its row of the
page's layer table (what it may import)."""

import ast
import importlib
import pathlib
import re
import sys

import numpy as np
import pytest

import gradtape as gt

REPO = pathlib.Path(__file__).resolve().parent.parent
SRC = pathlib.Path(gt.__file__).resolve().parent
PAGE = (REPO / "docs" / "architecture.md").read_text()
PACKAGES = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())
TOP_LEVEL = (".ci", "docs", "tests", "tools")  # paths from the repository's root

sys.path.insert(0, str(REPO / "tools"))
import layout_check  # noqa: E402


def _referenced() -> list[str]:
    """The page's backticked names, and the dotted module names of its data path."""
    data_path = re.search(r"## The data path\n\n```text\n(.*?)```", PAGE, re.S).group(1)
    names = set(re.findall(r"`([^`\s]+)`", PAGE))
    packages = "|".join(PACKAGES)
    names |= set(re.findall(rf"\b(?:{packages})\.[\w.]+", data_path))
    return sorted(names)


def _table_rows() -> dict[str, str]:
    """package -> its row's text, from the layer table."""
    start = PAGE.index(layout_check.LAYER_TABLE_HEADER)
    rows = {}
    for line in PAGE[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows[line.split("|")[1].strip().strip("`/")] = line
    return rows


def _module_of(name: str):
    """The gradtape module a short or dotted name means (``lookup``, ``ir.lower``), or
    None."""
    dotted = name.replace("/", ".")
    candidates = [f"gradtape.{dotted}"]
    candidates += [f"gradtape.{p}.{dotted}" for p in PACKAGES]
    for candidate in candidates:
        if (SRC.parent / (candidate.replace(".", "/") + ".py")).exists() or \
                (SRC.parent / candidate.replace(".", "/") / "__init__.py").exists():
            return importlib.import_module(candidate)
    return None


def _classes_named(name: str) -> list[type]:
    found = []
    for path in SRC.rglob("*.py"):
        if re.search(rf"^class {name}\b", path.read_text(), re.M):
            module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
            found.append(getattr(importlib.import_module(module.removesuffix(".__init__")),
                                 name))
    return found


def _has(owner, attr: str) -> bool:
    if hasattr(owner, attr):
        return True
    fields = getattr(owner, "__annotations__", {}) or {}
    return attr in fields or attr in getattr(owner, "__slots__", ())


def _resolves(dotted: str) -> bool:
    """``ir/lower.Feed``, ``ops.registry.bind``, ``lookup.find``, ``Trace.origins``,
    ``tape._last`` (``tape`` is a ``GradientTape``, as in users' code)."""
    parts = dotted.replace("/", ".").split(".")
    if parts[0] == "np":  # a NumPy function the page says gradtape wraps
        owner = np
        for attr in parts[1:]:
            if not hasattr(owner, attr):
                return False
            owner = getattr(owner, attr)
        return True
    for cut in range(len(parts), 0, -1):
        module = _module_of(".".join(parts[:cut]))
        if module is not None:
            owner = module
            for attr in parts[cut:]:
                if not _has(owner, attr):
                    break
                owner = getattr(owner, attr, None)
            else:
                return True
    if len(parts) != 2:
        return False
    if parts[0] == "tape" and _has(gt.GradientTape(), parts[1]):
        return True
    if parts[0] in PACKAGES:  # core.Tensor: a class of the package, by its short name
        return any(cls.__module__.startswith(f"gradtape.{parts[0]}.")
                   for cls in _classes_named(parts[1]))
    return any(_has(cls, parts[1]) for cls in _classes_named(parts[0]))


def _file_exists(name: str, row_package: str | None) -> bool:
    if name.startswith(TOP_LEVEL):
        return (REPO / name).exists()
    if "/" in name and (SRC / name).exists():
        return True
    if row_package is not None and (SRC / row_package / name).exists():
        return True
    return row_package is None and (any(SRC.rglob(name)) or (SRC / name).exists())


def _row_of(name: str) -> str | None:
    for package, row in _table_rows().items():
        if f"`{name}`" in row:
            return package
    return None


PATHS = [n for n in _referenced() if re.fullmatch(r"[\w./]+", n)
         and (n.endswith((".py", "/")) or n.startswith(TOP_LEVEL))]
DOTTED = [n for n in _referenced() if re.fullmatch(r"[\w/]+\.\w+(\.\w+)*", n)
          and n not in PATHS and not n.endswith(".py") and not n.startswith(("gt.", "tf."))]
# Private helpers and the types the page names by themselves.
NAMED = [n for n in _referenced() if re.fullmatch(r"_\w+|install_\w+|[A-Z][a-z]+[A-Z]\w*", n)
         and not hasattr(gt, n) and not n.startswith("__")]


@pytest.mark.parametrize("name", PATHS)
def test_every_file_the_page_names_exists(name):
    assert _file_exists(name, _row_of(name)), f"docs/architecture.md names {name}"


@pytest.mark.parametrize("name", DOTTED)
def test_every_module_function_and_attribute_the_page_names_exists(name):
    assert _resolves(name), f"docs/architecture.md names {name}"


@pytest.mark.parametrize("name", NAMED)
def test_every_private_helper_and_type_the_page_names_is_defined(name):
    pattern = re.compile(rf"^\s*(def|class) {name}\b|^{name}\b.*=", re.M)
    assert any(pattern.search(p.read_text()) for p in SRC.rglob("*.py")), \
        f"docs/architecture.md names {name}"


def test_the_page_names_enough_to_be_checked():
    assert len(PATHS) > 60 and len(DOTTED) > 25 and len(NAMED) > 8


def _stated_imports(package: str) -> set[str] | str:
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
    said = re.search(r"Imports:?\s+(.*?)(?:\.\s|\.$|\n\n|$)", doc, re.S)
    assert said, f"{package}/__init__.py's docstring does not say what it imports"
    text = said.group(1)
    if text.startswith("everything,"):
        return "everything"
    return {w for w in re.findall(r"[a-z_]+", text) if w in PACKAGES}


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_docstring_states_its_row(package):
    rows = layout_check.layer_rows(str(REPO / "docs" / "architecture.md"))
    allowed = {n.split(".")[1] for n in rows[f"gradtape.{package}"] if n != "gradtape"}
    stated = _stated_imports(package)
    if stated == "everything":
        assert allowed == set(PACKAGES) - {package}
    else:
        assert stated == allowed
