"""``gt.Module`` (TF's ``tf.Module``) and ``gt.name_scope``.

A module finds its variables and submodules by walking its attributes the way TF's
``_flatten_module`` does: attributes sorted by name, each flattened (lists, tuples,
dicts by sorted key, nested), every object once (by identity), a module's own leaves
before those of its submodules.
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ..core.variable import Variable

__all__ = ["Module", "name_scope"]

_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_VALID_IDENTIFIER = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")


def camel_to_snake(name: str) -> str:
    """TF's module naming: ``MyDense`` -> ``my_dense``, ``MLP`` -> ``mlp``."""
    return _CAMEL_TO_SNAKE.sub(r"_\1", name).lower()


# --- name scopes ----------------------------------------------------------------------------

class _ScopeStack(threading.local):
    def __init__(self) -> None:
        self.current = ""  # "" or "outer/inner/"


_scopes = _ScopeStack()


class name_scope:
    """TF's ``tf.name_scope(name)``: a context manager that opens ``name`` under the
    current scope; ``with gt.name_scope("a") as scope`` gives ``"a/"``. A name ending
    in ``/`` is absolute (re-enters that scope). Names are only recorded here: gradtape
    does not prefix variable names with them (see docs/porting.md)."""

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"name_scope takes a string name, got {name!r}.")
        self._name = name
        self._saved: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        self._saved.append(_scopes.current)
        name = self._name
        if not name:
            scope = ""
        elif name.endswith("/"):
            scope = name
        else:
            scope = f"{_scopes.current}{name}/"
        _scopes.current = scope
        return scope

    def __exit__(self, *exc: Any) -> None:
        _scopes.current = self._saved.pop()


# --- tf.Module ------------------------------------------------------------------------------

# id(module) -> (weak reference to the module, {attribute name: restore}): checkpoint
# values restored before their module created the variable (TF's deferred restoration;
# gt.train.Checkpoint.restore fills it). ``restore(module, variable)`` runs when the
# attribute is set to a variable. An entry dies with its module, never later.
deferred_restores: dict[int, tuple[weakref.ref, dict[str, Callable[[Any, Any], None]]]] = {}

# The checkpoint name of a Keras layer's weights made by add_weight (``<name>/<i>``), for
# the ones no attribute holds.
ADDED_WEIGHTS = "_added_weights"


def defer_restore(module: Module, attribute: str,
                  restore: Callable[[Any, Any], None]) -> Callable[[Any, Any], None] | None:
    """Run ``restore(module, variable)`` when ``module.<attribute>`` is set to a
    variable, replacing any restore already waiting there; returns the one replaced."""
    key = id(module)
    entry = deferred_restores.get(key)
    if entry is None or entry[0]() is not module:
        entry = (weakref.ref(module, functools.partial(_forget_module, key)), {})
        deferred_restores[key] = entry
    replaced = entry[1].get(attribute)
    entry[1][attribute] = restore
    return replaced


def waiting_restores(module: Module) -> dict[str, Callable[[Any, Any], None]]:
    """The restores waiting for ``module``'s attributes, by attribute."""
    entry = deferred_restores.get(id(module))
    return dict(entry[1]) if entry is not None and entry[0]() is module else {}


def _forget_module(key: int, reference: weakref.ref) -> None:
    entry = deferred_restores.get(key)
    if entry is not None and entry[0] is reference:
        del deferred_restores[key]


def run_deferred_restore(module: Module, attribute: str, value: Any) -> None:
    """Assign the checkpoint value waiting for ``module.<attribute>`` (if any) to the
    variable ``value``. ``attribute`` may also name a child of ``checkpoint_children``
    that is not an attribute (a Keras layer's ``_added_weights/<i>``)."""
    entry = deferred_restores.get(id(module))
    if entry is None or not isinstance(value, Variable):  # keep waiting for a variable
        return
    restore = entry[1].pop(attribute, None)
    if not entry[1]:
        del deferred_restores[id(module)]
    if restore is not None:
        restore(module, value)


def _is_variable(obj: Any) -> bool:
    return isinstance(obj, Variable)


def _is_trainable_variable(obj: Any) -> bool:
    return isinstance(obj, Variable) and obj.trainable


def _is_non_trainable_variable(obj: Any) -> bool:
    return isinstance(obj, Variable) and not obj.trainable


def _is_module(obj: Any) -> bool:
    return isinstance(obj, Module)


