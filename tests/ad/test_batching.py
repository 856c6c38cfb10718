"""The batching transform (ir/batching.py) and the batching rules that jacobians use.

Every check runs a Program vectorized over a leading axis and compares it with the same
Program run once per batch element. Family-specific rules are also tested in
tests/ops/ (``check_batching``); here: the transform itself, the shared elementwise
rule, matmul's 2-d product, the call op, the rules added for jacobians, and a census of
which primitives have a rule.
"""

import importlib
import pkgutil

import numpy as np
import pytest

import gradtape as gt
from gradtape.ad import batching
from gradtape.ir import interpreter
from gradtape.ir.builder import Builder
from gradtape.ir.nodes import Aval, Literal, Program, Var
from gradtape.ops.registry import Primitive, bind

rng = np.random.default_rng(0)


def _program(f, arrays):
    inputs = [Var(Aval(np.shape(a), np.asarray(a).dtype)) for a in arrays]
    with Builder() as b:
        out = f(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return b.program(inputs, outs)


def _like(a, size):
    """``size`` random arrays like ``a`` (positive if ``a`` is: log, power, sqrt)."""
    values = rng.standard_normal((size,) + a.shape)
    if a.size and np.all(a > 0):
        values = np.abs(values) + 0.5
    return values.astype(a.dtype)


def _batched_vs_loop(f, arrays, batched, size=4, max_eqns=None):
    """The vectorized program equals the per-element loop; returns the vectorized one."""
    program = _program(f, arrays)
    values = [_like(np.asarray(a), size) if flag else np.asarray(a)
              for a, flag in zip(arrays, batched)]
    vectorized = batching.batch_program(program, batched, size)
    result = interpreter.run(vectorized, values)
    for i in range(size):
        expected = interpreter.run(program, [v[i] if flag else v
                                             for v, flag in zip(values, batched)])
        for r, e in zip(result, expected):
            np.testing.assert_allclose(r[i], e, rtol=1e-12, atol=1e-14)
    for r, o in zip(result, program.outputs):
        assert r.shape == (size,) + tuple(o.shape)
    if max_eqns is not None:
        assert len(vectorized.eqns) <= max_eqns, str(vectorized)
    return vectorized


def _prims(program):
    return [e.prim.name for e in program.eqns]


# --- the transform ------------------------------------------------------------------------

def test_unbatched_equations_stay_unbatched_and_outputs_are_broadcast():
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    vectorized = _batched_vs_loop(lambda x, c: (gt.sin(c) * x, gt.cos(c)), [a, b],
                                  [True, False])
    # sin(c) and cos(c) don't depend on the batched input: computed once, not per row.
    sin_eqn = next(e for e in vectorized.eqns if e.prim.name == "sin")
    assert sin_eqn.outs[0].shape == (3,)
    assert vectorized.outputs[1].shape == (4, 3)


def test_literal_and_passthrough_outputs():
    x = rng.standard_normal(2)
    inputs = [Var(Aval((2,), np.dtype(np.float64)))]
    program = Program(inputs, [], [inputs[0], Literal(np.float64(2.0)), None])
    vectorized = batching.batch_program(program, [True], 3)
    out = interpreter.run(vectorized, [np.stack([x, x + 1, x + 2])])
    np.testing.assert_array_equal(out[0][2], x + 2)
    np.testing.assert_array_equal(out[1], np.full((3,), 2.0))
    assert out[2] is None


# --- the shared elementwise rule -------------------------------------------------------

UNARY = ["sin", "cos", "tanh", "exp", "sigmoid", "softplus", "square", "negative", "abs",
         "relu", "log1p", "arctan", "sinh"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    op = getattr(gt, name)
    _batched_vs_loop(op, [np.abs(rng.standard_normal((2, 3))) + 0.1], [True], max_eqns=1)


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
                                    ((), (2, 3)), ((2, 3), ())])
@pytest.mark.parametrize("batched", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum",
                                  "power"])
