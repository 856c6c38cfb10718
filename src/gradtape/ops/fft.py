"""Discrete Fourier transforms: ``np.fft`` on tensors and TF's ``tf.signal`` names.

Four primitives do all the work, each over a tuple of distinct axes with NumPy's
``norm`` ("backward", "ortho" or "forward"):

- ``fftn`` / ``ifftn``: complex to complex. Each is linear, and the adjoint of one is
  the other with the opposite normalization, so the VJP (TF's conjugate convention:
  ``g -> F^H g``) is the other primitive with ``norm`` swapped.
- ``rfftn``: real to the non-negative half of the spectrum along the last axis.
- ``irfftn``: that half spectrum back to real, of the lengths ``s``.

``rfftn`` keeps ``n // 2 + 1`` of the ``n`` frequencies of the last axis; the dropped
ones are the conjugates of kept ones. Its adjoint therefore gives every kept frequency
but the first (and the last, for even ``n``) half the weight ``irfftn`` gives it, and
``irfftn``'s adjoint doubles them back: ``rfftn``'s VJP is ``irfftn(g / w)`` and
``irfftn``'s is ``w * rfftn(g)``, with the weights ``w`` = 1, 2, ..., 2, (1), applied
with a slice and a pad of the cotangent.

The public functions normalize NumPy's arguments (``n``/``s`` pad with zeros or truncate
before the transform) and bind one primitive; repeated axes, which NumPy allows, run
NumPy's sequence of one-axis transforms instead.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError
from ..core.namespaces import attribute_namespace
from ..core.tensor import Tensor, concrete_value, constant
from ..ir.nodes import Aval, IRValue
from . import elementwise as _ew
from . import index as _index
from .arrange import pad_p, roll
from .numpy_dispatch import implements
from .registry import Primitive, bind, operand, per_primitive
from .shape import _normalize_axis

__all__: list[str] = []

_NORMS = ("backward", "ortho", "forward")
# The adjoint of a transform normalized one way is the inverse normalized the other way.
_ADJOINT_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


@functools.lru_cache(maxsize=32)
def _complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype np.fft gives for input ``dtype`` (float32 -> complex64)."""
    return np.fft.fft(np.ones(1, dtype)).dtype


