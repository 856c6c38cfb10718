"""Source -> function: compile, register the source in ``linecache``, optionally dump it.

The filename is derived from the source text (``<gradtape-backward-1a2b3c4d5e6f>``), so
the same program gets the same name in every process. Registered in ``linecache``,
tracebacks, ``pdb`` and ``inspect.getsource`` show the generated lines. Only the
function's code runs here: its globals are the objects the generator bound, not the
result of executing the import header (which is there for readers and for dumps).
"""

from __future__ import annotations

import builtins
import hashlib
import linecache
import os
import threading
import types
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()
_registered: dict[str, int] = {}  # linecache filename -> live functions using it


def module_name(source: str) -> str:
    """``backward_<12 hex digits of the source's sha1>``: stable across processes."""
    return "backward_" + hashlib.sha1(source.encode()).hexdigest()[:12]


def filename_of(source: str) -> str:
    return f"<gradtape-{module_name(source).replace('_', '-')}>"


def compile_function(source: str, function_name: str, globals_: dict[str, Any]) -> Callable:
    """The function ``function_name`` defined in ``source``, with ``globals_`` bound."""
    filename = filename_of(source)
    code = compile(source, filename, "exec", dont_inherit=True)
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == function_name:
            break
    else:
        raise ValueError(f"the generated source defines no function {function_name!r}")
    namespace = dict(globals_)
    namespace["__builtins__"] = builtins
    namespace["__name__"] = module_name(source)
    function = types.FunctionType(const, namespace, function_name)
    function.__module__ = namespace["__name__"]
    register(filename, source)
    return function


def register(filename: str, source: str) -> None:
    """Put ``source`` in ``linecache`` under ``filename`` (reference counted)."""
    with _lock:
        _registered[filename] = _registered.get(filename, 0) + 1
        # mtime None: linecache.checkcache keeps the entry (nothing on disk to check).
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def release(filename: str) -> None:
    """Drop one use of ``filename``; forget its source when nothing uses it any more."""
    with _lock:
        count = _registered.get(filename, 0) - 1
        if count > 0:
            _registered[filename] = count
            return
        _registered.pop(filename, None)
        linecache.cache.pop(filename, None)


def dump(source: str, directory: str) -> str:
    """Write ``source`` as ``<directory>/backward_<hash>.py``; return the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, module_name(source) + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: a concurrent reader never sees half a file
    return path
