"""``keras.layers.Layer``: Keras 3's base layer, on ``gt.Module``.

A layer creates its weights in ``build(input_shape)``, which its first ``__call__`` runs
with the shape of the first input; ``call`` computes. Sublayers and variables assigned
as attributes (also in lists and dicts) are tracked in the order they were assigned, and
``weights`` lists a layer's own variables (those of ``add_weight`` first, in creation
order; trainable before non-trainable) and then each sublayer's, as Keras 3 does. A plain
``gt.Variable`` (TF's ``tf.Variable``) assigned as an attribute is not a weight, as in
Keras 3: use ``add_weight`` or ``keras.Variable``.
"""

from __future__ import annotations

import inspect
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from ... import ops
from ...api.array_ops import divide_no_nan
from ...api.creation import shape as dynamic_shape
from ...api.missing_names import missing_attribute
from ...api.module import (
    ADDED_WEIGHTS,
    Module,
    deferred_restores,
    name_scope,
    run_deferred_restore,
)
from ...core.dtypes import numpy_dtype
from ...core.tensor import Tensor, convert_to_tensor
from ...core.variable import Variable as _GtVariable
from .. import initializers, regularizers
from ..naming import layer_scope, to_snake_case, uniquify
from ..variables import Variable
from . import masks
from .configs import serialized

__all__ = ["Layer"]

# Attributes holding the layer's own bookkeeping, never walked for sublayers/variables.
_INTERNAL = frozenset((
    "_name", "_name_scope", "_added_weights", "_call_losses", "_trainable",
    "_dtype", "_autocast", "_input_shape_arg", "_build_shapes", "_activity_regularizer",
    "_inbound_nodes", "_output_shape", "_supports_masking",
))


class _CallContext(threading.local):
    def __init__(self) -> None:
        self.training: list[Any] = []  # the `training` of the enclosing layer calls


_context = _CallContext()
# The layers holding call losses now: an outermost call with none anywhere skips the walk
# over its sublayers that clears them.
_loss_holders: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_takes_training: dict[type, tuple[bool, Any]] = {}


def _training_argument(cls: type) -> tuple[bool, Any]:
    """Whether ``cls.call`` takes ``training``, and its default there (cached)."""
    found = _takes_training.get(cls)
    if found is None:
        parameters = inspect.signature(cls.call).parameters
        takes = "training" in parameters
        default = parameters["training"].default if takes else None
        found = (takes, None if default is inspect.Parameter.empty else default)
        _takes_training[cls] = found
    return found


_mask_rules: dict[type, tuple[bool, bool]] = {}


def _mask_rule(cls: type) -> tuple[bool, bool]:
    """Whether ``cls.call`` takes ``mask``, and whether ``cls`` overrides
    ``compute_mask`` (cached): what a call does with masks."""
    found = _mask_rules.get(cls)
    if found is None:
        takes = "mask" in inspect.signature(cls.call).parameters
        found = _mask_rules[cls] = (takes, cls.compute_mask is not Layer.compute_mask)
    return found


