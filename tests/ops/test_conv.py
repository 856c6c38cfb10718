"""tf.nn's convolutions: values against a direct loop of TF's definition (SAME padding
arithmetic on odd sizes, every stride and dilation, both data formats), transposes as
exact adjoints, VJP/JVP/second order against finite differences in float64, batching,
compiled against eager, Dask chunked along the batch, and TF's errors."""

import itertools

import numpy as np
import pytest

import gradtape as gt
from gradtape.ops.conv.general import conv_general
from gradtape.testing import check_grads

RNG = np.random.default_rng(7)


def tf_same_pads(size, k, s, d):
    """TF's SAME: out = ceil(in/s), pad_total = max((out-1)*s + (k-1)*d + 1 - in, 0)."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def loop_conv(x, w, strides, pads, dilations, groups=1):
    """TF's convolution by its definition, channels-last:
    out[n, p, o] = sum_{k, c} xpad[n, p*s + k*d, group(o) c] w[k, c, o]."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    window, ci, n_out = w.shape[:-2], w.shape[-2], w.shape[-1]
    out_sizes = [(xp.shape[1 + i] - (window[i] - 1) * dilations[i] - 1) // strides[i] + 1
                 for i in range(nd)]
    y = np.zeros((x.shape[0], *out_sizes, n_out))
    per_group = n_out // groups
    for pos in itertools.product(*map(range, out_sizes)):
        for k in itertools.product(*map(range, window)):
            idx = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, dilations))
            patch = xp[(slice(None), *idx)]                          # (N, C)
            for o in range(n_out):
                g = o // per_group
                y[(slice(None), *pos, o)] += patch[:, g * ci:(g + 1) * ci] @ w[k][:, o]
    return y


def _pads(padding, spatial, window, strides, dilations):
    if padding == "VALID":
        return [(0, 0)] * len(spatial)
    return [tf_same_pads(n, k, s, d) for n, k, s, d in zip(spatial, window, strides, dilations)]


# --- values -------------------------------------------------------------------------------

