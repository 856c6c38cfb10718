"""``get_concrete_function`` of ``gt.TensorSpec`` arguments: example tensors for fully
defined shapes, and for ``None`` dimensions a concrete function of every shape they admit
(``ShapeGenericFunction``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import nest
from ..core.errors import InvalidArgumentError
from ..core.tensor import Tensor
from . import signature
from .spec import TensorSpec


def _has_open_spec(args: tuple, kwargs: dict) -> bool:
    return any(isinstance(leaf, TensorSpec) and not leaf.shape.is_fully_defined()
               for leaf in nest.flatten((args, kwargs)))


class ShapeGenericFunction:
    """``get_concrete_function`` of specs with ``None`` dimensions (TF's concrete
    function for every shape the specs admit): a call checks the tensors against the
    specs and the Python arguments against the traced ones, then runs the Function,
    which traces each concrete shape it meets."""

    def __init__(self, function: Any, args: tuple, kwargs: dict):
        self._function = function
        self.parameters = function._parameters
        self._args, self._kwargs = signature.bind_arguments(self.parameters, args, kwargs)
        self.structured_input_signature = signature.structured_input_signature(
            self.parameters, self._args, self._kwargs)
        self.__name__ = function.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = [p.name for p in self.parameters]
        bound = list(args)
        for i in range(len(args), len(self._args)):
            name = names[i] if i < len(names) else None
            if name in kwargs:
                bound.append(kwargs.pop(name))
            elif not isinstance(self._args[i], TensorSpec):
                bound.append(self._args[i])
        if kwargs or len(bound) != len(self._args):
            raise TypeError(
                f"ConcreteFunction {self.__name__}{tuple(names)} takes the tensor "
                f"arguments {self.structured_input_signature[0]}; got {len(args)} "
                f"positional argument(s) and keywords {sorted(kwargs)}: Python arguments "
                "are fixed to their traced values.")
        checked = [self._conform(i, traced, value)
                   for i, (traced, value) in enumerate(zip(self._args, bound))]
        return self._function(*checked, **self._kwargs)

    def _conform(self, index: int, traced: Any, value: Any) -> Any:
        if not isinstance(traced, TensorSpec):
            if value is not traced and value != traced:
                raise TypeError(f"ConcreteFunction {self.__name__!r} was traced with "
                                f"{traced!r} for argument {index}, but was called with "
                                f"{value!r}: call the gt.function itself.")
            return value
        tensor = value if isinstance(value, Tensor) else \
            Tensor(value, dtype=traced.dtype.as_numpy_dtype)
        if tensor.dtype != traced.dtype.as_numpy_dtype:
            raise InvalidArgumentError(
                f"cannot compute ConcreteFunction {self.__name__!r}: input #{index} "
                f"(zero-based) was expected to be a {traced.dtype.name} tensor but is a "
                f"{tensor.dtype.name} tensor.")
        if not traced.is_compatible_with(tensor):
            raise TypeError(f"ConcreteFunction {self.__name__!r}: argument {index} has "
                            f"shape {tuple(tensor.shape)}, which {traced} does not admit.")
        return tensor

    @property
    def structured_outputs(self) -> Any:
        """Symbolic outputs; their shapes are unknown (they depend on the call's)."""
        example = self._example()
        return nest.map_structure(
            lambda o: signature.SymbolicTensor(o.name, None, o.dtype)
            if isinstance(o, signature.SymbolicTensor) else o, example.structured_outputs)

    def _example(self) -> Any:  # a ConcreteFunction
        """A trace at an example shape (``None`` dimensions as 1, unknown rank as a
        scalar), for the output dtypes."""
        def example(spec: Any) -> Any:
            if not isinstance(spec, TensorSpec):
                return spec
            dims = [] if spec.shape.rank is None else [d or 1 for d in spec.shape]
            return TensorSpec(dims, spec.dtype)

        args = nest.map_structure(example, self._args)
        return self._function.get_concrete_function(*args, **self._kwargs)

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        del verbose
        return signature.pretty_signature(self.parameters, self.structured_input_signature,
                                          self.structured_outputs, [])

    def __str__(self) -> str:
        return "ConcreteFunction " + self.pretty_printed_signature()


def _specs_to_examples(name: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``get_concrete_function``'s ``TensorSpec`` arguments as zero tensors (a trace
    is made for concrete shapes)."""
    def example(value: Any) -> Any:
        if not isinstance(value, TensorSpec):
            return value
        if not value.shape.is_fully_defined():
            raise NotImplementedError(
                f"@gt.function {name!r}: get_concrete_function({value}) needs a fully "
                "defined shape, since each trace is made for concrete shapes. Pass an "
                "example tensor, or call the function (it traces each new shape).")
        return Tensor(np.zeros(tuple(value.shape), value.dtype.dtype))

    return nest.map_structure(example, (args, kwargs))
