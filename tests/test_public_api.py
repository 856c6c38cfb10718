"""The public namespaces show the API and nothing else, and docs/api.md documents every
name in them (and names nothing they lack)."""

import re
import types
from pathlib import Path

import pytest

import gradtape as gt

API_DOC = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()
# The first cell of a table row: `name`, `ns.name`, or several of them joined by commas.
DOCUMENTED = {name for cell in re.findall(r"^\| (`[^|]*`) \|", API_DOC, re.M)
              for name in re.findall(r"`([A-Za-z_][A-Za-z_0-9.]*)`", cell)}
NAMESPACES = ["nn", "linalg", "math", "random", "errors", "optimizers", "keras", "scipy",
              "experimental", "image"]


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_dir_of_gt_is_its_all():
    assert _public(gt) == set(gt.__all__)


def test_gt_shows_no_module_but_its_namespaces():
    modules = {n for n in _public(gt) if isinstance(getattr(gt, n), types.ModuleType)}
    assert modules == set(NAMESPACES)


def test_every_top_level_name_is_documented():
    assert sorted(set(gt.__all__) - DOCUMENTED) == []


@pytest.mark.parametrize("space", NAMESPACES + ["dtypes", "signal"])
def test_every_namespace_member_is_documented(space):
    members = _public(getattr(gt, space))
    prose = API_DOC  # gt.math lists the top-level functions it shares in a sentence
    missing = [m for m in sorted(members)
               if f"{space}.{m}" not in DOCUMENTED and m not in DOCUMENTED
               and f"`{m}`" not in prose]
    assert missing == []


@pytest.mark.parametrize("space", ["nn", "linalg", "random", "errors", "signal"])
def test_documented_namespace_members_exist(space):
    documented = {n.split(".", 1)[1] for n in DOCUMENTED if n.startswith(space + ".")}
    assert sorted(documented - _public(getattr(gt, space))) == []


def test_namespace_members_are_the_functions_users_call():
    assert gt.math.reduce_sum is gt.reduce_sum
    assert gt.nn.softmax(gt.constant([0.0, 0.0])).numpy().tolist() == [0.5, 0.5]
    assert gt.dtypes.float32 == gt.float32
