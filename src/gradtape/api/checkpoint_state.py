"""The ``checkpoint`` state file of a checkpoint directory (TF's ``CheckpointState``, a
text protocol buffer) and ``latest_checkpoint``.

``Checkpoint.save`` writes it atomically (``checkpoint_files.write_atomically``)::

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-3"

Strings are escaped as protobuf's text format escapes them (``\\"``, ``\\\\``, ``\\n``,
other control and non-ASCII bytes in octal), so any path survives the round trip. A file
that does not parse is ignored with a warning, as TF ignores it.
"""

from __future__ import annotations

import os
import re
import warnings

from .checkpoint_files import INDEX_SUFFIX, sync_directory, write_atomically

__all__ = ["latest_checkpoint", "write_state"]

STATE_FILE = "checkpoint"
_STRING_FIELDS = ("model_checkpoint_path", "all_model_checkpoint_paths")
_NUMBER_FIELDS = ("all_model_checkpoint_timestamps", "last_preserved_timestamp")
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
            ord("'"): "\\'", ord("\\"): "\\\\"}
_UNESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\",
              "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v", "?": b"?"}
_TOKEN = re.compile(r"""
    \s+ | \#[^\n]*                                   # skipped
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<colon>:)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?)
""", re.VERBOSE)
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.DOTALL)


class _ParseError(ValueError):
    pass


def escape(text: str) -> str:
    """``text`` as a text-format string body (protobuf's ``CEscape`` of its UTF-8)."""
    return "".join(_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7f else f"\\{b:03o}")
                   for b in text.encode("utf-8"))


def unescape(body: str) -> str:
    """The string a text-format string body (between its quotes) stands for."""
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(body):
        out += body[position:match.start()].encode("utf-8")
        octal, hexadecimal, char = match.groups()
        if octal is not None:
            out.append(int(octal, 8) & 0xFF)
        elif hexadecimal is not None:
            out.append(int(hexadecimal, 16))
        elif char in _UNESCAPES:
            out += _UNESCAPES[char]
        else:
            raise _ParseError(f"invalid escape \\{char}")
        position = match.end()
    out += body[position:].encode("utf-8")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise _ParseError("a string is not UTF-8") from None


def parse_state(text: str) -> dict[str, list]:
    """The fields of a ``CheckpointState`` text proto (each a list of its values)."""
    tokens = _tokens(text)
    fields: dict[str, list] = {}
    i = 0
    while i < len(tokens):
        kind, name = tokens[i]
        if kind != "name" or name not in _STRING_FIELDS + _NUMBER_FIELDS:
            raise _ParseError(f"unexpected {name!r}")
        i += 2 if i + 1 < len(tokens) and tokens[i + 1][0] == "colon" else 1
        kind, value = tokens[i] if i < len(tokens) else (None, None)
        if name in _STRING_FIELDS and kind == "string":
            value = ""
            while i < len(tokens) and tokens[i][0] == "string":  # "a" "b" is "ab", as in C
                value += unescape(tokens[i][1][1:-1])
                i += 1
        elif name in _NUMBER_FIELDS and kind == "number":
            value = float(value.rstrip("fF"))
            i += 1
        else:
            raise _ParseError(f"{name} has a bad value {value!r}")
        fields.setdefault(name, []).append(value)
    return fields


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise _ParseError(f"unexpected {text[position:position + 20]!r}")
        position = match.end()
        if match.lastgroup is not None:
            tokens.append((match.lastgroup, match.group()))
    return tokens


def write_state(directory: str, checkpoint_path: str) -> None:
    """Record ``checkpoint_path`` as the latest checkpoint of ``directory`` (relative to
    it when inside it, as TF's ``save_relative_paths``)."""
    relative = os.path.relpath(checkpoint_path, directory or ".")
    name = checkpoint_path if relative.startswith(os.pardir) else relative
    text = (f'model_checkpoint_path: "{escape(name)}"\n'
            f'all_model_checkpoint_paths: "{escape(name)}"\n')
    write_atomically(os.path.join(directory, STATE_FILE), lambda f: f.write(text.encode()))
    sync_directory(directory)


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The path ``Checkpoint.save`` last wrote in ``checkpoint_dir``; None, as TF, when
    there is none, when the state file does not parse (with a warning), or when the
    checkpoint it names is gone (with a warning)."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    state_path = os.path.join(checkpoint_dir, latest_filename or STATE_FILE)
    try:
        with open(state_path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        paths = parse_state(raw.decode("utf-8")).get("model_checkpoint_path")
        if not paths or not paths[-1]:
            raise _ParseError("it names no model_checkpoint_path")
    except (_ParseError, UnicodeDecodeError) as exc:
        warnings.warn(f"{state_path} is not a checkpoint state file ({exc}): checkpoint "
                      "ignored, latest_checkpoint returns None. Pass the checkpoint's "
                      "prefix to restore it.", stacklevel=2)
        return None
    path = os.path.join(checkpoint_dir, paths[-1])  # an absolute path stays as it is
    if not os.path.exists(path + INDEX_SUFFIX):
        warnings.warn(f"Couldn't match files for checkpoint {path} (named by {state_path}): "
                      "latest_checkpoint returns None.", stacklevel=2)
        return None
    return path
