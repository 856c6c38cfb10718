"""``gt.train``: TF's object-based checkpoints of variables (``tf.train.Checkpoint``).

A checkpoint names each variable by its path from the root objects given to
``Checkpoint(**roots)``, as TF does: ``model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE`` for
``Checkpoint(model=m)`` and ``m.dense_1.w``. Modules are walked by attribute (lists by
index, dicts by key; a ``.`` or ``/`` in a key is escaped as TF escapes it). The files
(``checkpoint_files``) have TF's names, not TF's format; the ``checkpoint`` state file
(``checkpoint_state``) is TF's.

An optimizer is saved with its ``iterations`` (and its learning rate when it is a
variable) under its own path, and each slot under the path of the variable it belongs
to, as TF's object graph keys slots: ``model/dense_1/w/.OPTIMIZER_SLOT/optimizer/
momentum/.ATTRIBUTES/VARIABLE_VALUE``. Restoring into a new model and optimizer so maps
each slot to its variable whatever order the variables are created in.

``restore`` assigns every saved value whose variable exists; a value whose variable does
not exist yet is restored when a module creates it (TF's deferred restoration, for
modules that build their variables on their first call), a slot's when the optimizer
creates the slot (on its first ``apply_gradients``). ``write`` keeps the values still
waiting: they are written under their keys, so a save between a restore and the first
step loses nothing.
"""

from __future__ import annotations

import os
import re
import warnings
import weakref
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, NotFoundError
from ..core.variable import Variable
from ..functions.trace import init_scope
from ..optimizers.optimizer import Optimizer
from .checkpoint_files import read_arrays, read_entries, write_arrays
from .checkpoint_state import latest_checkpoint, write_state
from .module import ADDED_WEIGHTS, Module, defer_restore, waiting_restores

__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint", "list_variables",
           "load_variable"]

_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_SAVE_COUNTER = "save_counter"
_SLOT = "/.OPTIMIZER_SLOT/"


def _escape(name: str) -> str:
    """TF's escaping of a name in a checkpoint key, so that no name makes a ``/``."""
    return name.replace(".", "..").replace("/", ".S")


def _unescape(name: str) -> str:
    return re.sub(r"\.(.)", lambda m: {".": ".", "S": "/"}.get(m[1], m[0]), name)


def _children(obj: Any) -> list[tuple[Any, Any]]:
    """The children a checkpoint walks into, with their (unescaped) names."""
    if isinstance(obj, (Module, Optimizer)):
        return obj._checkpoint_children()
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return list(obj.items())
    return []


def _named_children(obj: Any) -> dict[str, Any]:
    return {_escape(str(name)): child for name, child in _children(obj)}


class _Graph:
    """What a checkpoint reaches from its roots: each variable by key (first path wins)
    and its path by id, each optimizer and module by id with its path."""

    def __init__(self) -> None:
        self.variables: dict[str, Variable] = {}
        self.paths: dict[int, str] = {}
        self.optimizers: dict[int, tuple[str, Optimizer]] = {}
        self.modules: dict[int, tuple[str, Module]] = {}

    def slots(self) -> tuple[dict[str, Variable], list[str]]:
        """The optimizers' slots by key (``<variable path>/.OPTIMIZER_SLOT/<optimizer
        path>/<slot>``), and the names of the slots whose variable is not in the graph."""
        found: dict[str, Variable] = {}
        outside: list[str] = []
        for optimizer_path, optimizer in self.optimizers.values():
            for variable_id, name, slot in optimizer._checkpoint_slots():
                if variable_id in self.paths:
                    found[_slot_key(self.paths[variable_id], optimizer_path, name)] = slot
                else:
                    outside.append(slot.name)
        return found, outside

    def optimizer_path(self, optimizer: Optimizer | None) -> str | None:
        entry = self.optimizers.get(id(optimizer))
        return entry[0] if entry is not None and entry[1] is optimizer else None


def _slot_key(variable_path: str, optimizer_path: str, slot_name: str) -> str:
    return f"{variable_path}{_SLOT}{optimizer_path}/{_escape(slot_name)}{_SUFFIX}"


