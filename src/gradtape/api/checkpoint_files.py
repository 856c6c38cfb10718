"""The files of a ``gt.train`` checkpoint: ``<prefix>.index`` and
``<prefix>.data-00000-of-00001``, written atomically and read with every byte checked.

The data file is a NumPy ``.npz`` (a zip of ``v0.npy``, ``v1.npy``, ... with
``allow_pickle=False`` arrays) that also holds a copy of the index as its member
``gradtape_index.json``. The index is JSON::

    {"format": "gradtape.checkpoint", "version": 2, "save_id": "<random hex>",
     "entries": [{"key": ..., "shape": [...], "dtype": "<f4", "crc32": ...}, ...],
     "replaces": "<the save_id of the index it was written over, or null>"}

Each file is written under a temporary name, flushed to disk and renamed over the old
one: the data file first, then the index (TF's order). A writer killed between the two
renames leaves the new data beside the old index; the data file's own copy of the index
is then the one read (the two ``save_id`` differ and the copy ``replaces`` that index),
so a reader always sees one complete save. A data file of another checkpoint (copied or
linked beside an index it did not replace) is refused. Any other disagreement between
the files, a bad checksum or bytes that do not parse raise ``DataLossError`` naming the
file; a missing file raises ``NotFoundError``.

Version 1 (gradtape before checkpoints had checksums: the index a JSON list, no copy in
the data file) is still read, with every shape and dtype checked against the arrays.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple

import numpy as np

from ..core.errors import DataLossError, NotFoundError

__all__ = ["DATA_SUFFIX", "INDEX_SUFFIX", "Entry", "read_arrays", "read_entries",
           "write_arrays", "write_atomically"]

DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
_FORMAT = "gradtape.checkpoint"
_VERSION = 2
_INDEX_MEMBER = "gradtape_index.json"
_DTYPE_KINDS = "biufc"  # bool, integers, floats, complex: what a variable holds
_CHUNK = 1 << 20
_UNKNOWN = object()  # an index written before "replaces" was recorded


class Entry(NamedTuple):
    """One saved array as the index describes it."""

    key: str
    shape: tuple[int, ...]
    dtype: np.dtype
    crc32: int | None  # None in version 1 files


# --- writing --------------------------------------------------------------------------------

def write_atomically(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Run ``write`` on a new temporary file beside ``path``, flush it to disk and rename
    it to ``path``: ``path`` holds either its old bytes or all the new ones. On any
    exception (a full disk, Ctrl-C) the temporary file is removed and ``path`` is kept."""
    temporary = f"{path}.tempstate{secrets.token_hex(8)}"
    try:
        with open(temporary, "xb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        _remove_quietly(temporary)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def sync_directory(directory: str) -> None:
    """Make the renames in ``directory`` durable (POSIX; a no-op where directories
    cannot be opened)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_arrays(prefix: str, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` (by checkpoint key) as the checkpoint at ``prefix``."""
    keys = sorted(arrays)
    contiguous = [_c_order(arrays[k]) for k in keys]
    entries = [{"key": k, "shape": list(a.shape), "dtype": a.dtype.str, "crc32": _crc32(a)}
               for k, a in zip(keys, contiguous)]
    index = json.dumps({"format": _FORMAT, "version": _VERSION,
                        "save_id": secrets.token_hex(16), "entries": entries,
                        "replaces": _previous_save_id(prefix)}).encode()

    def write_data(f: IO[bytes]) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            z.writestr(_INDEX_MEMBER, index)
            for i, array in enumerate(contiguous):
                with z.open(f"v{i}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)

    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)  # as TF's writer does
    write_atomically(prefix + DATA_SUFFIX, write_data)
    write_atomically(prefix + INDEX_SUFFIX, lambda f: f.write(index))
    sync_directory(os.path.dirname(prefix))


def _previous_save_id(prefix: str) -> str | None:
    """The save id of the index this write replaces (None: none, or not readable). A
    reader accepts new data beside an old index only when the data names that index."""
    try:
        with open(prefix + INDEX_SUFFIX, "rb") as f:
            index = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    save_id = index.get("save_id") if isinstance(index, dict) else None
    return save_id if isinstance(save_id, str) else None


def _c_order(array: np.ndarray) -> np.ndarray:
    # Not np.ascontiguousarray: it makes a 0-d array 1-d.
    return array if array.flags.c_contiguous else array.copy(order="C")


def _crc32(array: np.ndarray) -> int:
    return zlib.crc32(_c_order(array).reshape(-1).view(np.uint8))


# --- reading --------------------------------------------------------------------------------

def read_entries(prefix: str) -> list[Entry]:
    """The entries of the checkpoint at ``prefix``, checked against the headers of its
    arrays (whose data is not read)."""
    index = _read_index(prefix)
    with _open_data(prefix) as data:
        entries = _entries(prefix, index, data)
        _check_members(prefix, data, len(entries))
        for i, entry in enumerate(entries):
            with _guarded(prefix + DATA_SUFFIX, data.open, f"v{i}.npy") as member:
                _guarded(prefix + DATA_SUFFIX, _read_npy_header, member, entry)
        return entries


def read_arrays(prefix: str) -> dict[str, np.ndarray]:
    """Every array of the checkpoint at ``prefix`` by key, each checked against its
    index entry and checksum."""
    index = _read_index(prefix)
    with _open_data(prefix) as data:
        entries = _entries(prefix, index, data)
        _check_members(prefix, data, len(entries))
        return {e.key: _read_member(prefix, data, f"v{i}.npy", e)
                for i, e in enumerate(entries)}


def _read_index(prefix: str) -> Any:
    path = prefix + INDEX_SUFFIX
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(path) from None
    return _parse_json(path, raw)


@contextlib.contextmanager
def _open_data(prefix: str) -> Iterator[zipfile.ZipFile]:
    path = prefix + DATA_SUFFIX
    try:
        f = open(path, "rb")
    except (FileNotFoundError, NotADirectoryError):
        raise _not_found(path) from None
    with f:
        if f.read(4) != b"PK\x03\x04":
            raise _data_loss(path, "it is not a zip (.npz) file")
        f.seek(0)
        with _guarded(path, zipfile.ZipFile, f) as data:
            yield data


def _entries(prefix: str, index: Any, data: zipfile.ZipFile) -> list[Entry]:
    """The entries that describe ``data``: the index file's, or the data file's own copy
    when the index is from an earlier save (a writer stopped between its renames)."""
    index_path, data_path = prefix + INDEX_SUFFIX, prefix + DATA_SUFFIX
    legacy = isinstance(index, list)  # version 1
    if legacy:
        entries = _parse_entries(index_path, index, legacy=True)
        save_id = None
    else:
        save_id, entries, _ = _parse_index(index_path, index)
    if _INDEX_MEMBER not in data.namelist():
        if legacy:
            return entries
        raise _data_loss(data_path, f"it has no {_INDEX_MEMBER} member")
    copy = _parse_json(data_path, _guarded(data_path, data.read, _INDEX_MEMBER))
    copy_id, copy_entries, replaces = _parse_index(data_path, copy)
    if copy_id == save_id and copy_entries != entries:
        raise _data_loss(index_path, "it does not describe the arrays of its data file")
    if copy_id != save_id and replaces is not _UNKNOWN and replaces != save_id:
        # Not the save that followed this index (a copied or linked file of another
        # checkpoint): reading it would restore another run's values.
        raise _data_loss(data_path, f"it belongs to another checkpoint than {index_path} "
                         "(their save ids differ)")
    return copy_entries


def _check_members(prefix: str, data: zipfile.ZipFile, count: int) -> None:
    names = set(data.namelist()) - {_INDEX_MEMBER}
    if names != {f"v{i}.npy" for i in range(count)}:
        raise _data_loss(prefix + DATA_SUFFIX,
                         f"it holds {len(names)} arrays where its index lists {count}")


def _read_member(prefix: str, data: zipfile.ZipFile, name: str, entry: Entry) -> np.ndarray:
    path = prefix + DATA_SUFFIX
    with _guarded(path, data.open, name) as member:
        array = _guarded(path, _read_npy, member, entry)
        if member.read(1):
            raise _data_loss(path, f"{name} has bytes past its array")
    if entry.crc32 is not None and _crc32(array) != entry.crc32:
        raise _data_loss(path, f"the checksum of {entry.key!r} does not match")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def _read_npy(member: IO[bytes], entry: Entry) -> np.ndarray:
    """The array of a ``.npy`` member, its header checked against ``entry`` before any
    memory is allocated for it."""
    shape, fortran_order, dtype = _read_npy_header(member, entry)
    array = np.empty(shape[::-1] if fortran_order else shape, dtype)
    buffer = memoryview(array.reshape(-1).view(np.uint8))
    filled = 0
    while filled < len(buffer):
        n = member.readinto(buffer[filled:filled + _CHUNK])
        if not n:
            raise EOFError("the array is truncated")
        filled += n
    return array.T if fortran_order else array


def _read_npy_header(member: IO[bytes], entry: Entry) -> tuple[tuple, bool, np.dtype]:
    fmt = np.lib.format
    version = fmt.read_magic(member)
    read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran_order, dtype = read_header(member)
    if shape != entry.shape or dtype != entry.dtype:
        raise ValueError(f"its array is {dtype} {shape}, the index says "
                         f"{entry.dtype} {entry.shape}")
    return shape, fortran_order, dtype


def _guarded(path: str, read: Callable[..., Any], *args: Any) -> Any:
    """``read(*args)``, where any failure to decode means the bytes are damaged."""
    try:
        return read(*args)
    except DataLossError:
        raise
    except Exception as exc:  # zip, npy and checksum errors of every kind
        raise _data_loss(path, f"{type(exc).__name__}: {exc}") from exc


def _parse_json(path: str, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _data_loss(path, "it is not JSON") from None


def _parse_index(path: str, index: Any) -> tuple[str, list[Entry], Any]:
    """The save id, the entries and the save id of the index the save replaced
    (``_UNKNOWN`` in files written before it was recorded)."""
    if not isinstance(index, dict) or index.get("format") != _FORMAT:
        raise _data_loss(path, "it is not a gradtape checkpoint index")
    if index.get("version") != _VERSION:
        raise _data_loss(path, f"it has version {index.get('version')!r}; this gradtape "
                         f"reads versions 1 and {_VERSION} (upgrade gradtape to read it)")
    replaces = index.get("replaces", _UNKNOWN)
    if set(index) - {"replaces"} != {"format", "version", "save_id", "entries"} or not (
            isinstance(index["save_id"], str) and (replaces is _UNKNOWN or replaces is None
                                                   or isinstance(replaces, str))):
        raise _data_loss(path, "its fields are not those of a checkpoint index")
    return index["save_id"], _parse_entries(path, index["entries"], legacy=False), replaces


def _parse_entries(path: str, entries: Any, legacy: bool) -> list[Entry]:
    if not isinstance(entries, list):
        raise _data_loss(path, "its entries are not a list")
    parsed = [_parse_entry(path, e, legacy) for e in entries]
    if len({e.key for e in parsed}) != len(parsed):
        raise _data_loss(path, "a key appears twice")
    return parsed


def _parse_entry(path: str, entry: Any, legacy: bool) -> Entry:
    fields = {"key", "shape", "dtype"} if legacy else {"key", "shape", "dtype", "crc32"}
    if not isinstance(entry, dict) or set(entry) != fields:
        raise _data_loss(path, f"an entry is not an object with fields {sorted(fields)}")
    key, shape, dtype, crc = entry["key"], entry["shape"], entry["dtype"], entry.get("crc32")
    if not isinstance(key, str) or not isinstance(shape, list) or not all(
            _is_natural(n) for n in shape) or not isinstance(dtype, str):
        raise _data_loss(path, f"the entry {entry!r} has a bad key, shape or dtype")
    if not legacy and not (_is_natural(crc) and crc < 2**32):
        raise _data_loss(path, f"the entry {key!r} has a bad checksum")
    try:
        parsed = np.dtype(dtype)
    except Exception:
        raise _data_loss(path, f"the entry {key!r} has an unknown dtype {dtype!r}") from None
    if parsed.kind not in _DTYPE_KINDS or parsed.fields is not None or parsed.str != dtype:
        raise _data_loss(path, f"the entry {key!r} has dtype {dtype!r}, not a variable's")
    return Entry(key, tuple(shape), parsed, crc)


def _is_natural(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def _data_loss(path: str, reason: str) -> DataLossError:
    return DataLossError(f"{path} is not a valid checkpoint file ({reason}): the file is "
                         "damaged or was not written by gt.train.Checkpoint; restore an "
                         "earlier checkpoint.")


def _not_found(path: str) -> NotFoundError:
    return NotFoundError(f"Failed to find any matching files for {path}: pass the prefix "
                         "given to Checkpoint.write (or returned by Checkpoint.save).")
