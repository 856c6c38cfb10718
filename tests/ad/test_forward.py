"""Forward mode: ForwardAccumulator and gt.jvp / gt.vjp.

JVPs of every op are checked in float64 against central finite differences and against
reverse mode (``<u, J v> == <J^T u, v>``); random programs (hypothesis) check forward ==
reverse; Hessian-vector products agree whichever way they are nested; TF's errors.
"""

import gc
import logging
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtape as gt
from gradtape.ops.registry import Primitive, bind

rng = np.random.default_rng(0)


# --- helpers ----------------------------------------------------------------------------

def forward_jvp(f, xs, vs):
    """(f(xs), J v) by a ForwardAccumulator, as arrays."""
    xs_t = [gt.constant(x) for x in xs]
    with gt.ForwardAccumulator(xs_t, [gt.constant(v) for v in vs]) as acc:
        y = f(*xs_t)
    return y.numpy(), acc.jvp(y, unconnected_gradients="zero").numpy()


def reverse_vjp(f, xs, u):
    """J^T u by a GradientTape, one array per input."""
    xs_t = [gt.constant(x) for x in xs]
    with gt.GradientTape() as tape:
        tape.watch(xs_t)
        y = f(*xs_t)
    grads = tape.gradient(y, xs_t, output_gradients=gt.constant(u),
                          unconnected_gradients="zero")
    return [g.numpy() for g in grads]


def finite_difference(f, xs, vs, eps=1e-6):
    plus = f(*[gt.constant(x + eps * v) for x, v in zip(xs, vs)]).numpy()
    minus = f(*[gt.constant(x - eps * v) for x, v in zip(xs, vs)]).numpy()
    return (plus - minus) / (2 * eps)


def check_jvp(f, xs, seed=0):
    """J v against finite differences, and <u, J v> against <J^T u, v> from reverse mode."""
    r = np.random.default_rng(seed)
    vs = [r.standard_normal(np.shape(x)) for x in xs]
    y, jv = forward_jvp(f, xs, vs)
    assert jv.shape == np.shape(y) and jv.dtype == np.asarray(y).dtype
    np.testing.assert_allclose(jv, finite_difference(f, xs, vs), rtol=1e-5, atol=1e-6)
    u = r.standard_normal(np.shape(y))
    grads = reverse_vjp(f, xs, u)
    forward = np.sum(u * jv)
    reverse = sum(np.sum(g * v) for g, v in zip(grads, vs))
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)


def sample(shape, low, high):
    x = rng.uniform(low, high, size=shape)
    if low < 0 < high:  # away from kinks at 0 (abs, relu) for finite differences
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    return x


# --- every op: JVP vs finite differences and vs reverse mode ------------------------------

UNARY_DOMAINS = {
    "negative": (-2, 2), "abs": (-2, 2), "exp": (-2, 2), "exp2": (-2, 2),
    "expm1": (-2, 2), "log": (0.3, 3), "log2": (0.3, 3), "log10": (0.3, 3),
    "log1p": (-0.5, 2), "sqrt": (0.3, 3), "cbrt": (0.3, 3), "square": (-2, 2),
    "reciprocal": (0.5, 2), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "arcsin": (-0.8, 0.8), "arccos": (-0.8, 0.8), "arctan": (-3, 3), "sinh": (-2, 2),
    "cosh": (-2, 2), "tanh": (-2, 2), "arcsinh": (-2, 2), "arccosh": (1.2, 3),
    "arctanh": (-0.8, 0.8), "sigmoid": (-4, 4), "relu": (-2, 2), "softplus": (-3, 3),
}

BINARY_DOMAINS = {
    "add": (-2, 2), "subtract": (-2, 2), "multiply": (-2, 2), "divide": (0.5, 2),
    "power": (0.5, 2), "maximum": (-2, 2), "minimum": (-2, 2), "arctan2": (0.3, 2),
    "hypot": (0.3, 2), "logaddexp": (-2, 2),
}

# Broadcasting pairs: each input's tangent must be broadcast to the output's shape.
BINARY_SHAPES = [((), ()), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (4,))]


@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_unary_jvp(name, shape):
    low, high = UNARY_DOMAINS[name]
    check_jvp(getattr(gt, name), [sample(shape, low, high)])


@pytest.mark.parametrize("name", sorted(BINARY_DOMAINS))
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
def test_binary_jvp(name, shapes):
    low, high = BINARY_DOMAINS[name]
    xs = [sample(s, low, high) for s in shapes]
    if name in ("maximum", "minimum"):
        xs[1] = xs[1] + 0.05  # no ties: the derivative jumps there
    check_jvp(getattr(gt, name), xs)


@pytest.mark.parametrize("name", sorted(BINARY_DOMAINS))
def test_binary_jvp_one_side_tangent(name):
    """Only one input carries a tangent: the other side's rule term must be skipped."""
    low, high = BINARY_DOMAINS[name]
    a, b = sample((2, 3), low, high), sample((3,), low, high) + 0.05
    op = getattr(gt, name)
    check_jvp(lambda x: op(x, gt.constant(b)), [a])
    check_jvp(lambda y: op(gt.constant(a), y), [b])