@functools.lru_cache(maxsize=32)
def _real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype np.fft.irfft gives for input ``dtype`` (complex64 -> float32)."""
    return np.fft.irfft(np.ones(2, dtype)).dtype


# --- the primitives ---------------------------------------------------------------------

def _shift_axes_batch(prim: Primitive):
    """The batch axis goes in front: every transformed axis moves one up."""
    def rule(size, args, batched, axes, **params):
        return bind(prim, args[0], axes=tuple(a + 1 for a in axes), **params)
    return rule


def _fftn_shape(x, axes, norm):
    return Aval(tuple(x.shape), _complex_dtype(x.dtype))


fftn_p = Primitive(
    "fftn", np.fft.fftn,
    vjp=lambda g, y, x, axes, norm: (
        bind(ifftn_p, g, axes=axes, norm=_ADJOINT_NORM[norm]),),
    jvp=lambda ts, y, x, axes, norm: bind(fftn_p, ts[0], axes=axes, norm=norm),
    shape_rule=_fftn_shape,
    batch=per_primitive(_shift_axes_batch),
    template="fft.fftn({0}, axes={axes}, norm={norm})",
)

ifftn_p = Primitive(
    "ifftn", np.fft.ifftn,
    vjp=lambda g, y, x, axes, norm: (
        bind(fftn_p, g, axes=axes, norm=_ADJOINT_NORM[norm]),),
    jvp=lambda ts, y, x, axes, norm: bind(ifftn_p, ts[0], axes=axes, norm=norm),
    shape_rule=_fftn_shape,
    batch=per_primitive(_shift_axes_batch),
    template="fft.ifftn({0}, axes={axes}, norm={norm})",
)


def _paired_frequencies(g, axis: int, n: int):
    """``g`` (a half spectrum along ``axis`` of a length-``n`` transform) at the kept
    frequencies whose conjugate was dropped, zero elsewhere: all but the first and, for
    even ``n``, the last. Built from ``g`` alone (derivative rules hold no arrays)."""
    kept = n // 2 + 1
    stop = kept - 1 if n % 2 == 0 else kept
    if stop <= 1:
        return None
    inner = _index.index_axis(g, axis, ("slice", 1, stop, None))
    widths = tuple((1, kept - stop) if i == axis else (0, 0) for i in range(len(g.shape)))
    return bind(pad_p, inner, pad_width=widths, value=0)


def _halve_paired(g, axis: int, n: int):
    """``g / w``: the paired frequencies halved."""
    paired = _paired_frequencies(g, axis, n)
    return g if paired is None else g - paired * 0.5


def _double_paired(g, axis: int, n: int):
    """``w * g``: the paired frequencies doubled."""
    paired = _paired_frequencies(g, axis, n)
    return g if paired is None else g + paired


def _rfftn_shape(x, axes, norm):
    shape = list(x.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return Aval(tuple(shape), _complex_dtype(x.dtype))


def _rfftn_vjp(g, y, x, axes, norm):
    s = tuple(x.shape[a] for a in axes)
    halved = _halve_paired(g, axes[-1], s[-1])
    return (bind(irfftn_p, halved, s=s, axes=axes, norm=_ADJOINT_NORM[norm]),)


rfftn_p = Primitive(
    "rfftn", np.fft.rfftn,
    vjp=_rfftn_vjp,
    jvp=lambda ts, y, x, axes, norm: bind(rfftn_p, ts[0], axes=axes, norm=norm),
    shape_rule=_rfftn_shape,
    batch=per_primitive(_shift_axes_batch),
    template="fft.rfftn({0}, axes={axes}, norm={norm})",
)


def _irfftn_shape(x, s, axes, norm):
    shape = list(x.shape)
    for n, a in zip(s, axes):
        shape[a] = n
    return Aval(tuple(shape), _real_dtype(x.dtype))


def _irfftn_vjp(g, y, x, s, axes, norm):
    spectrum = bind(rfftn_p, g, axes=axes, norm=_ADJOINT_NORM[norm])
    return (_double_paired(spectrum, axes[-1], s[-1]),)


irfftn_p = Primitive(
    "irfftn", np.fft.irfftn,
    vjp=_irfftn_vjp,
    jvp=lambda ts, y, x, s, axes, norm: bind(irfftn_p, ts[0], s=s, axes=axes, norm=norm),
    shape_rule=_irfftn_shape,
    batch=per_primitive(_shift_axes_batch),
    template="fft.irfftn({0}, s={s}, axes={axes}, norm={norm})",
)


# --- argument normalization ---------------------------------------------------------------

def _checked_norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _no_out(out: Any, func: str) -> None:
    if out is not None:
        raise TypeError(f"numpy.fft.{func}(..., out=) cannot write into a tensor: tensors "
                        "are immutable.")


def _resized(x, axis: int, n: int):
    """``x`` truncated or zero-padded to length ``n`` along ``axis`` (NumPy's ``n``)."""
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    have = x.shape[axis]
    if n < have:
        return _index.index_axis(x, axis, ("slice", None, n, None))
    if n > have:
        widths = tuple((0, n - have) if i == axis else (0, 0) for i in range(len(x.shape)))
        return bind(pad_p, x, pad_width=widths, value=0)
    return x


def _cooked(x, s, axes, inverse_real: bool = False) -> tuple[list[int], list[int]]:
    """NumPy's ``s`` and ``axes`` made explicit: non-negative axes and a length for each
    (``None`` or -1 keeps the input's; ``irfftn`` defaults the last to ``2 * (m - 1)``)."""
    shape = tuple(x.shape)
    ndim = len(shape)
    if axes is None:
        count = ndim if s is None else len(list(s))
        axes = list(range(ndim - count, ndim))
    axes = [_normalize_axis(int(a), ndim) for a in axes]
    s = [None] * len(axes) if s is None else list(s)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    sizes = [shape[a] if n is None or n == -1 else int(n) for n, a in zip(s, axes)]
    if inverse_real and axes and (s[-1] is None or s[-1] == -1):
        sizes[-1] = 2 * (shape[axes[-1]] - 1)
    return sizes, axes


def _as_complex(x):
    x = operand(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return x
    return _ew.cast(x, _complex_dtype(x.dtype))


def _as_real(x, func: str):
    x = operand(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"numpy.fft.{func} takes real input, got {x.dtype}; use fft for "
                        "complex input, or take gt.real(x) first.")
    if not np.issubdtype(x.dtype, np.floating):
        x = _ew.cast(x, _real_dtype(_complex_dtype(x.dtype)))
    return x


def _complex_transform(x, sizes, axes, norm, inverse: bool):
    """``fftn``/``ifftn`` of ``x`` resized to ``sizes`` along ``axes``."""
    x = _as_complex(x)
    if len(set(axes)) < len(axes):  # NumPy's order: one axis at a time, the last first
        for n, a in reversed(list(zip(sizes, axes))):
            x = _complex_transform(x, [n], [a], norm, inverse)
        return x
    if not axes:
        return x
    for n, a in zip(sizes, axes):
        x = _resized(x, a, n)
    return bind(ifftn_p if inverse else fftn_p, x, axes=tuple(axes), norm=norm)


def _real_transform(x, sizes, axes, norm, func: str):
    """``rfftn`` of the real ``x`` resized to ``sizes`` along ``axes``."""
    x = _as_real(x, func)
    if not axes:
        raise ValueError(f"numpy.fft.{func} needs at least one axis.")
    if len(set(axes)) < len(axes):  # NumPy's order: the last axis, then the rest backwards
        x = _real_transform(x, sizes[-1:], axes[-1:], norm, func)
        return _complex_transform(x, sizes[:-1], axes[:-1], norm, inverse=False)
    for n, a in zip(sizes, axes):
        x = _resized(x, a, n)
    return bind(rfftn_p, x, axes=tuple(axes), norm=norm)


def _inverse_real_transform(x, sizes, axes, norm):
    """``irfftn`` of the half spectrum ``x`` to real lengths ``sizes`` along ``axes``."""
    x = _as_complex(x)
    if not axes:
        raise ValueError("numpy.fft.irfftn needs at least one axis.")
    if len(set(axes)) < len(axes):  # NumPy's order: the other axes forwards, then the last
        for n, a in zip(sizes[:-1], axes[:-1]):
            x = _complex_transform(x, [n], [a], norm, inverse=True)
        return _inverse_real_transform(x, sizes[-1:], axes[-1:], norm)
    if sizes[-1] < 1:
        raise ValueError(f"Invalid number of data points ({sizes[-1]}) specified.")
    for n, a in zip(sizes[:-1], axes[:-1]):
        x = _resized(x, a, n)
    x = _resized(x, axes[-1], sizes[-1] // 2 + 1)
    return bind(irfftn_p, x, s=tuple(sizes), axes=tuple(axes), norm=norm)


def _one_axis(n: int | None, axis: int) -> tuple[list, list]:
    return [n], [axis]


# --- np.fft ------------------------------------------------------------------------------

@implements(np.fft.fft)
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
        out: Any = None) -> Any:
    """One-dimensional discrete Fourier transform (``np.fft.fft``)."""
    _no_out(out, "fft")
    a = operand(a)
    return _complex_transform(a, *_cooked(a, *_one_axis(n, axis)), _checked_norm(norm),
                              inverse=False)


@implements(np.fft.ifft)
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """One-dimensional inverse discrete Fourier transform (``np.fft.ifft``)."""
    _no_out(out, "ifft")
    a = operand(a)
    return _complex_transform(a, *_cooked(a, *_one_axis(n, axis)), _checked_norm(norm),
                              inverse=True)


@implements(np.fft.fftn)
def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
         out: Any = None) -> Any:
    """N-dimensional discrete Fourier transform (``np.fft.fftn``; all axes by default)."""
    _no_out(out, "fftn")
    a = operand(a)
    return _complex_transform(a, *_cooked(a, s, axes), _checked_norm(norm), inverse=False)


@implements(np.fft.ifftn)
def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
          out: Any = None) -> Any:
    """N-dimensional inverse discrete Fourier transform (``np.fft.ifftn``)."""
    _no_out(out, "ifftn")
    a = operand(a)
    return _complex_transform(a, *_cooked(a, s, axes), _checked_norm(norm), inverse=True)


