"""Higher-order derivatives through nested tapes, compiled at every level.

An inner ``gradient`` (or ``jacobian``) under an outer tape is recorded as ONE
``backward_call`` op (nested.py) whose VJP is the autodiff of the inner backward
Program. Checked here: the call op is what the outer tape sees; Hessians of every op
family against finite differences of the gradient (float64); third derivatives of the
elementwise ops; the gradient-penalty pattern; compiled == interpreted at every level
(``compile_mode``); the cache (a Hessian in a loop compiles once; the outer key includes
the inner program's key); custom_gradient and stop_gradient under nesting; the Newton
example.
"""

import runpy
from pathlib import Path

import numpy as np
import pytest

import gradtape as gt
from gradtape.compiler.cache import backward_cache

rng = np.random.default_rng(0)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _gradient(f, x):
    """The gradient of scalar ``f`` at array ``x`` (one tape, float64)."""
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt)
    return tape.gradient(y, xt, unconnected_gradients="zero").numpy()


def hessian_by_nested_tapes(f, x):
    """``outer.jacobian(inner.gradient(f))``, the way TF users write it."""
    xt = gt.constant(x)
    with gt.GradientTape() as outer:
        outer.watch(xt)
        with gt.GradientTape() as inner:
            inner.watch(xt)
            y = f(xt)
        g = inner.gradient(y, xt)
    return outer.jacobian(g, xt, unconnected_gradients="zero").numpy()


def hessian_by_differences(f, x, eps=1e-5):
    """Central differences of the gradient, one column per input element."""
    flat = x.ravel()
    columns = []
    for j in range(flat.size):
        step = np.zeros_like(flat)
        step[j] = eps
        plus = _gradient(f, (flat + step).reshape(x.shape))
        minus = _gradient(f, (flat - step).reshape(x.shape))
        columns.append(((plus - minus) / (2 * eps)).ravel())
    return np.stack(columns, axis=1).reshape(x.shape + x.shape)


def _spd(x):
    """A symmetric positive definite matrix made from ``x`` (for logdet, cholesky)."""
    return gt.matmul(x, gt.transpose(x)) + gt.constant(np.eye(x.shape[0]) * 3.0)


A3 = rng.standard_normal((3, 3))
IDX = np.array([2, 0, 1, 1])

