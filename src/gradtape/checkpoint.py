"""``gt.train``: TF's object-based checkpoints of variables (``tf.train.Checkpoint``).

A checkpoint names each variable by its path from the root objects given to
``Checkpoint(**roots)``, as TF does: ``model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE`` for
``Checkpoint(model=m)`` and ``m.dense_1.w``. Modules are walked by attribute (lists by
index, dicts by key). ``write(path)`` stores the values in ``path.index`` (the names,
shapes and dtypes, JSON) and ``path.data-00000-of-00001`` (the arrays, NumPy's ``.npz``
format): TF's file names, not TF's file format.

``restore`` assigns every saved value whose variable exists; a value whose variable does
not exist yet is restored when a module creates it (TF's deferred restoration, for
modules that build their variables on their first call).
"""

from __future__ import annotations

import json
import os
import weakref
from typing import Any

import numpy as np

from .core.variable import Variable
from .module import Module, deferred_restores

__all__ = ["Checkpoint", "CheckpointLoadStatus", "latest_checkpoint", "list_variables",
           "load_variable"]

_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_DATA = ".data-00000-of-00001"
_INDEX = ".index"



def _children(obj: Any) -> list[tuple[str, Any]]:
    """The named children a checkpoint walks into."""
    if isinstance(obj, Module):
        ignored = obj._TF_MODULE_IGNORED_PROPERTIES
        return [(k, v) for k, v in sorted(vars(obj).items()) if k not in ignored]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    return []


