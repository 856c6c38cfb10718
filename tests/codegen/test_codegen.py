"""Code generation details: printers, literals, linecache, names, fallbacks, dumps."""

import ast
import importlib.util
import inspect
import linecache
import math
import sys
import traceback
import warnings

import gast
import numpy as np
import pytest
from codegen_testing import backward_of
from golden_programs import PROGRAMS

import gradtape as gt
from gradtape.codegen import compile_program, emit, generate_source
from gradtape.codegen.literals import literal
from gradtape.codegen.load import compile_function
from gradtape.codegen.naming import GlobalNames
from gradtape.compiler.cache import backward_cache
from gradtape.ir.builder import Builder
from gradtape.ir.interpreter import run
from gradtape.ir.nodes import Aval, Program, Var
from gradtape.ops.registry import Primitive, bind


def _golden_backward(name):
    tape, target, sources, *_ = PROGRAMS[name]()
    return backward_of(tape, target, sources)


# --- astor and ast.unparse -------------------------------------------------------------

@pytest.mark.skipif(emit.astor is None, reason="astor is not installed")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_astor_and_unparse_print_the_same_function(name):
    program, args = _golden_backward(name)
    by_astor = compile_program(program, printer="astor")
    by_unparse = compile_program(program, printer="unparse")
    assert (by_astor.printer, by_unparse.printer) == ("astor", "unparse")
    assert ast.dump(ast.parse(by_astor.source)) == ast.dump(ast.parse(by_unparse.source))
    for a, b in zip(by_astor.function(list(args)), by_unparse.function(list(args))):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fast_gast_to_ast_copy_equals_gasts_own_conversion(name):
    from gradtape.codegen.to_gast import to_gast

    program, _ = _golden_backward(name)
    module = to_gast(program).module
    assert ast.dump(emit.to_ast(module)) == ast.dump(gast.gast_to_ast(module))


def test_a_failing_astor_falls_back_to_unparse(monkeypatch):
    program, args = _golden_backward("broadcasting")

    def broken(tree):
        raise AttributeError("module 'ast' has no attribute 'Num'")  # astor on 3.14

    monkeypatch.setattr(emit, "_astor_print", broken)
    compiled = compile_program(program, printer="astor")
    assert compiled.printer == "unparse"
    for got, want in zip(compiled.function(list(args)), run(program, args)):
        np.testing.assert_array_equal(got, want)


# --- literals ------------------------------------------------------------------------------

LITERALS = [
    0, 7, -3, 2**70, 1.5, -2.25, 0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300,
    1j, -2j, complex(1.5, -0.0), complex(-0.0, 2.0), True, False, None, "abc", Ellipsis,
    "ij,jk->ik", "it's \"quoted\"\n\u00e9", b"\x00bytes",
    (1, (2.5, -3)), [1, -2], slice(1, None, -1), slice(None), slice(1, 3), slice(None, 3),
    slice(None, None, 2), slice(2, None),
    np.float32(1.0), np.float32(-0.0), np.float16(0.1), np.float64(np.nan), np.int8(-3),
    np.uint64(2**64 - 1), np.bool_(True), np.complex64(1 - 2j), np.dtype("float32"),
    np.dtype("int64"),
]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)):
        return (math.isnan(a) and math.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))
    if isinstance(a, (complex, np.complexfloating)):
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    return a == b


@pytest.mark.parametrize("printer", emit.PRINTERS)
@pytest.mark.parametrize("value", LITERALS, ids=repr)
def test_literals_evaluate_to_the_same_value_type_and_sign(value, printer):
    globs = GlobalNames()
    node = literal(value, globs)
    body = [gast.Return(value=node)]
    args = gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    fn = gast.FunctionDef(name="backward", args=args, body=body, decorator_list=[],
                          returns=None, type_comment=None, type_params=[])
    source, _ = emit.to_source(gast.Module(body=[fn], type_ignores=[]), [], printer)
    result = compile_function(source, "backward", globs.objects)()
    assert _same(result, value), (source, result)


@pytest.mark.parametrize("value, text", [
    (slice(1, 3), "slice(1, 3)"), (slice(None, 3), "slice(3)"), (slice(None), "slice(None)"),
    (slice(2, None), "slice(2, None)"), (slice(None, None, -1), "slice(None, None, -1)"),
])
def test_slices_are_written_as_a_person_writes_them(value, text):
    assert emit.to_source(literal(value, GlobalNames()), [], emit.PRINTERS[0])[0].strip() \
        == text


def test_numpy_scalar_seed_keeps_its_dtype_in_the_source():
    program, _ = _golden_backward("mlp")
    source, _, _ = generate_source(program)
    assert "float32(" in source
    assert "from numpy import" in source


# --- linecache, tracebacks, inspect -----------------------------------------------------------

