"""The fusion and buffer-reuse analyses, and random programs that stress buffer reuse."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradtape.codegen import compile_program, generate_source
from gradtape.ir.builder import Builder
from gradtape.ir.interpreter import run
from gradtape.ir.nodes import Aval, Program, Var
from gradtape.passes.buffers import plan_reuse
from gradtape.passes.fusion import inline_vars

F64 = np.dtype(np.float64)


def _inputs(*shapes, dtype=F64):
    return [Var(Aval(shape, np.dtype(dtype)), f"in{i}") for i, shape in enumerate(shapes)]


def _program(build, *shapes, dtype=F64):
    inputs = _inputs(*shapes, dtype=dtype)
    with Builder() as b:
        outputs = build(*inputs)
    return Program(inputs, b.eqns, list(outputs))


def _plan(program, min_out_size=1):
    return plan_reuse(program, inline_vars(program), min_out_size=min_out_size)


def _kinds(program, plan):
    return {program.eqns[i].outs[0].hint + str(i): (r.kind, r.buffer.hint)
            for i, r in plan.items()}


# --- fusion -------------------------------------------------------------------------------

def test_single_use_elementwise_results_are_inlined():
    program = _program(lambda x, y: [gt.sin(x) * y + 1.0], (4,), (4,))
    inlined = inline_vars(program)
    assert len(inlined) == 2  # sin and multiply are written inside the add
    source, _, _ = generate_source(program)
    assert "sin(in0_1) * in1_2 + 1.0" in source


def test_results_read_twice_or_returned_are_not_inlined():
    def build(x):
        s = gt.sin(x)
        return [s * s, gt.exp(x)]

    program = _program(build, (3,))
    assert inline_vars(program) == set()


def test_fused_expressions_stay_small():
    def build(x):
        y = x
        for _ in range(20):
            y = gt.sin(y) * 2.0
        return [y]

    program = _program(build, (3,))
    source, _, _ = generate_source(program)
    body = [line for line in source.splitlines() if " = " in line]
    assert len(body) > 3
    assert all(line.count("sin(") <= 6 for line in body)
    np.testing.assert_allclose(compile_program(program).function([np.ones(3)])[0],
                               run(program, [np.ones(3)])[0])


def test_a_sum_is_not_carried_across_a_large_matmul():
    """An RNN's weight gradient: one matmul per step added into a sum. Inlined into one
    long expression, every step's 4 MiB matmul would stay alive until it; the sum is
    added into as each is made instead (the interpreter's order), and small ones fuse."""
    def build(*hs):
        total = None
        for h in hs:
            part = gt.matmul(gt.transpose(h), h)
            total = part if total is None else total + part
        return [total]

    program = _program(build, *[(8, 1024)] * 4)   # each product 8 MiB in float64
    source, _, _ = generate_source(program)
    assert inline_vars(program) == set()
    sums = [line for line in source.splitlines() if "+" in line]
    assert len(sums) == 3 and all(line.count("+") == 1 for line in sums), source
    args = [np.random.default_rng(i).standard_normal((8, 1024)) for i in range(4)]
    np.testing.assert_array_equal(compile_program(program).function(list(args))[0],
                                  run(program, args)[0])
    small = _program(build, *[(8, 16)] * 4)
    assert len(inline_vars(small)) == 2  # the first two sums, inside the last


# --- buffer reuse -----------------------------------------------------------------------------

def test_dead_owned_buffer_is_reused_with_out():
    def build(x):
        a = gt.exp(x)
        b = gt.sin(a)  # a dies here
        c = gt.cos(b)  # b dies here
        return [c]

    program = _program(build, (8,))
    plan = plan_reuse(program, set(), min_out_size=1)
    assert {i: (r.kind, r.buffer) for i, r in plan.items()} == {
        1: ("out", program.eqns[0].outs[0]),
        2: ("out", program.eqns[1].outs[0]),
    }


def test_a_product_never_writes_into_the_buffer_it_reads():
    # matmul with out= overlapping an input copies that input first (no saving), so a
    # product may take a dead buffer only if it does not read it.
    def build(x, a):
        h = gt.exp(x)  # owned, dies in the product below
        p = gt.matmul(h, a)
        q = gt.matmul(gt.sin(x), gt.cos(p))  # cos(p) and sin(x) die here too
        return [q]

    program = _program(build, (4, 4), (4, 4))
    plan = plan_reuse(program, set(), min_out_size=1)
    products = [i for i, e in enumerate(program.eqns) if e.prim.name == "matmul"]
    for i in products:
        if i in plan:
            read = {v for v in program.eqns[i].inputs}
            assert plan[i].buffer not in read
    assert products[0] not in plan  # exp's buffer is its only candidate, and it reads it
    compiled = compile_program(program, fuse=False, reuse=True)
    x, a = np.linspace(0, 1, 16).reshape(4, 4), np.eye(4) + 0.5
    for got, want in zip(compiled.function([x, a]), run(program, [x, a])):
        np.testing.assert_allclose(got, want)


def test_inputs_are_never_written():
    program = _program(lambda x, y: [gt.sin(x) + y, gt.exp(y)], (8,), (8,))
    for reuse in _plan(program).values():
        assert reuse.buffer not in program.inputs


def test_no_reuse_while_a_view_of_the_buffer_is_alive():
    def build(x):
        a = gt.exp(x)  # owned
        view = gt.reshape(a, (2, 4))  # may alias a
        b = gt.sin(gt.cos(x))  # a is dead as a name, but not its view
        return [view, b]

    program = _program(build, (8,))
    assert _plan(program) == {}


def test_views_of_a_dead_buffer_keep_it_alive_until_their_last_use():
    def build(x):
        a = gt.exp(x)
        t = gt.transpose(gt.reshape(a, (2, 4)), (1, 0))
        s = gt.cos(t)  # last use of the view chain (sum, not a ufunc, would extend it)
        b = gt.sin(x) * 3.0  # 8 elements: may now reuse a
        return [s, b]

    program = _program(build, (8,))
    plan = plan_reuse(program, set(), min_out_size=1)  # no fusion: every result named
    # sin(x) may write into exp's buffer only after cos read the last view of it.
    assert min(plan) == 4 and plan[4] == ("out", program.eqns[0].outs[0], -1)
    compiled = compile_program(program, fuse=False, reuse=True)
    x = np.linspace(0, 1, 8)
    for got, want in zip(compiled.function([x]), run(program, [x])):
        np.testing.assert_allclose(got, want)


def test_returned_values_are_never_reused():
    def build(x):
        a = gt.exp(x)
        b = gt.sin(a)
        return [a, b, gt.cos(b)]

    program = _program(build, (8,))
    assert _plan(program) == {}


def test_accumulation_is_in_place_on_a_dead_owned_operand():
    def build(x):
        a = gt.exp(x)  # read twice: a named, owned temporary
        return [a + gt.sin(a) * 2.0]

    program = _program(build, (8,))
    plan = _plan(program)
    ((i, reuse),) = plan.items()
    assert reuse.kind == "iadd" and reuse.buffer is program.eqns[0].outs[0]
    source, _, _ = generate_source(program)
    assert "exp_2 += sin(exp_2) * 2.0" in source
    x = np.linspace(0, 1, 8)
    np.testing.assert_allclose(compile_program(program).function([x])[0],
                               np.exp(x) + np.sin(np.exp(x)) * 2.0)


def test_no_accumulation_when_dtype_or_shape_differ():
    def build(x, y):
        return [gt.exp(x) + gt.sin(y)]  # (8,) + (3, 8) -> (3, 8): neither fits

    program = _program(build, (8,), (3, 8))
    assert not [r for r in _plan(program).values() if r.kind == "iadd"]


def test_small_arrays_skip_out_but_still_accumulate():
    def build(x):
        a = gt.exp(x)
        b = gt.sin(a)
        return [gt.cos(b) + gt.exp(b)]

    program = _program(build, (8,))
    kinds = sorted(r.kind for r in plan_reuse(program, inline_vars(program)).values())
    assert "out" not in kinds


# --- computing in temporaries (NumPy's temporary elision) ---------------------------------

LARGE = (256, 288)  # float32: 288 KiB, above NumPy's 256 KiB for computing in temporaries


def test_a_scalar_minus_a_temporary_is_written_as_its_negation_plus_the_scalar():
    program = _program(lambda g, y: [g * (1.0 - gt.square(y))], LARGE, LARGE,
                       dtype=np.float32)
    source, _, _ = generate_source(program)
    assert "in0_1 * (-square(in1_2) + float32_1p0)" in source, source
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(LARGE, dtype=np.float32) for _ in range(2)]
    got = compile_program(program).function(list(args))
    np.testing.assert_array_equal(got[0], run(program, list(args))[0])


