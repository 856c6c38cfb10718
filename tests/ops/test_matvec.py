"""Products with a vector: ``a @ x`` (matvec) and ``x @ a`` (vecmat) are one recorded op
each, with NumPy's values, derivatives to 2nd/3rd order, TF's complex convention,
batching rules that make one product of a batch of vectors, and jacobians/Hessians of
``tanh(A @ x)`` that compile to the hand-written formulas."""

import numpy as np
import pytest
from complex_testing import numeric_complex_gradient, real_loss

import gradtape as gt
from gradtape.compiler.cache import backward_cache
from gradtape.ir.lower import SEED
from gradtape.testing import check_grads

rng = np.random.default_rng(11)


def _randn(*shape):
    return rng.standard_normal(shape)


def _forward_prims(f, *arrays):
    """The primitives the tape records for ``f`` on watched ``arrays``."""
    ts = [gt.constant(a) for a in arrays]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        y = f(*ts)
    text = tape.inspect(y, ts).forward_ir
    return [line.split(" = ")[1].split()[0] for line in text.splitlines() if " = " in line]


# Each case: (a's shape, x's shape, vector first).
CASES = [((3, 4), (4,), False), ((2, 3, 4), (4,), False), ((2, 1, 3, 4), (4,), False),
         ((4, 3), (4,), True), ((2, 4, 3), (4,), True), ((2, 1, 4, 3), (4,), True)]


def _product(vector_first):
    return (lambda a, x: gt.matmul(x, a)) if vector_first else gt.matmul


@pytest.mark.parametrize("a_shape,x_shape,vector_first", CASES, ids=str)
def test_values_records_and_second_order(a_shape, x_shape, vector_first):
    a, x = _randn(*a_shape), _randn(*x_shape)
    expected = x @ a if vector_first else a @ x
    ta, tx = gt.constant(a), gt.constant(x)
    outs = [tx @ ta, np.matmul(tx, ta), x @ ta] if vector_first else [
        ta @ tx, np.matmul(ta, tx), a @ tx, gt.linalg.matvec(ta, tx)]
    for out in outs:
        assert isinstance(out, gt.Tensor) and out.shape == expected.shape
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    f = _product(vector_first)
    assert _forward_prims(f, a, x) == ["vecmat" if vector_first else "matvec"]
    check_grads(f, [a, x], order=2)


@pytest.mark.parametrize("a_shape,x_shape,vector_first", CASES[:2] + CASES[3:5], ids=str)
def test_forward_mode(a_shape, x_shape, vector_first, check_jvp):
    check_jvp(_product(vector_first), [_randn(*a_shape), _randn(*x_shape)])


def test_third_order():
    check_grads(lambda a, x: gt.sum(gt.tanh(gt.matmul(a, x)) * gt.matmul(x, a)),
                [_randn(3, 3), _randn(3)], order=3)


@pytest.mark.parametrize("adjoint", [False, True])
def test_flags_swap_the_primitive_instead_of_recording_a_transpose(adjoint):
    a, x = _randn(4, 3) + 1j * _randn(4, 3), _randn(4) + 1j * _randn(4)
    flags = {"adjoint_a": True} if adjoint else {"transpose_a": True}
    op = np.conj(a.T) if adjoint else a.T
    np.testing.assert_allclose(gt.matmul(a, x, **flags).numpy(), op @ x, rtol=1e-12)
    np.testing.assert_allclose(gt.linalg.matvec(a, x, **flags).numpy(), op @ x, rtol=1e-12)
    flags_b = {"adjoint_b": True} if adjoint else {"transpose_b": True}
    y = _randn(3) + 1j * _randn(3)
    np.testing.assert_allclose(gt.matmul(y, a, **flags_b).numpy(), y @ op, rtol=1e-12)
    real_a, real_x = a.real.copy(), x.real.copy()
    prims = _forward_prims(lambda m, v: gt.matmul(m, v, **flags), real_a, real_x)
    assert prims == ["vecmat"]  # conj of a real tensor records nothing
    check_grads(lambda m, v: gt.linalg.matvec(m, v, **flags), [real_a, real_x], order=2)
    check_grads(lambda m, v: gt.matmul(v, m, **flags_b), [real_a.T.copy(), real_x], order=2)


def test_errors_and_dtypes():
    with pytest.raises(ValueError):
        gt.matmul(gt.constant(np.ones((2, 3))), gt.constant(np.ones(4)))
    with pytest.raises(ValueError):
        gt.matmul(gt.constant(np.ones(4)), gt.constant(np.ones((3, 2))))
    with pytest.raises(ValueError):  # a transpose flag on the vector itself
        gt.matmul(gt.constant(np.ones((2, 3))), gt.constant(np.ones(3)), transpose_b=True)
    from gradtape.ir.builder import Builder
    from gradtape.ir.nodes import Aval, Var
    from gradtape.ops.linalg import products as linalg
    from gradtape.ops.registry import bind

    with Builder(), pytest.raises(ValueError, match="inner dimensions differ"):
        bind(linalg.matvec_p, Var(Aval((2, 3), np.dtype("float64"))),
             Var(Aval((2,), np.dtype("float64"))))
    a32 = gt.constant(np.ones((2, 3), np.float32))
    x32 = gt.constant(np.ones(3, np.float32))
    with gt.GradientTape() as tape:
        tape.watch([a32, x32])
        y = gt.matmul(a32, x32, output_type=np.float64)
    assert y.dtype == np.float64
    ga, gx = tape.gradient(y, [a32, x32])
    assert ga.dtype == gx.dtype == np.float32
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("a_shape,x_shape,vector_first", CASES[:2] + CASES[3:5], ids=str)
def test_complex_gradients_follow_tensorflow_convention(a_shape, x_shape, vector_first):
    # TF: the gradient of a real loss L is dL/dRe + i dL/dIm.
    def cz(*shape):
        return _randn(*shape) + 1j * _randn(*shape)

    loss = real_loss
    product = _product(vector_first)

    def f(m, v):
        return loss(product(m, v))

    a, x = cz(*a_shape), cz(*x_shape)
    ts = [gt.constant(a), gt.constant(x)]
    with gt.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    for k, g in enumerate(tape.gradient(y, ts)):
        np.testing.assert_allclose(g.numpy(), numeric_complex_gradient(f, [a, x], k), atol=1e-6)


