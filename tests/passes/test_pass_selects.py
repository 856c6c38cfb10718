"""Selects merged (passes/selects.py) and ``m + m`` doubled (passes/cse.py): the
rewritten programs compute bitwise what the originals compute, edge values included,
and a ``where`` that guards a singularity is kept."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pass_testing import backward_of, build, prims, var

import gradtape as gt
from gradtape.codegen import compile_program
from gradtape.ir import interpreter
from gradtape.ir.builder import emit
from gradtape.ir.nodes import Literal
from gradtape.ops import elementwise as ew
from gradtape.passes.pipeline import optimize

# Values a where's guard exists for, and the ones arithmetic is fragile at.
EDGES32 = np.array([0.0, -0.0, 1e-8, -1e-8, 0.5, -0.5, 20.0, -20.0, 100.0, -100.0, 1e30,
                    -1e30, 3e38, -3e38, np.inf, -np.inf, np.nan, 1e-45, -1e-45], np.float32)


def _bits_equal(expected, got):
    """Bitwise equal, with NaN where the original has NaN. Two existing rules are exact
    only up to signs that carry no value, so those compare by value: ``x + 0`` folded
    to ``x`` may turn ``+0.0`` into ``-0.0`` (zeros rules), and ``x + (-y)`` written
    ``x - y`` may flip a NaN's sign bit (signs rules)."""
    expected, got = np.asarray(expected), np.asarray(got)
    assert expected.dtype == got.dtype and expected.shape == got.shape
    same = (expected.view(np.uint8).reshape(expected.shape + (-1,)) ==
            got.view(np.uint8).reshape(got.shape + (-1,))).all(axis=-1)
    both_zero = (expected == 0) & (got == 0)
    both_nan = np.isnan(expected) & np.isnan(got)
    ok = same | both_zero | both_nan
    assert ok.all(), (expected[~ok], got[~ok])


def _run_everywhere(before, after, args):
    """The original interpreted vs. the optimized interpreted and compiled."""
    expected = interpreter.run(before, args)
    compiled = compile_program(after).function(list(args))
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    for e, a, g in zip(expected, interpreter.run(after, args), compiled):
        _bits_equal(e, a)
        _bits_equal(e, g)


def _sigmoid_xent(z, y):
    """The stable sigmoid cross-entropy written out with wheres, as a user writes it
    (gt.nn.sigmoid_cross_entropy_with_logits is one primitive with its own rule)."""
    nonneg = gt.greater_equal(z, 0.0)
    relu_z = gt.where(nonneg, z, gt.zeros_like(z))
    neg_abs = gt.where(nonneg, -z, z)
    return gt.reduce_mean(relu_z - z * y + gt.math.log1p(gt.exp(neg_abs)))


def test_sigmoid_cross_entropy_backward_is_one_where():
    """The written-out form's backward is sigmoid(z) - y (over n): one select between
    the two stable forms, not three wheres added up."""
    z = np.linspace(-3, 3, 8).astype(np.float32)
    y = (np.arange(8) % 2).astype(np.float32)
    before, args = backward_of(lambda z: _sigmoid_xent(z, gt.constant(y)), z)
    after = optimize(before, verify=True)
    assert prims(before).count("where") == 3
    assert prims(after).count("where") == 1
    assert len(after.eqns) < len(optimize_without_selects(before).eqns)
    (dz,) = interpreter.run(after, args)
    np.testing.assert_allclose(dz, (1 / (1 + np.exp(-z)) - y) / 8, rtol=1e-6)


def optimize_without_selects(program):
    from gradtape.passes import selects, simplify

    saved = simplify.RULES
    simplify.RULES = {p: [r for r in rules if r is not selects.merge_selects]
                      for p, rules in saved.items()}
    try:
        return optimize(program)
    finally:
        simplify.RULES = saved


@pytest.mark.parametrize("label", [0.0, 1.0, 0.25])
def test_sigmoid_cross_entropy_rewrite_is_bitwise_at_the_edges(label):
    """At large |z|, zeros, infinities and NaN the merged select gives the original's
    bits, and no NaN or inf the original did not give."""
    y = np.full(EDGES32.shape, label, np.float32)
    before, args = backward_of(lambda z: _sigmoid_xent(z, gt.constant(y)), EDGES32)
    after = optimize(before, verify=True)
    _run_everywhere(before, after, args)
    (dz,) = interpreter.run(after, args)
    finite = np.isfinite(EDGES32)
    assert np.isfinite(dz[finite]).all()


def test_a_guard_against_a_singularity_stays():
    """where(x > 0, log(x'), 0) with x' = where(x > 0, x, 1): the merged backward still
    selects, so x <= 0 gives 0, never the 1/0 or NaN of the discarded lanes."""
    x = np.array([0.0, -1.0, 1e-30, 2.0, np.inf, -np.inf], np.float64)

    def f(x):
        positive = x > 0
        safe = gt.where(positive, x, gt.ones_like(x))
        return gt.reduce_sum(gt.where(positive, gt.log(safe), 0.0) + gt.where(positive, x, 0.0))

    before, args = backward_of(f, x)
    after = optimize(before, verify=True)
    assert "where" in prims(after)
    _run_everywhere(before, after, args)
    (dx,) = interpreter.run(after, args)
    np.testing.assert_array_equal(dx, [0.0, 0.0, 1 / 1e-30 + 1, 1.5, 1.0, 0.0])


