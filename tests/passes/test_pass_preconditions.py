"""Rules skipped by their preconditions (``@applies_when``) would have returned ``None``.

The walk asks a rule only where its declared condition holds (an operand is a known
fill, or is made by one of the named primitives). Here the same programs are simplified
with every rule asked about every equation: the result must be the same program.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from pass_testing import backward_of, build, var
from test_pass_properties import PROPERTY_SETTINGS, recipe_backward, recipes, run_recipe

import gradtape as gt
from gradtape.ir.printer import format_program
from gradtape.passes import fold, noop_shapes, regroup, signs, zeros_ones
from gradtape.passes.fold import fold_fill
from gradtape.passes.rewrite import Rewriter, applies_when
from gradtape.passes.simplify import LATE, RULES, simplify


class _AskEveryRule(Rewriter):
    def _applicable(self, eqn):
        return tuple(rule for rule, _ in self._rules_for(eqn.prim))


def _simplified_asking_every_rule(program):
    return _AskEveryRule(RULES, (fold_fill,), LATE).run(program)


def _same_when_every_rule_is_asked(program):
    assert format_program(simplify(program)) == format_program(
        _simplified_asking_every_rule(program))


def test_the_rules_that_declare_a_precondition():
    declared = [rule for module in (fold, noop_shapes, regroup, signs, zeros_ones)
                for rule in vars(module).values()
                if getattr(rule, "applies_when", None) is not None]
    assert len(declared) >= 15
    for rule in declared:
        fill, makers = rule.applies_when
        assert fill or makers, rule


def test_a_rule_declaring_nothing_is_always_asked():
    @applies_when()
    def rule(eqn, rw):
        return None

    assert rule.applies_when is None


@PROPERTY_SETTINGS
@given(recipes())
def test_programs_simplify_the_same_when_every_rule_is_asked(recipe):
    dtype, input_shapes, _, _ = recipe
    program = build(lambda *xs: run_recipe(recipe, xs), *(var(s, dtype) for s in input_shapes))
    _same_when_every_rule_is_asked(program)


@PROPERTY_SETTINGS
@given(recipes(), st.integers(0, 2**16))
def test_backwards_simplify_the_same_when_every_rule_is_asked(recipe, seed):
    program, _ = recipe_backward(recipe, seed)
    _same_when_every_rule_is_asked(program)


def test_negations_products_and_fills_simplify_the_same_when_every_rule_is_asked():
    def chain(x):
        y = x
        for _ in range(5):
            y = gt.sin(y) * y + gt.cos(y) * 0.5
        return gt.sum(y)

    for dtype in (np.float32, np.float64):
        program, _ = backward_of(chain, np.linspace(-1, 1, 6).astype(dtype))
        _same_when_every_rule_is_asked(program)