def test_binary_broadcasting(name, shapes, batched):
    op = getattr(gt, name)
    arrays = [np.abs(rng.standard_normal(s)) + 0.5 for s in shapes]
    _batched_vs_loop(op, arrays, list(batched), max_eqns=3)


def test_where_cast_clip():
    x = rng.standard_normal((2, 3))
    _batched_vs_loop(lambda a, b: gt.where(a > 0.0, a, b * 2.0), [x, x[0]], [True, False])
    _batched_vs_loop(lambda a, b: gt.where(b > 0.0, a, 1.0), [x, x[0]], [False, True])
    _batched_vs_loop(lambda a: gt.cast(a, "float32"), [x], [True], max_eqns=1)
    _batched_vs_loop(lambda a: gt.clip_by_value(a, -0.5, 0.5), [x], [True])


# --- matmul ---------------------------------------------------------------------------------

MATMUL_CASES = [
    # (a shape, b shape, a batched, b batched)
    ((3, 4), (4, 1), False, True),  # matrix-vector: the backward of A @ x
    ((3, 4), (4, 5), False, True),
    ((3, 4), (4, 5), True, False),
    ((3, 4), (4, 5), True, True),
    ((2, 3, 4), (4, 5), True, False),
    ((3, 4), (2, 4, 5), False, True),
]


@pytest.mark.parametrize("a_shape, b_shape, fa, fb", MATMUL_CASES, ids=str)
def test_matmul(a_shape, b_shape, fa, fb):
    arrays = [rng.standard_normal(a_shape), rng.standard_normal(b_shape)]
    vectorized = _batched_vs_loop(gt.matmul, arrays, [fa, fb], max_eqns=5)
    if fa != fb and len(a_shape) == 2 and len(b_shape) == 2:
        # One 2-d product, not a stack of `size` small ones.
        (mm,) = [e for e in vectorized.eqns if e.prim.name == "matmul"]
        assert all(len(v.shape) == 2 for v in mm.inputs)


# --- primitives whose rule jacobians rely on ---------------------------------------------

def test_reductions_and_shapes():
    x = rng.standard_normal((2, 3))
    cases = [
        lambda a: gt.reduce_sum(a, axis=1),
        lambda a: gt.reduce_mean(a, axis=0, keepdims=True),
        lambda a: gt.reduce_max(a, axis=1),
        lambda a: gt.reduce_logsumexp(a, axis=1),
        lambda a: gt.cumsum(a, axis=1),
        lambda a: gt.transpose(a),
        lambda a: gt.reshape(a, (3, 2)),
        lambda a: gt.broadcast_to(a, (4, 2, 3)),
        lambda a: gt.concat([a, a * 2.0], axis=0),
        lambda a: a[1:, ::-1],
        lambda a: gt.nn.softmax(a),
        lambda a: gt.nn.log_softmax(a, axis=0),
    ]
    for f in cases:
        vectorized = _batched_vs_loop(f, [x], [True])
        assert len(vectorized.eqns) < 12, "fell back to the per-element loop"


def test_stop_gradient_rule():
    from gradtape.ops.shape import stop_gradient_p

    x = rng.standard_normal(3)
    vectorized = _batched_vs_loop(lambda a: bind(stop_gradient_p, a) * 2.0, [x], [True])
    assert _prims(vectorized) == ["stop_gradient", "multiply"]


def test_one_hot_rule():
    idx = np.array([[0, 2], [1, 1]])
    for axis in (-1, 0, 1):
        program = _program(lambda i, a=axis: gt.one_hot(i, 3, axis=a, dtype="float64"),
                           [idx[0]])
        vectorized = batching.batch_program(program, [True], 2)
        assert _prims(vectorized) == ["one_hot"]
        out = interpreter.run(vectorized, [idx])[0]
        for i in range(2):
            np.testing.assert_array_equal(out[i], interpreter.run(program, [idx[i]])[0])


def test_fallback_loop_for_a_primitive_without_rule():
    prim = Primitive("rowsum_test", lambda x: np.sum(x, axis=-1, keepdims=True),
                     shape_rule=lambda x: Aval(tuple(x.shape[:-1]) + (1,), x.dtype))

    vectorized = _batched_vs_loop(lambda a: bind(prim, a), [rng.standard_normal((2, 3))],
                                  [True], size=3)
    assert _prims(vectorized).count("rowsum_test") == 3  # one equation per element


