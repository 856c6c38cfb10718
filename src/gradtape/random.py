"""``gt.random``: TF's ``tf.random`` functions and seeding rules, on NumPy's generators.

Seeding follows TF's rules (``tf.random.set_seed`` docs): with a global seed set, the
same sequence of calls gives the same values on every run; an op-level ``seed`` gives
that op its own stream (successive calls still differ), and ``set_seed`` restarts every
stream. The values are NumPy's (PCG64), not TF's Philox stream: a seeded TF program
draws different numbers here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.tensor import Tensor, _to_array, concrete_value, wrap
from .creation import _dims
from .dtypes import numpy_dtype
from .errors import InvalidArgumentError
from .namespaces import public_dir

__all__ = ["set_seed", "normal", "uniform", "truncated_normal", "shuffle", "categorical",
           "Generator", "get_global_generator", "set_global_generator", "stateless_normal",
           "stateless_uniform", "stateless_truncated_normal"]

_FLOATS = ("float16", "float32", "float64")
_DEFAULT_GLOBAL_SEED = 87654321  # TF's DEFAULT_GRAPH_SEED: an op seed without a global one


class _Seeds:
    """The global seed and the streams drawn from it."""

    def __init__(self) -> None:
        self.global_seed: int | None = None
        self.stream = np.random.default_rng()
        self.op_streams: dict[int, np.random.Generator] = {}

    def reset(self, seed: int | None) -> None:
        self.global_seed = seed
        self.stream = np.random.default_rng(None if seed is None else _entropy(seed))
        self.op_streams.clear()

    def for_op(self, seed: int | None) -> np.random.Generator:
        """The stream an op draws from: the global one, or the op seed's own."""
        if seed is None:
            return self.stream
        stream = self.op_streams.get(seed)
        if stream is None:
            base = _DEFAULT_GLOBAL_SEED if self.global_seed is None else self.global_seed
            stream = self.op_streams[seed] = np.random.default_rng(
                [_entropy(base), _entropy(seed)])
        return stream


_seeds = _Seeds()


def _entropy(seed: Any) -> int:
    """A seed as the non-negative int NumPy's SeedSequence takes (TF takes any int64)."""
    if isinstance(seed, Tensor):
        seed = concrete_value(seed)
    return int(seed) & 0xFFFF_FFFF_FFFF_FFFF


def set_seed(seed: int | None) -> None:
    """TF's ``tf.random.set_seed``: restart every random stream from ``seed``."""
    _seeds.reset(seed)


# --- sampling, shared by the stateful functions, Generator and the stateless ones ----------

def _float_dtype(dtype: Any, what: str) -> np.dtype:
    out = numpy_dtype(dtype)
    if out.name not in _FLOATS:
        raise InvalidArgumentError(f"{what} needs a floating dtype (float16/32/64), got "
                                   f"{out.name}.")
    return out


def _standard_normal(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.name == "float16":  # NumPy samples float32 and float64 only
        return rng.standard_normal(shape, np.float32).astype(dtype)
    return rng.standard_normal(shape, dtype)


def _truncated(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Standard normal values, each redrawn until it lies within two standard deviations
    (TF's truncated_normal)."""
    values = _standard_normal(rng, shape, dtype)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = _standard_normal(rng, (int(outside.sum()),), dtype)
        outside = np.abs(values) > 2
    return values


def _scaled(unit: np.ndarray, scale: Any, shift: Any) -> Tensor:
    """``unit * scale + shift``: with gradtape ops when a parameter is a tensor (TF's
    random ops are differentiable in mean and stddev), else in NumPy."""
    if isinstance(scale, Tensor) or isinstance(shift, Tensor):
        from .ops import add, multiply

        return add(multiply(wrap(unit), scale), shift)
    dtype = unit.dtype
    scale = _to_array(scale, dtype)
    shift = _to_array(shift, dtype)
    return wrap((unit * scale + shift).astype(dtype, copy=False))


def _normal(rng, shape, mean, stddev, dtype) -> Tensor:
    dtype = _float_dtype(dtype, "normal")
    return _scaled(_standard_normal(rng, _dims(shape), dtype), stddev, mean)


def _truncated_normal(rng, shape, mean, stddev, dtype) -> Tensor:
    dtype = _float_dtype(dtype, "truncated_normal")
    return _scaled(_truncated(rng, _dims(shape), dtype), stddev, mean)


def _uniform(rng, shape, minval, maxval, dtype) -> Tensor:
    """Floats in [minval, maxval) (maxval 1 by default); ints need maxval (TF's rule)."""
    dtype = numpy_dtype(dtype)
    dims = _dims(shape)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}: "
                             "uniform(shape, minval, maxval, dtype=...).")
        low, high = _to_array(minval, dtype), _to_array(maxval, dtype)
        if np.any(low >= high):
            raise InvalidArgumentError(f"Need minval < maxval: {low} >= {high}.")
        return wrap(rng.integers(low, high, dims, dtype=dtype))
    dtype = _float_dtype(dtype, "uniform")
    unit = rng.random(dims, np.float64 if dtype.name == "float64" else np.float32)
    unit = unit.astype(dtype, copy=False)
    if maxval is None:
        maxval = 1
    if isinstance(minval, Tensor) or isinstance(maxval, Tensor):
        from .ops import subtract

        return _scaled(unit, subtract(maxval, minval), minval)
    low, high = _to_array(minval, dtype), _to_array(maxval, dtype)
    return _scaled(unit, high - low, low)


# --- tf.random's stateful functions ------------------------------------------------------

def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
           seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.normal``: values from N(mean, stddev²), float32 by default."""
    del name
    return _normal(_seeds.for_op(seed), shape, mean, stddev, dtype)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = np.float32,
            seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.uniform``: values in [minval, maxval); [0, 1) for floats by
    default; integer dtypes need ``maxval`` (ValueError, as TF)."""
    del name
    return _uniform(_seeds.for_op(seed), shape, minval, maxval, dtype)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = np.float32, seed: int | None = None,
                     name: str | None = None) -> Tensor:
    """TF's ``tf.random.truncated_normal``: normal values, redrawn when more than two
    standard deviations from the mean."""
    del name
    return _truncated_normal(_seeds.for_op(seed), shape, mean, stddev, dtype)


def shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.shuffle``: ``value`` with its first axis permuted (a constant)."""
    del name
    array = _to_array(value)
    if array.ndim == 0:
        raise InvalidArgumentError("shuffle needs a tensor of rank >= 1, got a scalar.")
    return wrap(_seeds.for_op(seed).permutation(array))


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: int | None = None,
                name: str | None = None) -> Tensor:
    """TF's ``tf.random.categorical``: for each row of ``logits`` ([batch, classes]),
    ``num_samples`` class indices drawn with probabilities softmax(row); int64."""
    del name
    scores = _to_array(logits).astype(np.float64)
    if scores.ndim != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape {scores.shape}.")
    out_dtype = np.dtype(np.int64) if dtype is None else numpy_dtype(dtype)
    rng = _seeds.for_op(seed)
    # The Gumbel-max trick: argmax(logits + Gumbel noise) samples softmax(logits).
    noise = rng.gumbel(size=(scores.shape[0], int(num_samples), scores.shape[1]))
    samples = np.argmax(scores[:, None, :] + noise, axis=-1)
    return wrap(samples.astype(out_dtype))


# --- tf.random.Generator -------------------------------------------------------------------

class Generator:
    """TF's ``tf.random.Generator``: a random stream of its own, independent of
    ``set_seed``. ``Generator.from_seed(1)`` gives the same values on every run."""

    def __init__(self, rng: np.random.Generator | None = None):
        self._rng = np.random.default_rng() if rng is None else rng

    @classmethod
    def from_seed(cls, seed: int, alg: Any = None) -> Generator:
        del alg  # TF's algorithm choice (Philox, ThreeFry): NumPy's PCG64 here
        return cls(np.random.default_rng(_entropy(seed)))

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        del alg
        return cls()

    def reset_from_seed(self, seed: int) -> None:
        self._rng = np.random.default_rng(_entropy(seed))

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
               dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _normal(self._rng, shape, mean, stddev, dtype)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None,
                dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _uniform(self._rng, shape, minval, maxval, dtype)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _truncated_normal(self._rng, shape, mean, stddev, dtype)

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new generators with independent streams."""
        return [Generator(rng) for rng in self._rng.spawn(count)]


_global_generator: Generator | None = None


def get_global_generator() -> Generator:
    """TF's ``tf.random.get_global_generator``."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator()
    return _global_generator


def set_global_generator(generator: Generator) -> None:
    """TF's ``tf.random.set_global_generator``."""
    global _global_generator
    _global_generator = generator


# --- stateless functions: the values depend on (shape, seed) only --------------------------

def _stateless_stream(seed: Any) -> np.random.Generator:
    pair = np.asarray(concrete_value(seed) if isinstance(seed, Tensor) else seed)
    if pair.shape != (2,) or pair.dtype.kind not in "iu":
        raise InvalidArgumentError(f"seed must have shape [2] and an integer dtype, got "
                                   f"{seed!r}: pass seed=[a, b].")
    return np.random.default_rng([_entropy(v) for v in pair])


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = np.float32, name: str | None = None, alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_normal``: the same ``seed`` always gives the same values."""
    del name, alg
    return _normal(_stateless_stream(seed), shape, mean, stddev, dtype)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                      dtype: Any = np.float32, name: str | None = None,
                      alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_uniform``: the same ``seed`` always gives the same values."""
    del name, alg
    return _uniform(_stateless_stream(seed), shape, minval, maxval, dtype)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = np.float32, name: str | None = None,
                               alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_truncated_normal``."""
    del name, alg
    return _truncated_normal(_stateless_stream(seed), shape, mean, stddev, dtype)

__dir__ = public_dir(globals())  # what users see as gt.random