# (id, names the case needs, function of tensors, input (shape, low, high) per argument).
# Add a line here for each new op; a case whose op does not exist yet is skipped.
OP_CASES = [
    ("where", ["where"], lambda a, b: gt.where(a > 0, a, b), [((2, 3), -2, 2), ((3,), -2, 2)]),
    ("clip", ["clip"], lambda x: gt.clip(x, -0.5, 0.7), [((3, 4), -2, 2)]),
    ("clip_tensor_bounds", ["clip"], lambda x, lo: gt.clip(x, lo, lo + 1.0),
     [((3, 4), -2, 2), ((4,), -1, 0)]),
    ("mod", ["mod"], gt.mod, [((2, 3), 2.1, 2.9), ((3,), 1.0, 1.05)]),
    ("power_scalar", [], lambda x: x ** 3.0, [((4,), 0.5, 2)]),
    ("power_int_scalar", [], lambda x: x ** 2, [((4,), -2, 2)]),
    ("rpow", [], lambda x: 2.0 ** x, [((4,), -2, 2)]),
    ("complex_roundtrip", ["cast", "imag", "real"],
     lambda x: gt.imag(gt.cast(gt.sin(x), "complex128") * (1 + 2j))
     + gt.real(gt.cast(x, "complex128") * (3 - 1j)), [((5,), -2, 2)]),
    ("conj", ["cast", "conj", "real"],
     lambda x: gt.real(gt.conj(gt.cast(x, "complex128") * 1j) * (2 + 1j)), [((3,), -2, 2)]),
    ("sum_all", ["sum"], lambda x: gt.sum(x), [((2, 3), -2, 2)]),
    ("sum_axis", ["sum"], lambda x: gt.sum(x, axis=1), [((2, 3, 4), -2, 2)]),
    ("sum_keepdims", ["sum"], lambda x: gt.sum(x, axis=(0, 2), keepdims=True),
     [((2, 3, 4), -2, 2)]),
    ("reshape", ["reshape"], lambda x: gt.reshape(x, (3, -1)), [((2, 3, 2), -2, 2)]),
    ("transpose", ["transpose"], lambda x: gt.transpose(x, (2, 0, 1)), [((2, 3, 4), -2, 2)]),
    ("broadcast_to", ["broadcast_to"], lambda x: gt.broadcast_to(x, (4, 2, 3)),
     [((2, 1), -2, 2)]),
    ("expand_dims", ["expand_dims"], lambda x: gt.expand_dims(x, 1), [((2, 3), -2, 2)]),
    ("identity", ["identity"], gt.identity, [((2, 3), -2, 2)]),
    ("getitem_slice", [], lambda x: x[1:, ::2], [((3, 4), -2, 2)]),
    ("getitem_int", [], lambda x: x[1], [((3, 4), -2, 2)]),
    ("getitem_fancy", [], lambda x: x[[0, 2, 2]], [((3, 4), -2, 2)]),
    ("concatenate", ["concatenate"], lambda a, b: gt.concatenate([a, b * 2.0], axis=1),
     [((2, 3), -2, 2), ((2, 2), -2, 2)]),
    ("stack", ["stack"], lambda a, b: gt.stack([a, b], axis=1),
     [((2, 3), -2, 2), ((2, 3), -2, 2)]),
    ("pad", ["pad"], lambda x: gt.pad(x, ((1, 0), (0, 2))), [((2, 3), -2, 2)]),
    ("tril", ["tril"], lambda x: gt.tril(x), [((3, 3), -2, 2)]),
    ("triu", ["triu"], lambda x: gt.triu(x, 1), [((3, 4), -2, 2)]),
    ("softmax", ["softmax"], lambda x: gt.softmax(x, axis=-1), [((2, 4), -2, 2)]),
    ("log_softmax", ["log_softmax"], lambda x: gt.log_softmax(x, axis=0), [((3, 2), -2, 2)]),
    ("take", ["take"], lambda x: gt.take(x, np.array([2, 0, 2]), axis=1), [((2, 3), -2, 2)]),
    ("gather", ["gather"], lambda x: gt.gather(x, np.array([1, 0, 1])), [((2, 3), -2, 2)]),
    ("take_along_axis", ["take_along_axis"],
     lambda x: gt.take_along_axis(x, np.array([[0, 2], [1, 1]]), axis=1), [((2, 3), -2, 2)]),
    ("flip", ["flip"], lambda x: gt.flip(x, 0), [((3, 2), -2, 2)]),
    ("roll", ["roll"], lambda x: gt.roll(x, 1, axis=1), [((2, 3), -2, 2)]),
    ("tile", ["tile"], lambda x: gt.tile(x, (2, 1)), [((2, 3), -2, 2)]),
    ("repeat", ["repeat"], lambda x: gt.repeat(x, 2, axis=0), [((2, 3), -2, 2)]),
    ("moveaxis", ["moveaxis"], lambda x: gt.moveaxis(x, 0, -1), [((2, 3, 4), -2, 2)]),
    ("squeeze", ["squeeze"], lambda x: gt.squeeze(x, 1), [((2, 1, 3), -2, 2)]),
    ("split", ["split"], lambda x: gt.split(x, 3, axis=1)[1] * 2.0, [((2, 6), -2, 2)]),
    ("unstack", ["unstack"], lambda x: gt.unstack(x)[0] - gt.unstack(x)[1], [((2, 3), -2, 2)]),
    ("matmul", ["matmul"], lambda a, b: gt.matmul(a, b), [((2, 3), -2, 2), ((3, 4), -2, 2)]),
    ("mean", ["mean"], lambda x: gt.mean(x, axis=0), [((3, 2), -2, 2)]),
    ("prod", ["prod"], lambda x: gt.prod(x, axis=1), [((2, 3), 0.5, 2)]),
    ("max", ["max"], lambda x: gt.max(x, axis=1), [((2, 3), -2, 2)]),
    ("logsumexp", ["logsumexp"], lambda x: gt.logsumexp(x, axis=1), [((2, 3), -2, 2)]),
    ("cumsum", ["cumsum"], lambda x: gt.cumsum(x, axis=1), [((2, 3), -2, 2)]),
    ("norm", ["norm"], lambda x: gt.norm(x), [((2, 3), -2, 2)]),
    ("min", ["min"], lambda x: gt.min(x, axis=0), [((3, 2), -2, 2)]),
    ("cumprod", ["cumprod"], lambda x: gt.cumprod(x, axis=0), [((3, 2), 0.5, 2)]),
    ("var", ["var"], lambda x: gt.var(x, axis=1), [((2, 4), -2, 2)]),
    ("std", ["std"], lambda x: gt.std(x), [((2, 4), -2, 2)]),
    ("einsum", ["einsum"], lambda a, b: gt.einsum("ij,jk->ik", a, b),
     [((2, 3), -2, 2), ((3, 2), -2, 2)]),
    ("tensordot", ["tensordot"], lambda a, b: gt.tensordot(a, b, axes=1),
     [((2, 3), -2, 2), ((3, 2), -2, 2)]),
    ("diagonal", ["diagonal"], lambda x: gt.diagonal(x, 1), [((3, 4), -2, 2)]),
    ("trace", ["trace"], lambda x: gt.trace(x), [((3, 3), -2, 2)]),
    ("slogdet", ["linalg"], lambda x: gt.linalg.slogdet(x + 3.0 * np.eye(3))[1],
     [((3, 3), -1, 1)]),
    ("logdet", ["linalg"], lambda x: gt.linalg.logdet(x @ gt.transpose(x) + np.eye(3)),
     [((3, 3), -1, 1)]),
    ("inv", ["linalg"], lambda x: gt.linalg.inv(x + 3.0 * np.eye(3)), [((3, 3), -1, 1)]),
    ("det", ["linalg"], lambda x: gt.linalg.det(x + 3.0 * np.eye(3)), [((3, 3), -1, 1)]),
    ("solve", ["linalg"], lambda a, b: gt.linalg.solve(a + 3.0 * np.eye(3), b),
     [((3, 3), -1, 1), ((3, 2), -1, 1)]),
    ("cholesky", ["linalg"], lambda x: gt.linalg.cholesky(x @ gt.transpose(x) + np.eye(3)),
     [((3, 3), -1, 1)]),
]