def test_source_is_in_linecache_and_inspect_getsource_works():
    program, args = _golden_backward("mlp")
    compiled = compile_program(program)
    assert compiled.filename.startswith("<gradtape-backward-")
    assert "".join(linecache.getlines(compiled.filename)) == compiled.source
    assert inspect.getsource(compiled.function) in compiled.source
    assert inspect.getsource(compiled.function).startswith("def backward(")


def _fussy(x, limit):
    if np.max(np.abs(x)) > limit:
        raise FloatingPointError("value too large")
    return x


fussy_p = Primitive("fussy", _fussy,
                    vjp=lambda g, y, x, limit: (bind(fussy_p, g, limit=limit),))


def test_tracebacks_show_the_generated_line():
    x = Var(Aval((3,), np.dtype(np.float64)), "x")
    with Builder() as b:
        y = bind(fussy_p, gt.sin(x) * 2.0, limit=1.5)
        z = y + 1.0
    program = Program([x], b.eqns, [z])
    compiled = compile_program(program)
    np.testing.assert_allclose(compiled.function([np.zeros(3)])[0], np.ones(3))
    with pytest.raises(FloatingPointError) as info:
        compiled.function([np.full(3, 1.0)])
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [f for f in frames if f.filename == compiled.filename]
    assert len(generated) == 1
    assert generated[0].name == "backward"
    assert "fussy_impl(" in generated[0].line and "limit=1.5" in generated[0].line


def test_a_user_error_in_generated_code_is_raised_from_the_generated_line(compile_mode):
    x = gt.Variable(np.array([3.0, -1.0]))
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(bind(fussy_p, gt.sin(x), limit=10.0) * x)
    tape.gradient(y, x)  # fine: the gradient is small
    with pytest.raises(FloatingPointError) as info:
        tape.gradient(y, x, output_gradients=gt.constant(1e6))
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    assert any(f.startswith("<gradtape-backward-") for f in files) == compile_mode


# --- names and determinism ----------------------------------------------------------------

def test_names_are_readable_and_derived_from_ops():
    program, _ = _golden_backward("mlp")
    source, _, _ = generate_source(program)
    assert "def backward(" in source
    # Cotangents are named after the value they are the gradient of: ``h``'s is d_h,
    # tanh's unnamed input (an add's output) d_add_out; temporaries after their op.
    assert "d_h = " in source and "d_add_out = " in source and "transpose_" in source
    assert "# h = gt.tanh(x @ w1 + b1)   (golden_programs.py:" in source
    for token in ("0x", "id(", "/", "\\"):
        assert token not in source.split("\n", 1)[1].replace(" / ", ""), token


def test_generating_twice_gives_the_same_source():
    a, _ = _golden_backward("softmax_cross_entropy")
    b, _ = _golden_backward("softmax_cross_entropy")
    assert generate_source(a)[0] == generate_source(b)[0]


# --- switches and fallbacks -----------------------------------------------------------------

def test_compile_false_runs_the_interpreter():
    gt.clear_cache()
    x = gt.Variable(np.linspace(-1, 1, 5))
    with gt.config(compile=False):
        for _ in range(4):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(gt.tanh(x) * x)
            tape.gradient(y, x)
        assert gt.config().compile is False
    assert gt.config().compile is True
    info = gt.cache_info()
    assert (info.compiled, info.misses, info.hits) == (0, 1, 3)


def test_the_first_call_interprets_and_the_second_compiles():
    gt.clear_cache()
    x = gt.Variable(np.linspace(-1, 1, 5))
    compiled_counts = []
    with gt.config(compile_after=2):
        for _ in range(3):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(gt.sin(x) * x)
            tape.gradient(y, x)
            compiled_counts.append(gt.cache_info().compiled)
    assert compiled_counts == [0, 1, 1]


def test_config_rejects_unknown_options_and_bad_values():
    with pytest.raises(TypeError, match="unknown option"):
        gt.config(compiel=False)
    with pytest.raises(ValueError):
        gt.config(compile_after=0)
    assert gt.config().compile_after >= 1


def test_codegen_failure_falls_back_to_the_interpreter_with_a_warning(monkeypatch):
    import gradtape.codegen as codegen

    def broken(program, *args, **kwargs):
        raise NotImplementedError("no template for this")

    monkeypatch.setattr(codegen, "compile_program", broken)
    gt.clear_cache()
    x = gt.Variable(np.array([0.5, 1.5]))
    with gt.config(compile_after=1):
        for _ in range(3):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(gt.exp(x) * x)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                g = tape.gradient(y, x).numpy()
            np.testing.assert_allclose(g, np.exp(x.numpy()) * (1 + x.numpy()))
            if _ == 0:
                assert any("could not generate code" in str(w.message) for w in caught)
            else:
                assert not caught  # warned once per structure
    assert gt.cache_info().compiled == 0


