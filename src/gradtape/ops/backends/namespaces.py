"""How primitives run on other libraries' arrays (Dask, CuPy, array-API namespaces).

Most primitives need nothing here: on Dask and CuPy, NumPy's protocols route their NumPy
implementation to the library; on an array-API namespace, a NumPy function runs as the
namespace's function of the same (array-API) name (``rules.py``). The rules
below are for the rest: implementations written with ufunc methods (``np.add.reduce``,
which Dask does not route), ndarray methods, or no NumPy function at all.
"""

from __future__ import annotations

from ...core.backends import ArrayKind
from .rules import namespace_rule


def _transposer(xp):
    return getattr(xp, "permute_dims", None) or xp.transpose


def _reduction(name: str) -> None:
    """The reduction primitive ``name`` as the namespace's function of that name."""

    @namespace_rule(name)
    def rule(kind: ArrayKind):
        reduce = getattr(kind.namespace, name)
        return lambda x, axis, keepdims: reduce(x, axis=axis, keepdims=keepdims)


for _name in ("sum", "max", "min"):
    _reduction(_name)


@namespace_rule("unbroadcast")
def _unbroadcast(kind: ArrayKind):
    xp = kind.namespace
    return lambda g, axes, shape: xp.reshape(xp.sum(g, axis=axes), shape)


@namespace_rule("reshape")
def _reshape(kind: ArrayKind):
    xp = kind.namespace
    return lambda x, shape: xp.reshape(x, shape)


@namespace_rule("transpose")
def _transpose(kind: ArrayKind):
    permute = _transposer(kind.namespace)
    return lambda x, axes: permute(x, axes)


@namespace_rule("broadcast_to")
def _broadcast_to(kind: ArrayKind):
    xp = kind.namespace
    return lambda x, shape: xp.broadcast_to(x, shape)


@namespace_rule("identity")
def _identity(kind: ArrayKind):
    return lambda x: x


@namespace_rule("cast")
def _cast(kind: ArrayKind):
    xp = kind.namespace
    if kind.protocols:
        return lambda x, dtype: x.astype(dtype)
    return lambda x, dtype: xp.astype(x, kind.dtype(dtype))


@namespace_rule("sigmoid")
def _sigmoid(kind: ArrayKind):
    xp = kind.namespace
    # exp(-log(1 + exp(-x))), as the NumPy implementation: never overflows.
    return lambda x: xp.exp(-xp.logaddexp(xp.zeros_like(x), -x))


@namespace_rule("sigmoid_of_exp")
def _sigmoid_of_exp(kind: ArrayKind):
    xp = kind.namespace
    return lambda e: (lambda held: held / (held + 1))(xp.minimum(e, xp.finfo(e.dtype).max))


@namespace_rule("softplus_of_exp")
def _softplus_of_exp(kind: ArrayKind):
    xp = kind.namespace
    return lambda u, e: xp.log1p(e)


@namespace_rule("softplus")
def _softplus(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.logaddexp(xp.zeros_like(x), x)


@namespace_rule("relu")
def _relu(kind: ArrayKind):
    xp = kind.namespace
    return lambda x: xp.maximum(x, xp.zeros_like(x))