def test_backward_call_rule():
    """A forward program that contains a nested gradient (a call op) batches by batching
    the inner backward program."""
    x = gt.constant(rng.standard_normal(3))
    a = gt.constant(rng.standard_normal((3, 3)))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.reduce_sum(gt.tanh(gt.matmul(a, x)))
        inner.gradient(y, x)
    call = next(r for r in outer._records if r[0].name == "backward_call")
    inner_backward = call[3]["inner"]
    program = inner_backward.returned()
    flags = [np.shape(v) == (3,) for v in call[2]]  # batch the (3,)-shaped residual
    arrays = [np.asarray(v) for v in call[2]]

    vectorized = _batched_vs_loop(lambda *args: bind(call[0], *args, inner=inner_backward),
                                  arrays, flags, size=3)
    assert "backward_call" not in _prims(vectorized)
    assert len(vectorized.eqns) <= 2 * len(program.eqns) + 2


# --- census -----------------------------------------------------------------------------

# Primitives that run user Python code: batched by the per-element loop on purpose.
# function_call (@gt.function) appears only in forward programs: its VJP inlines the
# function's backward, so the programs jacobians batch never contain it.
PER_ELEMENT = {"custom_gradient", "custom_gradient_vjp", "function_call"}


def _all_primitives():
    import gradtape

    found = {}
    for info in pkgutil.walk_packages(gradtape.__path__, "gradtape."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Primitive):
                found[id(value)] = value
            elif callable(value) and isinstance(getattr(value, "primitive", None), Primitive):
                found[id(value.primitive)] = value.primitive
    return list(found.values())


def test_every_primitive_has_a_batching_rule():
    missing = sorted(p.name for p in _all_primitives()
                     if not p.elementwise and p.batch is None and p.name not in PER_ELEMENT)
    assert not missing, f"declare a batching rule (Primitive(..., batch=rule)) for: {missing}"


# --- the identity basis: a whole jacobian's seeds ---------------------------------------------

IDENTITY_CASES = {
    "I @ B": lambda i, v, b: gt.matmul(i, b),
    "B.T @ I": lambda i, v, b: gt.matmul(gt.transpose(b), i),
    "(I * v) @ B": lambda i, v, b: gt.matmul(i * v, b),
    "B.T @ (v * I)": lambda i, v, b: gt.matmul(gt.transpose(b), v * i),
    "(I * v[:, None]) @ B": lambda i, v, b: gt.matmul(i * gt.reshape(v, (3, 1)), b),
    "transpose(-(I * v) * 2) @ B": lambda i, v, b: gt.matmul(
        gt.transpose(-(i * v) * 2.0), b),
    "I.T @ B": lambda i, v, b: gt.matmul(gt.transpose(i), b),
}


@pytest.mark.parametrize("name", sorted(IDENTITY_CASES))
def test_specialize_identity_removes_products_with_the_identity(name):
    from gradtape.passes.dce import eliminate_dead_code

    f = IDENTITY_CASES[name]
    v, b = rng.standard_normal(3), rng.standard_normal((3, 4))
    program = _program(f, [np.eye(3), v, b])
    special = eliminate_dead_code(batching.specialize_identity(program, program.inputs[0]))
    args = [np.eye(3), v, b]
    np.testing.assert_allclose(interpreter.run(special, args)[0],
                               interpreter.run(program, args)[0], rtol=1e-14)
    assert "matmul" not in _prims(special), str(special)