def test_generated_code_that_raises_where_the_interpreter_does_not_is_dropped():
    gt.clear_cache()
    x = gt.Variable(np.array([0.5, 1.5]))

    def gradient():
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(gt.sin(x) * x)
        return tape.gradient(y, x).numpy()

    with gt.config(compile_after=1):
        gradient()  # compiles
        (entry,) = backward_cache.entries()

        def bad(*args):
            raise RuntimeError("a codegen bug")

        entry.compiled = entry.compiled._replace(function=bad)
        with pytest.warns(RuntimeWarning, match="raised where the interpreter does not"):
            g = gradient()
        assert entry.compiled is None and entry.failed
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(gradient(), g)  # interpreted, no new warning
    v = x.numpy()
    np.testing.assert_allclose(g, np.cos(v) * v + np.sin(v))


# --- dumps and inspection ---------------------------------------------------------------------

def _import_file(path):
    spec = importlib.util.spec_from_file_location("dumped_backward", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_dump_dir_writes_importable_modules(tmp_path, name):
    gt.clear_cache()
    tape, target, sources, *_ = PROGRAMS[name]()  # (nested_tapes: its inner backward not dumped)
    with gt.config(dump_dir=tmp_path, compile_after=5):  # a dump dir compiles at once
        expected = [g.numpy() for g in tape.gradient(target, sources)]
    (path,) = tmp_path.glob("backward_*.py")
    module = _import_file(path)
    program, args = backward_of(tape, target, sources)
    for got, want in zip(module.backward(list(args)), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert path.read_text() == tape.inspect(target, sources).source


def test_dump_dir_from_the_environment(tmp_path):
    import subprocess

    code = (
        "import numpy as np, gradtape as gt\n"
        "x = gt.Variable(np.ones(3))\n"
        "with gt.GradientTape() as t:\n"
        "    y = gt.reduce_sum(gt.sin(x) * x)\n"
        "t.gradient(y, x)\n"
    )
    env = dict(__import__("os").environ, GRADTAPE_DUMP_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    (path,) = tmp_path.glob("backward_*.py")
    assert "def backward(" in path.read_text()


def test_tape_inspect_shows_every_stage():
    tape, target, sources = PROGRAMS["broadcasting"]()
    insp = tape.inspect(target, sources)
    assert insp.forward_ir.startswith("{ lambda")
    assert "sin" in insp.forward_ir and "unbroadcast" not in insp.forward_ir
    assert "unbroadcast" in insp.backward_ir and "unbroadcast" in insp.optimized_ir
    assert insp.optimized_ir.count("\n") <= insp.backward_ir.count("\n")
    assert insp.source.startswith("# Generated by gradtape")
    assert "def backward(" in str(insp)


def test_inspect_does_not_use_up_a_non_persistent_tape():
    x = gt.Variable(np.array([1.0, 2.0]))
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(x * x)
    assert "def backward(" in tape.inspect(y, x).source
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])


def test_cli_inspect_prints_the_compiled_functions(tmp_path, capsys):
    from gradtape.cli.inspect import main

    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np, gradtape as gt\n"
        "x = gt.Variable(np.ones(3))\n"
        "with gt.GradientTape() as t:\n"
        "    y = gt.reduce_sum(gt.tanh(x) * x)\n"
        "print('grad', t.gradient(y, x).numpy().round(3))\n"
    )
    gt.clear_cache()
    assert main(["inspect", str(script)]) == 0
    out = capsys.readouterr().out
    assert "grad [1.182 1.182 1.182]" in out  # tanh(1) + 1 - tanh(1)**2
    assert "1 backward function(s) compiled" in out
    assert "def backward(" in out and "# y = gt.reduce_sum(gt.tanh(x) * x)   (train.py:4)" in out
    assert main([]) == 2


def _keyword_params(x, **params):
    return x * params["lambda"] + params["not an identifier"]


keyword_params_p = Primitive("keyword_params", _keyword_params,
                             vjp=lambda g, y, x, **params: (g * params["lambda"],))


@pytest.mark.parametrize("printer", emit.PRINTERS)
def test_params_named_like_keywords_are_passed_as_a_mapping(printer):
    x = Var(Aval((2,), np.dtype(np.float64)), "x")
    with Builder() as b:
        y = bind(keyword_params_p, x, **{"lambda": 3.0, "not an identifier": 1.0})
    program = Program([x], b.eqns, [y])
    compiled = compile_program(program, printer=printer)
    assert "**{'lambda': 3.0" in compiled.source
    np.testing.assert_allclose(compiled.function([np.ones(2)])[0], [4.0, 4.0])


def test_pdb_lists_the_generated_lines():
    import io
    import pdb

    program, args = _golden_backward("mlp")
    compiled = compile_program(program)
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("step\nlist\ncontinue\n"), stdout=out, nosigint=True)
    debugger.use_rawinput = False
    debugger.runcall(compiled.function, list(args))
    text = out.getvalue()
    current = [line[3:] for line in text.splitlines() if line.startswith("-> ")]
    assert current and all(line in compiled.source for line in current)
    listed = [line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line]
    assert "def backward(" in text and len(listed) >= 5
    assert all(line in compiled.source for line in listed)