@pytest.mark.parametrize("case", OP_CASES, ids=[c[0] for c in OP_CASES])
def test_op_jvp(case, compile_mode):
    _, names, f, specs = case
    for name in names:
        if not hasattr(gt, name):
            pytest.skip(f"gt.{name} does not exist yet")
    check_jvp(f, [sample(*spec) for spec in specs])


def test_jvp_complex_holomorphic_matches_reverse():
    """TF's convention: the JVP is J v, the VJP J^H u, so <u, J v> == <J^H u, v>."""

    def f(z, w):
        return gt.exp(gt.sin(z) * w) + gt.square(z) / (w + 3.0)

    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    w = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    vz = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    vw = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    y, jv = forward_jvp(f, [z, w], [vz, vw])
    eps = 1e-6
    fd = (f(gt.constant(z + eps * vz), gt.constant(w + eps * vw)).numpy()
          - f(gt.constant(z - eps * vz), gt.constant(w - eps * vw)).numpy()) / (2 * eps)
    np.testing.assert_allclose(jv, fd, rtol=1e-6)
    u = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    gz, gw = reverse_vjp(f, [z, w], u)
    np.testing.assert_allclose(np.vdot(u, jv), np.vdot(gz, vz) + np.vdot(gw, vw), rtol=1e-10)