# A representative function per op family: scalar-valued, smooth at the test point.
FAMILIES = {
    "elementwise": (lambda x: gt.reduce_sum(gt.sin(x) * gt.exp(x) / (1.0 + x * x)
                                            + gt.tanh(x) ** 3 + gt.sqrt(x * x + 1.0)),
                    (4,)),
    "binary_broadcast": (lambda x: gt.reduce_sum(gt.maximum(x, 0.1 * x) * x[:, None]
                                                 + gt.power(gt.abs(x) + 1.0, x)), (3,)),
    "reduce": (lambda x: gt.reduce_logsumexp(x) + gt.reduce_prod(x) + gt.reduce_mean(x ** 3)
               + gt.reduce_max(x * x) + gt.reduce_std(x), (4,)),
    "scan": (lambda x: gt.reduce_sum(gt.cumsum(x) ** 2 + gt.cumprod(x) * x), (4,)),
    "shape": (lambda x: gt.reduce_sum(
        gt.concat([gt.reshape(x, (2, 3)), gt.transpose(gt.reshape(x * x, (3, 2)))], 0) ** 3)
        + gt.reduce_sum(gt.reshape(x, (2, 3)) * gt.broadcast_to(x[:3], (2, 3)))
        + gt.reduce_sum(gt.pad(gt.reshape(x, (2, 3)), [[1, 0], [0, 2]]) ** 3), (6,)),
    "index": (lambda x: gt.reduce_sum(x[1:] * x[:-1] * x[::-1][1:]
                                      + gt.gather(x, IDX[:3]) ** 3), (4,)),
    "matmul": (lambda x: gt.reduce_sum(gt.tanh(gt.matmul(gt.constant(A3), x)) ** 2
                                       * gt.matmul(x, gt.constant(A3))), (3,)),
    "linalg": (lambda x: gt.linalg.logdet(_spd(x)) + gt.reduce_sum(gt.linalg.inv(_spd(x)))
               + gt.reduce_sum(gt.linalg.cholesky(_spd(x)))
               + gt.reduce_sum(gt.linalg.solve(_spd(x), gt.constant(A3[:, :1]))), (3, 3)),
    "nn": (lambda x: gt.reduce_sum(gt.nn.softmax(x) * x) - gt.reduce_sum(gt.nn.log_softmax(
        x * 2.0)[:2]), (4,)),
    "einsum": (lambda x: gt.einsum("ij,jk,k->", x, x, x[0]), (2, 2)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_hessian_of_each_op_family_matches_differences_of_the_gradient(family, compile_mode):
    f, shape = FAMILIES[family]
    x = rng.uniform(0.3, 1.2, shape) * np.where(rng.random(shape) < 0.3, -1.0, 1.0)
    if family == "reduce":
        x = np.array([0.4, 1.1, -0.7, 0.9])  # a unique maximum of x * x
    expected = hessian_by_differences(f, x)
    for _ in range(2):  # the second round runs compiled code (compile_after=1 in the fixture)
        h = hessian_by_nested_tapes(f, x)
        np.testing.assert_allclose(h, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h.reshape(x.size, x.size), h.reshape(x.size, x.size).T,
                               rtol=1e-9, atol=1e-9)


def test_gt_check_grads_to_third_order_on_a_mixed_program():
    from gradtape.testing import check_grads

    check_grads(lambda x, w: gt.reduce_sum(gt.tanh(gt.matmul(x, w)) ** 2 * gt.sin(w[0])),
                [rng.standard_normal((2, 3)), rng.standard_normal((3, 2))], order=3)


# --- third derivatives of the elementwise ops -----------------------------------------------

UNARY_DERIVATIVES = {
    # name: (domain, third derivative)
    "sin": ((-2, 2), lambda x: -np.cos(x)),
    "cos": ((-2, 2), lambda x: np.sin(x)),
    "tan": ((-1, 1), lambda x: 2 * (1 + np.tan(x) ** 2) * (1 + 3 * np.tan(x) ** 2)),
    "exp": ((-2, 2), np.exp),
    "expm1": ((-2, 2), np.exp),
    "log": ((0.5, 2), lambda x: 2 / x ** 3),
    "log1p": ((-0.5, 2), lambda x: 2 / (1 + x) ** 3),
    "sqrt": ((0.5, 2), lambda x: 3 / 8 * x ** -2.5),
    "reciprocal": ((0.5, 2), lambda x: -6 / x ** 4),
    "square": ((-2, 2), lambda x: np.zeros_like(x)),
    "tanh": ((-2, 2), lambda x: -2 * (1 - np.tanh(x) ** 2) * (1 - 3 * np.tanh(x) ** 2)),
    "sinh": ((-2, 2), np.cosh),
    "cosh": ((-2, 2), np.sinh),
    "arctan": ((-2, 2), lambda x: (6 * x ** 2 - 2) / (1 + x ** 2) ** 3),
    "sigmoid": ((-3, 3), lambda x: (lambda s: s * (1 - s) * (1 - 6 * s + 6 * s * s))(
        1 / (1 + np.exp(-x)))),
    "softplus": ((-3, 3), lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-x)))),
    "cbrt": ((0.5, 2), lambda x: 10 / 27 * x ** (-8 / 3)),
    "arcsinh": ((-2, 2), lambda x: (2 * x ** 2 - 1) / (1 + x ** 2) ** 2.5),
}