def _variables(roots: dict[str, Any]) -> dict[str, Variable]:
    """Every variable under ``roots`` by its checkpoint key (first path wins)."""
    found: dict[str, Variable] = {}
    seen: set[int] = set()

    def walk(obj: Any, path: str, stack: set[int]) -> None:
        if isinstance(obj, Variable):
            if id(obj) not in seen:
                seen.add(id(obj))
                found[path + _SUFFIX] = obj
            return
        if id(obj) in stack:  # a cycle
            return
        stack.add(id(obj))
        for name, child in _children(obj):
            walk(child, f"{path}/{name}", stack)
        stack.discard(id(obj))

    for name, root in sorted(roots.items()):
        walk(root, name, set())
    return found


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` matched (TF's load status)."""

    def __init__(self, unmatched: list[str], deferred: list[str]):
        self.unmatched = unmatched  # saved values with no object on the path
        self.deferred = deferred  # restored when their module creates the variable

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Raise ``AssertionError`` unless every saved value found its variable."""
        waiting = {getattr(c, "key", None) for c in deferred_restores.values()}
        missing = self.unmatched + [k for k in self.deferred if k in waiting]
        if missing:
            raise AssertionError(f"Unresolved values in the checkpoint: {missing}. Create "
                                 "the objects they belong to, or call expect_partial().")
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        if self.unmatched:
            raise AssertionError(f"Unresolved values in the checkpoint: {self.unmatched}.")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        return self


class Checkpoint:
    """TF's ``tf.train.Checkpoint(model=..., ...)``: save and restore the variables
    reachable from the keyword arguments."""

    def __init__(self, root: Any = None, **kwargs: Any):
        if root is not None:
            kwargs["root"] = root
        for name, value in kwargs.items():
            if not isinstance(value, (Module, Variable, list, tuple, dict)):
                raise ValueError(
                    f"Checkpoint was expecting {name} to be a trackable object (a "
                    f"gt.Module, a gt.Variable, or a list or dict of them), got {value!r}.")
        self._roots = kwargs
        self.save_counter = Variable(0, trainable=False, dtype=np.int64,
                                     name="save_counter")

    def write(self, file_prefix: str) -> str:
        """Write the variables' values to ``file_prefix`` (its ``.index`` and ``.data``
        files); returns ``file_prefix``."""
        file_prefix = os.fspath(file_prefix)
        variables = _variables(self._roots)
        arrays = {key: np.asarray(v._value) for key, v in variables.items()}
        keys = sorted(arrays)
        with open(file_prefix + _DATA, "wb") as f:
            np.savez(f, **{f"v{i}": arrays[k] for i, k in enumerate(keys)})
        index = [{"key": k, "shape": list(arrays[k].shape), "dtype": arrays[k].dtype.str}
                 for k in keys]
        with open(file_prefix + _INDEX, "w") as f:
            json.dump(index, f)
        return file_prefix

    def save(self, file_prefix: str) -> str:
        """Write to ``file_prefix-<n>`` (n counts the saves) and record it as the
        latest checkpoint of its directory; returns that path."""
        self.save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}")
        directory = os.path.dirname(path) or "."
        with open(os.path.join(directory, "checkpoint"), "w") as f:
            f.write(f'model_checkpoint_path: "{os.path.basename(path)}"\n')
        return path

    def read(self, save_path: str) -> CheckpointLoadStatus:
        return self.restore(save_path)

    def restore(self, save_path: str | None) -> CheckpointLoadStatus:
        """Assign the saved values to the variables on the same paths; values whose
        variable a module has yet to create are assigned when it does. A shape that
        differs raises ``ValueError``. ``save_path=None`` restores nothing."""
        if save_path is None:
            return CheckpointLoadStatus([], [])
        saved = _read(os.fspath(save_path))
        variables = _variables(self._roots)
        unmatched, deferred = [], []
        for key, array in saved.items():
            variable = variables.get(key)
            if variable is not None:
                _assign(variable, array, key)
            elif _defer(self._roots, key, array):
                deferred.append(key)
            elif key != "save_counter" + _SUFFIX:
                unmatched.append(key)
        return CheckpointLoadStatus(unmatched, deferred)


def _assign(variable: Variable, array: np.ndarray, key: str) -> None:
    if tuple(variable.shape) != array.shape:
        raise ValueError(f"Checkpoint value {key!r} has shape {array.shape}, but its "
                         f"variable {variable.name!r} has shape {tuple(variable.shape)}.")
    variable.assign(array.astype(variable.dtype, copy=False))


def _defer(roots: dict[str, Any], key: str, array: np.ndarray) -> bool:
    """Walk ``key``'s path as far as it exists; if it ends at a module lacking the last
    attribute, keep the value for when the module sets it."""
    parts = key[:-len(_SUFFIX)].split("/")
    obj = roots.get(parts[0])
    for part in parts[1:-1]:
        children = dict(_children(obj))
        if part not in children:
            return False
        obj = children[part]
    if not isinstance(obj, Module) or len(parts) < 2:
        return False
    deferred_restores[(id(obj), parts[-1])] = _DeferredValue(obj, array, key)
    return True


class _DeferredValue:
    """A saved value waiting for ``module.<attribute>`` to be set to its variable
    (``Module.__setattr__`` calls it)."""

    def __init__(self, module: Module, array: np.ndarray, key: str):
        self.module = weakref.ref(module)
        self.array = array
        self.key = key

    def __call__(self, module: Module, value: Any) -> None:
        if self.module() is module and isinstance(value, Variable):
            _assign(value, self.array, self.key)


def _read(save_path: str) -> dict[str, np.ndarray]:
    try:
        with open(save_path + _INDEX) as f:
            index = json.load(f)
        with np.load(save_path + _DATA) as data:
            return {entry["key"]: data[f"v{i}"] for i, entry in enumerate(index)}
    except FileNotFoundError:
        raise FileNotFoundError(  # TF raises NotFoundError, a LookupError here
            f"Failed to find any matching files for {save_path}: pass the prefix given "
            "to Checkpoint.write (or returned by Checkpoint.save).") from None


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """TF's ``tf.train.list_variables``: ``(key, shape)`` for each saved value, sorted,
    after TF's ``_CHECKPOINTABLE_OBJECT_GRAPH`` entry."""
    path = _resolve(ckpt_dir_or_file)
    with open(path + _INDEX) as f:
        index = json.load(f)
    return [(_GRAPH_KEY, [])] + [(e["key"], e["shape"]) for e in index]


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The saved value of ``name`` (a key from ``list_variables``)."""
    values = _read(_resolve(ckpt_dir_or_file))
    if name not in values:
        raise KeyError(f"{name!r} is not in the checkpoint {ckpt_dir_or_file!r}.")
    return values[name]


def latest_checkpoint(checkpoint_dir: str) -> str | None:
    """The path ``Checkpoint.save`` last wrote in ``checkpoint_dir``, or None."""
    try:
        with open(os.path.join(checkpoint_dir, "checkpoint")) as f:
            line = f.readline()
    except FileNotFoundError:
        return None
    name = line.split('"')[1]
    return os.path.join(checkpoint_dir, name)


def _resolve(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise FileNotFoundError(f"No checkpoint in {ckpt_dir_or_file!r}.")
        return latest
    return os.fspath(ckpt_dir_or_file)