def test_float32_tangents_stay_float32():
    x = gt.constant([0.5, 1.0])
    with gt.ForwardAccumulator(x, [1.0, 2.0]) as acc:
        y = gt.tanh(x) * 3.0 + gt.exp2(x)
    assert acc.jvp(y).dtype == np.float32
    np.testing.assert_allclose(acc.jvp(y).numpy(),
                               (3 * (1 - np.tanh([0.5, 1.0]) ** 2) + np.log(2) * 2 ** np.array(
                                   [0.5, 1.0])) * [1.0, 2.0], rtol=1e-6)


def test_power_with_variable_exponent():
    x = gt.constant([1.5, 2.0])
    e = gt.Variable(3.0)
    with gt.ForwardAccumulator([x, e], [[1.0, -1.0], 0.5]) as acc:
        y = x ** e
    xs = np.array([1.5, 2.0])
    expected = 3.0 * xs ** 2 * [1.0, -1.0] + np.log(xs) * xs ** 3 * 0.5
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-6)


def test_non_differentiable_ops_have_no_tangent_and_sign_a_zero_one():
    x = gt.constant([0.4, 1.6])
    with gt.ForwardAccumulator(x, [1.0, 1.0]) as acc:
        f = gt.floor(x)
        s = gt.sign(x)
        y = x * f
    assert acc.jvp(f) is None
    np.testing.assert_array_equal(acc.jvp(f, unconnected_gradients="zero").numpy(), [0, 0])
    # sign is piecewise constant too, but TF gives it a zero derivative (not None).
    np.testing.assert_array_equal(acc.jvp(s).numpy(), [0.0, 0.0])
    np.testing.assert_allclose(acc.jvp(y).numpy(), [0.0, 1.0])


def _library_primitives():
    import importlib
    import pkgutil

    import gradtape.ops

    found = {}
    for info in pkgutil.iter_modules(gradtape.ops.__path__):
        module = importlib.import_module(f"gradtape.ops.{info.name}")
        for value in vars(module).values():
            prim = value if isinstance(value, Primitive) else getattr(value, "primitive", None)
            if isinstance(prim, Primitive):
                found[prim.name] = prim
    return found


def test_every_differentiable_primitive_has_a_jvp_rule():
    prims = _library_primitives()
    assert {"sin", "add", "sum", "reshape"} <= set(prims)
    missing = sorted(name for name, p in prims.items() if p.vjp is not None and p.jvp is None)
    assert not missing, f"primitives with a VJP rule but no JVP rule: {missing}"


def test_op_without_jvp_rule_raises_naming_it():
    no_jvp = Primitive("frobnicate", np.sin, vjp=lambda g, y, x: (g * gt.cos(x),))
    x = gt.constant([0.1, 0.2])
    bind(no_jvp, x)  # no accumulator: fine
    with gt.ForwardAccumulator(x, [1.0, 1.0]):
        with pytest.raises(NotImplementedError, match="'frobnicate'"):
            bind(no_jvp, x)
        bind(no_jvp, gt.constant([0.3]))  # no tangent flows in: nothing to compute


# --- random programs: forward mode == reverse mode ----------------------------------------

UNARY_SAFE = ["sin", "cos", "tanh", "sigmoid", "arctan", "softplus", "square", "log1p_sq"]
BINARY_SAFE = ["add", "subtract", "multiply", "maximum", "div_pos"]
SHAPES = [(), (3,), (2, 1), (2, 3)]


def _apply(op, *args):
    if op == "log1p_sq":
        return gt.log1p(gt.square(args[0]))
    if op == "div_pos":
        return args[0] / (gt.square(args[1]) + 1.0)
    return getattr(gt, op)(*args)


@st.composite
def programs(draw):
    """Input shapes and a list of steps ``(op, operand indices)`` over a growing pool."""
    n_inputs = draw(st.integers(1, 3))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = []
    for k in range(draw(st.integers(1, 7))):
        pool = n_inputs + k
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(UNARY_SAFE)), (draw(st.integers(0, pool - 1)),)))
        else:
            steps.append((draw(st.sampled_from(BINARY_SAFE)),
                          (draw(st.integers(0, pool - 1)), draw(st.integers(0, pool - 1)))))
    seed = draw(st.integers(0, 2**16))
    return shapes, steps, seed


def _run_program(steps, *inputs):
    pool = list(inputs)
    for op, idx in steps:
        pool.append(_apply(op, *(pool[i] for i in idx)))
    return pool[-1]


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_programs_forward_equals_reverse(program):
    shapes, steps, seed = program
    r = np.random.default_rng(seed)
    xs = [r.uniform(-1.5, 1.5, size=s) for s in shapes]
    vs = [r.standard_normal(s) for s in shapes]
    y, jv = forward_jvp(lambda *a: _run_program(steps, *a), xs, vs)
    assert jv.shape == np.shape(y)
    u = r.standard_normal(np.shape(y))
    grads = reverse_vjp(lambda *a: _run_program(steps, *a), xs, u)
    np.testing.assert_allclose(np.sum(u * jv), sum(np.sum(g * v) for g, v in zip(grads, vs)),
                               rtol=1e-9, atol=1e-12)


