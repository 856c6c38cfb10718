"""Linear algebra products (ops/linalg/products.py, einsum, the gt.linalg namespace):
values equal NumPy's (through gt.*, gt.linalg.* and NumPy dispatch); derivatives match
finite differences to 2nd order (3rd for a few), reverse and forward mode, with 1-d
operands, broadcast batch dims, einsum's subscript forms and float32. The matrix
functions are in test_linalg_solve.py."""

import numpy as np
import pytest
from complex_testing import numeric_complex_gradient, real_loss
from linalg_testing import randn as _randn
from linalg_testing import spd as _spd
from linalg_testing import well_conditioned as _well_conditioned

import gradtape as gt
from gradtape.testing import check_grads

# --- matmul and friends -------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 2)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((3,), (2, 3, 4)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_values_and_second_order(shapes):
    a, b = _randn(*shapes[0]), _randn(*shapes[1])
    expected = np.matmul(a, b)
    for out in (gt.matmul(gt.constant(a), gt.constant(b)), gt.constant(a) @ gt.constant(b),
                np.matmul(gt.constant(a), gt.constant(b)), a @ gt.constant(b)):
        assert isinstance(out, gt.Tensor)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    check_grads(gt.matmul, [a, b], order=2)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES[:7], ids=str)
def test_matmul_forward_mode(shapes, check_jvp):
    check_jvp(gt.matmul, [_randn(*shapes[0]), _randn(*shapes[1])])


def test_matmul_third_order():
    check_grads(lambda a, b: gt.matmul(a, b) * gt.matmul(a, b), [_randn(2, 3), _randn(3, 2)],
                order=3)


def test_matmul_tensorflow_flags():
    a, b = _randn(2, 4, 3), _randn(2, 5, 4)
    ta, tb = gt.constant(a), gt.constant(b)
    swap = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    np.testing.assert_allclose(gt.matmul(ta, tb, transpose_a=True, transpose_b=True).numpy(),
                               swap(a) @ swap(b))
    np.testing.assert_allclose(gt.linalg.matmul(tb, ta, adjoint_a=False).numpy(), b @ a)
    c = _randn(3, 3) + 1j * _randn(3, 3)
    np.testing.assert_allclose(gt.matmul(c, c, adjoint_a=True).numpy(), swap(c).conj() @ c)
    check_grads(lambda x, y: gt.matmul(x, y, transpose_a=True, transpose_b=True), [a, b])


def test_matmul_errors():
    with pytest.raises(ValueError, match="enough dimensions"):
        gt.matmul(gt.constant(2.0), gt.constant([1.0]))
    with pytest.raises(ValueError):
        gt.matmul(gt.constant(np.ones((2, 3))), gt.constant(np.ones((2, 3))))


DOT_SHAPES = [((), (3,)), ((4,), (4,)), ((3, 4), (4,)), ((3, 4), (4, 2)), ((2, 3, 4), (4,)),
              ((2, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3))]


@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=str)
def test_dot(shapes):
    a, b = _randn(*shapes[0]), _randn(*shapes[1])
    np.testing.assert_allclose(gt.dot(gt.constant(a), gt.constant(b)).numpy(), np.dot(a, b),
                               rtol=1e-12)
    np.testing.assert_allclose(np.dot(gt.constant(a), b).numpy(), np.dot(a, b), rtol=1e-12)
    check_grads(gt.dot, [a, b], order=2)


TENSORDOT_CASES = [
    ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4), (4, 2), 1),
    ((3, 4), (5, 2), 0),
    ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])),
    ((3, 4, 5), (2, 5), (-1, -1)),
    ((2, 3), (3, 2), ([1, 0], [0, 1])),
]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT_CASES, ids=str)
def test_tensordot(sa, sb, axes):
    a, b = _randn(*sa), _randn(*sb)
    expected = np.tensordot(a, b, axes)
    np.testing.assert_allclose(gt.tensordot(gt.constant(a), gt.constant(b), axes).numpy(),
                               expected, rtol=1e-12)
    np.testing.assert_allclose(np.tensordot(gt.constant(a), b, axes=axes).numpy(), expected,
                               rtol=1e-12)
    check_grads(lambda x, y: gt.tensordot(x, y, axes), [a, b], order=2)


def test_tensordot_errors():
    with pytest.raises(ValueError, match="shape-mismatch"):
        gt.tensordot(gt.constant(np.ones((2, 3))), gt.constant(np.ones((2, 3))), 1)