@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride,dilation", [(1, 1), (2, 1), (3, 1), (1, 2), (1, 3)])
@pytest.mark.parametrize("size", [5, 6, 7])
def test_conv2d_matches_tf_definition_on_odd_and_even_sizes(padding, stride, dilation, size):
    x = RNG.normal(size=(2, size + 2, size, 3))
    w = RNG.normal(size=(3, 2, 3, 4))
    got = gt.nn.conv2d(x, w, strides=stride, padding=padding, dilations=dilation)
    pads = _pads(padding, x.shape[1:3], w.shape[:2], (stride,) * 2, (dilation,) * 2)
    want = loop_conv(x, w, (stride,) * 2, pads, (dilation,) * 2)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    if padding == "SAME":
        assert got.shape[1:3] == (-(-(size + 2) // stride), -(-size // stride))


def test_same_padding_puts_the_extra_pixel_after():
    # in 4, k 2, s 2: out 2, pad_total 0; in 5, k 2, s 2: out 3, total 1 -> (0, 1)
    x = np.arange(5.0).reshape(1, 5, 1)
    w = np.ones((2, 1, 1))
    y = gt.nn.conv1d(x, w, stride=2, padding="SAME")
    np.testing.assert_allclose(y.numpy()[0, :, 0], [0 + 1, 2 + 3, 4 + 0])
    # in 5, k 4, s 1: total 3 -> 1 before, 2 after
    y = gt.nn.conv1d(x, np.ones((4, 1, 1)), stride=1, padding="SAME")
    np.testing.assert_allclose(y.numpy()[0, :, 0], [0 + 1 + 2, 6, 10, 9, 7])


@pytest.mark.parametrize("strides", [(1, 1, 1), (2, 1, 2)])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv3d_and_conv1d_match_the_loop(strides, padding):
    x = RNG.normal(size=(2, 5, 4, 5, 2))
    w = RNG.normal(size=(2, 3, 2, 2, 3))
    got = gt.nn.conv3d(x, w, strides=[1, *strides, 1], padding=padding)
    want = loop_conv(x, w, strides, _pads(padding, x.shape[1:4], w.shape[:3], strides,
                                          (1, 1, 1)), (1, 1, 1))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    x1 = RNG.normal(size=(3, 9, 2))
    w1 = RNG.normal(size=(3, 2, 4))
    dilation = 3 - strides[0]  # a stride or a dilation, never both (TF)
    got1 = gt.nn.conv1d(x1, w1, stride=strides[0], padding=padding, dilations=dilation)
    want1 = loop_conv(x1, w1, (strides[0],), _pads(padding, (9,), (3,), (strides[0],),
                                                    (dilation,)), (dilation,))
    np.testing.assert_allclose(got1.numpy(), want1, atol=1e-12)


def test_explicit_padding_and_channels_first():
    x = RNG.normal(size=(2, 3, 5, 6))  # NCHW
    w = RNG.normal(size=(3, 3, 3, 2))
    pads = [[0, 0], [0, 0], [2, 1], [0, 3]]
    got = gt.nn.conv2d(x, w, strides=[1, 1, 2, 1], padding=pads, data_format="NCHW")
    want = loop_conv(x.transpose(0, 2, 3, 1), w, (2, 1), [(2, 1), (0, 3)], (1, 1))
    np.testing.assert_allclose(got.numpy(), want.transpose(0, 3, 1, 2), atol=1e-12)
    x1 = RNG.normal(size=(2, 3, 7))  # NCW
    w1 = RNG.normal(size=(2, 3, 4))
    got1 = gt.nn.conv1d(x1, w1, 1, "SAME", data_format="NCW", dilations=2)
    want1 = loop_conv(x1.transpose(0, 2, 1), w1, (1,), [tf_same_pads(7, 2, 1, 2)], (2,))
    np.testing.assert_allclose(got1.numpy(), want1.transpose(0, 2, 1), atol=1e-12)


def test_grouped_conv2d_and_convolution():
    x = RNG.normal(size=(2, 5, 5, 6))
    w = RNG.normal(size=(3, 3, 2, 9))  # 3 groups of 2 input channels, 3 outputs each
    got = gt.nn.convolution(x, w, padding="SAME")
    want = loop_conv(x, w, (1, 1), [(1, 1), (1, 1)], (1, 1), groups=3)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_depthwise_and_separable_conv2d_by_definition():
    x = RNG.normal(size=(2, 6, 5, 3))
    dw = RNG.normal(size=(3, 3, 3, 2))
    got = gt.nn.depthwise_conv2d(x, dw, strides=[1, 2, 2, 1], padding="SAME")
    pads = [tf_same_pads(6, 3, 2, 1), tf_same_pads(5, 3, 2, 1)]
    for c in range(3):
        for m in range(2):
            want = loop_conv(x[..., c:c + 1], dw[:, :, c:c + 1, m:m + 1], (2, 2), pads, (1, 1))
            np.testing.assert_allclose(got.numpy()[..., c * 2 + m], want[..., 0], atol=1e-12)
    pw = RNG.normal(size=(1, 1, 6, 4))
    sep = gt.nn.separable_conv2d(x, dw, pw, strides=[1, 2, 2, 1], padding="SAME")
    np.testing.assert_allclose(sep.numpy(), got.numpy() @ pw[0, 0], atol=1e-12)


# --- transposes: the exact adjoint ----------------------------------------------------------

@pytest.mark.parametrize("stride,padding,dilation,size", [
    (2, "SAME", 1, 7), (2, "VALID", 1, 7), (3, "SAME", 1, 8), (1, "SAME", 2, 6),
    (1, "VALID", 1, 5), (2, "SAME", 1, 6)])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(stride, padding, dilation, size):
    w = RNG.normal(size=(3, 3, 2, 4))      # conv2d: 2 -> 4; transpose: 4 -> 2
    x = RNG.normal(size=(2, size, size, 2))
    y_shape = gt.nn.conv2d(x, w, stride, padding, dilations=dilation).shape
    y = RNG.normal(size=y_shape)
    xt = gt.nn.conv2d_transpose(y, w, [2, size, size, 2], stride, padding,
                                dilations=dilation)
    lhs = np.vdot(gt.nn.conv2d(x, w, stride, padding, dilations=dilation).numpy(), y)
    np.testing.assert_allclose(lhs, np.vdot(x, xt.numpy()), rtol=1e-12)


def test_conv1d_conv3d_and_depthwise_transposes_are_adjoints():
    w1 = RNG.normal(size=(3, 2, 3))
    x1 = RNG.normal(size=(2, 9, 2))
    y1 = RNG.normal(size=(2, 5, 3))
    t1 = gt.nn.conv1d_transpose(y1, w1, [2, 9, 2], 2, "SAME")
    np.testing.assert_allclose(np.vdot(gt.nn.conv1d(x1, w1, 2, "SAME").numpy(), y1),
                               np.vdot(x1, t1.numpy()), rtol=1e-12)
    w3 = RNG.normal(size=(2, 2, 2, 2, 3))
    x3 = RNG.normal(size=(1, 4, 5, 4, 2))
    y3 = RNG.normal(size=(1, 2, 3, 2, 3))
    t3 = gt.nn.conv3d_transpose(y3, w3, [1, 4, 5, 4, 2], [1, 2, 2, 2, 1], "SAME")
    np.testing.assert_allclose(
        np.vdot(gt.nn.conv3d(x3, w3, [1, 2, 2, 2, 1], "SAME").numpy(), y3),
        np.vdot(x3, t3.numpy()), rtol=1e-12)
    dw = RNG.normal(size=(3, 3, 2, 2))
    x = RNG.normal(size=(2, 7, 7, 2))
    y = RNG.normal(size=(2, 4, 4, 4))
    back = gt.nn.depthwise_conv2d_backprop_input([2, 7, 7, 2], dw, y, [1, 2, 2, 1], "SAME")
    np.testing.assert_allclose(
        np.vdot(gt.nn.depthwise_conv2d(x, dw, [1, 2, 2, 1], "SAME").numpy(), y),
        np.vdot(x, back.numpy()), rtol=1e-12)


def test_backprop_functions_equal_the_tape_gradients():
    x = gt.constant(RNG.normal(size=(2, 7, 6, 4)))
    w = gt.constant(RNG.normal(size=(3, 2, 2, 6)))  # grouped: 2 groups
    dw = gt.constant(RNG.normal(size=(3, 3, 4, 2)))
    g = RNG.normal(size=(2, 4, 3, 6))
    gd = RNG.normal(size=(2, 4, 3, 8))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, w, dw])
        y = gt.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
        yd = gt.nn.depthwise_conv2d(x, dw, [1, 2, 2, 1], "SAME")
    gx, gw = tape.gradient(y, [x, w], output_gradients=gt.constant(g))
    gdx, gdw = tape.gradient(yd, [x, dw], output_gradients=gt.constant(gd))
    np.testing.assert_allclose(gt.nn.conv2d_backprop_input(
        [2, 7, 6, 4], w, g, [1, 2, 2, 1], "SAME").numpy(), gx.numpy(), atol=1e-12)
    np.testing.assert_allclose(gt.nn.conv2d_backprop_filter(
        x, [3, 2, 2, 6], g, [1, 2, 2, 1], "SAME").numpy(), gw.numpy(), atol=1e-12)
    np.testing.assert_allclose(gt.nn.depthwise_conv2d_backprop_input(
        [2, 7, 6, 4], dw, gd, [1, 2, 2, 1], "SAME").numpy(), gdx.numpy(), atol=1e-12)
    np.testing.assert_allclose(gt.nn.depthwise_conv2d_backprop_filter(
        x, [3, 3, 4, 2], gd, [1, 2, 2, 1], "SAME").numpy(), gdw.numpy(), atol=1e-12)


