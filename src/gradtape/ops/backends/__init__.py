"""How primitives run on arrays other than NumPy's: Dask, CuPy and any library with an
array-API namespace (``array_api_strict``).

    rules             the registry (namespace_rule) and how an op's implementation on a
                      kind is found: the namespace's function, a rule, or a refusal
    namespaces        rules for Dask and array-API namespaces (functions NumPy names
                      differently, reductions that do not route through NumPy)
    dask              Dask-only rules (where NumPy's protocols do not reach Dask)
    windows           the pooling and resize primitives: on Dask block by block, refused
                      on CuPy
    conv              conv_general (tf.nn's convolutions): on Dask chunk-wise along the
                      batch, refused on CuPy
    cupy              CuPy-only rules (where a NumPy implementation calls np.asarray)
    array_api         rules for kinds outside NumPy's protocols (array_api_strict)
    array_api_linalg  their linalg and fft extensions

The kinds themselves (``ArrayKind``, ``kind_of``) are a foundation, in
``core/backends.py``; importing this package installs the rules there
(``install_implementations``). Generated code names these implementations through
``codegen/array_kinds.py``.

Imports: ``core``, ``ir`` and the op families of ``ops``.
"""

# Importing them registers the rules (and installs them in core/backends.py).
from . import (  # noqa: F401
    array_api,
    array_api_linalg,
    conv,
    cupy,
    dask,
    namespaces,
    rules,
    windows,
)

__all__: list[str] = []