class Module:
    """TF's ``tf.Module``: a named container of variables and other modules.

    ``variables``, ``trainable_variables`` and ``submodules`` are found by walking the
    attributes (see the module docstring), so a subclass only assigns them::

        class Dense(gt.Module):
            def __init__(self, n_in, n_out, name=None):
                super().__init__(name=name)
                self.w = gt.Variable(gt.random.normal([n_in, n_out]), name="w")
    """

    # Attributes the walk skips (TF skips its checkpoint bookkeeping the same way).
    _TF_MODULE_IGNORED_PROPERTIES: frozenset[str] = frozenset(("_name_scope",))

    def __init__(self, name: str | None = None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _VALID_IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be "
                             "valid Python identifiers (e.g. a valid class name).")
        self._name = name
        with name_scope(name) as scope:  # opened under the scope it is built in
            self._name_scope = name_scope(scope)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if deferred_restores:  # a checkpoint value may wait for this attribute's variable
            run_deferred_restore(self, name, value)

    def __getattr__(self, attr: str) -> Any:
        # A subclass whose __init__ does not call super().__init__() (TF allows it):
        # the name and scope are made on first use.
        if attr in ("_name", "_name_scope"):
            Module.__init__(self)
            return object.__getattribute__(self, attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _checkpoint_children(self) -> list[tuple[str, Any]]:
        """What ``gt.train.Checkpoint`` walks into, by name: the attributes, sorted (a
        subclass adds the variables it holds elsewhere, after them)."""
        ignored = self._TF_MODULE_IGNORED_PROPERTIES
        return [(k, v) for k, v in sorted(vars(self).items()) if k not in ignored]

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """The scope this module's methods run in (``with self.name_scope:``)."""
        return self._name_scope

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Every variable of this module and its submodules, each once."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(self._flatten(predicate=_is_non_trainable_variable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one's attributes (not itself), each once."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive: bool = True, predicate: Callable[[Any], bool] | None = None,
                 attribute_traversal_key: Callable | None = None,
                 with_path: bool = False, expand_composites: bool = False) -> Iterator[Any]:
        """TF's ``Module._flatten``: the leaves of the attributes that ``predicate``
        accepts (with their attribute paths when ``with_path``)."""
        del expand_composites
        return _flatten_module(self, recursive, predicate or (lambda _: True),
                               attribute_traversal_key,
                               self._TF_MODULE_IGNORED_PROPERTIES, with_path)

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorator: run ``method`` inside the module's name scope (TF's)."""

        @functools.wraps(method)
        def method_with_name_scope(self: Module, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return method_with_name_scope

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} object named {self._name!r}>"


def _flatten_module(module: Module, recursive: bool, predicate: Callable[[Any], bool],
                    attribute_traversal_key: Callable | None, ignored: frozenset,
                    with_path: bool, module_path: tuple = (), seen: set | None = None,
                    recursion_stack: list | None = None) -> Iterator[Any]:
    """TF's ``_flatten_module``: this module's matching leaves (attributes sorted by
    name), then each submodule's, in that order; an object met twice is yielded once."""
    module_id = id(module)
    if seen is None:
        seen = {module_id}
    if recursion_stack is None:
        recursion_stack = []
    if module_id in recursion_stack:  # a cycle back to a module being walked
        recursive = False
    attributes = vars(module)
    submodules = []
    for key in sorted(attributes, key=attribute_traversal_key):
        if key in ignored:
            continue
        for leaf_path, leaf in _leaves_with_paths(attributes[key], (key,)):
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (module_path + leaf_path, leaf) if with_path else leaf
            if recursive and _is_module(leaf):
                submodules.append((module_path + leaf_path, leaf))
    recursion_stack.append(module_id)
    for path, submodule in submodules:
        yield from _flatten_module(submodule, recursive, predicate, attribute_traversal_key,
                                   ignored, with_path, path, seen, recursion_stack)
    recursion_stack.pop()


def _leaves_with_paths(value: Any, path: tuple) -> Iterator[tuple[tuple, Any]]:
    """``tf.nest``'s leaves of ``value``: lists and tuples in order, dicts by sorted key;
    everything else (modules, variables, None, strings) is a leaf."""
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _leaves_with_paths(item, path + (i,))
    elif isinstance(value, dict):
        for key in _sorted_keys(value):
            yield from _leaves_with_paths(value[key], path + (key,))
    else:
        yield path, value


def _sorted_keys(mapping: dict) -> list:
    try:
        return sorted(mapping)
    except TypeError:  # keys of mixed types: tf.nest raises; keep insertion order
        return list(mapping)
