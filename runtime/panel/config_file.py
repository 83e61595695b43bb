"""Saving the panel's settings into the run's TOML config (``POST /config/save``).

The file is read with :mod:`tomllib`, the saved tables replace its own (``[hair]`` with its
``[hair.springs."PATTERN"]`` tables, ``[expressions]``, ``[calibration]``), and the whole
document is written back with :func:`dumps` (values, tables and arrays of the types TOML
and :func:`runtime.config.load_toml` use; comments in the file are not kept). What is written
loads back through ``--config`` to the same settings (tests).
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import tomllib
from pathlib import Path

from ..errors import ConfigError

#: Where the panel saves settings when the run has no --config file.
DEFAULT_CONFIG_FILE = "swaycam.toml"
_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _string(v: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters (U+0000-U+001F,
    U+007F) escaped. Raises ConfigError for text UTF-8 cannot hold (a lone surrogate)."""
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"{v[:40]!r} is not text a config file can hold (a lone surrogate)") from None
    out = []
    for ch in v:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: str) -> str:
    return k if k and set(k) <= _BARE else _string(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ConfigError(f"{v!r} cannot be written to a config file")
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise ConfigError(f"{type(v).__name__} {v!r} cannot be written to a config file")


def dumps(data: dict) -> str:
    """TOML text for ``data`` (plain values at the top, then tables, nested tables as
    ``[a.b."c d"]``). Raises ConfigError for a value TOML cannot hold."""
    lines: list[str] = []

    def table(d: dict, path: list[str]) -> None:
        plain = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
        subs = [(k, v) for k, v in d.items() if isinstance(v, dict)]
        if path and (plain or not subs):
            lines.append(("\n" if lines else "") + "[" + ".".join(_key(p) for p in path) + "]")
        for k, v in plain:
            lines.append(f"{_key(k)} = {_value(v)}")
        for k, v in subs:
            table(v, path + [k])

    table(data, [])
    return "\n".join(lines) + "\n"


def save_tables(path: str | Path, tables: dict[str, dict]) -> dict:
    """Replace the top-level ``tables`` ({name: table}; an empty table removes it) of the TOML
    file ``path`` (created when missing), written atomically (a temporary file beside it,
    renamed over it; removed again whatever fails). Returns the whole document.

    Raises:
        ConfigError: the file is not TOML, or a value cannot be written. OSError: it cannot
            be written.
    """
    p = Path(path)
    data: dict = {}
    if p.exists():
        try:
            data = tomllib.loads(p.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: {exc}") from None
    for name, value in tables.items():
        if value:
            data[name] = value
        else:
            data.pop(name, None)
    text = dumps(data)
    try:
        tomllib.loads(text)                             # never write what cannot be read back
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the settings would not read back as TOML ({exc})") from None
    raw = text.encode("utf-8")                          # before any file exists (_string checked it)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return data