def test_conv2d_transpose_channels_first_and_documented_shape():
    y = RNG.normal(size=(1, 4, 3, 3))  # NCHW, 4 channels
    w = RNG.normal(size=(2, 2, 5, 4))
    out = gt.nn.conv2d_transpose(y, w, [1, 5, 6, 6], strides=2, data_format="NCHW")
    nhwc = gt.nn.conv2d_transpose(y.transpose(0, 2, 3, 1), w, [1, 6, 6, 5], strides=2)
    assert out.shape == (1, 5, 6, 6)
    np.testing.assert_allclose(out.numpy(), nhwc.numpy().transpose(0, 3, 1, 2), atol=1e-12)
    # stride 2, 2x2 kernel, VALID-like placement: each input pixel paints its own block
    ones = gt.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), np.ones((2, 2, 1, 1)),
                                  [1, 4, 4, 1], 2, "VALID")
    np.testing.assert_allclose(ones.numpy(), np.ones((1, 4, 4, 1)))


# --- derivatives ----------------------------------------------------------------------------

GRAD_CASES = [
    ("conv2d_same_stride2", lambda x, w: gt.nn.conv2d(x, w, 2, "SAME"), (2, 5, 6, 2),
     (3, 3, 2, 3)),
    ("conv2d_valid_dilated", lambda x, w: gt.nn.conv2d(x, w, 1, "VALID", dilations=2),
     (2, 6, 6, 2), (2, 2, 2, 3)),
    ("conv2d_nchw_explicit", lambda x, w: gt.nn.conv2d(
        x, w, [1, 1, 2, 1], [[0, 0], [0, 0], [1, 2], [0, 1]], data_format="NCHW"),
     (2, 2, 5, 4), (2, 3, 2, 2)),
    ("conv2d_grouped", lambda x, w: gt.nn.conv2d(x, w, 1, "SAME"), (1, 4, 4, 4),
     (3, 3, 2, 4)),
    ("conv1d", lambda x, w: gt.nn.conv1d(x, w, 2, "SAME"), (2, 7, 2), (3, 2, 3)),
    ("conv3d", lambda x, w: gt.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"), (1, 4, 3, 3, 2),
     (2, 2, 2, 2, 2)),
    ("depthwise", lambda x, w: gt.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"),
     (2, 5, 5, 2), (3, 3, 2, 2)),
    ("conv2d_transpose", lambda y, w: gt.nn.conv2d_transpose(y, w, [2, 7, 7, 2], 2, "SAME"),
     (2, 4, 4, 3), (3, 3, 2, 3)),
    ("conv1d_transpose_valid", lambda y, w: gt.nn.conv1d_transpose(
        y, w, [2, 9, 2], 2, "VALID"), (2, 4, 3), (3, 2, 3)),
]


