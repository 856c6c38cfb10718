"""``keras.initializers``: Keras 3's initializers, drawing from ``gt.random``.

An initializer is called as ``init(shape, dtype=None)`` and returns a tensor. Unseeded
random initializers draw from ``gt.random``'s global stream (``gt.random.set_seed`` or
``keras.utils.set_random_seed`` make a program's draws repeat); a ``seed=`` draws with
``gt.random.stateless_*``, so the same seed gives the same values on every call, as in
Keras. The values are NumPy's, not TF's Philox stream: they differ from TF's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..api import random
from ..core.dtypes import numpy_dtype
from ..core.tensor import Tensor, constant

__all__ = [
    "Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Identity",
    "Initializer", "LecunNormal", "LecunUniform", "Ones", "Orthogonal", "RandomNormal",
    "RandomUniform",
    "TruncatedNormal", "VarianceScaling", "Zeros", "deserialize", "get", "serialize",
]

# Keras's correction so a normal truncated at two standard deviations keeps the stddev.
_TRUNCATED_STDDEV_FACTOR = 0.87962566103423978


def _float_dtype(dtype: Any) -> np.dtype:
    return numpy_dtype(dtype if dtype is not None else "float32")


class Initializer:
    """Base class: subclasses implement ``__call__(shape, dtype=None)``."""

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__.")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return constant(np.zeros(tuple(shape), _float_dtype(dtype)))


class Ones(Initializer):
    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return constant(np.ones(tuple(shape), _float_dtype(dtype)))


class Constant(Initializer):
    def __init__(self, value: Any = 0.0):
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        value = np.asarray(self.value.numpy() if isinstance(self.value, Tensor) else self.value)
        return constant(np.broadcast_to(value, tuple(shape)).astype(_float_dtype(dtype)))

    def get_config(self) -> dict:
        return {"value": self.value}


class Identity(Initializer):
    """The identity matrix times ``gain`` (2-D shapes only, as Keras's)."""

    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"Identity initializer can only be used for 2D matrices, "
                             f"got shape {shape}; use another initializer.")
        return constant(self.gain * np.eye(*shape, dtype=_float_dtype(dtype)))

    def get_config(self) -> dict:
        return {"gain": self.gain}


class _RandomInitializer(Initializer):
    """Draws from the global stream, or (with ``seed``) statelessly from ``[seed, 0]``."""

    def __init__(self, seed: int | None = None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"`seed` must be an integer or None, got {seed!r}.")
        self.seed = seed

    def _seed_pair(self) -> list[int]:
        return [int(self.seed), 0]

    def _normal(self, shape: tuple, stddev: float, mean: float, dtype: np.dtype) -> Tensor:
        if self.seed is None:
            return random.normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        return random.stateless_normal(shape, self._seed_pair(), mean=mean, stddev=stddev,
                                       dtype=dtype)

    def _truncated(self, shape: tuple, stddev: float, mean: float, dtype: np.dtype) -> Tensor:
        if self.seed is None:
            return random.truncated_normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        return random.stateless_truncated_normal(shape, self._seed_pair(), mean=mean,
                                                 stddev=stddev, dtype=dtype)

    def _uniform(self, shape: tuple, low: float, high: float, dtype: np.dtype) -> Tensor:
        if self.seed is None:
            return random.uniform(shape, minval=low, maxval=high, dtype=dtype)
        return random.stateless_uniform(shape, self._seed_pair(), minval=low, maxval=high,
                                        dtype=dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed}


class RandomNormal(_RandomInitializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return self._normal(tuple(shape), self.stddev, self.mean, _float_dtype(dtype))

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """A normal truncated at two standard deviations (redrawn beyond)."""

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return self._truncated(tuple(shape), self.stddev, self.mean, _float_dtype(dtype))


class RandomUniform(_RandomInitializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return self._uniform(tuple(shape), self.minval, self.maxval, _float_dtype(dtype))

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def compute_fans(shape: tuple) -> tuple[int, int]:
    """Keras's fan-in and fan-out: a kernel's last two axes, times its receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(_RandomInitializer):
    """Samples of variance ``scale / n`` (``n`` the fan in, out, or their mean)."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: int | None = None):
        super().__init__(seed)
        if scale <= 0.0:
            raise ValueError(f"`scale` must be positive, got scale={scale}.")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument: {mode!r}; use one of {self._MODES}.")
        distribution = distribution.lower()
        if distribution == "normal":  # Keras's alias
            distribution = "truncated_normal"
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}; use one "
                             f"of {self._DISTRIBUTIONS}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _variance(self, shape: tuple) -> float:
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        return self.scale / max(1.0, n[self.mode])

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        shape, dtype = tuple(shape), _float_dtype(dtype)
        variance = self._variance(shape)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(variance) / _TRUNCATED_STDDEV_FACTOR
            return self._truncated(shape, stddev, 0.0, dtype)
        if self.distribution == "untruncated_normal":
            return self._normal(shape, math.sqrt(variance), 0.0, dtype)
        limit = math.sqrt(3.0 * variance)
        return self._uniform(shape, -limit, limit, dtype)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


def _variance_scaling_kind(name: str, scale: float, mode: str, distribution: str) -> type:
    def __init__(self: VarianceScaling, seed: int | None = None) -> None:
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self: VarianceScaling) -> dict:
        return {"seed": self.seed}

    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                           "__module__": __name__,
                                           "__doc__": f"VarianceScaling({scale}, "
                                                      f"{mode!r}, {distribution!r})."})


GlorotUniform = _variance_scaling_kind("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _variance_scaling_kind("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _variance_scaling_kind("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _variance_scaling_kind("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _variance_scaling_kind("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling_kind("LecunUniform", 1.0, "fan_in", "uniform")

class Orthogonal(_RandomInitializer):
    """A random orthogonal matrix times ``gain``: the Q of a normal matrix's QR
    decomposition, its columns' signs fixed by R's diagonal (Keras 3's algorithm). A
    shape of more than 2 axes is orthogonal over ``(prod(shape[:-1]), shape[-1])``."""

    def __init__(self, gain: float = 1.0, seed: int | None = None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        shape, dtype = tuple(int(d) for d in shape), _float_dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = (max(rows, cols), min(rows, cols))
        draw = self._normal(flat, 1.0, 0.0, np.dtype(np.float64)).numpy()
        q, r = np.linalg.qr(draw)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant((self.gain * q.reshape(shape)).astype(dtype))

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed}


_BY_NAME: dict[str, type] = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "identity": Identity,
    "random_normal": RandomNormal, "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_normal": HeNormal, "he_uniform": HeUniform,
    "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
    "uniform": RandomUniform, "normal": RandomNormal, "orthogonal": Orthogonal,
    "OrthogonalInitializer": Orthogonal,
}
_BY_NAME.update({cls.__name__: cls for cls in set(_BY_NAME.values())})


def get(identifier: Any) -> Any:
    """An initializer from a name (``"glorot_uniform"``, ``"Zeros"``), a config dict, an
    initializer, or a callable ``(shape, dtype)``; ``None`` stays ``None``."""
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret initializer identifier: {identifier!r}. "
                             f"Known names: {sorted(n for n in _BY_NAME if n.islower())}.")
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}; pass a "
                     "name, an initializer, or a callable (shape, dtype).")


def serialize(initializer: Initializer) -> dict:
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config: dict) -> Initializer:
    cls = _BY_NAME.get(config.get("class_name", ""))
    if cls is None:
        raise ValueError(f"Unknown initializer class in {config!r}.")
    return cls.from_config(config.get("config", {}))
