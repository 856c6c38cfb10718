"""Fourier transforms (ops/fft.py): ``np.fft`` on tensors gives NumPy's values and dtypes
for every argument form; derivatives match finite differences in float64 to 2nd order in
reverse and forward mode (complex inputs and outputs through real losses, checking TF's
conjugate convention); compiled equals interpreted; the primitives batch; ``gt.signal``
follows TF."""

import warnings

import numpy as np
import pytest
from complex_testing import numeric_complex_gradient, real_loss

import gradtape as gt
from gradtape.ops import fft as gfft
from gradtape.testing import check_grads

rng = np.random.default_rng(7)

# (id, the call, input shape, complex input): run on tensors and on arrays alike.
CASES = [
    ("fft", lambda x: np.fft.fft(x), (3, 5), False),
    ("fft_ortho_axis0", lambda x: np.fft.fft(x, axis=0, norm="ortho"), (5, 3), False),
    ("fft_n_bigger_forward", lambda x: np.fft.fft(x, 7, norm="forward"), (3, 5), True),
    ("ifft_n_smaller", lambda x: np.fft.ifft(x, 3), (3, 5), True),
    ("fft2", lambda x: np.fft.fft2(x), (3, 4), True),
    ("ifft2_s_axes", lambda x: np.fft.ifft2(x, s=[5, 2], axes=[0, 2]), (4, 2, 4), True),
    ("fftn", lambda x: np.fft.fftn(x), (2, 3, 4), False),
    ("fftn_s_axes", lambda x: np.fft.fftn(x, s=[6, 3], axes=[0, 2]), (4, 2, 4), False),
    ("ifftn_repeated_axis", lambda x: np.fft.ifftn(x, s=[5, 2], axes=[1, 1]), (2, 4), True),
    ("rfft_even", lambda x: np.fft.rfft(x), (3, 4), False),
    ("rfft_odd_ortho", lambda x: np.fft.rfft(x, norm="ortho"), (3, 5), False),
    ("rfft_n_axis", lambda x: np.fft.rfft(x, 6, axis=0, norm="forward"), (4, 3), False),
    ("rfft_n_smaller", lambda x: np.fft.rfft(x, 3), (2, 5), False),
    ("irfft", lambda x: np.fft.irfft(x), (3, 4), True),
    ("irfft_n_odd", lambda x: np.fft.irfft(x, 5), (3, 4), True),
    ("irfft_n_smaller_forward", lambda x: np.fft.irfft(x, 2, norm="forward"), (3, 4), True),
    ("irfft_n_bigger_ortho", lambda x: np.fft.irfft(x, 9, axis=0, norm="ortho"), (4, 2), True),
    ("rfft2", lambda x: np.fft.rfft2(x), (2, 3, 4), False),
    ("rfft2_s_axes", lambda x: np.fft.rfft2(x, s=[6, 2], axes=[0, 2]), (4, 2, 4), False),
    ("rfftn_axes", lambda x: np.fft.rfftn(x, axes=(0, 2)), (3, 2, 5), False),
    ("rfftn_repeated_axis", lambda x: np.fft.rfftn(x, axes=[1, 0, 1]), (3, 4), False),
    ("irfft2_s_odd", lambda x: np.fft.irfft2(x, s=[3, 5]), (2, 3, 4), True),
    ("irfftn", lambda x: np.fft.irfftn(x), (3, 2, 4), True),
    ("irfftn_s_axes", lambda x: np.fft.irfftn(x, s=[6, 2], axes=[0, 2]), (4, 2, 4), True),
    ("irfftn_repeated_axis", lambda x: np.fft.irfftn(x, axes=[1, 1]), (2, 4), True),
    ("hfft", lambda x: np.fft.hfft(x), (2, 4), True),
    ("hfft_n_ortho", lambda x: np.fft.hfft(x, 7, norm="ortho"), (2, 4), True),
    ("ihfft", lambda x: np.fft.ihfft(x, norm="forward"), (2, 5), False),
    ("fftshift", lambda x: np.fft.fftshift(x), (5, 4), False),
    ("fftshift_axes", lambda x: np.fft.fftshift(x, axes=1), (4, 5), True),
    ("ifftshift", lambda x: np.fft.ifftshift(x), (5, 3), False),
    ("ifftshift_axes", lambda x: np.fft.ifftshift(x, axes=(0,)), (5, 4), True),
]
IDS = [c[0] for c in CASES]


