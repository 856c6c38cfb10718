"""``gt.train``: TF's object-based checkpoints of variables (``tf.train.Checkpoint``).

A checkpoint names each variable by its path from the root objects given to
``Checkpoint(**roots)``, as TF does: ``model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE`` for
``Checkpoint(model=m)`` and ``m.dense_1.w``. Modules are walked by attribute (lists by
index, dicts by key; a ``.`` or ``/`` in a key is escaped as TF escapes it). The files
(``checkpoint_files``) have TF's names, not TF's format; the ``checkpoint`` state file
(``checkpoint_state``) is TF's.

``restore`` assigns every saved value whose variable exists; a value whose variable does
not exist yet is restored when a module creates it (TF's deferred restoration, for
modules that build their variables on their first call).
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

from ..core.errors import InvalidArgumentError, NotFoundError
from ..core.variable import Variable
from .checkpoint_files import read_arrays, read_entries, write_arrays
from .checkpoint_state import latest_checkpoint, write_state
from .module import ADDED_WEIGHTS, Module, defer_restore

__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint", "list_variables",
           "load_variable"]

_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_SAVE_COUNTER = "save_counter"


def _escape(name: str) -> str:
    """TF's escaping of a name in a checkpoint key, so that no name makes a ``/``."""
    return name.replace(".", "..").replace("/", ".S")


def _children(obj: Any) -> list[tuple[Any, Any]]:
    """The children a checkpoint walks into, with their (unescaped) names."""
    if isinstance(obj, Module):
        return obj._checkpoint_children()
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return list(obj.items())
    return []


def _named_children(obj: Any) -> dict[str, Any]:
    return {_escape(str(name)): child for name, child in _children(obj)}


def _variables(roots: dict[str, Any]) -> dict[str, Variable]:
    """Every variable under ``roots`` by its checkpoint key (first path wins). A
    dictionary key that is not a string on the way to a variable raises ``ValueError``,
    as TF: ``{0: v}`` and ``{"0": v}`` would share a name."""
    found: dict[str, Variable] = {}
    seen: set[int] = set()

    def walk(obj: Any, path: str, stack: set[int], bad_key: tuple) -> None:
        if isinstance(obj, Variable):
            if bad_key:
                raise ValueError(_non_string_key_message(path, bad_key[0]))
            if id(obj) not in seen:
                seen.add(id(obj))
                if path + _SUFFIX in found:  # two objects, one name: never overwrite
                    raise ValueError(f"Two variables of the checkpoint have the name "
                                     f"{path!r}; rename one of them.")
                found[path + _SUFFIX] = obj
            return
        if id(obj) in stack:  # a cycle
            return
        stack.add(id(obj))
        for name, child in _children(obj):
            below = bad_key or ((name,) if not isinstance(name, str) else ())
            walk(child, f"{path}/{_escape(str(name))}", stack, below)
        stack.discard(id(obj))

    for name, root in sorted(roots.items()):
        walk(root, name, set(), ())
    return found


_OPTIMIZER_MESSAGE = (
    "Checkpoint was given the optimizer {name}=..., which gradtape cannot checkpoint "
    "yet (its slots are made on first use, and a restore could not wait for them). "
    "To keep its state, create its slots first and save its variables as a list: "
    "`optimizer.build(model.trainable_variables)`, then `Checkpoint({name}_variables="
    "optimizer.variables, ...)`, the same two steps before a restore.")


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
            if hasattr(value, "apply_gradients") and hasattr(value, "variables"):
                raise ValueError(_OPTIMIZER_MESSAGE.format(name=name))
            if not isinstance(value, (Module, Variable, list, tuple, dict)):
                raise ValueError(
                    f"Checkpoint was expecting {name} to be a trackable object (a "
                    f"gt.Module, a gt.Variable, or a list or dict of them), got {value!r}.")
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

    def _tracked(self) -> dict[str, Variable]:
        variables = _variables(self._roots)
        if self._save_counter is not None:
            variables[_SAVE_COUNTER + _SUFFIX] = self._save_counter
        return variables

    def write(self, file_prefix: str) -> str:
        """Write the variables' values to ``file_prefix`` (its ``.index`` and ``.data``
        files, atomically: an interrupted write leaves the previous checkpoint there);
        returns ``file_prefix``."""
        file_prefix = os.fspath(file_prefix)
        write_arrays(file_prefix, {key: np.asarray(v._value)
                                   for key, v in self._tracked().items()})
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
        variables = self._tracked()
        matched = [(variables[key], array, key) for key, array in saved.items()
                   if key in variables]
        for variable, array, key in matched:
            _check_compatible(variable, array, key)
        for variable, array, _ in matched:
            variable.assign(array)
        unmatched, deferred = [], []
        for key, array in saved.items():
            if key in variables:
                continue
            restoration = _defer(self._roots, key, array)
            if restoration is not None:
                deferred.append(restoration)
            else:
                unmatched.append(key)
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


def _defer(roots: dict[str, Any], key: str, array: np.ndarray) -> _Restoration | None:
    """Walk ``key``'s path as far as it exists; if it ends at a module lacking the last
    attribute, keep the value (with the module, no longer) for when the module sets it."""
    parts = key[:-len(_SUFFIX)].split("/")
    if len(parts) < 2:  # a root itself (a variable not created yet is no module's)
        return None
    # A layer's weight no attribute holds waits on the layer, for its add_weight.
    owned = len(parts) >= 3 and parts[-2] == ADDED_WEIGHTS and parts[-1].isdigit()
    path, attribute = (parts[:-2], "/".join(parts[-2:])) if owned else (parts[:-1], parts[-1])
    obj = roots.get(path[0])
    for part in path[1:]:
        obj = _named_children(obj).get(part)
        if obj is None:
            return None
    if not isinstance(obj, Module):
        return None
    restoration = _Restoration(key)
    defer_restore(obj, attribute, _DeferredValue(array, restoration))
    return restoration


class _Restoration:
    """Whether a deferred value has been assigned (what a load status asks)."""

    def __init__(self, key: str):
        self.key = key
        self.done = False


class _DeferredValue:
    """A saved value waiting for ``module.<attribute>`` to be set to its variable
    (``Module.__setattr__`` calls it). Only the module's table holds it."""

    def __init__(self, array: np.ndarray, restoration: _Restoration):
        self.array = array
        self.restoration = restoration

    def __call__(self, module: Module, variable: Variable) -> None:
        _check_compatible(variable, self.array, self.restoration.key)
        variable.assign(self.array)
        self.restoration.done = True


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
