"""``gt.random``: TF's ``tf.random`` functions and seeding rules, on NumPy's generators.

Seeding follows TF's rules (``tf.random.set_seed`` docs): with a global seed set, the
same sequence of calls gives the same values on every run; an op-level ``seed`` gives
that op its own stream (successive calls still differ), and ``set_seed`` restarts every
stream. The values are NumPy's (PCG64), not TF's Philox stream: a seeded TF program
draws different numbers here.

Inside ``@gt.function`` each draw is an equation of the trace (``random_draw``, declared
with its streams in ``ops/random.py``) whose
implementation draws from its stream when the compiled function runs, as TF's stateful
random ops do: every call draws new values, in the order eager calls would (a function
run N times after ``set_seed(s)`` gives what N eager runs of its body give). Tracing
moves no stream (the tracer rewinds them), and a call whose guards fail gives back what
it drew. A stateless op's seed is an operand of its equation, so a seed passed as a
tensor argument needs no new trace.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.dtypes import numpy_dtype
from ..core.errors import InvalidArgumentError
from ..core.namespaces import public_dir
from ..core.state import state
from ..core.tensor import Tensor, _to_array, concrete_value, wrap
from ..ops.random import OwnStream, check_seed_pair, draw, entropy, set_seed, stateless_draw
from .creation import _dims

__all__ = ["set_seed", "normal", "uniform", "truncated_normal", "shuffle", "categorical",
           "Generator", "get_global_generator", "set_global_generator", "stateless_normal",
           "stateless_uniform", "stateless_truncated_normal"]

_FLOATS = ("float16", "float32", "float64")


def _float_dtype(dtype: Any, what: str) -> np.dtype:
    out = numpy_dtype(dtype)
    if out.name not in _FLOATS:
        raise InvalidArgumentError(f"{what} needs a floating dtype (float16/32/64), got "
                                   f"{out.name}.")
    return out


_Draw = Callable[..., Any]  # (distribution, shape, dtype, *operands) -> unit values


def _stateful(stream: Any) -> _Draw:
    return functools.partial(draw, stream)


def _scaled(unit: Any, scale: Any, shift: Any) -> Tensor:
    """``unit * scale + shift``: with gradtape ops when a parameter is a tensor (TF's
    random ops are differentiable in mean and stddev) or the unit values are traced,
    else in NumPy. The same arithmetic either way: the same values."""
    from ..ops import add, multiply

    if isinstance(scale, Tensor) or isinstance(shift, Tensor):
        return add(multiply(unit if isinstance(unit, Tensor) else wrap(unit), scale), shift)
    dtype = unit.dtype
    scale = _to_array(scale, dtype)
    shift = _to_array(shift, dtype)
    if not isinstance(unit, Tensor):
        return wrap((unit * scale + shift).astype(dtype, copy=False))
    if scale.shape == shift.shape == () and scale == 1 and shift == 0:
        return unit  # the defaults: no ops for the generated code to carry
    return add(multiply(unit, scale), shift)


def _normal(draw: _Draw, shape, mean, stddev, dtype) -> Tensor:
    dtype = _float_dtype(dtype, "normal")
    return _scaled(draw("normal", _dims(shape), dtype), stddev, mean)


def _truncated_normal(draw: _Draw, shape, mean, stddev, dtype) -> Tensor:
    dtype = _float_dtype(dtype, "truncated_normal")
    return _scaled(draw("truncated_normal", _dims(shape), dtype), stddev, mean)


def _uniform(draw: _Draw, shape, minval, maxval, dtype) -> Tensor:
    """Floats in [minval, maxval) (maxval 1 by default); ints need maxval (TF's rule)."""
    dtype = numpy_dtype(dtype)
    dims = _dims(shape)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}: "
                             "uniform(shape, minval, maxval, dtype=...).")
        low, high = _to_array(minval, dtype), _to_array(maxval, dtype)
        return _as_tensor(draw("integers", dims, dtype, low, high))
    dtype = _float_dtype(dtype, "uniform")
    unit = draw("uniform", dims, dtype)
    if maxval is None:
        maxval = 1
    if isinstance(minval, Tensor) or isinstance(maxval, Tensor):
        from ..ops import subtract

        return _scaled(unit, subtract(maxval, minval), minval)
    low, high = _to_array(minval, dtype), _to_array(maxval, dtype)
    return _scaled(unit, high - low, low)


def _as_tensor(values: Any) -> Tensor:
    return values if isinstance(values, Tensor) else wrap(values)


