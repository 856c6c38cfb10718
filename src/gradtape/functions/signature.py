"""How a traced function describes its signature, in TF's formats.

``structured_input_signature`` is the call's arguments, bound to the Python function's
parameters, with each tensor replaced by a ``TensorSpec`` named after its parameter:
``((TensorSpec(shape=(), dtype=gt.int32, name='a'),), {})``. ``structured_outputs`` is
the returned structure with each tensor replaced by a symbolic ``Tensor("Identity:0",
shape=(), dtype=int32)``. ``pretty_signature`` is TF's text (``print(concrete)`` and
``Function.pretty_printed_concrete_signatures()``)::

    Input Parameters:
      a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=gt.int32, name=None)
    Output Type:
      TensorSpec(shape=(), dtype=gt.int32, name=None)
    Captures:
      None
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import nest
from ..core.tensor import Tensor
from ..core.variable import Variable
from .spec import TensorSpec


class SymbolicTensor:
    """A tensor of a traced function's graph as TF prints it: a name, shape and dtype,
    no value (``structured_outputs``, ``inputs``, ``outputs``)."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name: str, shape: Any, dtype: Any):
        self.name = name
        self.shape = shape
        self.dtype = np.dtype(dtype) if not hasattr(dtype, "as_numpy_dtype") \
            else np.dtype(dtype.as_numpy_dtype)

    def __repr__(self) -> str:
        shape = "<unknown>" if self.shape is None else str(tuple(self.shape))
        return f'Tensor("{self.name}", shape={shape}, dtype={self.dtype.name})'


def parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return []


def bind_arguments(params: list[inspect.Parameter], args: tuple,
                   kwargs: dict) -> tuple[tuple, dict]:
    """``(args, kwargs)`` as TF canonicalizes them: keywords of positional parameters
    moved into ``args`` in parameter order, the rest kept as keywords."""
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    args = list(args)
    kwargs = dict(kwargs)
    for name in positional[len(args):]:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    return tuple(args), kwargs


def _spec_of(value: Any, name: str | None) -> Any:
    if isinstance(value, TensorSpec):
        return TensorSpec(value.shape if value.shape.rank is not None else None,
                          value.dtype, name)
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return TensorSpec(tuple(value.shape), value.dtype, name)
    return value


def structured_input_signature(params: list[inspect.Parameter], args: tuple,
                               kwargs: dict) -> tuple[tuple, dict]:
    """The bound arguments with tensors (and specs) as ``TensorSpec``s named after
    their parameter (``name_<i>`` inside a nested argument)."""
    names = [p.name for p in params]
    out_args = []
    for i, value in enumerate(args):
        out_args.append(_named_specs(names[i] if i < len(names) else f"args_{i}", value))
    out_kwargs = {k: _named_specs(k, v) for k, v in kwargs.items()}
    return tuple(out_args), out_kwargs


def _named_specs(name: str, value: Any) -> Any:
    flat = nest.flatten(value)
    if len(flat) == 1 and flat[0] is value:
        return _spec_of(value, name)
    named = [_spec_of(leaf, f"{name}_{j}") for j, leaf in enumerate(flat)]
    return nest.pack_sequence_as(value, named)


def _type_text(value: Any) -> str:
    """A value's type in TF's pretty signature: a spec, ``Literal[2]``, containers."""
    if isinstance(value, (TensorSpec, SymbolicTensor)):
        spec = value if isinstance(value, TensorSpec) else \
            TensorSpec(value.shape, value.dtype)
        return repr(TensorSpec(spec.shape if spec.shape.rank is not None else None,
                               spec.dtype))
    if isinstance(value, Variable):
        return repr(TensorSpec(tuple(value.shape), value.dtype))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return f"Tuple[{', '.join(_type_text(v) for v in value)}]"
    if isinstance(value, list):
        return f"List[{', '.join(_type_text(v) for v in value)}]"
    if isinstance(value, dict):
        items = ", ".join(f"{k!r}: {_type_text(v)}" for k, v in value.items())
        return f"Dict[{items}]"
    if value is None:
        return "None"
    return f"Literal[{value!r}]"


def pretty_signature(params: list[inspect.Parameter], structured_input: tuple[tuple, dict],
                     outputs: Any, captures: list[str]) -> str:
    """TF's text for one concrete function (without ``ConcreteFunction `` in front)."""
    args, kwargs = structured_input
    by_name = {p.name: p for p in params}
    lines = ["Input Parameters:"]
    for i, value in enumerate(args):
        param = params[i] if i < len(params) else None
        name, kind = (param.name, param.kind.name) if param is not None \
            else (f"args_{i}", "VAR_POSITIONAL")
        lines.append(f"  {name} ({kind}): {_type_text(value)}")
    for name, value in kwargs.items():
        param = by_name.get(name)
        kind = param.kind.name if param is not None else "VAR_KEYWORD"
        lines.append(f"  {name} ({kind}): {_type_text(value)}")
    lines += ["Output Type:", f"  {_type_text(outputs)}", "Captures:"]
    lines += [f"  {c}" for c in captures] or ["  None"]
    return "\n".join(lines)


def symbolic_outputs(structure: Any, leaves: list[tuple[str, Any]],
                     avals: list[Any]) -> Any:
    """The returned structure with symbolic tensors (``Identity:0``, ``Identity_1:0``,
    ...) where the function returns tensors; other returned values as they are."""
    flat = []
    count = 0
    for kind, ref in leaves:
        if kind == "static":
            flat.append(ref)
            continue
        if kind == "out":
            shape, dtype = avals[ref].shape, avals[ref].dtype
        else:  # a returned constant
            array = np.asarray(ref)
            shape, dtype = array.shape, array.dtype
        name = "Identity:0" if count == 0 else f"Identity_{count}:0"
        flat.append(SymbolicTensor(name, shape, dtype))
        count += 1
    if structure is None and len(flat) == 1:
        return flat[0]
    return nest.pack_sequence_as(structure, flat)


def capture_lines(sources: list[Any], avals: list[Any]) -> list[str]:
    """TF's ``Captures:`` lines: a variable as a resource handle, a captured tensor or
    constant by its spec, each under an id."""
    lines = []
    for source, aval in zip(sources, avals):
        if source.kind == "var":
            lines.append(f"{id(source.ref)}: TensorSpec(shape=(), dtype=gt.resource, "
                         "name=None)")
        elif source.kind in ("capture", "const"):
            spec = TensorSpec(aval.shape, aval.dtype)
            lines.append(f"{id(source.ref)}: {spec!r}")
    return lines