# --- nesting: Hessian-vector products three ways, higher-order forward --------------------

def _loss(x, w):
    h = gt.tanh(x * w + 0.3)
    return gt.sum(h * h * gt.sin(x)) + gt.sum(gt.exp(x) * w)


def _hvp_nested_tapes(f, x, v):
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
        gv = gt.sum(g * v)
    return outer.gradient(gv, x).numpy()


def _hvp_forward_over_backward(f, x, v):
    with gt.ForwardAccumulator(x, v) as acc:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    return acc.jvp(g).numpy()


def _hvp_backward_over_forward(f, x, v):
    with gt.GradientTape() as tape:
        tape.watch(x)
        with gt.ForwardAccumulator(x, v) as acc:
            y = f(x)
        jv = acc.jvp(y)
    return tape.gradient(jv, x).numpy()


def test_hvp_three_ways_agree(compile_mode):
    w = gt.constant(rng.standard_normal(5))
    x = gt.constant(rng.standard_normal(5))
    v = gt.constant(rng.standard_normal(5))

    def f(x):
        return _loss(x, w)

    reference = _hvp_nested_tapes(f, x, v)
    np.testing.assert_allclose(_hvp_forward_over_backward(f, x, v), reference, rtol=1e-12)
    np.testing.assert_allclose(_hvp_backward_over_forward(f, x, v), reference, rtol=1e-12)
    # and the full Hessian by finite differences of the reverse-mode gradient
    def grad(x_arr):
        xt = gt.constant(x_arr)
        with gt.GradientTape() as t:
            t.watch(xt)
            y = f(xt)
        return t.gradient(y, xt).numpy()

    eps = 1e-6
    fd = (grad(x.numpy() + eps * v.numpy()) - grad(x.numpy() - eps * v.numpy())) / (2 * eps)
    np.testing.assert_allclose(reference, fd, rtol=1e-6, atol=1e-8)


def test_hvp_forward_over_backward_after_intermediates_died(compile_mode):
    """The tape keeps intermediate values, not tensors: their tangents must outlive them."""
    x = gt.constant(rng.standard_normal(4))
    v = gt.constant(rng.standard_normal(4))

    def f(x):
        s = gt.sin(x)
        t = gt.exp(s) * x
        return gt.sum(t * t)

    with gt.ForwardAccumulator(x, v) as acc:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        gc.collect()
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), _hvp_nested_tapes(f, x, v), rtol=1e-12)


def test_hvp_with_variables_tf_docstring():
    v = gt.Variable([1.0, 2.0])
    with gt.ForwardAccumulator(v, gt.constant([1.0, 0.0])) as acc:
        with gt.GradientTape() as tape:
            y = gt.sum(v ** 3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])


def test_hvp_forward_over_jacobian(compile_mode):
    """A Jacobian taken inside an accumulator: its tangent is the Hessian applied to v."""
    x = gt.constant(rng.standard_normal(3))
    v = gt.constant(rng.standard_normal(3))

    def f(x):
        return gt.sin(x) * gt.sum(x * x)

    with gt.ForwardAccumulator(x, v) as acc:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        jac = tape.jacobian(y, x)
    # d/dt J(x + t v) by finite differences
    def jacobian_at(x_arr):
        xt = gt.constant(x_arr)
        with gt.GradientTape() as t:
            t.watch(xt)
            yt = f(xt)
        return t.jacobian(yt, xt).numpy()

    eps = 1e-6
    fd = (jacobian_at(x.numpy() + eps * v.numpy()) - jacobian_at(x.numpy() - eps * v.numpy()))
    np.testing.assert_allclose(acc.jvp(jac).numpy(), fd / (2 * eps), rtol=1e-6, atol=1e-8)


X11_35_DERIVATIVES = [1.1 ** 3.5, 3.5 * 1.1 ** 2.5, 3.5 * 2.5 * 1.1 ** 1.5,
                      3.5 * 2.5 * 1.5 * 1.1 ** 0.5]


@pytest.mark.parametrize("order", range(4))
def test_higher_order_pure_forward(order):
    def forward_grad(f):
        def df(x):
            with gt.ForwardAccumulator(x, gt.constant(1.0)) as acc:
                y = f(x)
            return acc.jvp(y)
        return df

    f = lambda x: x ** 3.5  # noqa: E731
    for _ in range(order):
        f = forward_grad(f)
    np.testing.assert_allclose(f(gt.constant(1.1)).numpy(), X11_35_DERIVATIVES[order], rtol=1e-6)