def _op_seed(seed: Any) -> int | None:
    """An op ``seed`` as the int naming its stream (TF takes a Python int)."""
    if seed is None:
        return None
    return int(concrete_value(seed) if isinstance(seed, Tensor) else seed)


# --- tf.random's stateful functions ------------------------------------------------------

def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = np.float32,
           seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.normal``: values from N(mean, stddev²), float32 by default."""
    del name
    return _normal(_stateful(_op_seed(seed)), shape, mean, stddev, dtype)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = np.float32,
            seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.uniform``: values in [minval, maxval); [0, 1) for floats by
    default; integer dtypes need ``maxval`` (ValueError, as TF)."""
    del name
    return _uniform(_stateful(_op_seed(seed)), shape, minval, maxval, dtype)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = np.float32, seed: int | None = None,
                     name: str | None = None) -> Tensor:
    """TF's ``tf.random.truncated_normal``: normal values, redrawn when more than two
    standard deviations from the mean."""
    del name
    return _truncated_normal(_stateful(_op_seed(seed)), shape, mean, stddev, dtype)


def shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """TF's ``tf.random.shuffle``: ``value`` with its first axis permuted (a constant)."""
    del name
    values = value if isinstance(value, Tensor) else _to_array(value)
    if len(values.shape) == 0:
        raise InvalidArgumentError("shuffle needs a tensor of rank >= 1, got a scalar.")
    shape, dtype = tuple(values.shape), np.dtype(values.dtype)
    return _as_tensor(draw(_op_seed(seed), "shuffle", shape, dtype, values))


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: int | None = None,
                name: str | None = None) -> Tensor:
    """TF's ``tf.random.categorical``: for each row of ``logits`` ([batch, classes]),
    ``num_samples`` class indices drawn with probabilities softmax(row); int64."""
    del name
    scores = logits if isinstance(logits, Tensor) else _to_array(logits)
    if len(scores.shape) != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                   f"{tuple(scores.shape)}.")
    out_dtype = np.dtype(np.int64) if dtype is None else numpy_dtype(dtype)
    shape = (int(scores.shape[0]), int(num_samples))
    return _as_tensor(draw(_op_seed(seed), "categorical", shape, out_dtype, scores))


# --- tf.random.Generator -------------------------------------------------------------------

class Generator(OwnStream):
    """TF's ``tf.random.Generator``: a random stream of its own, independent of
    ``set_seed``. ``Generator.from_seed(1)`` gives the same values on every run."""

    @classmethod
    def from_seed(cls, seed: int, alg: Any = None) -> Generator:
        del alg  # TF's algorithm choice (Philox, ThreeFry): NumPy's PCG64 here
        return cls(np.random.default_rng(entropy(seed)))

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        del alg
        return cls()

    def reset_from_seed(self, seed: int) -> None:
        if state.tracer is not None:  # Python: it would reset once, when traced
            raise NotImplementedError(
                "Generator.reset_from_seed inside @gt.function would reset the generator "
                "once, at trace time, where TF resets it on every call: call it outside "
                "the function, before the calls that must start from the seed.")
        self._rng = np.random.default_rng(entropy(seed))

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
               dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _normal(_stateful(self), shape, mean, stddev, dtype)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None,
                dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _uniform(_stateful(self), shape, minval, maxval, dtype)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = np.float32, name: str | None = None) -> Tensor:
        del name
        return _truncated_normal(_stateful(self), shape, mean, stddev, dtype)

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


def _stateless(seed: Any) -> _Draw:
    """Draws for a stateless op's ``seed`` (checked now: a traced seed by its shape and
    dtype, without reading its value)."""
    pair = seed if isinstance(seed, Tensor) else np.asarray(seed)
    check_seed_pair(pair.shape, pair.dtype, seed)
    return functools.partial(stateless_draw, pair)


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = np.float32, name: str | None = None, alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_normal``: the same ``seed`` always gives the same values."""
    del name, alg
    return _normal(_stateless(seed), shape, mean, stddev, dtype)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                      dtype: Any = np.float32, name: str | None = None,
                      alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_uniform``: the same ``seed`` always gives the same values."""
    del name, alg
    return _uniform(_stateless(seed), shape, minval, maxval, dtype)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = np.float32, name: str | None = None,
                               alg: Any = None) -> Tensor:
    """TF's ``tf.random.stateless_truncated_normal``."""
    del name, alg
    return _truncated_normal(_stateless(seed), shape, mean, stddev, dtype)

__dir__ = public_dir(globals())  # what users see as gt.random
