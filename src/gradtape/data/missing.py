"""TF's ``tf.data.Dataset`` methods gradtape's ``Dataset`` does not have, with what to
use instead: asking for one raises an ``AttributeError`` that says so (as the public
namespaces do for TF's missing names), any other name Python's ordinary one."""

from __future__ import annotations

__all__ = ["missing_method"]

_GUIDE = "see docs/data.md for the methods gt.data has"
_SHARD = ("dataset.enumerate().filter(lambda i, x: i % num_shards == index)"
          ".map(lambda i, x: x) (one process reads everything here)")
_WINDOWED = "batch or padded_batch after sorting/filtering by length, or window"

# TF 2.21's Dataset methods (instance and static) that gradtape lacks -> the substitute.
MISSING = {
    "shard": _SHARD,
    "rebatch": "unbatch().batch(new_batch_size)",
    "scan": "a Python loop over the dataset, or map with state kept in a gt.Variable",
    "unique": "filter on a Python set of seen values, or np.unique on as_numpy_iterator()",
    "bucket_by_sequence_length": _WINDOWED,
    "group_by_window": _WINDOWED,
    "ragged_batch": "padded_batch (gradtape has no ragged tensors)",
    "sparse_batch": "padded_batch (gradtape has no sparse tensors)",
    "rejection_resample": "filter, or sample_from_datasets' weights with from_generator",
    "ignore_errors": "catch the error in the map function, or in a from_generator source",
    "snapshot": "cache() (in memory)",
    "save": "np.save of the arrays from as_numpy_iterator()",
    "load": "from_tensor_slices of arrays np.load read",
    "options": "nothing: gradtape's pipelines take no options",
    "with_options": "nothing: gradtape's pipelines take no options",
    "list_files": "from_tensor_slices(sorted(glob.glob(pattern)))",
    "counter": "Dataset.range(start, 2**63 - 1, step)",
    "random": "from_generator with a np.random.default_rng(seed) source",
    "sample_from_datasets": "from_generator drawing from each dataset's iterator",
    "choose_from_datasets": "from_generator reading the chosen dataset's iterator",
}


def missing_method(owner: str, name: str) -> AttributeError:
    """The ``AttributeError`` for ``owner.name`` (``owner`` as Python names it)."""
    plain = f"{owner} has no attribute {name!r}"
    hint = MISSING.get(name)
    if hint is None:
        return AttributeError(plain)
    return AttributeError(f"{plain}: `tf.data.Dataset.{name}` is TensorFlow's, and gradtape's "
                          f"Dataset does not have it; use {hint} ({_GUIDE}).")