def test_nested_accumulators_strict_nesting():
    x = gt.constant(1.1)
    with gt.ForwardAccumulator(x, gt.constant(1.0)) as outer:
        with gt.ForwardAccumulator(x, gt.constant(1.0)) as inner:
            y = x ** gt.constant(3.5)
    inner_jvp = inner.jvp(y)
    np.testing.assert_allclose(inner_jvp.numpy(), X11_35_DERIVATIVES[1], rtol=1e-6)
    np.testing.assert_allclose(outer.jvp(inner_jvp).numpy(), X11_35_DERIVATIVES[2], rtol=1e-6)
    np.testing.assert_allclose(outer.jvp(y).numpy(), X11_35_DERIVATIVES[1], rtol=1e-6)
    # Inner accumulators never see an outer accumulator's JVP computation.
    assert inner.jvp(outer.jvp(y)) is None


def test_nested_accumulators_mixed_second_derivative():
    """d²/dx dy of x² y with different primals in the two accumulators."""
    x, y = gt.constant(1.5, dtype="float64"), gt.constant(-0.5, dtype="float64")
    with gt.ForwardAccumulator(y, gt.constant(1.0, dtype="float64")) as outer:
        with gt.ForwardAccumulator(x, gt.constant(1.0, dtype="float64")) as inner:
            z = x * x * y
    assert float(inner.jvp(z)) == pytest.approx(2 * 1.5 * -0.5)
    assert float(outer.jvp(inner.jvp(z))) == pytest.approx(2 * 1.5)


def test_tape_inside_accumulator_ignores_its_tangents():
    """TF: more deeply nested tapes ignore the products of outer accumulators."""
    c = gt.constant(1.0)
    acc = gt.ForwardAccumulator(c, 0.1)
    tape = gt.GradientTape()
    with acc:
        with tape:
            tape.watch(c)
            d = gt.cos(c)
        np.testing.assert_allclose(acc.jvp(d).numpy(), -0.1 * np.sin(1.0), rtol=1e-6)
        assert tape.gradient(acc.jvp(d), c) is None


@pytest.mark.parametrize("tape_created_first", [True, False])
def test_backward_over_forward_depends_on_nesting_not_creation(tape_created_first):
    c = gt.constant(1.0)
    if tape_created_first:
        tape = gt.GradientTape()
        acc = gt.ForwardAccumulator(c, 0.1)
    else:
        acc = gt.ForwardAccumulator(c, 0.1)
        tape = gt.GradientTape()
    with tape:
        with acc:
            tape.watch(c)
            d = gt.cos(c)
        grad = tape.gradient(acc.jvp(d), c)
    np.testing.assert_allclose(grad.numpy(), -0.1 * np.cos(1.0), rtol=1e-6)


def test_gradient_with_respect_to_the_tangent():
    """The tangent is an input of the JVP computation like any other."""
    x = gt.constant([0.3, 0.9], dtype="float64")
    t = gt.constant([1.0, -2.0], dtype="float64")
    with gt.GradientTape() as tape:
        tape.watch(t)
        with gt.ForwardAccumulator(x, t) as acc:
            y = gt.sum(gt.sin(x) * x)
        jv = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(jv, t).numpy(),
                               np.cos([0.3, 0.9]) * [0.3, 0.9] + np.sin([0.3, 0.9]))


# --- TensorFlow's API and errors -----------------------------------------------------------

def test_primal_given_twice_raises():
    x = gt.constant(-2.0)
    with pytest.raises(ValueError, match="multiple times"):
        gt.ForwardAccumulator([x, x], [1.0, 2.0])


def test_reentering_raises_and_reenter_after_exit_works():
    x = gt.constant(-2.0)
    with gt.ForwardAccumulator(x, 1.5) as acc:
        assert float(acc.jvp(x)) == 1.5
        y = 4.0 * x
        assert float(acc.jvp(y)) == 6.0
        with pytest.raises(ValueError, match="already recording"):
            with acc:
                pass
    z = 4.0 * x
    assert acc.jvp(z) is None  # computed while the accumulator was not active
    with acc:
        yy = y * y
    assert float(acc.jvp(yy)) == 6.0 * -8.0 * 2.0


def test_watching_again_adds_tangents():
    x = gt.constant(-2.0)
    with gt.ForwardAccumulator([x], [3.0]) as acc:
        acc._watch(x, gt.constant(10.0))
        assert float(acc.jvp(x)) == 13.0
        y = gt.constant(3.0) * x
    assert float(acc.jvp(y)) == 39.0


def test_tangent_shape_mismatch_raises():
    with pytest.raises(ValueError, match="Tangent shape"):
        gt.ForwardAccumulator(gt.constant([1.0, 2.0]), gt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="Tangent shape"):
        gt.ForwardAccumulator(gt.constant([1.0, 2.0]), 1.0)