LEAF_VALUES = st.sampled_from([0.0, -0.0, 1.0, -1.5, 1e38, -1e38, 1e308, np.inf, -np.inf,
                               np.nan, 5e-324, 3.0])
OPS = st.sampled_from(["add", "subtract", "multiply", "negative"])


@st.composite
def select_trees(draw):
    """A random elementwise tree over wheres on one condition, another condition's
    where, plain values and zero literals: (recipe, dtype, leaf count)."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    n_leaves = draw(st.integers(2, 6))
    leaves = [draw(st.sampled_from(["where", "where", "other_where", "plain", "zero",
                                    "zero_where"])) for _ in range(n_leaves)]
    ops = [draw(OPS) for _ in range(n_leaves + 2)]
    return dtype, leaves, ops


def _tree_program(recipe):
    dtype, leaves, ops = recipe

    def make(c, d, a, b, p):
        values = []
        for kind in leaves:
            if kind == "where":
                values.append(ew.where(c, a, b))
            elif kind == "other_where":
                values.append(ew.where(d, b, a))
            elif kind == "zero_where":
                values.append(emit(ew.where_p, (c, a, Literal(dtype(0.0))), {}))
            elif kind == "plain":
                values.append(p)
            else:
                values.append(emit(ew.add.primitive, (p, Literal(0.0)), {}))
        total, rest = values[0], values[1:]
        for op in ops:
            if op == "negative":
                total = ew.negative(total)
            elif rest:
                total = getattr(ew, op)(total, rest.pop(0))
        for v in rest:
            total = ew.add(total, v)
        return total

    return build(make, var((12,), np.bool_), var((12,), np.bool_), var((12,), dtype),
                 var((12,), dtype), var((12,), dtype))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(select_trees(), st.lists(LEAF_VALUES, min_size=36, max_size=36),
       st.lists(st.booleans(), min_size=24, max_size=24))
def test_merged_selects_are_bitwise_the_original(recipe, values, conditions):
    dtype = recipe[0]
    before = _tree_program(recipe)
    after = optimize(before, verify=True)
    assert len(after.eqns) <= len(before.eqns)
    assert prims(after).count("where") <= prims(before).count("where")
    with np.errstate(all="ignore"):
        data = np.array(values, np.float64).astype(dtype).reshape(3, 12)
    cond = np.array(conditions).reshape(2, 12)
    args = [cond[0], cond[1], data[0], data[1], data[2]]
    with np.errstate(all="ignore"):
        _run_everywhere(before, after, args)


def test_a_where_read_twice_is_not_merged():
    """Merging would compute the select once more for its other reader: no saving."""
    def make(c, a, b):
        w = ew.where(c, a, b)
        return ew.add(w, ew.where(c, b, a)), w

    before = build(make, var((4,), np.bool_), var((4,)), var((4,)))
    assert prims(optimize(before)).count("where") == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_value_added_to_itself_is_doubled_bitwise(dtype):
    """``x * x``'s second derivative adds a term to itself; CSE makes the two terms one
    value and writes ``m * 2.0``: the same bits, overflow to inf included."""
    big = np.finfo(np.float32 if dtype == np.float32 else np.float64).max
    x = np.array([0.0, -0.0, 1.5, -2.0, big, -big, np.inf, np.nan], dtype)
    before = build(lambda a, b: ew.add(ew.multiply(a, b), ew.multiply(a, b)),
                   var((8,), dtype), var((8,), dtype))
    after = optimize(before, verify=True)
    assert prims(after) == ["multiply", "multiply"]
    with np.errstate(all="ignore"):
        _run_everywhere(before, after, [x, np.full(8, 1, dtype)])


def test_a_complex_value_added_to_itself_stays_a_sum():
    """(inf + 0j) * 2.0 is inf + nanj in NumPy: complex sums are not doubled."""
    before = build(lambda a: ew.add(ew.sin(a), ew.sin(a)), var((2,), np.complex128))
    after = optimize(before, verify=True)
    assert prims(after) == ["sin", "add"]
    x = np.array([np.inf + 0j, 1 + 2j])
    with np.errstate(all="ignore"):
        _run_everywhere(before, after, [x])


def test_the_hessian_reads_its_doubled_term_once():
    """The Hessian golden's ``multiply_1 + multiply_1``: one expression now, same values
    as the float64 finite differences of the gradient."""
    x0 = np.array([0.5, -1.0, 2.0])

    def work_gradient(values):
        x = gt.Variable(values)
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                energy = gt.reduce_sum(x * x * x + gt.sin(x))
            force = inner.gradient(energy, x)
            work = gt.reduce_sum(force * force)
        return outer.gradient(work, x).numpy()

    def work(values):
        force = 3 * values ** 2 + np.cos(values)
        return np.sum(force * force)

    eps = 1e-6
    numeric = [(work(x0 + eps * e) - work(x0 - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(work_gradient(x0), numeric, rtol=1e-7)