@implements(np.fft.fft2)
def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
         out: Any = None) -> Any:
    """Two-dimensional discrete Fourier transform (``np.fft.fft2``)."""
    return fftn(a, s, axes, norm, out)


@implements(np.fft.ifft2)
def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
          out: Any = None) -> Any:
    """Two-dimensional inverse discrete Fourier transform (``np.fft.ifft2``)."""
    return ifftn(a, s, axes, norm, out)


@implements(np.fft.rfft)
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """Transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    _no_out(out, "rfft")
    a = operand(a)
    return _real_transform(a, *_cooked(a, *_one_axis(n, axis)), _checked_norm(norm), "rfft")


@implements(np.fft.irfft)
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> Any:
    """Inverse of ``rfft``: real output of length ``n`` (default ``2 * (m - 1)``)."""
    _no_out(out, "irfft")
    a = operand(a)
    return _inverse_real_transform(a, *_cooked(a, *_one_axis(n, axis), inverse_real=True),
                                   _checked_norm(norm))


@implements(np.fft.rfftn)
def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
          out: Any = None) -> Any:
    """N-dimensional transform of real input (half spectrum along the last axis)."""
    _no_out(out, "rfftn")
    a = operand(a)
    return _real_transform(a, *_cooked(a, s, axes), _checked_norm(norm), "rfftn")


@implements(np.fft.irfftn)
def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None,
           out: Any = None) -> Any:
    """Inverse of ``rfftn``."""
    _no_out(out, "irfftn")
    a = operand(a)
    return _inverse_real_transform(a, *_cooked(a, s, axes, inverse_real=True),
                                   _checked_norm(norm))


@implements(np.fft.rfft2)
def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
          out: Any = None) -> Any:
    """Two-dimensional transform of real input."""
    return rfftn(a, s, axes, norm, out)


@implements(np.fft.irfft2)
def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None,
           out: Any = None) -> Any:
    """Inverse of ``rfft2``."""
    return irfftn(a, s, axes, norm, out)


@implements(np.fft.hfft)
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
         out: Any = None) -> Any:
    """Transform of a Hermitian-symmetric signal given by its first half: real output."""
    _no_out(out, "hfft")
    norm = _ADJOINT_NORM[_checked_norm(norm)]
    return irfft(_ew.conj(_as_complex(a)), n, axis, norm)


@implements(np.fft.ihfft)
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
          out: Any = None) -> Any:
    """Inverse of ``hfft``: the first half of a Hermitian spectrum of real input."""
    _no_out(out, "ihfft")
    norm = _ADJOINT_NORM[_checked_norm(norm)]
    a = operand(a)
    return _ew.conj(_real_transform(a, *_cooked(a, *_one_axis(n, axis)), norm, "ihfft"))


def _shift_axes(x, axes) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(len(x.shape)))
    if isinstance(axes, (int, np.integer)):
        return (int(axes),)
    return tuple(int(a) for a in axes)


@implements(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the centre (a roll by ``n // 2`` along ``axes``)."""
    x = operand(x)
    axes = _shift_axes(x, axes)
    return roll(x, [x.shape[a] // 2 for a in axes], axes)


@implements(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """Inverse of ``fftshift`` (they differ for odd lengths)."""
    x = operand(x)
    axes = _shift_axes(x, axes)
    return roll(x, [-(x.shape[a] // 2) for a in axes], axes)


# --- tf.signal -----------------------------------------------------------------------------

def _tf_input(x, kind: str, preferred: str, op: str, rank: int):
    """``x`` as a tensor of the dtype kind TF's ``op`` takes ("c" complex, "f" real
    floating): Python values convert to ``preferred`` (as in TF); a tensor or array of
    another dtype raises TF's error."""
    if not isinstance(x, (Tensor, IRValue, np.ndarray, np.generic)):
        x = constant(x, dtype=preferred)
    x = operand(x)
    allowed = ("complex64", "complex128") if kind == "c" else ("float32", "float64")
    if x.dtype.name not in allowed:
        raise InvalidArgumentError(
            f"{op}: input must be {' or '.join(allowed)}, got {x.dtype.name}; cast it first "
            f"(gt.cast(x, gt.{preferred})).")
    if len(x.shape) < rank:
        raise InvalidArgumentError(f"{op}: input must be at least {rank}-dimensional, got "
                                   f"shape {tuple(x.shape)}.")
    return x


def _inner_axes(x, rank: int) -> list[int]:
    return list(range(len(x.shape) - rank, len(x.shape)))


def _fft_length(fft_length: Any, rank: int, op: str) -> list[int] | None:
    if fft_length is None:
        return None
    if isinstance(fft_length, Tensor):
        fft_length = concrete_value(fft_length)
    lengths = np.asarray(fft_length)
    if lengths.shape != (rank,) or not np.issubdtype(lengths.dtype, np.integer):
        raise InvalidArgumentError(f"{op}: fft_length must be {rank} integer(s), got "
                                   f"{fft_length!r}.")
    return [int(n) for n in lengths]


def _keep_tf_dtype(result: Any, dtype: Any) -> Any:
    """TF's transforms keep the input's precision (complex64 in, complex64 out); NumPy 1's
    pocketfft computes in double, so cast back there."""
    return result if result.dtype == dtype else _ew.cast(result, dtype)


def _tf_complex(rank: int, inverse: bool, op: str):
    def transform(input: Any, name: str | None = None) -> Any:  # TF's name
        del name
        x = _tf_input(input, "c", "complex64", op, rank)
        axes = _inner_axes(x, rank)
        return _keep_tf_dtype(
            _complex_transform(x, [x.shape[a] for a in axes], axes, "backward", inverse),
            x.dtype)
    transform.__name__ = transform.__qualname__ = op
    transform.__doc__ = (f"TF's ``tf.signal.{op}``: the {'inverse ' if inverse else ''}"
                         f"transform of the innermost {rank} axis(es) of complex input.")
    return transform


def _tf_real(rank: int, op: str):
    def transform(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
        del name
        x = _tf_input(input_tensor, "f", "float32", op, rank)
        axes = _inner_axes(x, rank)
        return _keep_tf_dtype(rfftn(x, _fft_length(fft_length, rank, op), axes),
                              np.result_type(x.dtype, np.complex64))
    transform.__name__ = transform.__qualname__ = op
    transform.__doc__ = (f"TF's ``tf.signal.{op}``: the half spectrum of the innermost "
                         f"{rank} axis(es) of real input, padded or cropped to fft_length.")
    return transform


def _tf_inverse_real(rank: int, op: str):
    def transform(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
        del name
        x = _tf_input(input_tensor, "c", "complex64", op, rank)
        axes = _inner_axes(x, rank)
        return _keep_tf_dtype(irfftn(x, _fft_length(fft_length, rank, op), axes),
                              np.finfo(x.dtype).dtype)
    transform.__name__ = transform.__qualname__ = op
    transform.__doc__ = (f"TF's ``tf.signal.{op}``: real output of the innermost {rank} "
                         "axis(es) from a half spectrum (fft_length defaults to "
                         "2 * (m - 1) on the last).")
    return transform


def _tf_shift(shift):
    def transform(x: Any, axes: Any = None, name: str | None = None) -> Any:
        del name
        return shift(x, axes)
    transform.__name__ = transform.__qualname__ = shift.__name__
    transform.__doc__ = shift.__doc__
    return transform


# TF's tf.signal Fourier transforms: over the innermost axes, unnormalized forward and
# 1/n inverse; fft takes complex input, rfft real input. A plain attribute namespace (as
# gt.dtypes), not a module: gt's only module-like namespaces are the ones TF users import.
namespace = attribute_namespace({
        "fft": _tf_complex(1, False, "fft"), "ifft": _tf_complex(1, True, "ifft"),
        "fft2d": _tf_complex(2, False, "fft2d"), "ifft2d": _tf_complex(2, True, "ifft2d"),
        "fft3d": _tf_complex(3, False, "fft3d"), "ifft3d": _tf_complex(3, True, "ifft3d"),
        "rfft": _tf_real(1, "rfft"), "irfft": _tf_inverse_real(1, "irfft"),
        "rfft2d": _tf_real(2, "rfft2d"), "irfft2d": _tf_inverse_real(2, "irfft2d"),
        "rfft3d": _tf_real(3, "rfft3d"), "irfft3d": _tf_inverse_real(3, "irfft3d"),
        "fftshift": _tf_shift(fftshift), "ifftshift": _tf_shift(ifftshift),
    })