def _walk(roots: dict[str, Any]) -> _Graph:
    """Every variable, optimizer and module under ``roots``. A dictionary key that is
    not a string on the way to a variable raises ``ValueError``, as TF: ``{0: v}`` and
    ``{"0": v}`` would share a name. Optimizer roots are walked first: an optimizer is
    named by its root even when a model also holds it (``model.optimizer``)."""
    graph = _Graph()

    def walk(obj: Any, path: str, stack: set[int], bad_key: tuple) -> None:
        if isinstance(obj, Variable):
            if bad_key:
                raise ValueError(_non_string_key_message(path, bad_key[0]))
            if obj._id not in graph.paths:
                graph.paths[obj._id] = path
                if path + _SUFFIX in graph.variables:  # two objects, one name
                    raise ValueError(f"Two variables of the checkpoint have the name "
                                     f"{path!r}; rename one of them.")
                graph.variables[path + _SUFFIX] = obj
            return
        if id(obj) in stack:  # a cycle
            return
        if isinstance(obj, Optimizer):
            if id(obj) in graph.optimizers:  # one path per optimizer: its slots' keys
                return
            graph.optimizers[id(obj)] = (path, obj)
        elif isinstance(obj, Module):
            graph.modules.setdefault(id(obj), (path, obj))
        stack.add(id(obj))
        for name, child in _children(obj):
            below = bad_key or ((name,) if not isinstance(name, str) else ())
            walk(child, f"{path}/{_escape(str(name))}", stack, below)
        stack.discard(id(obj))

    for name, root in sorted(roots.items(),
                             key=lambda item: (not isinstance(item[1], Optimizer), item[0])):
        walk(root, name, set(), ())
    return graph


