"""The fuzz harness's inputs: the real seed files and their seeded mutations (:mod:`runtime.eval.fuzz`
runs them; ``swaycam fuzz``).

Seeds (:func:`seeds`): real files of every JSON- and text-based avatar input — VRM 0.x
(Godette, sphere), VRM 1.0 (smoke_spring, the sphere-collider variant, debug_robot), a plain
glTF (smoke_spring's JSON without the VRM extensions, as ``.gltf`` text with its buffer in a
data URI), VRM animations (``.vrma``) and MakeHuman OBJ hair.

Mutant ``i`` of a run with seed ``s`` is a pure function of (s, i) (:func:`make_mutant`), so
any failure is reproduced alone with ``swaycam fuzz --seed s --only i``. The mutations:

- ``json-value``: a value anywhere in the JSON replaced by a hostile one (an object, a
  string, null, true, a huge or negative number, NaN, an array, a number turned string...);
- ``json-drop``: a key dropped; ``json-cut``: an array cut short (or emptied);
- ``json-multi``: three to eight of those at once;
- ``bin-write``: hostile numbers (NaN, inf, huge, negative, 0xFFFF) written over binary data
  an accessor reads; ``byte-flip``: random bytes changed anywhere; ``truncate``: the file cut;
- OBJ: ``obj-token`` (a number or index replaced by a hostile token), ``obj-line`` (a line
  dropped, doubled or swapped), byte flips and truncations.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Seed:
    """One real file mutants are made from. ``kind``: vrm0, vrm1, gltf, vrma or obj."""

    name: str
    kind: str
    suffix: str
    data: bytes


@dataclass(frozen=True)
class Mutant:
    """Mutant ``index`` of a run: made from seed file ``seed`` (of ``kind``) by ``mutation``
    (``detail`` says where and what), the bytes ``data`` to load as a ``suffix`` file."""

    index: int
    seed: str
    kind: str
    mutation: str
    detail: str
    suffix: str
    data: bytes


# --------------------------------------------------------------------------- seeds


def _glb_split(data: bytes) -> tuple[dict, bytes]:
    jlen = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + jlen])
    off = 20 + jlen
    if off + 8 <= len(data):
        blen = struct.unpack_from("<I", data, off)[0]
        return doc, data[off + 8:off + 8 + blen]
    return doc, b""


def _glb_join(json_bytes: bytes, bin_chunk: bytes) -> bytes:
    j = json_bytes + b" " * (-len(json_bytes) % 4)
    b = bin_chunk + b"\0" * (-len(bin_chunk) % 4)
    total = 12 + 8 + len(j) + (8 + len(b) if b else 0)
    out = struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<II", len(j), 0x4E4F534A) + j
    if b:
        out += struct.pack("<II", len(b), 0x004E4942) + b
    return out


def _plain_gltf(vrm_bytes: bytes) -> bytes:
    """A VRM 1.0 GLB as a plain ``.gltf``: no VRM extensions, the buffer in a data URI."""
    doc, b = _glb_split(vrm_bytes)
    doc = copy.deepcopy(doc)
    doc.pop("extensions", None)
    doc["extensionsUsed"] = [e for e in doc.get("extensionsUsed", []) if not e.startswith("VRM")]
    for node in doc.get("nodes", []):
        node.pop("extensions", None)
    doc["buffers"] = [{"byteLength": len(b),
                       "uri": "data:application/octet-stream;base64," + base64.b64encode(b).decode()}]
    return json.dumps(doc).encode()


def seeds(assets: Path | None = None, *, kinds: tuple[str, ...] | None = None) -> list[Seed]:
    """The real files mutants are made from (module doc); ``kinds`` selects formats."""
    from avatars.assets import assets_dir

    a = Path(assets) if assets is not None else assets_dir()
    out = []

    def add(name, kind, suffix, path):
        out.append(Seed(name, kind, suffix, Path(path).read_bytes()))

    add("Godette_vrm_v4.vrm", "vrm0", ".vrm", a / "vrm" / "Godette_vrm_v4.vrm")
    add("sphere.vrm", "vrm0", ".vrm", a / "vrm" / "sphere.vrm")
    add("smoke_spring.vrm", "vrm1", ".vrm", a / "vrm" / "smoke_spring.vrm")
    add("springbone_collider_sphere.vrm", "vrm1", ".vrm", a / "vrm" / "springbone_collider_sphere_x0p02_r0p1.vrm")
    add("debug_robot.vrm", "vrm1", ".vrm", a / "vrm" / "debug_robot.vrm")
    out.append(Seed("smoke_spring.gltf", "gltf", ".gltf", _plain_gltf((a / "vrm" / "smoke_spring.vrm").read_bytes())))
    add("test.vrma", "vrma", ".vrma", a / "anim" / "test.vrma")
    add("idle_loop.vrma", "vrma", ".vrma", a / "anim" / "idle_loop.vrma")
    add("Jump.vrma", "vrma", ".vrma", a / "anim" / "Jump.vrma")
    add("short02.obj", "obj", ".obj", a / "hair" / "short02" / "short02.obj")
    return [s for s in out if kinds is None or s.kind in kinds]


# --------------------------------------------------------------------------- mutations

_HOSTILE = (None, True, False, 0, -1, 1, 2, 255, 65535, 2 ** 31, 2 ** 32 + 1, 2 ** 63, -2 ** 63, 10 ** 30, 1e308,
            -1e308, 1e-320, -0.0, 0.5, float("nan"), float("inf"), float("-inf"), "", "x", "0", "1", "-1",
            "node", "VEC3", "SCALAR", "data:,", "../../../etc/passwd", "\u0000", [], [0], [None], [-1],
            [1e308, 1e308, 1e308], ["x"], [[]], [0, 0, 0, 0], [0, 0, 0], {}, {"x": 1}, {"node": -1},
            {"index": 10 ** 9})


def _paths(doc) -> list[tuple]:
    """Every path (tuple of keys/indices) below ``doc``; the root excluded."""
    out = []
    stack = [((), doc)]
    while stack:
        p, v = stack.pop()
        if p:
            out.append(p)
        if isinstance(v, dict):
            stack.extend(((*p, k), c) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend(((*p, i), c) for i, c in enumerate(v))
    return out


def _walk(doc, rng) -> tuple:
    """A random path: a walk from the root that stops at each container with a chance
    growing with depth (so small structures are hit as often as the big arrays)."""
    p, v = (), doc
    while True:
        if isinstance(v, dict) and v:
            k = list(v)[int(rng.integers(len(v)))]
        elif isinstance(v, list) and v:
            k = int(rng.integers(len(v)))
        else:
            return p
        p, v = (*p, k), v[k]
        if not isinstance(v, (dict, list)) or (len(p) >= 2 and rng.random() < 0.2):
            return p


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _hostile(rng, old):
    r = rng.random()
    if r < 0.2 and isinstance(old, (int, float)) and not isinstance(old, bool):
        options = [str(old), -old, old * 1e6 + 1, float(old) + 0.5, [old], {"v": old}, old + 1, old - 1]
        return options[int(rng.integers(len(options)))]
    if r < 0.3 and isinstance(old, list) and old:
        return old[0] if rng.random() < 0.5 else {str(i): v for i, v in enumerate(old)}
    if r < 0.35 and isinstance(old, dict):
        return list(old.values())
    h = _HOSTILE[int(rng.integers(len(_HOSTILE)))]
    return copy.deepcopy(h)


def _short(v) -> str:
    t = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


def _path_text(path) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


def _json_mutation(doc, rng, kind: str) -> str:
    if kind == "json-value":
        p = _walk(doc, rng)
        if not p:
            return "nothing"
        old = _get(doc, p)
        new = _hostile(rng, old)
        _get(doc, p[:-1])[p[-1]] = new
        return f"{_path_text(p)} = {_short(new)}"
    if kind == "json-drop":
        for _ in range(20):
            p = _walk(doc, rng)
            if p and isinstance(_get(doc, p[:-1]), dict):
                del _get(doc, p[:-1])[p[-1]]
                return f"drop {_path_text(p)}"
        return "nothing"
    if kind == "json-cut":
        arrays = [p for p in _paths(doc) if isinstance(_get(doc, p), list) and _get(doc, p)]
        if not arrays:
            return "nothing"
        p = arrays[int(rng.integers(len(arrays)))]
        a = _get(doc, p)
        n = int(rng.integers(len(a)))
        del a[n:]
        return f"cut {_path_text(p)} to {n}"
    raise ValueError(kind)


def _accessor_ranges(doc, bin_len: int) -> list[tuple[int, int, int]]:
    """(start, end, component size) byte ranges of the BIN chunk that accessors read."""
    out = []
    views = doc.get("bufferViews") or []
    sizes = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
    for a in doc.get("accessors") or []:
        try:
            v = views[a["bufferView"]]
            if v.get("buffer", 0) != 0:
                continue
            start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
            end = min(v.get("byteOffset", 0) + v["byteLength"], bin_len)
            if end > start:
                out.append((start, end, sizes.get(a.get("componentType"), 4)))
        except (KeyError, IndexError, TypeError):
            continue
    return out


_BIN_VALUES = (b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\x00\x00\x80\xff", b"\xff\xff\x7f\x7f", b"\xff\xff\xff\xff",
               b"\x00\x00\x00\x80", b"\xff\xff", b"\xff", b"\x00\x00\x00\x00", b"\xf0\xff\xff\xff")


def _mutate_gltf(seed: Seed, rng) -> tuple[str, str, bytes]:
    glb = seed.data[:4] == b"glTF"
    doc, bin_chunk = _glb_split(seed.data) if glb else (json.loads(seed.data), b"")
    kinds = ["json-value"] * 35 + ["json-drop"] * 14 + ["json-cut"] * 10 + ["json-multi"] * 10 + \
        ["byte-flip"] * 11 + ["truncate"] * 5 + (["bin-write"] * 15 if glb else ["json-value"] * 15)
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind.startswith("json"):
        doc = copy.deepcopy(doc)
        if kind == "json-multi":
            n = int(rng.integers(3, 9))
            subs = [["json-value", "json-drop", "json-cut"][int(rng.integers(3))] for _ in range(n)]
            detail = "; ".join(_json_mutation(doc, rng, k) for k in subs)
        else:
            detail = _json_mutation(doc, rng, kind)
        text = json.dumps(doc).encode()
        return kind, detail, (_glb_join(text, bin_chunk) if glb else text)
    if kind == "bin-write":
        ranges = _accessor_ranges(doc, len(bin_chunk))
        b = bytearray(bin_chunk)
        writes = []
        for _ in range(int(rng.integers(1, 6))):
            if not ranges:
                break
            start, end, size = ranges[int(rng.integers(len(ranges)))]
            val = _BIN_VALUES[int(rng.integers(len(_BIN_VALUES)))][:size] if size < 4 else \
                _BIN_VALUES[int(rng.integers(len(_BIN_VALUES)))]
            at = start + int(rng.integers(max(1, (end - start) // size))) * size
            b[at:at + len(val)] = val
            writes.append(f"{at}={val.hex()}")
        json_bytes = seed.data[20:20 + struct.unpack_from("<I", seed.data, 12)[0]]
        return kind, "bin " + ",".join(writes), _glb_join(json_bytes.rstrip(b" "), bytes(b))
    return _bytes_mutation(seed.data, rng, kind)


def _bytes_mutation(data: bytes, rng, kind: str) -> tuple[str, str, bytes]:
    if kind == "truncate":
        n = int(rng.integers(len(data)))
        return kind, f"cut to {n} of {len(data)} bytes", data[:n]
    b = bytearray(data)
    flips = []
    for _ in range(int(rng.integers(1, 9))):
        at = int(rng.integers(len(b)))
        b[at] = int(rng.integers(256))
        flips.append(str(at))
    return "byte-flip", "at " + ",".join(flips), bytes(b)


_OBJ_TOKENS = ("nan", "inf", "-inf", "1e308", "-1e308", "0", "-0", "99999999", "-99999999", "x", "1/1/1", "//",
               "/", "1.5", "1e-320", "")


def _mutate_obj(seed: Seed, rng) -> tuple[str, str, bytes]:
    kinds = ["obj-token"] * 40 + ["obj-line"] * 30 + ["byte-flip"] * 20 + ["truncate"] * 10
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind in ("byte-flip", "truncate"):
        return _bytes_mutation(seed.data, rng, kind)
    lines = seed.data.decode("utf-8", "replace").split("\n")
    details = []
    for _ in range(int(rng.integers(1, 6))):
        i = int(rng.integers(len(lines)))
        if kind == "obj-token":
            parts = lines[i].split(" ")
            if len(parts) > 1:
                j = int(rng.integers(1, len(parts)))
                parts[j] = _OBJ_TOKENS[int(rng.integers(len(_OBJ_TOKENS)))]
                lines[i] = " ".join(parts)
                details.append(f"line {i + 1}: {lines[i][:40]!r}")
        else:
            op = int(rng.integers(3))
            if op == 0:
                del lines[i]
                details.append(f"drop line {i + 1}")
            elif op == 1:
                lines.insert(i, lines[i])
                details.append(f"double line {i + 1}")
            else:
                j = int(rng.integers(len(lines)))
                lines[i], lines[j] = lines[j], lines[i]
                details.append(f"swap lines {i + 1},{j + 1}")
    return kind, "; ".join(details), "\n".join(lines).encode()


def make_mutant(all_seeds: list[Seed], run_seed: int, index: int) -> Mutant:
    """Mutant ``index`` of the run ``run_seed`` (a pure function of both)."""
    rng = np.random.default_rng([run_seed, index])
    seed = all_seeds[index % len(all_seeds)]
    if seed.kind == "obj":
        mutation, detail, data = _mutate_obj(seed, rng)
    else:
        mutation, detail, data = _mutate_gltf(seed, rng)
    return Mutant(index, seed.name, seed.kind, mutation, detail, seed.suffix, data)