def test_specialize_identity_keeps_other_uses_and_unknown_products():
    from gradtape.passes.dce import eliminate_dead_code

    def f(i, v, b):
        d = i * v
        return gt.matmul(d, b), d + 1.0, gt.matmul(gt.exp(i), b)

    v, b = rng.standard_normal(3), rng.standard_normal((3, 4))
    program = _program(f, [np.eye(3), v, b])
    special = eliminate_dead_code(batching.specialize_identity(program, program.inputs[0]))
    args = [np.eye(3), v, b]
    for got, want in zip(interpreter.run(special, args), interpreter.run(program, args)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    assert _prims(special).count("matmul") == 1  # exp(I) is not the identity


def _one_hot_basis(n, mid):
    return np.broadcast_to(np.eye(n).reshape((n,) + (1,) * len(mid) + (n,)),
                           (n,) + mid + (n,)).copy()


BASIS_CASES = {
    "S @ B": lambda s, w, b: gt.matmul(s, b),
    "(S * w) @ B": lambda s, w, b: gt.matmul(s * w, b),
    "merge(S * w) @ B": lambda s, w, b: gt.reshape(
        gt.matmul(gt.reshape(s * w, (15, 3)), b), (3, 5, 4)),
    "merge(-(w * S) * 2) @ B": lambda s, w, b: gt.matmul(
        gt.reshape(-(w * s) * 2.0, (15, 3)), b),
    "(S * w[:1]) @ B": lambda s, w, b: gt.matmul(s * w[:1], b),
}


@pytest.mark.parametrize("name", sorted(BASIS_CASES))
def test_specialize_a_one_hot_basis_over_examples(name):
    """batch_jacobian's seeds: eye(3) over 5 examples, shape (3, 5, 3)."""
    from gradtape.passes.dce import eliminate_dead_code

    f = BASIS_CASES[name]
    w, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    s = _one_hot_basis(3, (5,))
    program = _program(f, [s, w, b])
    special = eliminate_dead_code(batching.specialize_identity(program, program.inputs[0]))
    np.testing.assert_allclose(interpreter.run(special, [s, w, b])[0],
                               interpreter.run(program, [s, w, b])[0], rtol=1e-14)
    assert "matmul" not in _prims(special), str(special)


def test_a_scale_that_varies_along_the_one_hot_axis_is_left_alone():
    from gradtape.passes.dce import eliminate_dead_code

    w, b = rng.standard_normal((3, 5, 3)), rng.standard_normal((3, 4))
    s = _one_hot_basis(3, (5,))
    program = _program(lambda s, w, b: gt.matmul(s * w, b), [s, w, b])
    special = eliminate_dead_code(batching.specialize_identity(program, program.inputs[0]))
    assert "matmul" in _prims(special)
    np.testing.assert_allclose(interpreter.run(special, [s, w, b])[0],
                               interpreter.run(program, [s, w, b])[0], rtol=1e-14)


# --- derivatives of a batched equation: its own params, not ones recomputed from shapes ---

def _batched_unbroadcast(x):
    # What unbroadcast's batching rule emits for unbroadcast((4, 2, 2) -> (2, 1)) over a
    # batch of 3: sum axes 1 and 3 (the batch axis 0 stays), then (3, 2, 1).
    from gradtape.ops.shape import unbroadcast_p

    return bind(unbroadcast_p, x, axes=(1, 3), shape=(3, 2, 1))


def test_derivatives_of_a_batched_unbroadcast_match_finite_differences():
    x_value = rng.standard_normal((3, 4, 2, 2))
    u = gt.constant(rng.standard_normal((3, 2, 1)))
    t = rng.standard_normal((3, 4, 2, 2))
    x = gt.constant(x_value)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = _batched_unbroadcast(x)
    vjp = tape.gradient(y, x, output_gradients=u).numpy()
    with gt.ForwardAccumulator(x, gt.constant(t)) as acc:
        jvp = acc.jvp(_batched_unbroadcast(x)).numpy()

    eps = 1e-6
    def f(v):
        return _batched_unbroadcast(gt.constant(v)).numpy()
    np.testing.assert_allclose(jvp, (f(x_value + eps * t) - f(x_value - eps * t)) / (2 * eps),
                               rtol=1e-7)
    # <u, J t> = <J^T u, t>: the VJP is the transpose of the (checked) JVP.
    np.testing.assert_allclose(np.sum(vjp * t), np.sum(u.numpy() * jvp), rtol=1e-10)