def _leaves(value: Any) -> Iterator[Any]:
    """Layers and variables inside lists, tuples and dicts (in order), or ``value``."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


def unique_by_identity(items: Iterator[Any]) -> list[Any]:
    """``items`` without repeats of the same object, in first-seen order."""
    seen: set[int] = set()
    out = []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out


def shape_of(value: Any) -> Any:
    """What ``build`` receives: a tuple per tensor, lists and dicts kept."""
    if isinstance(value, (list, tuple)) and not _is_number_list(value):
        return [shape_of(v) for v in value]
    if isinstance(value, dict):
        return {k: shape_of(v) for k, v in value.items()}
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else tuple(np.shape(value))


def _is_number_list(value: Any) -> bool:
    first = value
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    return isinstance(first, (int, float, np.number))


class Layer(Module):
    """Keras 3's ``Layer``. Subclass it with ``build(input_shape)`` (create weights with
    ``add_weight``) and ``call(inputs, training=None)``; call the layer, not ``call``.

    ``dtype`` is the weights' and the computation's dtype (``"float32"``); floating inputs
    are cast to it (``autocast``), as Keras does. ``name`` defaults to the snake-case
    class name made unique (``dense``, ``dense_1``...)."""

    # Checkpoints find weights by the attributes holding them (``kernel``), so a value
    # restored before the layer is built is assigned when ``build`` sets the attribute.
    _TF_MODULE_IGNORED_PROPERTIES = Module._TF_MODULE_IGNORED_PROPERTIES | _INTERNAL

    def __init__(self, activity_regularizer: Any = None, trainable: bool = True,
                 dtype: Any = None, autocast: bool = True, name: str | None = None,
                 **kwargs: Any):
        input_shape = _input_shape_kwarg(kwargs, type(self).__name__)
        if name is None:
            name = uniquify(to_snake_case(type(self).__name__))
        elif not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string without '/', got {name!r}.")
        object.__setattr__(self, "_name", name)
        with name_scope(name) as scope:
            object.__setattr__(self, "_name_scope", name_scope(scope))
        object.__setattr__(self, "_added_weights", [])
        object.__setattr__(self, "_call_losses", [])
        object.__setattr__(self, "_trainable", bool(trainable))
        object.__setattr__(self, "_dtype", numpy_dtype(dtype or "float32"))
        object.__setattr__(self, "_autocast", autocast)
        object.__setattr__(self, "_input_shape_arg", input_shape)
        object.__setattr__(self, "_build_shapes", None)
        object.__setattr__(self, "_output_shape", None)
        object.__setattr__(self, "_activity_regularizer", regularizers.get(activity_regularizer))
        self.built = False

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, _GtVariable) and not isinstance(value, Variable):
            _warn_untracked_variable(self, name)
        super().__setattr__(name, value)

    def __getattr__(self, attr: str) -> Any:
        # A subclass whose __init__ forgot super().__init__(): Keras raises too.
        if attr in _INTERNAL or attr == "built":
            raise RuntimeError(
                f"It looks like the subclass {type(self).__name__!r} of keras.layers.Layer "
                "did not call `super().__init__(**kwargs)` in its constructor; call it "
                "first.")
        raise missing_attribute(type(self).__name__, attr)  # Keras's names say so

    # --- properties -------------------------------------------------------------------------
    @property
    def dtype(self) -> str:
        """The weights' dtype, as a name (``"float32"``)."""
        return self._dtype.name

    @property
    def compute_dtype(self) -> str:
        return self._dtype.name

    @property
    def variable_dtype(self) -> str:
        return self._dtype.name

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        """Freezes (or unfreezes) this layer's variables and its sublayers'."""
        value = bool(value)
        object.__setattr__(self, "_trainable", value)
        for v in self._added_weights:
            if v._created_trainable:
                v.trainable = value
        for layer in self._sublayers():
            layer.trainable = value

    def _attribute_leaves(self) -> Iterator[Any]:
        for key, value in vars(self).items():
            if key not in _INTERNAL:
                yield from _leaves(value)

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        # Weights from add_weight, also those no attribute holds (Keras 3 checkpoints
        # every weight); after the attributes, so `kernel` keeps its name.
        return super()._checkpoint_children() + [(ADDED_WEIGHTS, list(self._added_weights))]

    def _sublayers(self) -> list[Layer]:
        """The layers assigned as attributes, in assignment order (not nested ones)."""
        return unique_by_identity(v for v in self._attribute_leaves() if isinstance(v, Layer))

    def _own_variables(self) -> list[Any]:
        # Keras 3 tracks keras.Variable attributes only: a plain gt.Variable (TF's
        # tf.Variable) assigned to a layer is in no weight list (checkpoints still save it).
        attributes = (v for v in self._attribute_leaves() if isinstance(v, Variable))
        return unique_by_identity(list(self._added_weights) + list(attributes))

    @property
    def weights(self) -> list[Any]:
        """Own variables (trainable first), then every sublayer's, each once."""
        own = self._own_variables()
        ordered = [v for v in own if v.trainable] + [v for v in own if not v.trainable]
        for layer in self._sublayers():
            ordered.extend(layer.weights)
        return unique_by_identity(ordered)

    @property
    def variables(self) -> list[Any]:  # type: ignore[override]
        return self.weights

    @property
    def trainable_weights(self) -> list[Any]:
        if not self._trainable:
            return []
        return [v for v in self.weights if v.trainable]

    @property
    def non_trainable_weights(self) -> list[Any]:
        if not self._trainable:
            return self.weights
        return [v for v in self.weights if not v.trainable]

    @property
    def trainable_variables(self) -> list[Any]:  # type: ignore[override]
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[Any]:  # type: ignore[override]
        return self.non_trainable_weights

    @property
    def activity_regularizer(self) -> Any:
        """The penalty on each output, added to ``losses`` by every call."""
        return self._activity_regularizer

    @activity_regularizer.setter
    def activity_regularizer(self, value: Any) -> None:
        object.__setattr__(self, "_activity_regularizer", regularizers.get(value))

    @property
    def losses(self) -> list[Tensor]:
        """As Keras 3's: the losses ``add_loss`` (and the activity regularizer) added
        during the last outermost call, this layer's then its sublayers', then the
        weight regularizers' penalties of the trainable weights (of their current
        values). A frozen weight adds no penalty."""
        layers = [self, *self._flattened_sublayers()]
        found = [loss for layer in layers for loss in layer._call_losses]
        if not self._trainable:
            return found
        # The regularized weights among `trainable_weights`, without a second walk.
        regularized = (v for layer in layers for v in layer._added_weights
                       if v._regularizer is not None and v.trainable)
        found.extend(v._regularizer(v) for v in unique_by_identity(regularized))
        return found

    def add_loss(self, loss: Any) -> None:
        """Adds a loss (``model.fit`` minimizes it with the compiled loss; a
        non-scalar loss counts by its sum). A list or dict adds each of its tensors."""
        for item in _leaves(loss):
            self._hold_loss(convert_to_tensor(item))

    def _hold_loss(self, loss: Tensor) -> None:
        self._call_losses.append(loss)
        _loss_holders[id(self)] = self

    def _flattened_sublayers(self) -> list[Layer]:
        """Every layer nested in this one, each once, in Keras 3's order."""
        found: list[Layer] = []
        seen: set[int] = set()
        pending = deque(self._sublayers())
        while pending:
            layer = pending.popleft()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            found.append(layer)
            pending.extendleft(layer._sublayers())
        return found

    def _clear_losses(self) -> None:
        """Starts the losses of this layer and of every layer in it over."""
        for layer in [self, *self._flattened_sublayers()]:
            layer._call_losses.clear()
            _loss_holders.pop(id(layer), None)

    def _add_activity_losses(self, outputs: Any) -> None:
        """Keras 3: the regularizer of each output tensor, divided by the batch size
        (the first dimension; a scalar output is not divided)."""
        for output in _leaves(outputs):
            if not isinstance(output, Tensor):
                continue
            penalty = convert_to_tensor(self._activity_regularizer(output))
            if output.ndim > 0:
                batch = ops.cast(dynamic_shape(output)[0], penalty.dtype)
                penalty = divide_no_nan(penalty, batch)
            self._hold_loss(penalty)

    # --- masks ------------------------------------------------------------------------------
    @property
    def supports_masking(self) -> bool:
        """Keras 3's: whether the layer passes a mask on (by default, when it overrides
        ``compute_mask``)."""
        found = self.__dict__.get("_supports_masking")
        return _mask_rule(type(self))[1] if found is None else found

    @supports_masking.setter
    def supports_masking(self, value: bool) -> None:
        object.__setattr__(self, "_supports_masking", bool(value))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask of the outputs: the input's (Keras 3's default)."""
        return mask

    # --- weights ----------------------------------------------------------------------------
    def add_weight(self, shape: Any = None, initializer: Any = None, dtype: Any = None,
                   trainable: bool = True, autocast: bool = True, regularizer: Any = None,
                   constraint: Any = None, aggregation: str = "none",
                   name: str | None = None, **kwargs: Any) -> Variable:
        """Creates a variable of this layer (Keras 3's arguments; Keras 2's name-first
        call ``add_weight("kernel", shape=...)`` works too). The default initializer is
        ``"glorot_uniform"`` for floats and ``"zeros"`` otherwise."""
        del autocast, aggregation, kwargs
        if isinstance(shape, str):  # Keras 2: add_weight(name, shape, ...)
            name, shape, initializer = shape, initializer, None
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = numpy_dtype(dtype) if dtype is not None else self._dtype
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        init = initializers.get(initializer)
        with layer_scope(self):
            variable = Variable(init, shape=shape, dtype=dtype, trainable=trainable,
                                name=name or "variable")
        variable._constraint = constraint
        variable._created_trainable = bool(trainable)
        self._added_weights.append(variable)
        variable._regularizer = regularizers.get(regularizer)
        if not self._trainable:
            variable.trainable = False
        if deferred_restores:  # a checkpoint value may wait for an unattributed weight
            run_deferred_restore(self, f"{ADDED_WEIGHTS}/{len(self._added_weights) - 1}",
                                 variable)
        return variable

    add_variable = add_weight

    def get_weights(self) -> list[np.ndarray]:
        """The weights' values, as NumPy arrays (in ``weights`` order)."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights: list[Any]) -> None:
        """Assigns ``weights`` (arrays in ``weights`` order, of the same shapes)."""
        own = self.weights
        if len(weights) != len(own):
            raise ValueError(
                f"You called `set_weights(weights)` on layer {self.name!r} with a weight "
                f"list of length {len(weights)}, but the layer was expecting {len(own)} "
                "weights; pass one array per entry of `layer.weights`.")
        for variable, value in zip(own, weights):
            value = np.asarray(value)
            if value.shape != tuple(variable.shape):
                raise ValueError(
                    f"Layer {self.name!r} weight shape {tuple(variable.shape)} is not "
                    f"compatible with provided weight shape {value.shape}.")
            variable.assign(value.astype(variable.dtype))

    def count_params(self) -> int:
        """The number of scalars in ``weights``."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer {self.name!r}, "
                             "but the layer isn't built. Call it on data (or build it) "
                             "first.")
        return int(sum(int(np.prod(v.shape)) for v in self.weights))

    # --- building and calling ---------------------------------------------------------------
    def build(self, input_shape: Any = None) -> None:
        """Creates the weights for inputs of ``input_shape``; subclasses override."""
        self.built = True

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` "
                                  "method implemented; define `call(self, inputs)`.")

    def build_for(self, shapes: Any) -> None:
        """Runs ``build`` once, in this layer's scope (what the first call does)."""
        if self.built:
            return
        with layer_scope(self):
            self.build(shapes)
        self.built = True
        object.__setattr__(self, "_build_shapes", shapes)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ..functional import is_symbolic, symbolic_call  # cycle

        if is_symbolic(args, kwargs):
            return symbolic_call(self, args, kwargs)
        first = args[0] if args else kwargs.get("inputs")
        previous = masks.get_keras_mask(masks.first_leaf(first)) if masks.masks else None
        takes_mask, computes_mask = _mask_rule(type(self))
        if previous is not None and takes_mask and kwargs.get("mask") is None:
            kwargs["mask"] = previous  # Keras 3 hands the first input's mask to `call`
        if masks.masks:
            masks.fill_named_masks(type(self), args, kwargs)  # `query_mask=`...
        if args:
            args = (self._convert_inputs(args[0]),) + args[1:]
        elif "inputs" in kwargs:
            kwargs["inputs"] = self._convert_inputs(kwargs["inputs"])
        takes_training, default = _training_argument(type(self))
        training = kwargs.pop("training", None)
        if training is None:
            training = _context.training[-1] if _context.training else default
        if takes_training:
            kwargs["training"] = training
        if _loss_holders and not _context.training:
            self._clear_losses()  # the outermost call: Keras 3 clears every loss in it
        with layer_scope(self):
            if not self.built:
                self.build_for(shape_of(args[0] if args else kwargs.get("inputs")))
            _context.training.append(training)
            try:
                outputs = self.call(*args, **kwargs)
            finally:
                _context.training.pop()
        if previous is not None or computes_mask:
            masks.propagate(self, first, outputs, previous)
        if self._activity_regularizer is not None:
            self._add_activity_losses(outputs)
        if self._output_shape is None:
            object.__setattr__(self, "_output_shape", shape_of(outputs))
        return outputs

    def _convert_inputs(self, value: Any) -> Any:
        """Arrays become tensors, and floating tensors the layer's dtype (autocast)."""
        if isinstance(value, Tensor):
            if self._autocast and value.dtype.kind == "f" and value.dtype != self._dtype:
                return ops.cast(value, self._dtype)
            return value
        if isinstance(value, np.ndarray):
            tensor = convert_to_tensor(value)
            return self._convert_inputs(tensor)
        if isinstance(value, (list, tuple)) and not _is_number_list(value):
            return type(value)(self._convert_inputs(v) for v in value)
        if isinstance(value, dict):
            return {k: self._convert_inputs(v) for k, v in value.items()}
        return value

    def get_config(self) -> dict:
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self._activity_regularizer is not None:  # Keras 3 writes it only when set
            config["activity_regularizer"] = serialized(self._activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config: dict) -> Layer:
        """Keras 3's ``from_config``: the layer built from its ``get_config()``."""
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _warn_untracked_variable(layer: Layer, attribute: str) -> None:
    """Keras 3 leaves a plain ``tf.Variable`` attribute out of the weights, so ``fit``
    and ``trainable_variables`` skip it: said at the user's assignment."""
    warnings.warn(
        f"{type(layer).__name__}.{attribute} is a gt.Variable (TF's tf.Variable): Keras 3 "
        "does not track it, so it is not in the layer's weights or trainable_variables, "
        "and fit() does not train it. Create it with self.add_weight(...) or "
        "keras.Variable(...).", UserWarning, stacklevel=3)


def _input_shape_kwarg(kwargs: dict, layer: str) -> tuple | None:
    """Keras's ``input_shape=`` / ``input_dim=`` / ``batch_input_shape=`` (used by
    ``Sequential`` to build); anything else is an error naming the argument."""
    shape = kwargs.pop("input_shape", None)
    input_dim = kwargs.pop("input_dim", None)
    batch_shape = kwargs.pop("batch_input_shape", None) or kwargs.pop("batch_shape", None)
    kwargs.pop("batch_size", None)
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments passed to {layer}: {kwargs}")
    if shape is not None:
        return tuple(shape)
    if input_dim is not None:
        return (int(input_dim),)
    if batch_shape is not None:
        return tuple(batch_shape)[1:]
    return None