# --- batching: one product for a batch of vectors, never a loop ---------------------------

def _batched_prims(f, arrays, batched, size=3):
    """``f`` traced and vectorized over a leading axis equals a per-example loop; the
    vectorized program's primitives."""
    from gradtape.ad import batching
    from gradtape.ir import interpreter
    from gradtape.ir.builder import Builder
    from gradtape.ir.nodes import Aval, Var

    inputs = [Var(Aval(a.shape, a.dtype)) for a in arrays]
    with Builder() as b:
        out = f(*inputs)
    program = b.program(inputs, [out])
    values = [_randn(size, *a.shape) if flag else a for a, flag in zip(arrays, batched)]
    vectorized = batching.batch_program(program, batched, size)
    result = interpreter.run(vectorized, values)[0]
    expected = np.stack([
        interpreter.run(program, [v[i] if flag else v for v, flag in zip(values, batched)])[0]
        for i in range(size)])
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    return [e.prim.name for e in vectorized.eqns]


@pytest.mark.parametrize("a_shape,x_shape,vector_first", CASES, ids=str)
@pytest.mark.parametrize("batched", [(True, False), (False, True), (True, True)], ids=str)
def test_batching_rules_against_a_loop(a_shape, x_shape, vector_first, batched):
    f = _product(vector_first)
    prims = _batched_prims(f, [_randn(*a_shape), _randn(*x_shape)], list(batched))
    assert "stack" not in prims and "getitem" not in prims
    assert prims.count("matmul") + prims.count("matvec") + prims.count("vecmat") == 1
    if batched == (True, False):  # the product maps over the batched matrices as it is
        assert prims == ["vecmat" if vector_first else "matvec"]


def test_a_batch_of_vectors_against_one_matrix_is_one_2d_product():
    a, x = _randn(3, 4), _randn(4)
    assert _batched_prims(gt.matmul, [a, x], [False, True]) == ["transpose", "matmul"]
    assert _batched_prims(lambda m, v: gt.matmul(v, m), [a.T.copy(), x],
                          [False, True]) == ["matmul"]


# --- jacobians and Hessians: the identity basis folds away --------------------------------

def _batched_entry():
    (entry,) = [e for k, e in backward_cache._data.items() if k[0] == "batched"]
    return entry


@pytest.mark.parametrize("vector_first", [False, True])
def test_jacobian_of_tanh_of_a_product_is_the_hand_written_formula(vector_first):
    a, x = gt.constant(_randn(5, 5)), gt.constant(_randn(5))
    m = a.numpy().T if vector_first else a.numpy()
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.tanh(x @ a if vector_first else a @ x)
        j = tape.jacobian(y, x)
    t = np.tanh(m @ x.numpy())
    np.testing.assert_allclose(j.numpy(), (1 - t * t)[:, None] * m, rtol=1e-13)
    entry = _batched_entry()
    code = _code(entry.compiled.source)
    # No product with the identity seeds, which are not even an input.
    assert " @ " not in code and "matmul(" not in code and all(f.kind != SEED for f in entry.feeds)


@pytest.mark.parametrize("vector_first", [False, True])
def test_hessian_of_sum_tanh_of_a_product_is_the_hand_written_formula(vector_first):
    a, x = gt.constant(_randn(5, 5)), gt.constant(_randn(5))
    m = a.numpy().T if vector_first else a.numpy()
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(gt.tanh(x @ a if vector_first else a @ x))
            g = inner.gradient(y, x)
        h = outer.jacobian(g, x)
    t = np.tanh(m @ x.numpy())
    np.testing.assert_allclose(h.numpy(), m.T @ ((-2 * t * (1 - t * t))[:, None] * m),
                               rtol=1e-12, atol=1e-14)
    entry = _batched_entry()
    code = _code(entry.compiled.source)
    # One matrix product (A^T with rows scaled, times A); the seeds fold away.
    assert code.count(" @ ") + code.count("matmul(") == 1
    assert all(f.kind != SEED for f in entry.feeds)


def _code(source: str) -> str:
    """The generated lines without comments (which quote the user's statement)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


def test_the_inner_gradient_is_one_vector_product():
    a, x = gt.constant(_randn(4, 3)), gt.constant(_randn(3))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.tanh(a @ x))
    source = _code(tape.inspect(y, x).source)
    assert "(1.0 - square(tanh_1)) @ a" in source and "reshape" not in source
