"""The cold path of a new structure: what it shares out between its first two calls, and
the shortcuts it takes must not change the generated code."""

import sys

import gast
import numpy as np
import pytest

import gradtape as gt
from gradtape.codegen import primitives
from gradtape.compiler import build
from gradtape.ir.primitive import Primitive
from gradtape.passes import pipeline


def _declared_primitives():
    """Every primitive the modules declare, as a global or as an op's ``primitive``."""
    modules = [m for name, m in sorted(sys.modules.items()) if name.startswith("gradtape.")]
    found = [getattr(v, "primitive", v) for m in modules for v in vars(m).values()]
    return {id(p): p for p in found if isinstance(p, Primitive)}


def _templates():
    found = sorted({t for prim in _declared_primitives().values() for t in prim.templates}
                   | {s.template for prim in _declared_primitives().values()
                      for s in prim.array_shorthands})
    return found + ["f({0}, a=(1, -2.5), b=None, c='s')", "-{0} ** 2 % 3", "{0}.T[0]"]


def test_the_declared_templates_are_found():
    assert {"{0} + {1}", "{0}.T", "{0}.sum(axis={axis})", "logaddexp(0, {0})"} <= set(
        _templates())


@pytest.mark.parametrize("template", _templates())
def test_templates_parse_to_what_gast_parses(template):
    source = primitives._PLACEHOLDER.sub(lambda m: f"__slot_{m.group(1)}__", template)
    assert gast.dump(primitives.expression_tree(source)) == gast.dump(
        gast.parse(source).body[0].value)


def _step(x):
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(gt.tanh(x * x) * 0.5 - gt.sin(x))
    return tape, y


def test_the_call_before_compiling_runs_the_passes_and_compiling_reuses_them(monkeypatch):
    gt.clear_cache()
    calls = []
    original = pipeline.optimize
    monkeypatch.setattr(pipeline, "optimize",
                        lambda program, verify=False: calls.append(1) or original(program))
    x = gt.Variable(np.linspace(-1.0, 1.0, 7))
    grads = []
    with gt.config(compile_after=2):
        for _ in range(3):
            tape, y = _step(x)
            grads.append(tape.gradient(y, x).numpy())
            info = gt.cache_info()
            calls.append((info.compiled,))
    # passes on the first call (interpreted), compiled on the second without them again
    assert calls == [1, (0,), (1,), (1,)]
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    np.testing.assert_array_equal(grads[2], grads[1])


def test_the_generated_code_is_the_same_whichever_call_runs_the_passes():
    x = gt.Variable(np.linspace(-1.0, 1.0, 7))
    sources = []
    for compile_after in (1, 2, 3):  # passes while compiling, on the call before, or 2 before
        gt.clear_cache()
        seen = []
        build.compile_listeners.append(seen.append)
        try:
            with gt.config(compile_after=compile_after):
                for _ in range(compile_after):
                    tape, y = _step(x)
                    tape.gradient(y, x)
        finally:
            build.compile_listeners.remove(seen.append)
        assert len(seen) == 1
        sources.append(seen[0].source)
    assert sources[0] == sources[1] == sources[2]
    assert "def backward(" in sources[0]
