"""The dump directory: never writes through a planted link; an unwritable one warns once
and never costs a gradient."""

import os
import warnings

import numpy as np
import pytest

import gradtape as gt
from gradtape.codegen import load


def _gradient(x0: np.ndarray) -> np.ndarray:
    x = gt.Variable(x0)
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.sin(x) * x)
    return tape.gradient(loss, x).numpy()


def _expected(x0: np.ndarray) -> np.ndarray:
    return np.cos(x0) * x0 + np.sin(x0)


@pytest.fixture
def fresh():
    gt.clear_cache()
    load._warned_directories.clear()
    yield
    gt.clear_cache()
    load._warned_directories.clear()


def _dumped_name(tmp_path, x0) -> str:
    """The file name a dump of this structure gets (dumped once into a scratch dir)."""
    scratch = tmp_path / "scratch"
    with gt.config(dump_dir=str(scratch)):
        _gradient(x0)
    (path,) = scratch.glob("backward_*.py")
    gt.clear_cache()
    return path.name


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_planted_symlink_is_replaced_and_its_target_untouched(tmp_path, fresh):
    x0 = np.linspace(-2.0, 2.0, 5)
    name = _dumped_name(tmp_path, x0)
    dump_dir = tmp_path / "dump"
    dump_dir.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (dump_dir / name).symlink_to(target)  # planted at the final name
    dangling = tmp_path / "created-through-link"
    with gt.config(dump_dir=str(dump_dir)):
        np.testing.assert_allclose(_gradient(x0), _expected(x0), rtol=1e-12)
    assert target.read_text() == "keep me"
    assert not dangling.exists()
    written = dump_dir / name
    assert not written.is_symlink() and "def backward(" in written.read_text()
    assert sorted(p.name for p in dump_dir.iterdir()) == [name]  # no temp file left


def test_a_planted_dangling_symlink_creates_nothing_at_its_target(tmp_path, fresh):
    x0 = np.linspace(-2.0, 2.0, 4)
    name = _dumped_name(tmp_path, x0)
    dump_dir = tmp_path / "dump"
    dump_dir.mkdir()
    target = tmp_path / "created-through-link"
    (dump_dir / name).symlink_to(target)
    with gt.config(dump_dir=str(dump_dir)):
        _gradient(x0)
    assert not target.exists()
    assert not (dump_dir / name).is_symlink()


@pytest.mark.parametrize("kind", ["is a file", "under a file"])
def test_an_unwritable_dump_dir_warns_once_and_the_gradient_is_right(tmp_path, fresh, kind):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    dump_dir = blocker if kind == "is a file" else blocker / "dumps"
    x0 = np.linspace(-1.0, 1.0, 3)
    with gt.config(dump_dir=str(dump_dir)), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(_gradient(x0), _expected(x0), rtol=1e-12)
        x1 = np.linspace(-1.0, 1.0, 6)  # a second structure: no second warning
        np.testing.assert_allclose(_gradient(x1), _expected(x1), rtol=1e-12)
    messages = [str(w.message) for w in caught if "dump directory" in str(w.message)]
    assert len(messages) == 1, messages
    assert repr(str(dump_dir)) in messages[0] and "writable directory" in messages[0]
    assert issubclass(caught[0].category, RuntimeWarning)


def test_an_unwritable_dump_dir_does_not_break_a_traced_function(tmp_path, fresh):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    x0 = np.linspace(-1.0, 1.0, 3)

    @gt.function
    def loss(x):
        return gt.reduce_sum(gt.sin(x) * x)

    with gt.config(dump_dir=str(blocker)), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = gt.Variable(x0)
        with gt.GradientTape() as tape:
            value = loss(x)
        np.testing.assert_allclose(tape.gradient(value, x).numpy(), _expected(x0),
                                   rtol=1e-12)
    assert sum("dump directory" in str(w.message) for w in caught) == 1