def test_a_scalar_times_a_temporary_puts_the_temporary_first():
    program = _program(lambda x: [0.5 * gt.exp(x) + 2], LARGE, dtype=np.float32)
    source, _, _ = generate_source(program)
    assert "exp(in0_1) * float32_0p5 + float32_2p0" in source, source


def test_small_float64_and_integer_expressions_are_written_as_before():
    # float64: the Python float casts safely (no typed constant); small arrays: NumPy
    # never computes in them; integers: -t is another number for unsigned ones.
    program = _program(lambda y: [1.0 - gt.square(y)], LARGE)
    assert "-square(in0_1) + 1.0" in generate_source(program)[0]
    program = _program(lambda y: [1.0 - gt.square(y)], (8, 8), dtype=np.float32)
    assert "1.0 - square(in0_1)" in generate_source(program)[0]
    program = _program(lambda y: [1 - gt.square(y)], LARGE, dtype=np.int32)
    assert "1 - square(in0_1)" in generate_source(program)[0]


def test_a_scalar_no_float32_holds_is_written_as_it_was():
    for c in (0.1, 1e300, 2 ** 24 + 1):  # inexact, overflowing, an int float32 rounds
        program = _program(lambda y, c=c: [c - gt.square(y)], LARGE, dtype=np.float32)
        source, _, _ = generate_source(program)
        assert "square(in0_1)" in source and "float32_" not in source, source
        args = [np.random.default_rng(1).standard_normal(LARGE, dtype=np.float32)]
        with np.errstate(over="ignore"):  # 1e300 is inf in float32, as NumPy says
            got = compile_program(program).function(list(args))
            np.testing.assert_array_equal(got[0], run(program, list(args))[0])
    from gradtape.ir.nodes import Literal
    from gradtape.passes.buffers import _other_operand

    out = Var(Aval(LARGE, np.dtype(np.float32)), "out")
    assert _other_operand(Literal(2 ** 1100, Aval((), np.dtype(object))), out) == (
        False, False)  # beyond every float: no typed constant, no error


