"""Generated code reads like hand-written NumPy: indexing written out, no private
implementations imported, typed constants defined once at module level."""

import ast
import importlib.util
import sys

import numpy as np
import pytest
from codegen_testing import assert_same, backward_of, gradient_both_ways

import gradtape as gt
from gradtape.codegen import compile_program, emit
from gradtape.ir.interpreter import run

X = np.arange(1.0, 61.0).reshape(3, 4, 5) / 7.0
REPEATED = np.array([2, 0, 2, 1, 2])

# (index, the call that does the update: "" for a plain assignment into the zeros)
INDICES = [
    ((1, slice(1, 3)), ""),
    ((slice(None, None, -2), Ellipsis, None), ""),
    ((slice(-1, 0, -1), 2), ""),
    ((Ellipsis, 1), ""),
    ((REPEATED,), "add.at("),
    ((slice(None), REPEATED, slice(1, None, 2)), "add.at("),
    ((REPEATED, REPEATED[::-1] % 4), "add.at("),
    ((X[:, 0, 0] > 0.5,), "add.at("),  # a mask: integer arrays at trace time
]


def _loss(index):
    weights = np.cos(np.arange(X[index].size, dtype=np.float64)).reshape(X[index].shape)
    return lambda x: gt.reduce_sum(gt.sin(x[index]) * weights)


def _finite_differences(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def _source(loss_fn, x):
    source = gt.Variable(x)
    with gt.GradientTape() as tape:
        target = loss_fn(source)
    return tape, target, source


@pytest.mark.parametrize("index, update", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_indexing_backward_is_written_out_and_exact(index, update):
    loss_fn = _loss(index)
    interpreted, compiled = gradient_both_ways(loss_fn, [X])
    assert_same(interpreted, compiled, rtol=0, atol=0)
    expected = _finite_differences(lambda v: float(loss_fn(gt.constant(v)).numpy()), X)
    np.testing.assert_allclose(compiled[0], expected, rtol=1e-6, atol=1e-8)

    tape, target, source = _source(loss_fn, X)
    text = tape.inspect(target, [source]).source
    assert "_impl" not in text and "zeros(" in text
    if update:
        assert update in text
    else:
        assert "add.at(" not in text and "] = " in text


@pytest.mark.skipif(emit.astor is None, reason="astor is not installed")
@pytest.mark.parametrize("index, update", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_indexing_prints_the_same_with_astor_and_unparse(index, update):
    tape, target, source = _source(lambda x: _loss(index)(x) + gt.reduce_sum(x[index] ** 2),
                                   X)
    program, args = backward_of(tape, target, [source])
    by_astor = compile_program(program, printer="astor")
    by_unparse = compile_program(program, printer="unparse")
    assert by_astor.printer == "astor"
    assert ast.dump(ast.parse(by_astor.source)) == ast.dump(ast.parse(by_unparse.source))
    for a, b, c in zip(by_astor.function(list(args)), by_unparse.function(list(args)),
                       run(program, args)):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


def test_second_order_through_indexing_is_written_out():
    # The backward of the written-out scatter is getitem again: written as x[...] too.
    x = gt.Variable(X)
    with gt.config(compile_after=1):
        with gt.GradientTape(persistent=True) as outer:
            with gt.GradientTape() as inner:
                y = gt.reduce_sum(gt.sin(x[1:, REPEATED]) ** 2)
            g = inner.gradient(y, x)
            z = gt.reduce_sum(g * g)
        h = outer.gradient(z, x)
        text = outer.inspect(z, [x]).source
    with gt.config(compile=False):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                y = gt.reduce_sum(gt.sin(x[1:, REPEATED]) ** 2)
            g = inner.gradient(y, x)
            z = gt.reduce_sum(g * g)
        expected = outer.gradient(z, x)
    np.testing.assert_allclose(h.numpy(), expected.numpy(), rtol=1e-12)
    assert "_impl" not in text


def test_typed_constants_are_module_level_and_shared():
    x = gt.Variable(np.linspace(-1.0, 1.0, 6, dtype=np.float32))
    with gt.GradientTape() as tape:
        y = gt.reduce_mean(x * x) + gt.reduce_sum(x) * np.float32(0.25)
    text = tape.inspect(y, [x]).source
    body = text.split("def backward")[1]
    code = [line for line in body.splitlines() if not line.strip().startswith("#")]
    assert "float32(" not in "\n".join(code)  # no constant built per call
    header = text.split("def backward")[0]
    assert header.count(" = float32(") == len(set(
        line.split(" = ")[0] for line in header.splitlines() if " = float32(" in line))
    interpreted, compiled = gradient_both_ways(
        lambda v: gt.reduce_mean(v * v) + gt.reduce_sum(v) * np.float32(0.25), [x.numpy()])
    assert_same(interpreted, compiled, rtol=0, atol=0)


def test_dumped_module_imports_only_numpy_and_the_public_runtime(tmp_path):
    from gradtape.compiler.build import compile_listeners

    gt.clear_cache()
    compiled = []
    compile_listeners.append(compiled.append)
    try:
        x = gt.Variable(X)
        with gt.config(dump_dir=str(tmp_path)):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(gt.cumsum(x[REPEATED], axis=1) * np.float64(0.5))
            tape.gradient(y, x)
    finally:
        compile_listeners.remove(compiled.append)
    (path,) = tmp_path.glob("backward_*.py")
    text = path.read_text()
    assert "cumsum_impl = _runtime.primitive_impl(" in text
    imported = [node for node in ast.walk(ast.parse(text))
                if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert {node.module for node in imported} <= {"numpy", "gradtape.codegen"}
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop(path.stem, None)
    # Every global the function reads is what the process compiled it with.
    function = compiled[0].function
    assert module.backward.__code__.co_code == function.__code__.co_code
    for gname in function.__code__.co_names:
        if gname in function.__globals__ and gname != "__builtins__":
            ours, theirs = function.__globals__[gname], getattr(module, gname)
            assert ours is theirs or (type(ours) is type(theirs) and ours == theirs), gname
