"""``gt.data``: TF's ``tf.data.Dataset`` for in-memory, generator and Dask data.

A ``Dataset`` is a lazy pipeline of Python objects: iterating it pulls one element
at a time through its transformations, so memory is bounded by the buffers
(``shuffle``'s, ``batch``'s), never by the dataset. Inside, elements are nests of NumPy
arrays; the iterator hands out gradtape Tensors, as TF hands out EagerTensors.

Imports ``core``, ``ops`` and ``functions`` (``TensorSpec``, and ``numpy_function`` for
iteration inside ``@gt.function``).
"""

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, cardinality

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset",
           "cardinality"]