def _inputs(shape, complex_input):
    parts = [rng.standard_normal(shape) for _ in range(2 if complex_input else 1)]
    return parts


def _joined(parts):
    return parts[0] + 1j * parts[1] if len(parts) == 2 else parts[0]


def _on_parts(call, complex_input):
    """``call`` as a function of real tensors: (real, imag) for complex input."""
    if complex_input:
        return lambda re, im: call(re + im * 1j)
    return call


def _real_output(call, out_shape, complex_output):
    """A real function of ``call``'s output that reads every part of it."""
    weights = rng.standard_normal(out_shape) + (1j * rng.standard_normal(out_shape)
                                                if complex_output else 0.0)

    def f(*xs):
        y = call(*xs)
        return gt.real(y * np.conj(weights)) if complex_output else y * weights
    return f


@pytest.mark.parametrize("name,call,shape,complex_input", CASES, ids=IDS)
def test_values_and_dtypes_are_numpys(name, call, shape, complex_input):
    x = _joined(_inputs(shape, complex_input))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = call(x)
        got = call(gt.constant(x))
    assert isinstance(got, gt.Tensor)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,call,shape,complex_input", CASES, ids=IDS)
def test_derivatives_match_finite_differences_to_second_order(name, call, shape,
                                                              complex_input):
    parts = _inputs(shape, complex_input)
    out = call(_joined(parts))
    f = _real_output(_on_parts(call, complex_input), out.shape, np.iscomplexobj(out))
    check_grads(f, parts, order=2)


@pytest.mark.parametrize("name,call,shape,complex_input", CASES[::3], ids=IDS[::3])
def test_forward_mode_and_forward_over_reverse(name, call, shape, complex_input, check_jvp):
    parts = _inputs(shape, complex_input)
    out = call(_joined(parts))
    f = _real_output(_on_parts(call, complex_input), out.shape, np.iscomplexobj(out))
    check_jvp(f, parts)
    total = lambda *xs: gt.reduce_sum(f(*xs) ** 2)  # noqa: E731
    for k in range(len(parts)):
        check_jvp(lambda *xs, k=k: gt.grad(total, argnums=k)(*xs), parts, rtol=1e-4)


@pytest.mark.parametrize("call", [np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifftn],
                         ids=lambda c: c.__name__)
def test_complex_gradient_follows_tfs_conjugate_convention(call):
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    f = lambda t: real_loss(call(t, norm="ortho") * (1.0 + 2j))  # noqa: E731
    zt = gt.constant(z)
    with gt.GradientTape() as tape:
        tape.watch(zt)
        loss = f(zt)
    np.testing.assert_allclose(tape.gradient(loss, zt).numpy(),
                               numeric_complex_gradient(f, [z], 0), rtol=1e-6, atol=1e-8)


def test_rfft_and_irfft_gradients_have_the_hermitian_weights():
    # sum_k real(X_k) over the kept frequencies k = 0, 1, 2 of n = 4: its derivative in
    # x_j is sum_k cos(2 pi k j / 4), which rfft's VJP (irfft of halved cotangents) gives.
    x = gt.constant(np.arange(4.0))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.real(np.fft.rfft(x)))
    expected = sum(np.cos(2 * np.pi * k * np.arange(4) / 4) for k in range(3))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, atol=1e-12)
    spectrum = gt.constant(np.array([1.0, 2.0 + 1j, 3.0 - 2j]))
    with gt.GradientTape() as tape:
        tape.watch(spectrum)
        y = gt.reduce_sum(np.fft.irfft(spectrum) * np.array([1.0, 0.0, 0.0, 0.0]))
    # irfft(X)[0] = (X0 + 2 Re X1 + X2) / 4, imaginary parts of X0 and X2 ignored
    np.testing.assert_allclose(tape.gradient(y, spectrum).numpy(), [0.25, 0.5, 0.25])


