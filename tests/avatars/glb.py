"""Helpers to take a GLB apart and put it back together, for malformed-input tests."""

from __future__ import annotations

import json
import struct


def split(data: bytes) -> tuple[dict, bytes]:
    """(JSON dict, BIN chunk) of a GLB."""
    jlen = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + jlen])
    off = 20 + jlen
    blen = struct.unpack_from("<I", data, off)[0]
    return doc, data[off + 8 : off + 8 + blen]


def join(doc: dict, bin_chunk: bytes) -> bytes:
    """A GLB from a JSON dict and a BIN chunk (both padded to 4 bytes)."""
    return join_raw(json.dumps(doc).encode(), bin_chunk)


def join_raw(json_chunk: bytes, bin_chunk: bytes) -> bytes:
    """A GLB from JSON chunk bytes taken as they are (even if broken) and a BIN chunk."""
    j = json_chunk + b" " * (-len(json_chunk) % 4)
    b = bin_chunk + b"\0" * (-len(bin_chunk) % 4)
    total = 12 + 8 + len(j) + 8 + len(b)
    return (struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<II", len(j), 0x4E4F534A) + j
            + struct.pack("<II", len(b), 0x004E4942) + b)


def with_scale(src, dst, scale, *, bone: str = "head"):
    """Write ``dst``: the VRM 1.0 file ``src`` with humanoid bone ``bone``'s node scaled to
    ``scale`` (3,) (pygltflib; every other byte kept); returns ``dst``."""
    import pygltflib

    g = pygltflib.GLTF2().load_binary(str(src))
    node = g.extensions["VRMC_vrm"]["humanoid"]["humanBones"][bone]["node"]
    g.nodes[node].scale = [float(s) for s in scale]
    g.save_binary(str(dst))
    return dst
