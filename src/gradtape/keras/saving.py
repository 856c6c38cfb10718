"""``model.save_weights(path)`` / ``model.load_weights(path)`` on gradtape's checkpoint
format: the files of ``gt.train.Checkpoint(model=model).write(path)`` (``path.index``
and ``path.data-00000-of-00001``, written atomically, every byte checked on reading), so
``ModelCheckpoint``, ``save_weights`` and ``gt.train.Checkpoint`` read each other's files.
Keras 3 writes HDF5 to a ``.weights.h5`` path; gradtape writes its own format to any path
(a ``.weights.h5`` name included) and has no whole-model ``save``."""

from __future__ import annotations

import os
from typing import Any

from ..api.checkpoint import Checkpoint
from ..api.checkpoint_files import INDEX_SUFFIX, read_entries

__all__ = ["WeightsSaving"]

_MODEL, _OPTIMIZER = "model", "optimizer"


class WeightsSaving:
    """The weight-file methods of ``keras.Model``."""

    def save_weights(self, filepath: str, overwrite: bool = True,
                     _with_optimizer: bool = False) -> None:
        """Writes the model's weights to ``filepath`` (gradtape's checkpoint files
        ``filepath.index`` and ``filepath.data-00000-of-00001``, replaced atomically).
        ``overwrite=False`` refuses an existing checkpoint (Keras asks on the terminal)."""
        filepath = os.fspath(filepath)
        if not overwrite and os.path.exists(filepath + INDEX_SUFFIX):
            raise FileExistsError(f"The weights file {filepath!r} exists and "
                                  "overwrite=False; pass overwrite=True to replace it.")
        roots: dict[str, Any] = {_MODEL: self}
        optimizer = getattr(self, "optimizer", None)
        if _with_optimizer and optimizer is not None:
            roots[_OPTIMIZER] = optimizer
        Checkpoint(**roots).write(filepath)

    def load_weights(self, filepath: str, skip_mismatch: bool = False) -> None:
        """Restores the weights that ``save_weights`` (or ``ModelCheckpoint``, or
        ``gt.train.Checkpoint(model=model)``) wrote to ``filepath``, and the optimizer's
        state when the file has it. A shape or dtype that differs raises before any
        weight is assigned; a weight of the model that the file lacks raises
        ``ValueError`` (``skip_mismatch=True`` keeps its value). Weights the model has
        yet to build are assigned when it builds them."""
        filepath = os.fspath(filepath)
        keys = {entry.key for entry in read_entries(filepath)}
        roots: dict[str, Any] = {_MODEL: self}
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None and any(k.startswith(_OPTIMIZER + "/") for k in keys):
            roots[_OPTIMIZER] = optimizer
        status = Checkpoint(**roots).restore(filepath)
        if skip_mismatch:
            return
        try:
            status.assert_existing_objects_matched()
        except AssertionError as e:
            raise ValueError(f"The weights file {filepath!r} does not match the model: "
                             f"{e}") from None