def third_derivative(op, x):
    """d³/dx³ of an elementwise op at every element of ``x``: three nested tapes."""
    xt = gt.constant(x)
    with gt.GradientTape() as t3:
        t3.watch(xt)
        with gt.GradientTape() as t2:
            t2.watch(xt)
            with gt.GradientTape() as t1:
                t1.watch(xt)
                y = gt.reduce_sum(op(xt))
            d1 = t1.gradient(y, xt, unconnected_gradients="zero")
        d2 = t2.gradient(d1, xt, unconnected_gradients="zero")
    d3 = t3.gradient(d2, xt, unconnected_gradients="zero")
    return d1, d2, d3


@pytest.mark.parametrize("name", sorted(UNARY_DERIVATIVES))
def test_third_derivative_of_unary_ops(name, compile_mode):
    (lo, hi), expected = UNARY_DERIVATIVES[name]
    x = np.linspace(lo, hi, 5)
    for _ in range(2):
        _, _, d3 = third_derivative(getattr(gt, name), x)
        np.testing.assert_allclose(d3.numpy(), expected(x), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("x0", [2.0, -1.5])
def test_x_to_the_fourth(x0, compile_mode):
    x = np.array(x0)
    for _ in range(2):
        d1, d2, d3 = third_derivative(lambda t: t ** 4, x)
        assert np.isclose(d1.numpy(), 4 * x0 ** 3)
        assert np.isclose(d2.numpy(), 12 * x0 ** 2)
        assert np.isclose(d3.numpy(), 24 * x0)


@pytest.mark.parametrize("name", ["multiply", "divide", "power", "arctan2", "hypot"])
def test_third_derivative_of_binary_ops_matches_differences(name):
    op = getattr(gt, name)
    b = np.array([0.7, 1.3, 2.1])

    def second(x):
        return third_derivative(lambda t: op(t, gt.constant(b)), x)[1].numpy()

    x = np.array([0.6, 1.1, 1.7])
    eps = 1e-5
    expected = (second(x + eps) - second(x - eps)) / (2 * eps)
    np.testing.assert_allclose(third_derivative(lambda t: op(t, gt.constant(b)), x)[2].numpy(),
                               expected, rtol=1e-6, atol=1e-7)


# --- the call op ------------------------------------------------------------------------

def _nested_records(f, x):
    xt = gt.constant(x)
    with gt.GradientTape() as outer:
        outer.watch(xt)
        with gt.GradientTape() as inner:
            inner.watch(xt)
            y = f(xt)
        g = inner.gradient(y, xt)
    return outer, xt, g


def test_inner_gradient_is_one_call_op_on_the_outer_tape():
    x = rng.standard_normal(3)
    outer, _, _ = _nested_records(lambda t: gt.reduce_sum(gt.tanh(t) * gt.sin(t)), x)
    names = [r[0].name for r in outer._records]
    assert names.count("backward_call") == 1
    # The first-order ops, then the call: the inner backward's own ops are not recorded.
    assert names == ["tanh", "sin", "multiply", "sum", "backward_call"]


def test_call_ops_of_equal_structure_have_equal_params_and_others_differ():
    x = rng.standard_normal(3)

    def call_param(f):
        outer, _, _ = _nested_records(f, x)
        return outer._records[-1][3]["inner"]

    tanh_1, tanh_2 = (call_param(lambda t: gt.reduce_sum(gt.tanh(t))) for _ in range(2))
    sin = call_param(lambda t: gt.reduce_sum(gt.sin(t)))
    assert tanh_1 == tanh_2 and hash(tanh_1) == hash(tanh_2)
    assert tanh_1 != sin
    assert "backward" in repr(tanh_1)


def test_outer_key_includes_the_inner_program(compile_mode):
    """Two Hessians whose outer traces differ only in the inner backward: each gets its
    own outer backward (a key without the inner program would mix them up)."""
    x = rng.standard_normal(3)
    for _ in range(3):
        for op, second in ((gt.sin, lambda v: -np.sin(v)), (gt.cos, lambda v: -np.cos(v))):
            outer, xt, g = _nested_records(lambda t, op=op: gt.reduce_sum(op(t)), x)
            np.testing.assert_allclose(outer.gradient(g, xt).numpy(), second(x), rtol=1e-12)


def test_hessian_in_a_loop_with_fresh_tapes_compiles_once():
    a = gt.constant(rng.standard_normal((5, 4)))
    x = gt.constant(rng.standard_normal(4))
    gt.clear_cache()
    seen = []
    with gt.config(compile=True, compile_after=1):
        for _ in range(5):
            with gt.GradientTape() as outer:
                outer.watch(x)
                with gt.GradientTape() as inner:
                    inner.watch(x)
                    y = gt.reduce_sum(gt.tanh(gt.matmul(a, x)))
                g = inner.gradient(y, x)
            h = outer.jacobian(g, x)
            info = gt.cache_info()
            seen.append((info.misses, info.compiled, info.entries))
    assert seen[1:] == [seen[0]] * 4, seen  # nothing new after the first Hessian
    assert seen[0][1] >= 2  # the inner backward and the batched outer backward, compiled
    t = np.tanh(a.numpy() @ x.numpy())
    np.testing.assert_allclose(h.numpy(), a.numpy().T @ np.diag(-2 * t * (1 - t * t))
                               @ a.numpy(), rtol=1e-10)


def test_each_level_runs_generated_code():
    """With compile_after=1, every level's backward is generated code: the inner one
    (run by the call op), the outer one and the third level."""
    from gradtape.compiler.build import compile_listeners

    compiled = []
    compile_listeners.append(compiled.append)
    gt.clear_cache()
    try:
        with gt.config(compile=True, compile_after=1):
            third_derivative(lambda t: t ** 4, np.array(1.5))
    finally:
        compile_listeners.remove(compiled.append)
    assert len(compiled) == 3
    # The backward of a gradient shows the line that took it.
    assert sum("gradient(d1, xt" in c.source for c in compiled) >= 1


def test_gradient_penalty(compile_mode):
    """d/dw |d/dx f(x, w)|², against finite differences in w."""
    x0 = rng.standard_normal((2, 3))
    w0 = rng.standard_normal((3, 2))

    def penalty(w, keep_tensor=False):
        x = gt.constant(x0)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.reduce_sum(gt.sigmoid(gt.matmul(x, w)) ** 2)
        gx = inner.gradient(y, x)
        return gt.reduce_sum(gx * gx)

    for _ in range(2):
        w = gt.Variable(w0)
        with gt.GradientTape() as outer:
            p = penalty(w)
        dw = outer.gradient(p, w).numpy()
    eps = 1e-6
    expected = np.zeros_like(w0)
    for idx in np.ndindex(*w0.shape):
        step = np.zeros_like(w0)
        step[idx] = eps
        expected[idx] = (penalty(gt.constant(w0 + step)).numpy()
                         - penalty(gt.constant(w0 - step)).numpy()) / (2 * eps)
    np.testing.assert_allclose(dw, expected, rtol=1e-6, atol=1e-8)


def test_seed_and_output_gradients_are_differentiable_inputs_of_the_call():
    """outer.gradient of inner.gradient(y, x, output_gradients=v) with respect to v."""
    x = gt.constant(np.array([0.5, -1.0, 2.0]))
    v = gt.constant(np.array([1.0, 2.0, 3.0]))
    with gt.GradientTape() as outer:
        outer.watch([x, v])
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.sin(x)
        g = inner.gradient(y, x, output_gradients=v)  # v * cos(x)
        total = gt.reduce_sum(g * g)
    dx, dv = outer.gradient(total, [x, v])
    xs, vs = x.numpy(), v.numpy()
    np.testing.assert_allclose(dv.numpy(), 2 * vs * np.cos(xs) ** 2)
    np.testing.assert_allclose(dx.numpy(), -2 * vs ** 2 * np.cos(xs) * np.sin(xs))


def test_forward_over_backward_through_the_call_op(compile_mode):
    """An accumulator around an inner gradient: the call op's JVP rule gives H v."""
    a = rng.standard_normal((4, 3))
    x = gt.constant(rng.standard_normal(3))
    v = gt.constant(rng.standard_normal(3))
    for _ in range(2):
        with gt.ForwardAccumulator(x, v) as acc:
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = gt.reduce_sum(gt.tanh(gt.matmul(gt.constant(a), x)) ** 2)
            g = tape.gradient(y, x)
        hv = acc.jvp(g).numpy()
    h = hessian_by_nested_tapes(
        lambda t: gt.reduce_sum(gt.tanh(gt.matmul(gt.constant(a), t)) ** 2), x.numpy())
    np.testing.assert_allclose(hv, h @ v.numpy(), rtol=1e-10)


def test_variables_and_mixed_partials(compile_mode):
    # f = a² b³ c: d²f/(da db) = 6 a b² c; the inner gradient is with respect to a.
    a, b, c = gt.Variable(2.0), gt.Variable(3.0), gt.Variable(0.5)
    for _ in range(2):
        with gt.GradientTape() as outer:
            with gt.GradientTape() as inner:
                f = a ** 2 * b ** 3 * c
            df_da = inner.gradient(f, a)
        d_b, d_c = outer.gradient(df_da, [b, c])
    assert d_b.numpy() == pytest.approx(6 * 2 * 9 * 0.5)
    assert d_c.numpy() == pytest.approx(2 * 2 * 27)


# --- custom_gradient and stop_gradient under nesting ----------------------------------------

def test_custom_gradient_keeps_op_by_op_recording():
    """A backward through a custom gradient runs grad_fn on tensors, so the outer tape
    sees grad_fn's own ops (TF's semantics), not a call op."""
    @gt.custom_gradient
    def cube(x):
        def grad_fn(upstream):
            return upstream * 3.0 * x * x

        return x * x * x, grad_fn

    x = gt.constant(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        g = inner.gradient(y, x)
    assert "backward_call" not in [r[0].name for r in outer._records]
    assert g.numpy() == 12.0
    assert outer.gradient(g, x).numpy() == 12.0  # d/dx 3x² = 6x


def test_stop_gradient_under_nesting():
    # y = x² sg(x): the stopped value is a constant for both tapes (as in TF), so
    # dy/dx = 2x sg(x) = 18 and d/dx (2x sg(x)) = 2 sg(x) = 6.
    x = gt.constant(3.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = x * x * gt.stop_gradient(x)
        g = inner.gradient(y, x)
    assert g.numpy() == 18.0
    assert outer.gradient(g, x).numpy() == 6.0
    # A gradient made only of stopped values is unconnected for the outer tape.
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = x * gt.stop_gradient(x * x)
        g = inner.gradient(y, x)
    assert g.numpy() == 9.0 and outer.gradient(g, x) is None


def test_unconnected_inner_gradient_under_an_outer_tape():
    x, z = gt.constant(1.0), gt.constant(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch([x, z])
            y = x * 3.0
        gx, gz = inner.gradient(y, [x, z])
    assert gz is None and gx.numpy() == 3.0
    assert outer.gradient(gx, x) is None  # a constant gradient


# --- the Newton example -----------------------------------------------------------------

def test_newton_example_converges(capsys):
    result = runpy.run_path(str(EXAMPLES / "newton.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "converged" in out
    x, expected = result["solution"], result["expected"]
    np.testing.assert_allclose(x, expected, rtol=1e-8, atol=1e-10)


# --- docs/higher-order.md stays true ----------------------------------------------------------

def test_docs_snippets_run_and_say_what_they_compute():
    import re

    text = (EXAMPLES.parent / "docs" / "higher-order.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace: dict = {}
    for block in blocks:
        if block.startswith("def backward"):
            continue  # generated code, shown for reading
        exec(compile(block, "higher-order.md", "exec"), namespace)
    assert namespace["d2y_dx2"].numpy() == 30.0
    np.testing.assert_array_equal(namespace["gx"].numpy(), [[66.0, 88.0]])
    assert namespace["j"].shape == (64, 64) and namespace["jb"].shape == (256, 16, 32)
    x = namespace["x"].numpy()
    np.testing.assert_allclose(namespace["h"].numpy(),
                               np.diag(2 * np.cos(x) - x * np.sin(x)), rtol=1e-6)


def test_docs_show_the_generated_jacobian_backward():
    text = (EXAMPLES.parent / "docs" / "higher-order.md").read_text()
    a = gt.constant(np.random.default_rng(0).standard_normal((64, 64)))
    x = gt.constant(np.random.default_rng(1).standard_normal(64))
    gt.clear_cache()
    with gt.config(compile=True, compile_after=1):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.tanh(gt.matmul(a, x))
        tape.jacobian(y, x)
    (batched,) = [e for k, e in backward_cache._data.items() if k[0] == "batched"]
    body = batched.compiled.source.split("def backward")[1]
    shown = text.split("def backward")[1].split("```")[0]
    strip = [line.strip() for line in body.splitlines() if not line.strip().startswith("#")]
    assert strip == [line.strip() for line in shown.splitlines()
                     if not line.strip().startswith("#")]


def _count_pruned_jacobians(monkeypatch) -> list:
    """Each general-path lookup of a jacobian (``lookup.find`` with no owner: it prunes)."""
    from gradtape.tape import lookup

    pruned, real = [], lookup.find
    monkeypatch.setattr(lookup, "find", lambda *a: pruned.append(a[5] is None) or real(*a))
    return pruned


def test_a_jacobian_under_an_outer_tape_reruns_its_call_op_on_new_values(monkeypatch):
    """After its first step, a jacobian of a known tape under an outer tape runs the same
    call op by the whole-tape rung (no pruning), on this step's values and variable;
    the outer tape differentiates it (third derivatives of sum(x**4 * w))."""
    gt.clear_cache()
    pruned = _count_pruned_jacobians(monkeypatch)
    w = gt.Variable(np.array([1.5, -0.5, 2.0]))
    for step in range(4):
        xv = np.array([0.3, -1.2, 0.7]) * (step + 1)
        w.assign(w.numpy() + 0.25)
        wv = w.numpy()
        x = gt.constant(xv)
        with gt.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with gt.GradientTape() as middle:
                middle.watch(x)
                with gt.GradientTape() as inner:
                    inner.watch(x)
                    y = gt.reduce_sum(x ** 4 * w)
                g = inner.gradient(y, x)
            h = middle.jacobian(g, x)
        np.testing.assert_allclose(h.numpy(), np.diag(12 * xv ** 2 * wv), rtol=1e-12)
        np.testing.assert_allclose(outer.gradient(h, x).numpy(), 24 * xv * wv, rtol=1e-12)
        np.testing.assert_allclose(outer.gradient(h, w).numpy(), 12 * xv ** 2, rtol=1e-12)
    assert sum(pruned) == 1, pruned  # the first step's middle jacobian only


def test_a_jacobian_under_a_forward_accumulator_reruns_its_call_op_on_new_values(
        monkeypatch):
    gt.clear_cache()
    pruned = _count_pruned_jacobians(monkeypatch)
    v = np.array([1.0, 0.5, -2.0])
    for step in range(3):
        xv = np.array([0.3, -1.2, 0.7]) * (step + 1)
        x = gt.constant(xv)
        with gt.autodiff.ForwardAccumulator(x, v) as acc:
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = x ** 3
            j = tape.jacobian(y, x)
        np.testing.assert_allclose(j.numpy(), np.diag(3 * xv ** 2), rtol=1e-12)
        np.testing.assert_allclose(acc.jvp(j).numpy(), np.diag(6 * xv * v), rtol=1e-12)
    assert sum(pruned) == 1, pruned