def test_float32_gives_complex64_and_back():
    x = rng.standard_normal((2, 6)).astype(np.float32)
    # NumPy 2 keeps single precision; NumPy 1's pocketfft gives complex128/float64.
    spectrum = np.fft.rfft(gt.constant(x))
    assert spectrum.dtype == np.fft.rfft(x).dtype
    assert np.fft.irfft(spectrum).dtype == np.fft.irfft(np.fft.rfft(x)).dtype
    assert np.fft.fft(gt.constant(x)).dtype == np.fft.fft(x).dtype
    with gt.GradientTape() as tape:
        xt = gt.constant(x)
        tape.watch(xt)
        y = gt.reduce_sum(np.fft.irfft(np.fft.rfft(xt) * 2.0) ** 2)
    g = tape.gradient(y, xt)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), 8.0 * x, rtol=1e-4, atol=1e-4)


def test_integer_input_is_transformed_without_gradient():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_allclose(np.fft.fft(gt.constant(x)).numpy(), np.fft.fft(x))
    np.testing.assert_allclose(np.fft.rfft(gt.constant(x)).numpy(), np.fft.rfft(x))


def test_jacobian_matches_finite_differences():
    x = rng.standard_normal((3, 4))

    def f(t):
        return gt.real(np.fft.fft(t, axis=0)) + np.fft.irfft(np.fft.rfft(t, 5) * 1j, n=4)

    jac = gt.jacobian(f)(gt.constant(x)).numpy()
    eps = 1e-6
    columns = []
    for e in np.eye(x.size):
        step = eps * e.reshape(x.shape)
        columns.append((f(gt.constant(x + step)).numpy() - f(gt.constant(x - step)).numpy())
                       / (2 * eps))
    np.testing.assert_allclose(jac, np.stack(columns, -1).reshape(jac.shape), atol=1e-8)


def _spectral_loss(x):
    spectrum = np.fft.rfft(x, axis=1, norm="ortho")
    smooth = np.fft.irfft(spectrum * np.exp(-np.arange(4.0)), n=6, axis=1)
    shifted = np.fft.fftshift(np.fft.fft2(x, s=(5, 4)))
    return gt.reduce_sum(smooth * smooth) + gt.reduce_sum(gt.abs(np.fft.ifft(shifted)))


def test_compiled_equals_interpreted():
    x = rng.standard_normal((4, 6))
    grads = []
    for compiled in (False, True):
        gt.clear_cache()
        with gt.config(compile=compiled, compile_after=1):
            v = gt.Variable(x)
            for _ in range(2):
                with gt.GradientTape() as tape:
                    loss = _spectral_loss(v)
                grad = tape.gradient(loss, v)
            assert gt.cache_info().compiled == int(compiled)
            grads.append(grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    with gt.GradientTape() as tape:
        v = gt.Variable(x)
        loss = gt.function(_spectral_loss)(v)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), grads[0], rtol=1e-12)


def test_each_primitive_batches(check_batching):
    def all_of_them(x):
        spectrum = gfft.rfftn(x, axes=(0, 1), norm="ortho")
        back = gfft.irfftn(spectrum, s=(3, 4), axes=(0, 1))
        c = gfft.ifftn(gfft.fft(x, axis=0), axes=(1,), norm="forward")
        return back + gt.real(c)

    check_batching(all_of_them, [rng.standard_normal((3, 4))])


def test_bad_arguments_raise_numpys_errors():
    x = gt.constant(rng.standard_normal((2, 4)))
    with pytest.raises(ValueError, match="Invalid norm value"):
        np.fft.fft(x, norm="unitary")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        np.fft.fft(x, 0)
    with pytest.raises(ValueError, match="different lengths"):
        np.fft.fftn(x, s=[2, 2], axes=[0])
    with pytest.raises(TypeError, match="real input"):
        np.fft.rfft(x * 1j)
    # NumPy 2 hands out= to us (tensors are immutable); NumPy 1's fft has no out=.
    with pytest.raises(TypeError, match="immutable|unexpected keyword argument 'out'"):
        np.fft.fft(x, out=np.empty((2, 4), complex))
    with pytest.raises(gt.errors.InvalidArgumentError, match="out of bounds"):
        np.fft.fft(x, axis=2)