def test_tangent_dtype_mismatch_raises():
    x = gt.constant([1.0, 2.0])  # float32
    with pytest.raises(ValueError, match="dtype"):
        gt.ForwardAccumulator(x, gt.constant(np.array([1.0, 0.0])))  # float64 tensor
    # Python and NumPy values are converted to the primal's dtype, as in TF.
    acc = gt.ForwardAccumulator(x, np.array([1.0, 0.0]))
    assert acc.jvp(x).dtype == np.float32


def test_structure_mismatch_and_non_tensor_primal_raise():
    x, y = gt.constant(1.0), gt.constant(2.0)
    with pytest.raises(ValueError, match="nested structure"):
        gt.ForwardAccumulator([x, y], [1.0])
    with pytest.raises(ValueError, match="nested structure"):
        gt.ForwardAccumulator({"a": x}, {"b": 1.0})
    with pytest.raises(ValueError, match="Tensors or Variables"):
        gt.ForwardAccumulator(3.0, 1.0)


def test_nested_structures_of_primals():
    a, b, c = gt.constant([1.0, 2.0]), gt.constant(3.0), gt.Variable([0.5])
    primals = {"a": a, "rest": (b, [c])}
    tangents = {"a": [1.0, -1.0], "rest": (2.0, [gt.constant([4.0])])}
    with gt.ForwardAccumulator(primals, tangents) as acc:
        y = gt.sum(a) * b + c * 2.0
    out = acc.jvp({"y": y, "pair": (a, c)})
    np.testing.assert_allclose(out["y"].numpy(), [0.0 * 3.0 + 3.0 * 2.0 + 8.0])
    np.testing.assert_allclose(out["pair"][0].numpy(), [1.0, -1.0])
    np.testing.assert_allclose(out["pair"][1].numpy(), [4.0])


def test_non_float_primal_warns(caplog):
    n = gt.constant([1, 2])
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        with gt.ForwardAccumulator(n, [1, 1]) as acc:
            m = n * 2
    assert "must be floating" in caplog.text
    assert acc.jvp(m) is None  # integer results carry no tangent


def test_unconnected_gradients():
    x = gt.constant(-1.0)
    outside = gt.constant([2.0, 3.0]) * 2.0
    with gt.ForwardAccumulator(x, 0.1) as acc:
        assert float(acc.jvp(x, unconnected_gradients="zero")) == pytest.approx(0.1)
        y = gt.constant(-2.0)
        z = gt.sin(outside)
    assert acc.jvp(y) is None and acc.jvp(z) is None and acc.jvp(outside) is None
    zeros = acc.jvp([y, z], unconnected_gradients=gt.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zeros[1].numpy(), [0.0, 0.0])
    assert zeros[1].dtype == np.float32
    with pytest.raises(ValueError, match="unconnected_gradients"):
        acc.jvp(x, unconnected_gradients="ones")


def test_variable_watched():
    v = gt.Variable([1.0, 2.0, 3.0])
    with gt.ForwardAccumulator(v, gt.constant([0.1, -0.2, 0.3])) as acc:
        np.testing.assert_allclose(acc.jvp(v).numpy(), [0.1, -0.2, 0.3])
        np.testing.assert_allclose(acc.jvp(v * 2.0).numpy(), [0.2, -0.4, 0.6], rtol=1e-6)
        np.testing.assert_allclose(acc.jvp(v.read_value()).numpy(), [0.1, -0.2, 0.3])


def test_dead_tensors_jvp_cleared():
    x = gt.constant(np.ones(100))
    x_weak = weakref.ref(x)
    tangent = gt.constant(np.zeros(100))
    tangent_weak = weakref.ref(tangent)
    with gt.ForwardAccumulator(x, tangent) as acc:
        derived = gt.constant(2.0) * x
        del tangent
        np.testing.assert_array_equal(acc.jvp(x).numpy(), np.zeros(100))
        del x
        assert x_weak() is None and tangent_weak() is None
        derived_tangent_weak = weakref.ref(acc.jvp(derived))
        del derived
        assert derived_tangent_weak() is None
    assert not acc._tangents


# --- function forms: gt.jvp and gt.vjp -----------------------------------------------------

def test_jvp_function_form():
    y, t = gt.jvp(gt.sin, (gt.constant(0.1),), (gt.constant(0.2),))
    np.testing.assert_allclose(y.numpy(), np.sin(0.1), rtol=1e-6)
    np.testing.assert_allclose(t.numpy(), np.cos(0.1) * 0.2, rtol=1e-6)


def test_jvp_same_tensor_twice_is_two_inputs():
    x = gt.constant(np.array([0.5, 1.5]))
    y, t = gt.jvp(lambda a, b: a * gt.exp(b), (x, x), (np.array([1.0, 0.0]), np.zeros(2)))
    np.testing.assert_allclose(t.numpy(), np.exp([0.5, 1.5]) * [1.0, 0.0])