def _non_string_key_message(path: str, key: Any) -> str:
    return (f"Unable to save the variable at {path!r}: a dictionary on its path has the "
            f"non-string key {key!r}, and checkpoint names are strings ({key!r} and "
            f"{str(key)!r} would collide). Use string keys, as TF requires.")


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` matched (TF's load status). As in TF,
    ``assert_existing_objects_matched`` fails for a variable of the checkpoint's objects
    that the file has no value for (the checkpoint's own ``save_counter`` aside), and
    ``assert_consumed`` also for a saved value no variable took."""

    def __init__(self, unmatched: list[str], deferred: list[_Restoration],
                 checkpoint: Checkpoint | None = None, saved: frozenset[str] = frozenset()):
        self.unmatched = unmatched  # saved values with no object on the path
        # Restored when their module creates the variable. The status holds only these
        # tokens: the values stay with their modules and die with them.
        self._deferred = deferred
        self._saved = saved
        # The variables are listed when asked (a model built after the restore counts),
        # through a weak reference: a status keeps neither the models nor the values.
        self._checkpoint = weakref.ref(checkpoint) if checkpoint is not None else None
        self._unbound_at_restore = self._unbound()

    @property
    def deferred(self) -> list[str]:
        return [restoration.key for restoration in self._deferred]

    def _waiting(self) -> list[str]:
        return [r.key for r in self._deferred if not r.done]

    def _unbound(self) -> list[str]:
        """The checkpoint's variables that the file holds no value for."""
        checkpoint = self._checkpoint() if self._checkpoint is not None else None
        if checkpoint is None:
            return getattr(self, "_unbound_at_restore", [])
        return sorted(key for key in checkpoint._tracked()
                      if key not in self._saved and key != _SAVE_COUNTER + _SUFFIX)

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Raise ``AssertionError`` unless every saved value found its variable and every
        variable found its saved value."""
        self.assert_existing_objects_matched()
        missing = self.unmatched + self._waiting()
        if missing:
            raise AssertionError(f"Unresolved values in the checkpoint: {missing}. Create "
                                 "the objects they belong to, or call expect_partial().")
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Raise ``AssertionError`` if a variable of the checkpoint's objects has no
        value in the file (saved values without a variable are allowed: loading part
        of a larger checkpoint)."""
        unbound = self._unbound()
        if unbound:
            raise AssertionError(
                f"Found {len(unbound)} Python objects that were not bound to checkpointed "
                f"values, likely due to changes in the Python program: {unbound[:10]}. "
                "They keep their initial values; check that the program builds the "
                "model it saved.")
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """Raise ``AssertionError`` unless at least one saved value was restored."""
        restored = len(self._saved) - len(self.unmatched) - len(self._waiting())
        if restored <= int(_SAVE_COUNTER + _SUFFIX in self._saved):
            raise AssertionError("Nothing except the root object matched a checkpointed "
                                 "value. Typically this means that the checkpoint does "
                                 "not match the Python program.")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """A no-op: restores run eagerly (TF's eager behaviour)."""

    def initialize_or_restore(self, session: Any = None) -> None:
        """A no-op: variables are initialized or restored eagerly."""


class InitializationOnlyStatus(CheckpointLoadStatus):
    """``restore(None)``'s status (TF's): nothing was restored, so every assertion fails
    (a script whose ``latest_checkpoint`` found nothing would otherwise start from
    scratch in silence); ``expect_partial`` and ``initialize_or_restore`` pass."""

    _MESSAGE = "No checkpoint specified (save_path=None); nothing is being restored."

    def __init__(self) -> None:
        super().__init__([], [])

    def assert_consumed(self) -> CheckpointLoadStatus:
        raise AssertionError(self._MESSAGE)

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        raise AssertionError(self._MESSAGE)

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        raise AssertionError(self._MESSAGE)

    def run_restore_ops(self, session: Any = None) -> None:
        raise AssertionError("No checkpoint specified, so no restore ops are available "
                             "(save_path=None to Saver.restore).")


class Checkpoint:
    """TF's ``tf.train.Checkpoint(model=..., ...)``: save and restore the variables
    reachable from the keyword arguments, and its own ``save_counter``."""

    def __init__(self, root: Any = None, **kwargs: Any):
        if root is not None:
            kwargs["root"] = root
        for name, value in kwargs.items():
            if name == _SAVE_COUNTER:
                raise ValueError("`save_counter` is the checkpoint's own variable; pass "
                                 "your object under another name.")
            if not isinstance(value, (Module, Optimizer, Variable, list, tuple, dict)):
                raise ValueError(
                    f"Checkpoint was expecting {name} to be a trackable object (a "
                    f"gt.Module, an optimizer, a gt.Variable, or a list or dict of them), "
                    f"got {value!r}.")
        self._roots = kwargs
        self._save_counter: Variable | None = None

    @property
    def save_counter(self) -> Variable:
        """How many times ``save`` ran, including the saves of a restored checkpoint
        (an int64 variable, saved with the checkpoint once it exists, as TF's)."""
        if self._save_counter is None:
            self._save_counter = Variable(0, trainable=False, dtype=np.int64,
                                          name=_SAVE_COUNTER)
        return self._save_counter

    def _tracked(self, graph: _Graph | None = None) -> dict[str, Variable]:
        """Every variable the checkpoint saves (the optimizers' slots too) by key."""
        graph = _walk(self._roots) if graph is None else graph
        variables = dict(graph.variables)
        variables.update(graph.slots()[0])
        if self._save_counter is not None:
            variables[_SAVE_COUNTER + _SUFFIX] = self._save_counter
        return variables

    def write(self, file_prefix: str) -> str:
        """Write the variables' values to ``file_prefix`` (its ``.index`` and ``.data``
        files, atomically: an interrupted write leaves the previous checkpoint there);
        returns ``file_prefix``. Restored values still waiting for their variable or
        slot are written too, under their keys."""
        file_prefix = os.fspath(file_prefix)
        graph = _walk(self._roots)
        arrays = {key: np.asarray(v._value) for key, v in self._tracked(graph).items()}
        for key, array in _waiting_values(graph).items():
            arrays.setdefault(key, array)
        _warn_unsaved_slots(graph.slots()[1])
        write_arrays(file_prefix, arrays)
        return file_prefix

    def save(self, file_prefix: str) -> str:
        """Write to ``file_prefix-<n>``, n the ``save_counter`` after adding one, and
        record it as the latest checkpoint of its directory; returns that path."""
        self.save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}")
        write_state(os.path.dirname(path), path)
        return path

    def read(self, save_path: str) -> CheckpointLoadStatus:
        return self.restore(save_path)

    def restore(self, save_path: str | None) -> CheckpointLoadStatus:
        """Assign the saved values to the variables on the same paths (all or none: a
        dtype or shape that differs raises before any is assigned); values whose
        variable a module has yet to create are assigned when it does.
        ``save_path=None`` restores nothing: its status's assertions fail, as TF's."""
        if save_path is None:
            return InitializationOnlyStatus()
        saved = read_arrays(os.fspath(save_path))
        _ = self.save_counter  # created now, so that it is restored (TF's order)
        graph = _walk(self._roots)
        variables = self._tracked(graph)
        matched = [(variables[key], array, key) for key, array in saved.items()
                   if key in variables]
        for variable, array, key in matched:
            _check_compatible(variable, array, key)
        for variable, array, _ in matched:
            variable.assign(array)
        rest = {key: array for key, array in saved.items() if key not in variables}
        unmatched, deferred = _defer_all(self._roots, graph, rest)
        return CheckpointLoadStatus(unmatched, deferred, self, frozenset(saved))


def _check_compatible(variable: Variable, array: np.ndarray, key: str) -> None:
    """TF's checks before a restore: the dtype exactly, then the shape."""
    if array.dtype != variable.dtype:
        raise InvalidArgumentError(
            f"tensor_name = {key}; expected dtype {variable.dtype.name} does not equal "
            f"original dtype {array.dtype.name}: the checkpoint holds a "
            f"{array.dtype.name} value for the {variable.dtype.name} variable "
            f"{variable.name!r}. Create the variable with dtype {array.dtype.name}, or "
            "restore into one and assign a cast of it.")
    if tuple(variable.shape) != array.shape:
        raise ValueError(f"Received incompatible tensor with shape {array.shape} when "
                         f"attempting to restore variable with shape "
                         f"{tuple(variable.shape)} and name {variable.name} (checkpoint "
                         f"key {key!r}).")


def _find(roots: dict[str, Any], path: list[str]) -> Any:
    """The object at ``path`` (escaped names from a root), or None."""
    obj = roots.get(path[0])
    for part in path[1:]:
        obj = _named_children(obj).get(part)
        if obj is None:
            return None
    return obj


def _defer_all(roots: dict[str, Any], graph: _Graph, values: dict[str, np.ndarray]
               ) -> tuple[list[str], list[_Restoration]]:
    """Keep each value whose variable or slot does not exist yet for when it is made;
    the keys of those that have no place to wait, and the tokens of those that wait."""
    unmatched, deferred = [], []
    waiting: dict[str, _DeferredValue] = {}
    # Variables first: a slot whose variable does not exist yet waits on its value.
    for key in sorted(values, key=lambda key: _SLOT in key):
        if _SLOT in key:
            restoration = _defer_slot(roots, graph, waiting, key, values[key])
        else:
            value = _defer(roots, key, values[key])
            restoration = value.restoration if value is not None else None
            if value is not None:
                waiting[key] = value
        if restoration is not None:
            deferred.append(restoration)
        else:
            unmatched.append(key)
    return unmatched, deferred


def _defer(roots: dict[str, Any], key: str, array: np.ndarray) -> _DeferredValue | None:
    """Walk ``key``'s path as far as it exists; if it ends at a module lacking the last
    attribute, keep the value (with the module, no longer) for when the module sets it."""
    parts = key[:-len(_SUFFIX)].split("/")
    if len(parts) < 2:  # a root itself (a variable not created yet is no module's)
        return None
    # A layer's weight no attribute holds waits on the layer, for its add_weight.
    owned = len(parts) >= 3 and parts[-2] == ADDED_WEIGHTS and parts[-1].isdigit()
    path, attribute = (parts[:-2], "/".join(parts[-2:])) if owned else (parts[:-1], parts[-1])
    obj = _find(roots, path)
    if not isinstance(obj, Module):
        return None
    value = _DeferredValue(array, _Restoration(key))
    replaced = defer_restore(obj, attribute, value)
    if isinstance(replaced, _DeferredValue):  # an earlier restore's value, still waiting
        value.take_over(replaced)
    return value


def _defer_slot(roots: dict[str, Any], graph: _Graph, waiting: dict[str, _DeferredValue],
                key: str, array: np.ndarray) -> _Restoration | None:
    """Keep a slot's value for when its optimizer creates the slot: with the optimizer
    if the variable exists, else with the variable's own waiting value."""
    variable_path, _, rest = key[:-len(_SUFFIX)].partition(_SLOT)
    optimizer_path, _, slot_name = rest.rpartition("/")
    optimizer = _find(roots, optimizer_path.split("/"))
    if not isinstance(optimizer, Optimizer):
        return None
    value = _DeferredSlot(optimizer, _unescape(slot_name), array, _Restoration(key))
    variable = graph.variables.get(variable_path + _SUFFIX)
    if variable is not None:
        value.bind(variable)
        return value.restoration
    owner = waiting.get(variable_path + _SUFFIX)
    if owner is None:
        return None
    owner.slots.append(value)
    return value.restoration


def _waiting_values(graph: _Graph) -> dict[str, np.ndarray]:
    """The restored values under the graph still waiting for their variable or slot, by
    the key they are saved under now."""
    found: dict[str, np.ndarray] = {}
    for path, module in graph.modules.values():
        for attribute, restore in waiting_restores(module).items():
            if not isinstance(restore, _DeferredValue):
                continue
            found[f"{path}/{attribute}{_SUFFIX}"] = restore.array
            for slot in restore.slots:
                optimizer_path = graph.optimizer_path(slot.optimizer())
                if optimizer_path is not None:
                    key = _slot_key(f"{path}/{attribute}", optimizer_path, slot.name)
                    found[key] = slot.array
    for optimizer_path, optimizer in graph.optimizers.values():
        for (variable_id, name), restore in optimizer._slot_restores.items():
            if isinstance(restore, _DeferredSlot) and variable_id in graph.paths:
                found[_slot_key(graph.paths[variable_id], optimizer_path, name)] = \
                    restore.array
    return found


def _warn_unsaved_slots(names: list[str]) -> None:
    if names:
        warnings.warn(
            f"Checkpoint does not save {len(names)} optimizer slots ({names[:5]}): the "
            "variables they belong to are not among the checkpoint's objects. Pass the "
            "model that holds them to the Checkpoint too.", UserWarning, stacklevel=3)


class _Restoration:
    """Whether a deferred value has been assigned (what a load status asks): by itself,
    or by the value of a later restore that took its place."""

    def __init__(self, key: str):
        self.key = key
        self.assigned = False
        self.superseded_by: _Restoration | None = None

    @property
    def done(self) -> bool:
        return self.assigned or (self.superseded_by is not None and self.superseded_by.done)


class _DeferredValue:
    """A saved value waiting for ``module.<attribute>`` to be set to its variable
    (``Module.__setattr__`` calls it), with the values of the variable's slots. Only the
    module's table holds it."""

    def __init__(self, array: np.ndarray, restoration: _Restoration):
        self.array = array
        self.restoration = restoration
        self.slots: list[_DeferredSlot] = []

    def take_over(self, earlier: _DeferredValue) -> None:
        """Stand for ``earlier`` (a value of an earlier restore this one replaces): its
        status counts this assignment, and its slot values wait behind this one's."""
        earlier.restoration.superseded_by = self.restoration
        self.slots = earlier.slots + self.slots

    def __call__(self, module: Module, variable: Variable) -> None:
        _assign_restored(variable, self.array, self.restoration)
        for slot in self.slots:  # earlier restores' first: the latest value wins
            slot.bind(variable)


class _DeferredSlot:
    """A saved slot value waiting for ``optimizer`` to create the slot (its
    ``add_slot`` calls it). Only the optimizer's table (or the variable's waiting value)
    holds it."""

    def __init__(self, optimizer: Optimizer, name: str, array: np.ndarray,
                 restoration: _Restoration):
        self.optimizer = weakref.ref(optimizer)
        self.name = name
        self.array = array
        self.restoration = restoration

    def bind(self, variable: Variable) -> None:
        """Wait for ``variable``'s slot (or assign it now if it exists)."""
        optimizer = self.optimizer()
        if optimizer is None:
            return
        replaced = optimizer._defer_slot_restore(variable, self.name, self)
        if isinstance(replaced, _DeferredSlot):
            replaced.restoration.superseded_by = self.restoration

    def __call__(self, slot: Variable) -> None:
        _assign_restored(slot, self.array, self.restoration)


def _assign_restored(variable: Variable, array: np.ndarray, restoration: _Restoration) -> None:
    """Assign a waiting value to the variable just made for it: eagerly, also when a
    ``@gt.function`` trace made it (a layer built or a slot made on the first call), so
    that the trace starts from the restored value instead of assigning it at each call."""
    _check_compatible(variable, array, restoration.key)
    with init_scope():
        variable.assign(array)
    restoration.assigned = True


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """TF's ``tf.train.list_variables``: ``(key, shape)`` for each saved value, sorted,
    after TF's ``_CHECKPOINTABLE_OBJECT_GRAPH`` entry."""
    entries = read_entries(_resolve(ckpt_dir_or_file))
    return [(_GRAPH_KEY, [])] + [(e.key, list(e.shape)) for e in entries]


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The saved value of ``name`` (a key from ``list_variables``)."""
    values = read_arrays(_resolve(ckpt_dir_or_file))
    if name not in values:
        raise NotFoundError(f"Key {name} not found in checkpoint {ckpt_dir_or_file!r}; "
                            "tf.train.list_variables lists its keys.")
    return values[name]


def _resolve(ckpt_dir_or_file: str) -> str:
    ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise NotFoundError(f"No checkpoint in {ckpt_dir_or_file!r}: pass a prefix "
                                "returned by Checkpoint.save or given to write.")
        return latest
    return ckpt_dir_or_file