# --- gt.signal ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,rank,call", [
    ("fft", 1, np.fft.fft), ("ifft", 1, np.fft.ifft),
    ("fft2d", 2, np.fft.fft2), ("ifft2d", 2, np.fft.ifft2),
    ("fft3d", 3, lambda x: np.fft.fftn(x, axes=(-3, -2, -1))),
    ("ifft3d", 3, lambda x: np.fft.ifftn(x, axes=(-3, -2, -1))),
])
def test_signal_complex_transforms_are_tfs(name, rank, call):
    op = getattr(gt.signal, name)
    x = (rng.standard_normal((2, 3, 4, 5)) + 1j * rng.standard_normal((2, 3, 4, 5)))
    np.testing.assert_allclose(op(x).numpy(), call(x), rtol=1e-12, atol=1e-12)
    small = x.astype(np.complex64)
    assert op(gt.constant(small)).dtype == np.complex64
    assert op([[1.0, 2.0, 3.0]] * 3 if rank < 3 else [[[1.0]]]).dtype == np.complex64
    with pytest.raises(gt.errors.InvalidArgumentError, match="complex64 or complex128"):
        op(gt.constant(x.real))
    with pytest.raises(gt.errors.InvalidArgumentError, match=f"at least {rank}"):
        op(np.ones((1,) * (rank - 1), np.complex64))


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_signal_real_transforms_are_tfs(rank):
    suffix = "" if rank == 1 else f"{rank}d"
    rfft, irfft = getattr(gt.signal, "rfft" + suffix), getattr(gt.signal, "irfft" + suffix)
    axes = tuple(range(-rank, 0))
    x = rng.standard_normal((2, 3, 4, 6))
    np.testing.assert_allclose(rfft(x).numpy(), np.fft.rfftn(x, axes=axes), atol=1e-12)
    lengths = [5] * rank
    spectrum = rfft(x, fft_length=lengths)
    np.testing.assert_allclose(spectrum.numpy(), np.fft.rfftn(x, s=lengths, axes=axes),
                               atol=1e-12)
    np.testing.assert_allclose(irfft(spectrum, fft_length=gt.constant(lengths)).numpy(),
                               np.fft.irfftn(spectrum.numpy(), s=lengths, axes=axes),
                               atol=1e-12)
    np.testing.assert_allclose(irfft(spectrum).numpy(),
                               np.fft.irfftn(spectrum.numpy(), axes=axes), atol=1e-12)
    assert rfft(x.astype(np.float32)).dtype == np.complex64
    assert irfft(rfft(x.astype(np.float32))).dtype == np.float32
    with pytest.raises(gt.errors.InvalidArgumentError, match="float32 or float64"):
        rfft(gt.constant(x) * 1j)
    with pytest.raises(gt.errors.InvalidArgumentError, match="complex64 or complex128"):
        irfft(gt.constant(x))
    with pytest.raises(gt.errors.InvalidArgumentError, match="fft_length"):
        rfft(x, fft_length=[4] * (rank + 1))


def test_signal_gradients_and_shifts():
    x = rng.standard_normal((3, 6))

    def f(t):
        spectrum = gt.signal.rfft(t, fft_length=[8])
        roundtrip = gt.signal.irfft(spectrum * spectrum, fft_length=[8])
        c = gt.signal.fft2d(gt.cast(t, gt.complex128))
        return roundtrip + gt.real(gt.signal.ifft(c * 1j))[..., :1]

    check_grads(f, [x], order=2)
    np.testing.assert_array_equal(gt.signal.fftshift(x).numpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(gt.signal.ifftshift(x, axes=1).numpy(),
                                  np.fft.ifftshift(x, axes=1))
