"""Read .vrm / .glb / .gltf files, and glTF buffers into bytes.

Binary files are detected by their ``glTF`` magic (glTF 2.0 spec §4.4 GLB), not the
suffix, and the GLB header and chunk lengths are validated, so a truncated file gets a
clear error rather than a struct error. The parsed JSON then goes through the one typed
reading layer (:func:`avatars.json_shape.check_document`): every builder reads values of
the types it expects, wrong optional parts are dropped with a warning naming their JSON
path, wrong required parts raise AvatarError naming it.
"""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from pathlib import Path

from .errors import Issues
from .json_shape import check_document

GLB_MAGIC = b"glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942


@dataclass
class GltfDocument:
    """A parsed glTF: its JSON (checked against :data:`avatars.json_shape.DOCUMENT`), the
    resolved buffer bytes, and the file's issues (warnings so far)."""

    json: dict
    buffers: list[bytes]
    issues: Issues


def read_document(path: str | Path, data: bytes | None = None) -> GltfDocument:
    """Parse a .vrm/.glb (binary) or .gltf (JSON) file.

    Args:
        path: the file; used for messages and for resolving relative buffer URIs.
        data: the file's bytes, when already in memory.

    Raises:
        AvatarError: missing/unreadable file, neither GLB nor JSON, truncated GLB, bad JSON,
            a buffer that cannot be resolved or is shorter than its byteLength, a required
            value of the wrong type (module doc).
    """
    issues = Issues(path)
    p = Path(path)
    if data is None:
        if p.exists() and not p.is_file():
            # /dev/zero, a pipe or a folder: reading would never end (or fail oddly)
            raise issues.error("", "not a regular file")
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise issues.error("", "file does not exist") from None
        except OSError as exc:
            raise issues.error("", f"cannot read file: {exc.strerror}") from None
    if len(data) == 0:
        raise issues.error("", "file is empty (0 bytes)")
    bin_chunk: bytes | None = None
    if data[:4] == GLB_MAGIC:
        json_bytes, bin_chunk = _split_glb(data, issues)
    else:
        json_bytes = data
    try:
        text = json_bytes.decode("utf-8-sig")
        doc = json.loads(text)
    except UnicodeDecodeError as exc:
        if bin_chunk is not None or data[:4] == GLB_MAGIC:
            raise issues.error("", f"GLB JSON chunk is not UTF-8 text (byte {exc.start} of the chunk)") from None
        raise issues.error("", "not a glTF file (neither GLB magic 'glTF' nor UTF-8 JSON)") from None
    except json.JSONDecodeError as exc:
        where = "JSON chunk" if bin_chunk is not None or data[:4] == GLB_MAGIC else "JSON"
        raise issues.error(where, f"bad JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("asset"), dict):
        raise issues.error("asset", "not a glTF document (no 'asset' object)")
    version = doc["asset"].get("version", "")
    if not isinstance(version, str) or not version.startswith("2."):
        raise issues.error("asset.version", f"glTF version {version!r} is not supported (need 2.x)")
    doc = check_document(doc, issues)
    buffers = _resolve_buffers(doc, bin_chunk, p.parent, issues)
    return GltfDocument(json=doc, buffers=buffers, issues=issues)


def _split_glb(data: bytes, issues: Issues) -> tuple[bytes, bytes | None]:
    if len(data) < 20:
        raise issues.error("GLB header", f"truncated: {len(data)} bytes, a GLB needs at least 20")
    _magic, version, length = struct.unpack_from("<4sII", data, 0)
    if version != 2:
        raise issues.error("GLB header", f"GLB container version {version} is not supported (need 2)")
    if length > len(data):
        raise issues.error("GLB header", f"truncated: header says {length} bytes, file has {len(data)}")
    offset = 12
    json_bytes: bytes | None = None
    bin_chunk: bytes | None = None
    index = 0
    while offset < length:
        if offset + 8 > length:
            raise issues.error(f"GLB chunk {index}", "truncated chunk header")
        clen, ctype = struct.unpack_from("<II", data, offset)
        start, end = offset + 8, offset + 8 + clen
        if end > length:
            raise issues.error(f"GLB chunk {index}", f"truncated: chunk needs {clen} bytes, {length - start} left")
        if ctype == CHUNK_JSON and json_bytes is None:
            json_bytes = data[start:end]
        elif ctype == CHUNK_BIN and bin_chunk is None:
            bin_chunk = data[start:end]
        offset = end
        index += 1
    if json_bytes is None:
        raise issues.error("GLB chunk 0", "no JSON chunk")
    return json_bytes.rstrip(b" \x00"), bin_chunk


def external_file(base: Path, uri: str) -> Path:
    """The file a relative glTF URI names, inside ``base`` (the glTF file's folder).

    glTF URIs are percent-encoded relative references (glTF 2.0 §3.3.2 "URIs"). Absolute
    paths, other schemes, NUL bytes and references that leave the folder (``../``) are
    refused: an avatar loaded through the control service must not read other files.

    Raises:
        ValueError: the reason, for the caller's message.
    """
    from urllib.parse import unquote, urlsplit

    if "\0" in uri:
        raise ValueError("the URI contains a NUL byte")
    parts = urlsplit(uri)
    if parts.scheme or parts.netloc:
        raise ValueError(f"only relative file URIs are read, not {parts.scheme or parts.netloc}:")
    rel = unquote(parts.path)
    if "\0" in rel or not rel or Path(rel).is_absolute():
        raise ValueError("only relative file URIs inside the glTF file's folder are read")
    root = base.resolve()
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        raise ValueError("the URI leaves the glTF file's folder")
    return target


def _resolve_buffers(doc: dict, bin_chunk: bytes | None, base: Path, issues: Issues) -> list[bytes]:
    out = []
    for i, buf in enumerate(doc.get("buffers", []) or []):
        elem = f"buffers[{i}]"
        uri = buf.get("uri")
        length = buf.get("byteLength")
        if not isinstance(length, int) or length < 0:
            raise issues.error(elem, f"byteLength {length!r} is not a non-negative integer")
        if uri is None:
            if i != 0 or bin_chunk is None:
                raise issues.error(elem, "no uri and no GLB binary chunk")
            raw = bin_chunk
        elif uri.startswith("data:"):
            try:
                raw = base64.b64decode(uri.split(",", 1)[1], validate=False)
            except Exception as exc:  # noqa: BLE001
                raise issues.error(elem, f"bad data URI: {exc}") from None
        else:
            try:
                target = external_file(base, uri)
            except ValueError as exc:
                raise issues.error(f"{elem}.uri", f"external buffer {uri[:80]!r} is refused: {exc}") from None
            if not target.is_file():
                raise issues.error(f"{elem}.uri", f"external buffer {uri[:80]!r} is not a file")
            try:
                raw = target.read_bytes()
            except OSError:
                raise issues.error(elem, f"external buffer {uri[:80]!r} cannot be read") from None
        if len(raw) < length:
            raise issues.error(elem, f"truncated: byteLength {length} but only {len(raw)} bytes present")
        out.append(raw)
    return out
