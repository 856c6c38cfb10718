"""``gt.debugging``: TF's runtime assertions and ``gt.nest``: TF's nested structures.

An assertion reads its condition in Python: eagerly it raises at once; inside
``@gt.function`` the read is a guard, so a call with values that break the assertion
traces again and raises there (TF raises when the assert op runs). Static facts (ranks,
shapes, which gradtape always knows) raise ``ValueError`` as TF does for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops
from ..core import nest as _nest
from ..core.errors import InvalidArgumentError
from ..core.namespaces import attribute_namespace
from ..core.tensor import Tensor, convert_to_tensor
from .control_flow import assert_same_structure as _assert_same_structure

__all__ = ["assert_equal", "assert_near", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive",
           "assert_non_negative", "check_numerics", "assert_all_finite", "assert_rank",
           "assert_shapes", "debugging", "nest"]


def _fail(message: str | None, what: str, x: Tensor, y: Tensor | None = None) -> None:
    prefix = f"{message}\n" if message else ""
    shown = f"x = {np.asarray(x)}" + ("" if y is None else f", y = {np.asarray(y)}")
    raise InvalidArgumentError(f"{prefix}Condition {what} did not hold: {shown}.")


def _operands(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ValueError(f"x {list(x.shape)} and y {list(y.shape)} do not broadcast; "
                         "assertions compare them elementwise.") from None
    return x, y


def _all(condition: Tensor) -> bool:
    """Whether every element holds (one Python read: a guard while tracing)."""
    return condition.size == 0 or bool(ops.reduce_min(condition))


def _comparison(compare: Callable[[Any, Any], Any], what: str):
    def check(x: Any, y: Any, message: str | None = None, summarize: int | None = None,
              name: str | None = None) -> None:
        del summarize, name
        x, y = _operands(x, y)
        if not _all(compare(x, y)):
            _fail(message, what, x, y)

    check.__doc__ = f"TF's assertion that ``{what}`` holds elementwise (broadcast); raises " \
        "``InvalidArgumentError`` if not."
    return check


assert_equal = _comparison(ops.equal, "x == y")
assert_less = _comparison(ops.less, "x < y")
assert_less_equal = _comparison(ops.less_equal, "x <= y")
assert_greater = _comparison(ops.greater, "x > y")
assert_greater_equal = _comparison(ops.greater_equal, "x >= y")
for _f, _name in ((assert_equal, "assert_equal"), (assert_less, "assert_less"),
                  (assert_less_equal, "assert_less_equal"), (assert_greater, "assert_greater"),
                  (assert_greater_equal, "assert_greater_equal")):
    _f.__name__ = _f.__qualname__ = _name


def assert_positive(x: Any, message: str | None = None, summarize: int | None = None,
                    name: str | None = None) -> None:
    """TF's ``tf.debugging.assert_positive``: every element ``> 0``."""
    x = convert_to_tensor(x)
    assert_greater(x, np.zeros((), x.dtype), message, summarize, name)


def assert_non_negative(x: Any, message: str | None = None, summarize: int | None = None,
                        name: str | None = None) -> None:
    """TF's ``tf.debugging.assert_non_negative``: every element ``>= 0``."""
    x = convert_to_tensor(x)
    assert_greater_equal(x, np.zeros((), x.dtype), message, summarize, name)


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None,
                message: str | None = None, summarize: int | None = None,
                name: str | None = None) -> None:
    """TF's ``tf.debugging.assert_near``: ``|x - y| <= atol + rtol * |y|`` elementwise;
    both tolerances default to ``10 * eps`` of the dtype."""
    del summarize, name
    x, y = _operands(x, y)
    if x.dtype != y.dtype:
        raise TypeError(f"x ({x.dtype}) and y ({y.dtype}) must have one dtype.")
    eps = np.finfo(x.dtype).eps if np.issubdtype(x.dtype, np.inexact) else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    if not _all(ops.less_equal(ops.abs(x - y), atol + rtol * ops.abs(y))):
        _fail(message, f"|x - y| <= {atol} + {rtol} * |y|", x, y)


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """TF's ``tf.debugging.check_numerics``: ``tensor`` itself, or
    ``InvalidArgumentError`` naming whether it holds NaN or Inf."""
    del name
    t = convert_to_tensor(tensor)
    if not np.issubdtype(t.dtype, np.inexact):
        raise TypeError(f"check_numerics needs a floating-point tensor, got {t.dtype}.")
    if not _all(ops.isfinite(t)):
        kind = "NaN" if not _all(ops.logical_not(ops.isnan(t))) else "Inf"
        raise InvalidArgumentError(f"{message} : Tensor had {kind} values")
    return ops.identity(t)


