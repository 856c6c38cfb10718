"""The foundations every layer stands on: ``Tensor`` (``tensor.py``), ``Variable``,
the operators (installed by ``ops``), ``TensorShape``, who observes ops now
(``state.py``, with the ``Observer`` protocol), the gradient-drop warning, ``nest``,
``config``, the allocator opt-in, ``UnconnectedGradients``, TF's exception classes
(``errors.py``) and dtype objects (``dtypes.py``), the public-namespace helpers
(``namespaces.py``), the array kinds other than NumPy (``backends.py``; their op rules
are ``ops/backends/``'s), and the bounded per-entry memos (``memos.py``).

Imports: nothing of gradtape's. What it needs from above is installed into it.
"""
