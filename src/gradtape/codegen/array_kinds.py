"""Generated code for another library's arrays (Dask, CuPy, array-API namespaces).

The NumPy module of a program is generated as always. For another array kind the same
program is generated again, with the same statements, except:

- an equation written as a call of its primitive's implementation calls the
  implementation on that kind (``ops/backends/rules.py``: the library's function, or a rule
  of ``ops/backends/``), imported as
  ``sum = _runtime.namespace_impl("dask.array", "sum")``;
- it never writes into buffers (``out=``, ``+=``): Dask's arrays cannot be written into;
- on a kind outside NumPy's protocols (``array_api_strict``) every equation is such a
  call: those arrays have no ndarray methods, and take no NumPy scalars.

The NumPy functions a template names (``square``, ``logaddexp``) stay NumPy's on a
kind that follows NumPy's protocols (Dask, CuPy): called on its arrays they run in its
library, and on a program's NumPy constants they run in NumPy, where the library's own
functions would not take them.
"""

from __future__ import annotations

from typing import Any

from ..core.backends import ArrayKind
from .naming import GlobalNames


class NamespaceNames(GlobalNames):
    """Globals of a function generated for ``array_kind``'s arrays."""

    def __init__(self, array_kind: ArrayKind):
        super().__init__()
        self.array_kind = array_kind

    def bind_primitive(self, prim: Any, preferred: str) -> str:
        """The global name of ``prim``'s implementation on this kind."""
        kind = self.array_kind
        return self.bind(kind.impl(prim), preferred, ("namespace", kind.name, prim.name))


def kind_title(array_kind: ArrayKind | None) -> str:
    """The header comment of a function generated for ``array_kind``'s arrays."""
    if array_kind is None:
        return ""
    if array_kind.protocols:
        return (f"For {array_kind.name} arrays: NumPy's functions dispatch to "
                f"{array_kind.name} on them (NEP 13/18).")
    return f"For {array_kind.name} arrays: every op calls its {array_kind.name} implementation."