def test_a_statement_computed_in_its_temporary_takes_no_out_buffer():
    def build(g, y):
        dead = gt.exp(g)  # a fresh buffer, dead after the next line
        d = gt.reduce_sum(dead, axis=0)
        return [gt.multiply(g, 1.0 - gt.square(y)), d]

    program = _program(build, LARGE, LARGE, dtype=np.float32)
    assert plan_reuse(program, inline_vars(program)) == {}


def test_a_dead_large_buffer_is_not_held_across_an_allocation():
    def build(x, z):
        a = gt.exp(x)
        b = gt.reduce_sum(a, axis=0) + gt.reduce_sum(a, axis=1)[0]  # a's last readers
        c = gt.sin(z)  # allocates (another shape): holding a for e costs one array more
        d = gt.reduce_sum(c, axis=0) + gt.reduce_sum(c, axis=1)[0]
        e = gt.cos(x)
        return [b, d, e]

    program = _program(build, (1024, 512), (512, 1024))  # 4 MiB each
    assert plan_reuse(program, inline_vars(program)) == {}
    small = _program(build, (128, 64), (64, 128))  # the cache matters more: reused
    assert [r.kind for r in plan_reuse(small, inline_vars(small)).values()] == ["out"]


# --- random programs: generated code with aggressive reuse == interpreter -----------------------

