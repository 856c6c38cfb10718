"""User text in generated source: file names, op, function, variable and argument names.

Every such text reaches the source through ``naming.comment_text`` (comments) or
``naming.identifier`` (names): no line break of any kind, no control character, nothing
Python would run. A payload in a file name used to run on every backward.
"""

import ast
import importlib.util
import linecache

import numpy as np
import pytest

import gradtape as gt
from gradtape.codegen import naming
from gradtape.compiler.cache import backward_cache
from gradtape.ops.registry import Primitive, bind

# Everything Python's tokenizer or str.splitlines treats as a line break, and other
# characters a comment must not carry as they are (NUL, escape, delete, a bidi override).
LINE_BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
               "\u2029"]
OTHER_CONTROLS = ["\x00", "\x1b", "\x7f", "\u202e", "\t"]
PAYLOAD = "    __import__('os').system('touch PWNED')"


def _payload_name(sep: str, suffix: str = ".py") -> str:
    return f"model{sep}{PAYLOAD}{sep}    #{suffix}"


def _assert_safe(source: str) -> None:
    """One physical line per logical line, every character printable, the payload only
    inside comments, and nothing in the tree but the generated function."""
    lines = source.split("\n")
    assert source.splitlines() == lines[:-1] and lines[-1] == ""
    for line in lines:
        assert line.isprintable(), repr(line)
        if "__import__(" in line:  # the payload's call (a name may spell its letters)
            assert line.lstrip().startswith("#"), line
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "__import__"
        assert not isinstance(node, ast.Attribute) or node.attr != "system"


def _loss_module(path, source_name: str) -> dict:
    code = "def loss(x):\n    y = gt.tanh(x) * x\n    return gt.reduce_sum(y * y)\n"
    namespace = {"gt": gt}
    exec(compile(code, source_name, "exec"), namespace)
    return namespace


def _expected_gradient(x: np.ndarray) -> np.ndarray:
    t = np.tanh(x)
    y = t * x
    return 2 * y * ((1 - t * t) * x + t)


def _gradient(loss, x0: np.ndarray):
    x = gt.Variable(x0)
    with gt.GradientTape() as tape:
        loss_value = loss(x)
    return tape.gradient(loss_value, x).numpy(), tape, loss_value, x


@pytest.mark.parametrize("sep", LINE_BREAKS + OTHER_CONTROLS[1:],
                         ids=lambda s: repr(s).strip("'"))
def test_a_file_name_never_becomes_code(tmp_path, monkeypatch, sep):
    monkeypatch.chdir(tmp_path)
    name = _payload_name(sep)
    path = tmp_path / name
    path.write_text("# the model\n")  # a real file of that name
    namespace = _loss_module(path, str(path))
    x0 = np.linspace(-1.0, 1.0, 5)
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1, dump_dir=str(tmp_path / "dump")):
        for _ in range(3):  # compiled on the first call, cached after
            got, tape, loss_value, x = _gradient(namespace["loss"], x0)
            np.testing.assert_allclose(got, _expected_gradient(x0), rtol=1e-12)
    with gt.GradientTape(persistent=True) as tape:
        loss_value = namespace["loss"](x)
    source = tape.inspect(loss_value, x).source
    _assert_safe(source)
    escaped = name.replace(sep, repr(sep)[1:-1])
    assert f"({escaped}:2)" in source  # the file name shown, its line breaks escaped
    (dumped,) = (tmp_path / "dump").glob("backward_*.py")
    assert dumped.read_text() == source
    spec = importlib.util.spec_from_file_location("dumped", dumped)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # imports, runs nothing
    with gt.config(compile=False):
        interpreted = tape.gradient(loss_value, x).numpy()
    np.testing.assert_allclose(interpreted, _expected_gradient(x0), rtol=1e-12)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("char", LINE_BREAKS + OTHER_CONTROLS, ids=lambda s: repr(s))
def test_comment_text_keeps_one_printable_line(char):
    text = naming.comment_text(f"a{char}b")
    assert text.isprintable() and len(text.splitlines()) == 1
    assert text == "a" + repr(char)[1:-1] + "b"
    assert naming.comment_text("plain (model.py:3)") == "plain (model.py:3)"


@pytest.mark.parametrize("text", ["a\rb", "x\x85y", "class", "1st", "\u2028", "\x00",
                                  "\ufb01le", "x\u00b2", "\u03b1_\u03b2", "__a__", "a b"])
def test_identifier_is_a_name_python_reads_back(text):
    name = naming.identifier(text)
    assert name.isidentifier() and naming.plain_identifier(name)
    assert ast.parse(f"{name} = 1").body[0].targets[0].id == name


_weird_op_p = Primitive(f"weird{PAYLOAD}\r\x00\u2028op", np.negative,
                        vjp=lambda g, y, x: (bind(_weird_op_p, g),), elementwise=True)


def test_op_function_and_variable_names_never_become_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile = f"w\r{PAYLOAD}\r#\x85\u2028"

    @gt.function(name=f"step\r{PAYLOAD}\r#")
    def step(x, **kwargs):
        w = kwargs[hostile]
        return gt.reduce_sum(bind(_weird_op_p, x * w) * x)

    x0 = np.linspace(0.5, 2.0, 4)
    w = gt.Variable(np.full(4, 3.0), name=hostile)
    results = {}
    for compiled in (True, False):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            x = gt.Variable(x0)
            with gt.GradientTape() as tape:
                loss = step(x, **{hostile: w})
            results[compiled] = [g.numpy() for g in tape.gradient(loss, [x, w])]
    # d/dx sum(-(x*w)*x) = -2 w x;  d/dw = -x^2
    for got in results.values():
        np.testing.assert_allclose(got[0], -2 * 3.0 * x0, rtol=1e-12)
        np.testing.assert_allclose(got[1], -x0 * x0, rtol=1e-12)
    concrete = step.get_concrete_function(gt.constant(x0), **{hostile: w})
    for source in (concrete.source, concrete.backward_source):
        _assert_safe(source)
    with gt.GradientTape() as tape:
        tape.watch(w)
        loss = gt.reduce_sum(bind(_weird_op_p, w) * w)
    _assert_safe(tape.inspect(loss, w).source)
    assert not (tmp_path / "PWNED").exists()


def test_generated_source_in_linecache_has_the_lines_python_runs(tmp_path):
    path = tmp_path / _payload_name("\x85")
    path.write_text("")
    namespace = _loss_module(path, str(path))
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1):
        _, tape, loss_value, x = _gradient(namespace["loss"], np.ones(3))
    (entry,) = [e for e in backward_cache.entries() if e.compiled is not None]
    cached = linecache.getlines(entry.compiled.filename)
    assert cached == entry.compiled.source.splitlines(True)
    assert len(cached) == entry.compiled.source.count("\n")
