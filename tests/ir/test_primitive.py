"""A primitive declared in one block (ir/primitive.py): its template is what generated
code writes, a template that leaves out a param falls back to the implementation's call,
and a per-primitive batching rule is bound to the primitive that declares it."""

import numpy as np
import pytest

from gradtape.ad import batching
from gradtape.codegen import compile_program, generate_source
from gradtape.ir import interpreter
from gradtape.ir.builder import Builder
from gradtape.ir.nodes import Aval, Var
from gradtape.ir.primitive import ArrayShorthand, Primitive, per_primitive
from gradtape.ops.registry import bind


def _scale_impl(x, factor):
    return x * factor


def _program_of(prim, shape=(3,), **params):
    x = Var(Aval(shape, np.dtype(np.float64)))
    with Builder() as b:
        out = bind(prim, x, **params)
    return b.program([x], [out])


def _compiled_and_interpreted(program, value):
    compiled = compile_program(program).function([value])[0]
    interpreted = interpreter.run(program, [value])[0]
    return compiled, interpreted


def test_the_declared_template_is_the_generated_code():
    scale = Primitive("scale", _scale_impl, elementwise=True, template="{0} * {factor}")
    program = _program_of(scale, factor=2.5)
    source, _, _ = generate_source(program)
    assert "* 2.5" in source and "scale_impl" not in source, source
    compiled, interpreted = _compiled_and_interpreted(program, np.array([1.0, -2.0, 4.0]))
    np.testing.assert_array_equal(compiled, [2.5, -5.0, 10.0])
    np.testing.assert_array_equal(compiled, interpreted)


def test_a_template_that_leaves_out_a_param_falls_back_to_the_call():
    scale = Primitive("scale", _scale_impl, elementwise=True, template="{0} * 2.0")
    program = _program_of(scale, factor=3.0)
    source, _, _ = generate_source(program)
    assert "scale_impl(" in source and "factor=3.0" in source, source
    compiled, interpreted = _compiled_and_interpreted(program, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(compiled, [3.0, 6.0, 9.0])
    np.testing.assert_array_equal(compiled, interpreted)


def test_an_array_shorthand_serves_only_the_params_it_applies_to():
    def _sum_impl(x, axis, keepdims):
        return np.sum(x, axis=axis, keepdims=keepdims)

    total = Primitive(
        "total", _sum_impl, template="sum({0}, axis={axis}, keepdims={keepdims})",
        array_template="{0}.sum(axis={axis}, keepdims={keepdims})",
        array_shorthands=(ArrayShorthand(lambda p: p["keepdims"] is False,
                                         "{0}.sum(axis={axis})", frozenset({"keepdims"})),),
    )
    value = np.arange(6.0).reshape(2, 3)
    for keepdims, written in [(False, ".sum(axis=(1,))"),
                              (True, ".sum(axis=(1,), keepdims=True)")]:
        program = _program_of(total, (2, 3), axis=(1,), keepdims=keepdims)
        source, _, _ = generate_source(program)
        assert written in source, source
        compiled, interpreted = _compiled_and_interpreted(program, value)
        np.testing.assert_array_equal(compiled, value.sum(axis=1, keepdims=keepdims))
        np.testing.assert_array_equal(compiled, interpreted)


def test_an_array_template_needs_a_template_beside_it():
    with pytest.raises(ValueError, match="array_template needs a template"):
        Primitive("scale", _scale_impl, array_template="{0}.scale({factor})")


def test_a_per_primitive_batching_rule_is_bound_to_its_primitive():
    def _rows_first(prim):
        def rule(size, args, batched, axis):
            return bind(prim, args[0], axis=axis + 1)

        return rule

    def _cumsum_impl(x, axis):
        return np.cumsum(x, axis=axis)

    cumsum = Primitive("cumsum_along", _cumsum_impl, batch=per_primitive(_rows_first))
    program = _program_of(cumsum, (4,), axis=0)
    vectorized = batching.batch_program(program, [True], 3)
    assert [eqn.prim for eqn in vectorized.eqns] == [cumsum]
    assert vectorized.eqns[0].params == {"axis": 1}
    rows = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(interpreter.run(vectorized, [rows])[0],
                                  np.cumsum(rows, axis=1))


# Everything a primitive declares: set only by its constructor call.
_DECLARED = {"impl", "eager", "vjp", "jvp", "shape_rule", "batch", "templates",
             "array_shorthands", "elementwise", "multiple_results", "differentiable",
             "cacheable", "pure", "run_on_tensors"}


def test_no_module_sets_a_primitive_rule_after_its_declaration():
    import ast
    import pathlib

    import gradtape

    found = []
    for path in sorted(pathlib.Path(gradtape.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                if (isinstance(t, ast.Attribute) and t.attr in _DECLARED
                        and not (isinstance(t.value, ast.Name) and t.value.id == "self")):
                    found.append(f"{path.name}:{node.lineno} .{t.attr}")
    assert not found, f"declare these in the Primitive(...) call instead: {found}"