def test_jvp_structures_aux_and_unconnected_outputs():
    def f(pair, scale):
        a, b = pair
        return {"s": gt.sum(a * b) * scale, "const": gt.constant([1.0, 2.0])}, "aux!"

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    out, tangents, aux = gt.jvp(f, ((a, b), np.float64(2.0)),
                                (([1.0, 0.0], [0.0, 1.0]), 0.5), has_aux=True)
    assert aux == "aux!"
    assert float(out["s"]) == pytest.approx(22.0)
    assert float(tangents["s"]) == pytest.approx((3.0 + 2.0) * 2.0 + 11.0 * 0.5)
    np.testing.assert_array_equal(tangents["const"].numpy(), [0.0, 0.0])


def test_jvp_function_form_under_a_tape():
    """Backward-over-forward with the function form: the tape sees the tangent computation."""
    x = gt.constant(np.array([0.3, -0.8, 1.1]))
    v = gt.constant(rng.standard_normal(3))

    def f(x):
        return gt.sum(gt.exp(x) * gt.cos(x))

    with gt.GradientTape() as tape:
        tape.watch(x)
        _, jv = gt.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tape.gradient(jv, x).numpy(), _hvp_nested_tapes(f, x, v),
                               rtol=1e-12)


def test_jvp_function_form_errors():
    x = gt.constant(1.0)
    with pytest.raises(TypeError, match="tuples or lists"):
        gt.jvp(gt.sin, x, gt.constant(1.0))
    with pytest.raises(ValueError, match="one tangent per primal"):
        gt.jvp(gt.multiply, (x, x), (1.0,))


def test_jvp_matches_finite_differences_through_reductions():
    x = rng.standard_normal((3, 4))
    v = rng.standard_normal((3, 4))

    def f(x):
        return gt.sum(gt.tanh(x) * gt.transpose(gt.reshape(x, (4, 3))), axis=0)

    _, t = gt.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t.numpy(), finite_difference(f, [x], [v]), rtol=1e-6)


def test_vjp_function_form_is_reusable(compile_mode):
    a = rng.standard_normal(3)
    b = rng.standard_normal((2, 3))

    def f(x, w):
        return gt.tanh(w * x) + gt.sin(x)

    out, vjp_fn = gt.vjp(f, a, b)
    np.testing.assert_allclose(out.numpy(), np.tanh(b * a) + np.sin(a))
    for _ in range(3):
        u = rng.standard_normal((2, 3))
        ga, gb = vjp_fn(u)
        expected = reverse_vjp(f, [a, b], u)
        np.testing.assert_allclose(ga.numpy(), expected[0], rtol=1e-12)
        np.testing.assert_allclose(gb.numpy(), expected[1], rtol=1e-12)


def test_vjp_structures_duplicates_and_aux():
    x = gt.constant(np.array([0.5, -1.0]))

    def f(a, b):
        return (a * gt.exp(b), gt.sum(a)), {"note": 1}

    (y1, y2), vjp_fn, aux = gt.vjp(f, x, x, has_aux=True)
    assert aux == {"note": 1}
    ga, gb = vjp_fn((np.array([1.0, 2.0]), 3.0))
    e = np.exp([0.5, -1.0])
    np.testing.assert_allclose(ga.numpy(), e * [1.0, 2.0] + 3.0)  # separate partials
    np.testing.assert_allclose(gb.numpy(), np.array([0.5, -1.0]) * e * [1.0, 2.0])
    ga, gb = vjp_fn((None, 1.0))  # None: no cotangent for that output
    np.testing.assert_allclose(ga.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(gb.numpy(), [0.0, 0.0])


def test_vjp_unconnected_input_gives_zeros():
    _, vjp_fn = gt.vjp(lambda a, b: a * 2.0, np.ones(2), np.ones(3))
    ga, gb = vjp_fn(np.ones(2))
    np.testing.assert_allclose(ga.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(gb.numpy(), np.zeros(3))


def test_vjp_higher_order_under_tape_and_accumulator(compile_mode):
    """vjp_fn is differentiable: under a tape (reverse) and under an accumulator."""
    x = gt.constant(np.array([0.3, -0.8, 1.1]))
    v = gt.constant(rng.standard_normal(3))

    def f(x):
        return gt.sum(gt.sin(x) * x * x)

    reference = _hvp_nested_tapes(f, x, v)
    with gt.GradientTape() as tape:
        tape.watch(x)
        _, vjp_fn = gt.vjp(f, x)
        (g,) = vjp_fn(1.0)
        gv = gt.sum(g * v)
    np.testing.assert_allclose(tape.gradient(gv, x).numpy(), reference, rtol=1e-12)
    with gt.ForwardAccumulator(x, v) as acc:
        _, vjp_fn = gt.vjp(f, x)
        (g,) = vjp_fn(1.0)
    np.testing.assert_allclose(acc.jvp(g).numpy(), reference, rtol=1e-12)
    _, jv = gt.jvp(lambda x: gt.vjp(f, x)[1](1.0)[0], (x,), (v,))
    np.testing.assert_allclose(jv.numpy(), reference, rtol=1e-12)