def assert_all_finite(t: Any, msg: str, name: str | None = None, x: Any = None,
                      message: str | None = None) -> Tensor:
    """TF's ``tf.debugging.assert_all_finite``: ``check_numerics``."""
    return check_numerics(t if x is None else x, msg if message is None else message, name)


def assert_rank(x: Any, rank: Any, message: str | None = None, name: str | None = None) -> None:
    """TF's ``tf.debugging.assert_rank``: ``ValueError`` if ``x``'s rank is not ``rank``."""
    del name
    x, rank = convert_to_tensor(x), int(rank)
    if x.ndim != rank:
        prefix = f"{message}. " if message else ""
        raise ValueError(f"{prefix}Tensor must have rank {rank}. Received rank {x.ndim}, "
                         f"shape {list(x.shape)}.")


def _dimension_matches(sizes: dict, symbol: Any, size: int) -> bool:
    """A dimension of a spec against a size: ints must equal it; a name must be the same
    size everywhere it occurs; ``None`` or ``'.'`` matches anything."""
    if symbol is None or symbol == ".":
        return True
    if isinstance(symbol, str):
        return sizes.setdefault(symbol, size) == size
    return int(symbol) == size


def assert_shapes(shapes: Any, data: Any = None, summarize: int | None = None,
                  message: str | None = None, name: str | None = None) -> None:
    """TF's ``tf.debugging.assert_shapes``: each ``(tensor, shape)`` matches, where a
    shape entry is an int, a name (one size wherever it occurs), or ``None``/``'.'``;
    a leading ``'*'`` or ``'...'`` allows any leading dimensions."""
    del data, summarize, name
    pairs = list(shapes.items() if isinstance(shapes, dict) else shapes)
    sizes: dict = {}
    prefix = f"{message}. " if message else ""
    for tensor, spec in pairs:
        shape = tuple(convert_to_tensor(tensor).shape)
        spec = [spec] if isinstance(spec, (int, str)) and spec not in ("*", "...") else list(spec)
        if spec and spec[0] in ("*", "..."):
            spec = spec[1:]
            shape = shape[len(shape) - len(spec):] if len(shape) >= len(spec) else None
        if shape is None or len(shape) != len(spec):
            raise ValueError(f"{prefix}Specified by tensor shape {list(spec)}: a tensor of "
                             f"shape {list(shape or ())} has the wrong rank.")
        for symbol, size in zip(spec, shape):
            if not _dimension_matches(sizes, symbol, size):
                raise ValueError(f"{prefix}Specified by tensor shape {list(spec)}: "
                                 f"dimension {symbol!r} must be {sizes.get(symbol, symbol)}"
                                 f", got shape {list(shape)}.")


def _is_nested(structure: Any) -> bool:
    """TF's ``tf.nest.is_nested``: a list, tuple, namedtuple or dict."""
    return isinstance(structure, (list, tuple, dict))


def _flatten(structure: Any, expand_composites: bool = False) -> list:
    """TF's ``tf.nest.flatten``: the leaves in order (dicts by sorted key)."""
    del expand_composites
    return _nest.flatten(structure)


def _pack_sequence_as(structure: Any, flat_sequence: Any,
                      expand_composites: bool = False) -> Any:
    """TF's ``tf.nest.pack_sequence_as``: ``structure`` with leaves from ``flat_sequence``."""
    del expand_composites
    if not isinstance(flat_sequence, (list, tuple)):
        raise TypeError(f"flat_sequence must be a list or tuple, got "
                        f"{type(flat_sequence).__name__}.")
    return _nest.pack_sequence_as(structure, list(flat_sequence))


def _map_structure(func: Callable[..., Any], *structure: Any, **kwargs: Any) -> Any:
    """TF's ``tf.nest.map_structure``: ``func`` on the leaves of one or more structures
    of the same nesting, in that structure."""
    kwargs.pop("check_types", None)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only check_types and expand_composites are accepted, got "
                         f"{sorted(kwargs)}.")
    if not structure:
        raise ValueError("map_structure needs at least one structure.")
    for other in structure[1:]:
        _assert_same_structure(structure[0], other)
    flats = [_nest.flatten(s) for s in structure]
    return _nest.pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


def _assert_nest_same_structure(nest1: Any, nest2: Any, check_types: bool = True,
                                expand_composites: bool = False) -> None:
    """TF's ``tf.nest.assert_same_structure`` (ValueError if they differ)."""
    del check_types, expand_composites
    _assert_same_structure(nest1, nest2)


nest = attribute_namespace({
    "flatten": _flatten, "pack_sequence_as": _pack_sequence_as,
    "map_structure": _map_structure, "is_nested": _is_nested,
    "assert_same_structure": _assert_nest_same_structure,
})

debugging = attribute_namespace({
    name: globals()[name] for name in __all__ if name not in ("debugging", "nest")})
