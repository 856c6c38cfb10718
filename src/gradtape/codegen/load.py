"""Source -> function: compile, register the source in ``linecache``, optionally dump it.

The filename is derived from the source text (``<gradtape-backward-1a2b3c4d5e6f>``), so
the same program gets the same name in every process. Registered in ``linecache``,
tracebacks, ``pdb`` and ``inspect.getsource`` show the generated lines. Only the
function's code runs here: its globals are the objects the generator bound, not the
result of executing the import header (which is there for readers and for dumps).

A dump never follows a link planted in the dump directory: the source goes to a new file
created exclusively (``O_EXCL | O_NOFOLLOW``) under a random name, then renamed onto
``backward_<hash>.py``, which replaces a link there instead of writing through it.
"""

from __future__ import annotations

import builtins
import hashlib
import linecache
import os
import secrets
import threading
import types
import warnings
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
    """Write ``source`` as ``<directory>/backward_<hash>.py``; return the path.

    Raises ``OSError`` if the directory cannot be created or written."""
    os.makedirs(directory, exist_ok=True)
    stem = module_name(source)
    path = os.path.join(directory, stem + ".py")
    fd, tmp = _create_new_file(directory, stem)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic, and replaces a link at ``path``, not its target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


_NEW_FILE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                   | getattr(os, "O_CLOEXEC", 0))


def _create_new_file(directory: str, stem: str) -> tuple[int, str]:
    """A file descriptor of a file this call created (never an existing file or link
    someone planted), and its path."""
    for _ in range(16):
        tmp = os.path.join(directory, f".{stem}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, _NEW_FILE_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a new temporary file in {directory!r}")


_warned_directories: set[str] = set()
_MAX_WARNED_DIRECTORIES = 64


def dump_or_warn(source: str, directory: str) -> str | None:
    """``dump``, or ``None`` with a warning (once per directory) if it cannot be
    written: a dump is for reading the code, and must never cost a gradient."""
    try:
        return dump(source, directory)
    except OSError as exc:
        if directory not in _warned_directories:
            if len(_warned_directories) < _MAX_WARNED_DIRECTORIES:
                _warned_directories.add(directory)
            warnings.warn(
                f"gradtape cannot write generated code to the dump directory {directory!r} "
                f"({exc.strerror or exc}); gradients are computed as usual, without dumps. "
                "Set gt.config(dump_dir=...) or GRADTAPE_DUMP_DIR to a writable directory, "
                "or to None (unset) to stop dumping.", RuntimeWarning, stacklevel=2)
        return None