@pytest.mark.parametrize("name,f,x_shape,w_shape", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_vjp_and_second_order_against_finite_differences(name, f, x_shape, w_shape):
    check_grads(f, (RNG.normal(size=x_shape), RNG.normal(size=w_shape)), order=2)


@pytest.mark.parametrize("name,f,x_shape,w_shape", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_jvp_against_finite_differences(name, f, x_shape, w_shape, check_jvp):
    check_jvp(f, (RNG.normal(size=x_shape), RNG.normal(size=w_shape)))


def test_separable_conv2d_gradients():
    f = lambda x, d, p: gt.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME")  # noqa: E731
    check_grads(f, (RNG.normal(size=(1, 4, 4, 2)), RNG.normal(size=(2, 2, 2, 2)),
                    RNG.normal(size=(1, 1, 4, 3))), order=2)


@pytest.mark.parametrize("fg,bg,strides,ld,rd", [
    (1, 1, (2, 1), (1, 1), (1, 2)), (2, 1, (1, 2), (2, 1), (1, 1)),
    (1, 2, (1, 1), (1, 1), (2, 1)), (1, 2, (2, 2), (1, 1), (1, 1))])
def test_the_general_primitive_is_closed_under_differentiation(fg, bg, strides, ld, rd):
    """Batch groups and input dilation arise only in derivatives: their own derivatives
    (third order of a user's conv) must be right too."""
    def f(a, b):
        return conv_general(a, b, strides=strides, padding=((1, -1), (0, 2)),
                            lhs_dilation=ld, rhs_dilation=rd, feature_group_count=fg,
                            batch_group_count=bg)
    check_grads(f, (RNG.normal(size=(4, 5, 4, 4)), RNG.normal(size=(2, 3, 4 // fg, 6))),
                order=2)


def test_wgan_gp_style_gradient_penalty_of_a_conv_matches_finite_differences():
    """d/dw of || d conv(x, w) . v / dx ||^2: the gradient of a conv's gradient."""
    x = RNG.normal(size=(2, 5, 5, 2))
    v = RNG.normal(size=(2, 3, 3, 3))

    def penalty(w):
        w = gt.constant(w)
        xs = gt.constant(x)
        with gt.GradientTape() as outer:
            outer.watch(w)
            with gt.GradientTape() as inner:
                inner.watch(xs)
                critic = gt.reduce_sum(gt.nn.conv2d(xs, w, 2, "SAME") * v)
            gx = inner.gradient(critic, xs)
            p = gt.reduce_sum(gx * gx)
        return p, outer.gradient(p, w)

    w0 = RNG.normal(size=(3, 3, 2, 3))
    _, grad = penalty(w0)
    eps, fd = 1e-6, np.zeros_like(w0)
    for i in np.ndindex(w0.shape):
        dw = np.zeros_like(w0)
        dw[i] = eps
        fd[i] = (penalty(w0 + dw)[0].numpy() - penalty(w0 - dw)[0].numpy()) / (2 * eps)
    np.testing.assert_allclose(grad.numpy(), fd, rtol=1e-6, atol=1e-8)


# --- batching, compiled code, Dask ---------------------------------------------------------------

def _batched_program_matches_a_loop(f, arrays, batched, size=3):
    """The program of ``f`` vectorized over a leading axis equals it run per element, and
    stays one ``conv_general`` (its own rule; the fallback loops per element)."""
    from gradtape.ad import batching
    from gradtape.ir import interpreter
    from gradtape.ir.builder import Builder
    from gradtape.ir.nodes import Aval, Var

    inputs = [Var(Aval(a.shape, a.dtype)) for a in arrays]
    with Builder() as b:
        out = f(*inputs)
    program = b.program(inputs, [out])
    values = [RNG.normal(size=(size, *a.shape)) if flag else a
              for a, flag in zip(arrays, batched)]
    vectorized = batching.batch_program(program, batched, size)
    got = interpreter.run(vectorized, values)[0]
    want = np.stack([interpreter.run(program, [v[i] if flag else v
                                               for v, flag in zip(values, batched)])[0]
                     for i in range(size)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    convs = [e for e in vectorized.eqns if e.prim.name == "conv_general"]
    assert len(convs) == 1, [e.prim.name for e in vectorized.eqns]


@pytest.mark.parametrize("batched", [[True, False], [False, True], [True, True]])
@pytest.mark.parametrize("groups", [1, 2])
def test_batching_rule(batched, groups):
    def f(x, w):
        return conv_general(x, w, strides=(2, 1), padding=((1, 1), (0, 1)),
                            rhs_dilation=(1, 2), feature_group_count=groups)
    _batched_program_matches_a_loop(
        f, (RNG.normal(size=(2, 5, 5, 4)), RNG.normal(size=(2, 2, 4 // groups, 4))), batched)


@pytest.mark.parametrize("batched", [[True, False], [False, True]])
def test_batching_rule_with_batch_groups(batched):
    def f(x, w):
        return conv_general(x, w, strides=(1, 1), padding=((0, 1), (1, 0)),
                            batch_group_count=2)
    _batched_program_matches_a_loop(
        f, (RNG.normal(size=(4, 4, 4, 3)), RNG.normal(size=(2, 2, 3, 4))), batched)


def test_jacobian_and_vectorized_map_of_a_conv():
    x = RNG.normal(size=(1, 4, 4, 1))
    w = gt.constant(RNG.normal(size=(2, 2, 1, 2)))
    xs = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xs)
        y = gt.nn.conv2d(xs, w, 2, "VALID")
    jac = tape.jacobian(y, xs).numpy()
    for i in np.ndindex(y.shape):  # a VALID stride-2 conv: each output sees its block
        b, r, c, o = i
        expected = np.zeros_like(x)
        expected[0, 2 * r:2 * r + 2, 2 * c:2 * c + 2, 0] = w.numpy()[:, :, 0, o]
        np.testing.assert_allclose(jac[i], expected)
    batch = RNG.normal(size=(3, 1, 4, 4, 1))
    mapped = gt.vectorized_map(lambda t: gt.nn.conv2d(t, w, 1, "SAME"), gt.constant(batch))
    for k in range(3):
        np.testing.assert_allclose(mapped.numpy()[k],
                                   gt.nn.conv2d(batch[k], w, 1, "SAME").numpy(), atol=1e-12)


def test_function_compiled_equals_eager():
    x = gt.constant(RNG.normal(size=(2, 6, 6, 2)))
    w = gt.Variable(RNG.normal(size=(3, 3, 2, 4)))
    wt = gt.Variable(RNG.normal(size=(3, 3, 2, 4)))

    def step(x):
        with gt.GradientTape() as tape:
            y = gt.nn.relu(gt.nn.conv2d(x, w, 2, "SAME"))
            z = gt.nn.conv2d_transpose(y, wt, [2, 6, 6, 2], 2, "SAME")
            loss = gt.reduce_sum(z * z)
        return loss, tape.gradient(loss, [w, wt])

    eager = step(x)
    compiled = gt.function(step)
    for _ in range(2):  # the traced call, then the warm call
        got = compiled(x)
        np.testing.assert_allclose(got[0].numpy(), eager[0].numpy(), rtol=1e-12)
        for a, b in zip(got[1], eager[1]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    with gt.config(compile=False):
        interpreted = gt.function(step)(x)
    np.testing.assert_allclose(interpreted[0].numpy(), eager[0].numpy(), rtol=1e-12)


def test_dask_chunked_along_batch_equals_numpy():
    da = pytest.importorskip("dask.array")
    x = RNG.normal(size=(6, 5, 5, 2))
    w = RNG.normal(size=(3, 3, 2, 4))

    def value_and_grads(x_value):
        xv, wv = gt.Variable(x_value), gt.Variable(w)
        with gt.GradientTape() as tape:
            y = gt.nn.conv2d(xv, wv, 2, "SAME")
            loss = gt.reduce_sum(y * y)
        return y, tape.gradient(loss, [xv, wv])

    y_lazy, (gx_lazy, gw_lazy) = value_and_grads(da.from_array(x, chunks=(2, 5, 5, 2)))
    assert isinstance(y_lazy._value, da.Array) and isinstance(gx_lazy._value, da.Array)
    assert y_lazy._value.chunks[0] == (2, 2, 2)
    y, (gx, gw) = value_and_grads(x)
    np.testing.assert_allclose(np.asarray(y_lazy._value), y.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx_lazy._value), gx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gw_lazy._value), gw.numpy(), rtol=1e-12)


# --- TF's errors -----------------------------------------------------------------------------

def test_errors_as_tf_raises_them():
    x = np.zeros((1, 5, 5, 3), np.float32)
    w = np.zeros((3, 3, 3, 2), np.float32)
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction"):
        gt.nn.conv2d(x, w, 2, "SAME", dilations=2)
    with pytest.raises(gt.errors.InvalidArgumentError, match="evenly divisible by filter "
                                                             "depth: 3 vs 2"):
        gt.nn.conv2d(x, np.zeros((3, 3, 2, 2), np.float32), 1, "SAME")
    with pytest.raises(gt.errors.InvalidArgumentError, match="output size would be negative"):
        gt.nn.conv2d(x[:, :1, :1], w, 1, "VALID")
    with pytest.raises(gt.errors.InvalidArgumentError, match="batch and depth"):
        gt.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="padding must be 'SAME', 'VALID'"):
        gt.nn.conv2d(x, w, 1, "same")
    with pytest.raises(gt.errors.InvalidArgumentError, match="batch and channel"):
        gt.nn.conv2d(x, w, 1, [[0, 0], [1, 1], [1, 1], [1, 0]])
    with pytest.raises(ValueError, match="data_format must be 'NHWC' or 'NCHW'"):
        gt.nn.conv2d(x, w, 1, "SAME", data_format="channels_last")
    with pytest.raises(ValueError, match="input must be 4-dimensional"):
        gt.nn.conv2d(x[0], w, 1, "SAME")
    with pytest.raises(gt.errors.InvalidArgumentError, match="float64 but filters is float32"):
        gt.nn.conv2d(x.astype(np.float64), w, 1, "SAME")
    with pytest.raises(gt.errors.InvalidArgumentError, match="Size of out_backprop doesn't "
                                                             "match computed"):
        gt.nn.conv2d_transpose(np.zeros((1, 3, 3, 2), np.float32), w, [1, 8, 8, 3], 2, "SAME")
    with pytest.raises(gt.errors.InvalidArgumentError, match="same depth"):
        gt.nn.depthwise_conv2d(x, np.zeros((3, 3, 2, 1), np.float32), [1, 1, 1, 1], "SAME")


def test_every_channels_first_format_equals_channels_last():
    x2, x3 = RNG.normal(size=(2, 6, 5, 3)), RNG.normal(size=(1, 4, 5, 4, 2))
    dw, w3 = RNG.normal(size=(3, 3, 3, 2)), RNG.normal(size=(2, 2, 2, 2, 3))
    pw = RNG.normal(size=(1, 1, 6, 4))
    cases = [
        (lambda x, f: gt.nn.depthwise_conv2d(x, dw, [1, 1, 2, 2] if f else [1, 2, 2, 1],
                                             "SAME", data_format="NCHW" if f else None), x2),
        (lambda x, f: gt.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID",
                                             data_format="NCHW" if f else None), x2),
        (lambda x, f: gt.nn.conv3d(x, w3, [1, 1, 2, 1, 1] if f else [1, 2, 1, 1, 1], "SAME",
                                   data_format="NCDHW" if f else "NDHWC"), x3),
    ]
    for f, x in cases:
        last = f(x, False).numpy()
        first = f(np.moveaxis(x, -1, 1), True).numpy()
        np.testing.assert_allclose(first, np.moveaxis(last, -1, 1), atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_strides_larger_than_the_kernel_skip_pixels_and_differentiate(padding):
    x, w = RNG.normal(size=(2, 7, 8, 2)), RNG.normal(size=(2, 2, 2, 3))
    got = gt.nn.conv2d(x, w, 3, padding)
    pads = _pads(padding, (7, 8), (2, 2), (3, 3), (1, 1))
    np.testing.assert_allclose(got.numpy(), loop_conv(x, w, (3, 3), pads, (1, 1)), atol=1e-12)
    check_grads(lambda a, b: gt.nn.conv2d(a, b, 3, padding), (x, w), order=2)
    y_shape = (2, 3, 3, 3) if padding == "SAME" else (2, 2, 3, 3)
    check_grads(lambda a, b: gt.nn.conv2d_transpose(a, b, [2, 7, 8, 2], 3, padding),
                (RNG.normal(size=y_shape), w), order=1)


def test_a_kernel_as_large_as_the_image_and_an_empty_batch():
    x, w = RNG.normal(size=(3, 4, 4, 2)), RNG.normal(size=(4, 4, 2, 5))
    got = gt.nn.conv2d(x, w, 1, "VALID")  # a dense layer over the flattened image
    np.testing.assert_allclose(got.numpy()[:, 0, 0], x.reshape(3, -1) @ w.reshape(-1, 5),
                               atol=1e-12)
    check_grads(lambda a, b: gt.nn.conv2d(a, b, 1, "VALID"), (x, w), order=2)
    empty = gt.constant(np.zeros((0, 5, 5, 3), np.float32))
    kernel = gt.Variable(np.ones((3, 3, 3, 2), np.float32))
    with gt.GradientTape() as tape:
        y = gt.nn.conv2d(empty, kernel, 1, "SAME")
        loss = gt.reduce_sum(y)
    assert y.shape == (0, 5, 5, 2)
    np.testing.assert_array_equal(tape.gradient(loss, kernel).numpy(), 0)