UNARY = [gt.sin, gt.tanh, gt.exp, gt.negative, gt.square, lambda v: v * 2.0, gt.identity,
         lambda v: gt.reshape(v, v.shape[::-1]) if v.ndim == 2 else gt.identity(v),
         lambda v: gt.transpose(v) if v.ndim == 2 else gt.sin(v),
         lambda v: v[::-1] if v.ndim >= 1 else v * 1.5,
         lambda v: gt.broadcast_to(v, (3,) + v.shape)[1]]
BINARY = [gt.add, gt.multiply, gt.subtract, lambda a, b: gt.maximum(a, b)]
# Scalars beside temporaries: written -t + c, t * c, with typed constants in float32.
SCALAR_OPS = [lambda v: 1.0 - v, lambda v: 0.5 * v, lambda v: 3 + v, lambda v: v - 0.25,
              lambda v: 2.0 / (v * v + 1.0), lambda v: -1.5 - gt.exp(v)]


@st.composite
def random_programs(draw):
    shape = draw(st.sampled_from([(4, 4), (6,), (2, 2)]))
    n_inputs = draw(st.integers(1, 3))
    ops = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 100), st.integers(0, 100),
                                  st.integers(0, 100)), min_size=1, max_size=14))
    outs = draw(st.lists(st.integers(0, 100), min_size=1, max_size=4))
    return shape, n_inputs, ops, outs


def _build_random(shape, n_inputs, ops, outs):
    inputs = _inputs(*[shape] * n_inputs)
    values = list(inputs)
    with Builder() as b:
        for binary, k, i, j in ops:
            same = [v for v in values if v.shape == shape]
            if binary:
                values.append(BINARY[k % len(BINARY)](same[i % len(same)], same[j % len(same)]))
            else:
                values.append(UNARY[k % len(UNARY)](values[i % len(values)]))
    return Program(inputs, b.eqns, [values[o % len(values)] for o in outs])


@settings(max_examples=150, deadline=None)
@given(random_programs())
def test_random_programs_with_aggressive_buffer_reuse(spec):
    program = _build_random(*spec)
    shape, n_inputs = spec[0], spec[1]
    rng = np.random.default_rng(len(program.eqns))
    args = [rng.standard_normal(shape) for _ in range(n_inputs)]
    copies = [a.copy() for a in args]
    expected = run(program, [a.copy() for a in args])
    from gradtape.passes import buffers

    old = buffers.MIN_OUT_SIZE
    buffers.MIN_OUT_SIZE = 1
    try:
        compiled = compile_program(program)
    finally:
        buffers.MIN_OUT_SIZE = old
    got = compiled.function(list(args))
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)  # inputs untouched
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@st.composite
def large_float32_programs(draw):
    ops = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 100), st.integers(0, 100),
                                  st.integers(0, 100)), min_size=1, max_size=10))
    outs = draw(st.lists(st.integers(0, 100), min_size=1, max_size=3))
    return draw(st.integers(1, 2)), ops, outs


@settings(max_examples=40, deadline=None)
@given(large_float32_programs())
def test_random_float32_programs_computed_in_temporaries_equal_the_interpreter(spec):
    n_inputs, ops, outs = spec
    inputs = _inputs(*[LARGE] * n_inputs, dtype=np.float32)
    values = list(inputs)
    with Builder() as b:
        for kind, k, i, j in ops:
            same = [v for v in values if v.shape == LARGE]
            if kind == 0:
                values.append(BINARY[k % len(BINARY)](same[i % len(same)], same[j % len(same)]))
            elif kind == 1:
                values.append(SCALAR_OPS[k % len(SCALAR_OPS)](same[i % len(same)]))
            else:
                values.append(gt.tanh(values[i % len(values)]))
    program = Program(inputs, b.eqns, [values[o % len(values)] for o in outs])
    rng = np.random.default_rng(len(program.eqns))
    args = [rng.standard_normal(LARGE, dtype=np.float32) for _ in range(n_inputs)]
    expected = run(program, [a.copy() for a in args])
    got = compile_program(program).function([a.copy() for a in args])
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