@pytest.mark.parametrize("op,func,shapes", [
    (gt.inner, np.inner, ((4,), (4,))),
    (gt.inner, np.inner, ((2, 4), (3, 4))),
    (gt.inner, np.inner, ((), (2, 3))),
    (gt.outer, np.outer, ((3,), (4,))),
    (gt.outer, np.outer, ((2, 2), (3,))),
    (gt.vdot, np.vdot, ((2, 3), (6,))),
], ids=str)
def test_inner_outer_vdot(op, func, shapes):
    a, b = _randn(*shapes[0]), _randn(*shapes[1])
    np.testing.assert_allclose(op(gt.constant(a), gt.constant(b)).numpy(), func(a, b),
                               rtol=1e-12)
    np.testing.assert_allclose(func(gt.constant(a), gt.constant(b)).numpy(), func(a, b),
                               rtol=1e-12)
    check_grads(op, [a, b], order=2)


def test_vdot_conjugates_the_first_argument():
    a = _randn(3) + 1j * _randn(3)
    b = _randn(3) + 1j * _randn(3)
    np.testing.assert_allclose(gt.vdot(a, b).numpy(), np.vdot(a, b))


# --- einsum --------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("i...->...", [(3, 2, 4)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("ba,Ab", [(2, 3), (4, 2)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,i->j", [(3, 4), (3,)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("->", [()]),
    (",i->i", [(), (3,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_values_and_second_order(spec, shapes):
    arrays = [_randn(*s) for s in shapes]
    expected = np.einsum(spec, *arrays)
    out = gt.einsum(spec, *[gt.constant(a) for a in arrays])
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.einsum(spec, *[gt.constant(a) for a in arrays]).numpy(),
                               expected, rtol=1e-12, atol=1e-12)
    check_grads(lambda *xs: gt.einsum(spec, *xs), arrays, order=2)


@pytest.mark.parametrize("spec,shapes", [c for c in EINSUM_CASES if c[0] != "->"],
                         ids=[c[0] for c in EINSUM_CASES if c[0] != "->"])
def test_einsum_forward_mode(spec, shapes, check_jvp):
    check_jvp(lambda *xs: gt.einsum(spec, *xs), [_randn(*s) for s in shapes])


@pytest.mark.parametrize("spec,shapes", [("ij,jk->ik", [(2, 3), (3, 2)]), ("ii->i", [(3, 3)]),
                                         ("iij->j", [(2, 2, 3)]), ("i,j,i->j", [(2,), (3,), (2,)])])
def test_einsum_third_order(spec, shapes):
    check_grads(lambda *xs: gt.einsum(spec, *xs) ** 2, [_randn(*s) for s in shapes], order=3)


def test_einsum_large_contraction_takes_the_planned_path():
    a, b = _randn(40, 50), _randn(50, 60)  # big enough for np.einsum's optimize path
    np.testing.assert_allclose(gt.einsum("ij,jk->ik", a, b).numpy(), a @ b, rtol=1e-12)
    check_grads(lambda x, y: gt.einsum("ij,jk->ik", x, y), [a, b], order=1)


def test_einsum_interleaved_form_and_dtype():
    a, b = _randn(3, 4), _randn(4, 2)
    np.testing.assert_allclose(gt.einsum(a, [0, 1], b, [1, 2], [0, 2]).numpy(), a @ b)
    np.testing.assert_allclose(gt.einsum(a, [Ellipsis, 1], b, [1, 2]).numpy(), a @ b)
    out = gt.einsum("ij,jk->ik", a, b, dtype=np.float32)
    assert out.dtype == np.float32
    a32 = gt.constant(a.astype(np.float32))
    assert gt.einsum("ij->j", a32).dtype == np.float32


@pytest.mark.parametrize("spec,shapes,match", [
    ("ij,jk->ik", [(2, 3), (4, 2)], "size of index"),
    ("ii->i", [(2, 3)], "repeated index"),
    ("ij->ik", [(2, 3)], "output subscripts"),
    ("ij->ii", [(2, 2)], "output subscripts"),
    ("ij,jk->ik", [(2, 3)], "operand subscripts"),
    ("ijk->i", [(2, 3)], "does not match"),
    ("...i->i", [(2, 3)], "ellipsis"),
    ("i$->i", [(2, 3)], "invalid subscript"),
])
def test_einsum_errors(spec, shapes, match):
    with pytest.raises(ValueError, match=match):
        gt.einsum(spec, *[gt.constant(np.ones(s)) for s in shapes])


def test_einsum_float32_gradients_stay_float32():
    a = gt.constant(_randn(3, 3).astype(np.float32))
    b = gt.constant(_randn(3, 2).astype(np.float32))
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        y = gt.einsum("ii,ij->j", a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert y.dtype == ga.dtype == gb.dtype == np.float32
    np.testing.assert_allclose(ga.numpy(), np.diag(b.numpy().sum(1)), rtol=1e-6)


# --- trace and diagonal ------------------------------------------------------------------

@pytest.mark.parametrize("shape,offset,axis1,axis2", [
    ((3, 3), 0, 0, 1), ((3, 4), 1, 0, 1), ((4, 3), -2, 0, 1), ((2, 3, 4), 0, 1, 2),
    ((2, 3, 4), 1, -1, 0), ((3, 2, 3), -1, 2, 0),
], ids=str)
def test_diagonal_and_trace(shape, offset, axis1, axis2):
    x = _randn(*shape)
    t = gt.constant(x)
    np.testing.assert_array_equal(gt.diagonal(t, offset, axis1, axis2).numpy(),
                                  np.diagonal(x, offset, axis1, axis2))
    np.testing.assert_array_equal(np.diagonal(t, offset, axis1, axis2).numpy(),
                                  np.diagonal(x, offset, axis1, axis2))
    np.testing.assert_allclose(gt.trace(t, offset, axis1, axis2).numpy(),
                               np.trace(x, offset, axis1, axis2), rtol=1e-12)
    np.testing.assert_allclose(np.trace(t, offset, axis1, axis2).numpy(),
                               np.trace(x, offset, axis1, axis2), rtol=1e-12)
    check_grads(lambda a: gt.diagonal(a, offset, axis1, axis2), [x], order=2)
    check_grads(lambda a: gt.trace(a, offset, axis1, axis2), [x], order=2)


def test_diagonal_forward_mode(check_jvp):
    check_jvp(lambda a: gt.diagonal(a, 1, 2, 0), [_randn(3, 2, 4)])
    check_jvp(lambda a: gt.trace(a * a), [_randn(3, 3)])


def test_linalg_trace_and_diagonal_use_the_last_two_axes():
    x = _randn(2, 3, 3)
    np.testing.assert_allclose(gt.linalg.trace(x).numpy(), np.trace(x, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(gt.linalg.diagonal(x, offset=1).numpy(),
                                  np.diagonal(x, 1, -2, -1))
    np.testing.assert_array_equal(gt.linalg.diag_part(x, k=-1).numpy(),
                                  np.diagonal(x, -1, -2, -1))
    if hasattr(np.linalg, "trace"):
        np.testing.assert_allclose(np.linalg.trace(gt.constant(x)).numpy(),
                                   np.linalg.trace(x))


def test_numpy_array_api_linalg_functions():
    x = _randn(2, 3, 3)
    t = gt.constant(x)
    if hasattr(np.linalg, "vector_norm"):
        np.testing.assert_allclose(np.linalg.vector_norm(t).numpy(), np.linalg.vector_norm(x))
        np.testing.assert_allclose(np.linalg.vector_norm(t, axis=(0, 2), keepdims=True).numpy(),
                                   np.linalg.vector_norm(x, axis=(0, 2), keepdims=True))
        np.testing.assert_allclose(np.linalg.matrix_norm(t, ord=1).numpy(),
                                   np.linalg.matrix_norm(x, ord=1))
        np.testing.assert_allclose(np.linalg.matmul(t, t).numpy(), np.linalg.matmul(x, x))
        np.testing.assert_allclose(np.linalg.matrix_transpose(t).numpy(),
                                   np.linalg.matrix_transpose(x))
    check_grads(lambda a: gt.linalg.vector_norm(a, axis=(0, 2)), [x], order=2)


def test_linalg_namespace():
    assert {"inv", "det", "slogdet", "solve", "cholesky", "norm", "matmul", "einsum",
            "trace", "diagonal", "tensordot", "matvec", "adjoint"} <= set(gt.linalg.__all__)
    a, v = _randn(2, 3, 4), _randn(2, 4)
    np.testing.assert_allclose(gt.linalg.matvec(a, v).numpy(), np.einsum("bij,bj->bi", a, v))
    np.testing.assert_allclose(gt.linalg.adjoint(a).numpy(), np.swapaxes(a, -1, -2))


def test_compiled_and_interpreted_backward_agree(compile_mode):
    a, b = _spd(2, 3, 3), _randn(3, 2)

    def f(x, y):
        # b as a stack of matrices: read the same way by NumPy 1 and 2
        stacked = gt.broadcast_to(y, (2, 3, 2))
        z = gt.linalg.solve(x, stacked) + gt.einsum("bii,ij->bj", gt.linalg.inv(x), y)[:, None, :]
        return gt.sum(gt.linalg.cholesky(x) @ z) + gt.sum(gt.linalg.slogdet(x)[1])

    for _ in range(3):  # interpreted first, then compiled (compile_after=1 in the fixture)
        check_grads(f, [a, b], order=2)


@pytest.mark.parametrize("name,f,shapes,batched", [
    ("matmul", gt.matmul, [(3, 4), (4, 2)], None),
    ("matmul b only", gt.matmul, [(2, 3, 4), (4, 2)], [False, True]),
    ("matmul a only", gt.matmul, [(3, 4), (5, 4, 2)], [True, False]),
    ("matvec", gt.matmul, [(3, 4), (4,)], None),
    ("tensordot", lambda a, b: gt.tensordot(a, b, ([0, 2], [1, 0])), [(3, 4, 5), (5, 3)], None),
    ("einsum", lambda a, b: gt.einsum("ij,jk->ik", a, b), [(3, 4), (4, 2)], None),
    ("einsum trace", lambda a: gt.einsum("ii->", a), [(3, 3)], None),
    ("einsum one side", lambda a, b: gt.einsum("bij,j->bi", a, b), [(2, 3, 4), (4,)],
     [False, True]),
    ("diagonal", lambda a: gt.diagonal(a, 1, 2, 0), [(3, 2, 4)], None),
    ("trace", lambda a: gt.trace(a, -1), [(3, 3)], None),
    ("inv", gt.linalg.inv, [(2, 3, 3)], None),
    ("det", gt.linalg.det, [(3, 3)], None),
    ("slogdet", lambda a: gt.linalg.slogdet(a)[1], [(3, 3)], None),
    ("solve", gt.linalg.solve, [(3, 3), (3, 2)], None),
    ("solve a only", gt.linalg.solve, [(3, 3), (2, 3, 2)], [True, False]),
    ("solve vector", gt.linalg.solve, [(3, 3), (3,)], [False, True]),
    ("norm", lambda a: gt.linalg.norm(a, 1, (0, 1)), [(3, 4)], None),
], ids=lambda v: v if isinstance(v, str) else "")
def test_batching_rules(name, f, shapes, batched, check_batching):
    arrays = [_well_conditioned(*s) if len(s) >= 2 and s[-1] == s[-2] else _randn(*s)
              for s in shapes]
    check_batching(f, arrays, batched)


def test_batching_rules_of_cholesky_and_the_derivative_primitives(check_batching):
    from gradtape.ops import contraction
    from gradtape.ops.linalg import products
    from gradtape.ops.registry import bind

    def chol(a):  # positive definite for every batch element
        return gt.linalg.cholesky(gt.matmul(a, gt.linalg.matrix_transpose(a)) + 3.0)

    check_batching(chol, [_randn(3, 3)])
    check_batching(lambda g: bind(contraction.einsum_embed_p, g, subscripts="ij->iij",
                                  shape=(3, 3, 2)), [_randn(3, 2)])
    check_batching(lambda g: bind(products.diagonal_scatter_p, g, offset=1, axis1=0, axis2=2,
                                  shape=(3, 2, 4)), [_randn(2, 3)])


def test_complex_gradients_follow_tensorflow_convention():
    # TF: the gradient of a real loss is dL/dRe + i dL/dIm.
    def cz(*shape):
        return _randn(*shape) + 1j * _randn(*shape)

    loss = real_loss
    cases = [
        (lambda a, b: loss(gt.matmul(a, b)), [cz(2, 3), cz(3, 2)]),
        (lambda a, b: loss(gt.einsum("ii,ij->j", a, b)), [cz(3, 3), cz(3, 2)]),
        (lambda a, b: loss(gt.linalg.solve(a, b)), [cz(3, 3) + 3 * np.eye(3), cz(3, 2)]),
        (lambda a: loss(gt.linalg.inv(a) + gt.linalg.det(a)), [cz(3, 3) + 3 * np.eye(3)]),
        (lambda a: loss(gt.linalg.cholesky(a)),
         [(lambda m: m @ m.conj().T + 3 * np.eye(3))(cz(3, 3))]),
        (lambda a: gt.linalg.norm(a) + gt.var(a), [cz(2, 3)]),
    ]
    for f, args in cases:
        ts = [gt.constant(a) for a in args]
        with gt.GradientTape() as tape:
            tape.watch(ts)
            y = f(*ts)
        for k, g in enumerate(tape.gradient(y, ts)):
            np.testing.assert_allclose(g.numpy(), numeric_complex_gradient(f, args, k), atol=1e-6)
