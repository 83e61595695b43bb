"""Fuzzing the file inputs: seeded mutations of real files, each loaded, rigged, stepped,
posed and skinned (issue 16; ``swaycam fuzz``, ``tests/runtime/eval/test_fuzz.py``).

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

Each mutant runs (:func:`exercise`) in a worker process: load (``load_avatar``,
``load_file`` for clips, ``load_obj`` for hair); an avatar is rigged (:class:`AvatarRig`),
stepped 30 substeps under the standard head turn at its fastest, posed for drawing and
skinned on the CPU with its expressions at full weight (a plain glTF, which the runtime
refuses to drive for want of a humanoid head, is skinned at rest); a clip is played on a real VRM 1.0
avatar the same way; an OBJ hair is fitted and auto-rigged onto the generated default avatar
(the try-on) and the result stepped the same way. Outcomes:

- ``ok``: loaded (perhaps with warnings) and every posed, solved and skinned value finite;
- ``refused``: a clear error — :class:`avatars.AvatarError` (clips' ClipError, hair's
  HairError) from loading, or a :class:`runtime.rig.RigError` (the avatar cannot be driven);
- ``crash``: any other exception; ``nonfinite``: NaN/inf in a posed, solved or skinned value;
  ``hang``: the mutant took over :data:`TIMEOUT_S` (its worker is killed and replaced).

The last three are failures. Workers run with an address-space limit so a mutant that
allocates without bound fails as a ``crash`` (MemoryError) instead of taking the machine.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import multiprocessing as mp
import struct
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: A mutant taking longer than this (load + rig + steps + skinning) is a hang (seconds).
TIMEOUT_S = 10.0
#: Substeps run under the head turn per mutant.
SUBSTEPS = 30
#: Address-space limit of a worker (bytes): a mutant allocating without bound fails fast.
WORKER_MEMORY_LIMIT = 6 * 1024 ** 3
#: Outcomes that fail a run.
FAILURES = ("crash", "nonfinite", "hang")
OUTCOMES = ("ok", "refused") + FAILURES


@dataclass(frozen=True)
class Seed:
    """One real file mutants are made from. ``kind``: vrm0, vrm1, gltf, vrma or obj."""

    name: str
    kind: str
    suffix: str
    data: bytes


@dataclass(frozen=True)
class Mutant:
    index: int
    seed: str
    kind: str
    mutation: str
    detail: str
    suffix: str
    data: bytes


@dataclass
class Outcome:
    index: int
    seed: str
    kind: str
    mutation: str
    detail: str
    outcome: str
    stage: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass
class FuzzReport:
    """Counts of one run: by format (seed kind) and outcome, and every failure."""

    seed: int
    count: int
    seconds: float = 0.0
    by_kind: dict = field(default_factory=dict)        # kind -> {outcome: n}
    by_mutation: dict = field(default_factory=dict)    # mutation -> {outcome: n}
    failures: list = field(default_factory=list)       # Outcome of each failure

    def add(self, o: Outcome) -> None:
        self.by_kind.setdefault(o.kind, Counter())[o.outcome] += 1
        self.by_mutation.setdefault(o.mutation, Counter())[o.outcome] += 1
        if o.outcome in FAILURES:
            self.failures.append(o)

    @property
    def totals(self) -> Counter:
        out = Counter()
        for c in self.by_kind.values():
            out.update(c)
        return out

    def as_dict(self) -> dict:
        return {"seed": self.seed, "count": self.count, "seconds": round(self.seconds, 1),
                "totals": {k: self.totals.get(k, 0) for k in OUTCOMES},
                "by_kind": {k: {o: c.get(o, 0) for o in OUTCOMES} for k, c in sorted(self.by_kind.items())},
                "by_mutation": {k: {o: c.get(o, 0) for o in OUTCOMES} for k, c in sorted(self.by_mutation.items())},
                "failures": [f.__dict__ for f in self.failures]}

    def table(self) -> str:
        lines = [f"{self.count} mutants (seed {self.seed}) in {self.seconds:.0f} s", "",
                 "| format | " + " | ".join(OUTCOMES) + " |", "|---" * (len(OUTCOMES) + 1) + "|"]
        for k, c in sorted(self.by_kind.items()):
            lines.append(f"| {k} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES) + " |")
        t = self.totals
        lines.append("| all | " + " | ".join(str(t.get(o, 0)) for o in OUTCOMES) + " |")
        for f in self.failures[:50]:
            lines.append(f"FAIL {f.outcome} #{f.index} {f.seed} {f.mutation} ({f.detail}) at {f.stage}: {f.error}")
        return "\n".join(lines)


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


# --------------------------------------------------------------------------- exercising


class NonFinite(Exception):
    """A posed, solved or skinned value is NaN or inf."""


def _finite(what: str, a) -> None:
    a = np.asarray(a)
    if a.size and not np.all(np.isfinite(a)):
        raise NonFinite(f"{what} has NaN/inf")


class _Context:
    """What a worker keeps between mutants: base avatars for clips and hair."""

    def __init__(self, assets: Path | None):
        from avatars import load_avatar
        from avatars.assets import assets_dir

        a = Path(assets) if assets is not None else assets_dir()
        self.assets = a
        self.clip_avatar = load_avatar(a / "vrm" / "smoke_spring.vrm")
        self._hair_avatar = None
        self.tmp = Path(tempfile.mkdtemp(prefix="swaycam-fuzz-"))

    def warm_up(self, kinds) -> None:
        """Load the compiled kernels (numba cache) before the first timed mutant: a cold
        cache costs seconds, which is not the mutant's time."""
        _drive(self.clip_avatar)
        if kinds is None or "vrma" in kinds:
            from avatars.clips import load_file

            _drive(self.clip_avatar, clips=load_file(self.assets / "anim" / "test.vrma"))

    @property
    def hair_avatar(self):
        if self._hair_avatar is None:
            from avatars import load_avatar
            from avatars.generate import default_avatar_path

            self._hair_avatar = load_avatar(default_avatar_path())
        return self._hair_avatar


def _clear_errors() -> tuple[type, ...]:
    from avatars import AvatarError
    from runtime.rig import RigError

    return (AvatarError, RigError)


def _drive(avatar, *, clips=None) -> None:
    """Rig ``avatar`` (playing ``clips``), step :data:`SUBSTEPS` substeps of the head turn at
    its fastest, pose for drawing and skin every primitive with every expression at full
    weight. Raises NonFinite."""
    from avatars.clips.head_turn import head_turn_rotation
    from tracking.pose_track import PoseSample

    from ..rig import AvatarRig, MotionOptions

    rig = AvatarRig(avatar, motion=MotionOptions() if clips is not None else None)
    if clips:
        rig.play_motion(clips)
    s = PoseSample()
    h = 1_000_000_000 // 120
    t0 = 1_000_000_000        # the head turn's fast part
    s.t_ns = t0
    s.found = True
    rig.reset(s)
    for n in range(1, SUBSTEPS + 1):
        t = t0 + n * h * 4    # four times faster than the standard turn: a harsh drive
        s.t_ns = t0 + n * h
        s.rotation[:] = head_turn_rotation(t / 1e9)
        s.translation[:] = (0.02 * math.sin(n), 0.0, 0.01)
        rig.substep(s)
        _finite("solver input (world)", rig.world)
        if rig.chains is not None:
            _finite("hair tails", rig.chains.tails)
            _finite("hair velocities", rig.chains.velocities)
    world = rig.draw_pose(s, 0.5)
    _finite("draw pose", world)
    _skin(avatar, world)


def _skin(avatar, world) -> None:
    """Skin every primitive of ``avatar`` posed by ``world`` (N, 4, 4) on the CPU, every
    expression at full weight. Raises NonFinite."""
    from avatars.skinning import joint_matrices, skin_positions
    from render.expressions import expression_frame

    values = {name: 1.0 for name in avatar.expressions}
    frame = expression_frame(avatar, values)
    for k, mi in enumerate(avatar.mesh_instances):
        jm = joint_matrices(avatar, mi.skin, world) if mi.skin >= 0 else None
        if jm is not None:
            _finite(f"skinning matrices of skin {mi.skin}", jm)
        for prim in avatar.meshes[mi.mesh].primitives:
            w = frame.morph_weights[k] if k < len(frame.morph_weights) else None
            _finite(f"morph weights of instance {k}", w if w is not None else [])
            _finite(f"skinned mesh {mi.mesh}", skin_positions(prim, jm, world[mi.node], w))


def exercise(mutant: Mutant, ctx: _Context) -> Outcome:
    """Load, rig, step, pose and skin one mutant (module doc); never raises."""
    out = Outcome(mutant.index, mutant.seed, mutant.kind, mutant.mutation, mutant.detail, "ok")
    t = time.perf_counter()
    stage = "load"
    try:
        if mutant.kind in ("vrm0", "vrm1", "gltf"):
            from avatars import load_avatar

            avatar = load_avatar(mutant.seed, data=mutant.data)
            if mutant.kind == "gltf" and "head" not in avatar.humanoid:
                # a plain glTF: the runtime refuses to drive it (RigError); its meshes are
                # still skinned at rest, as `swaycam inspect` and the hair sources read them
                stage = "skin"
                _skin(avatar, avatar.skeleton.rest_world)
            else:
                stage = "rig"
                _drive(avatar)
        elif mutant.kind == "vrma":
            from avatars.clips import load_file

            path = ctx.tmp / f"m{mutant.index}.vrma"
            path.write_bytes(mutant.data)
            try:
                clips = load_file(path)
            finally:
                path.unlink()
            stage = "rig"
            _drive(ctx.clip_avatar, clips=clips)
        elif mutant.kind == "obj":
            from avatars.hair import load_obj
            from avatars.tryon.pipeline import try_on

            path = ctx.tmp / f"m{mutant.index}.obj"
            path.write_bytes(mutant.data)
            try:
                hair = load_obj(path)
            finally:
                path.unlink()
            _finite("hair positions", hair.positions)
            stage = "try-on"
            result = try_on(ctx.hair_avatar, hair)
            if result.avatar is not None:
                stage = "rig"
                _drive(result.avatar)
        else:
            raise ValueError(mutant.kind)
    except NonFinite as exc:
        out.outcome, out.stage, out.error = "nonfinite", stage, str(exc)
    except _clear_errors() as exc:
        out.outcome, out.stage, out.error = "refused", stage, str(exc)[:300]
    except Exception as exc:  # noqa: BLE001 - the point: any other exception is a finding
        tb = traceback.extract_tb(exc.__traceback__)
        where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb[-4:]))
        out.outcome, out.stage, out.error = "crash", stage, f"{type(exc).__name__}: {str(exc)[:200]} [{where}]"
    out.seconds = time.perf_counter() - t
    return out


# --------------------------------------------------------------------------- running


def _worker(conn, run_seed: int, kinds, assets) -> None:
    import logging
    import resource
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    try:
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    all_seeds = seeds(assets, kinds=kinds)
    ctx = _Context(assets)
    ctx.warm_up(kinds)
    conn.send("ready")
    while True:
        index = conn.recv()
        if index is None:
            return
        m = make_mutant(all_seeds, run_seed, index)
        conn.send(exercise(m, ctx))


class _Worker:
    def __init__(self, mpc, run_seed, kinds, assets):
        self.conn, child = mpc.Pipe()
        self.proc = mpc.Process(target=_worker, args=(child, run_seed, kinds, assets), daemon=True)
        self.proc.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0
        self.ready = False

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join(5)
        self.conn.close()


def run_fuzz(count: int, *, seed: int = 0, workers: int = 1, kinds: tuple[str, ...] | None = None,
             assets: Path | None = None, only: list[int] | None = None, timeout_s: float = TIMEOUT_S,
             progress=None) -> FuzzReport:
    """Run mutants 0..count-1 (or ``only`` those indices) of run ``seed`` in ``workers``
    processes; returns the counts by format and outcome (module doc)."""
    mpc = mp.get_context("spawn")
    kinds = tuple(kinds) if kinds else None
    todo = list(only) if only is not None else list(range(count))
    report = FuzzReport(seed=seed, count=len(todo))
    t0 = time.perf_counter()
    all_seeds = seeds(assets, kinds=kinds)
    pool = [_Worker(mpc, seed, kinds, assets) for _ in range(max(1, workers))]
    done = 0
    try:
        while todo or any(w.index is not None for w in pool):
            for i, w in enumerate(pool):
                if not w.ready:
                    if w.conn.poll(0):
                        w.conn.recv()
                        w.ready = True
                    elif not w.proc.is_alive():
                        raise RuntimeError("a fuzz worker failed to start")
                if w.ready and w.index is None and todo:
                    w.index = todo.pop(0)
                    w.started = time.perf_counter()
                    w.conn.send(w.index)
                if w.index is None:
                    continue
                result = None
                try:
                    if w.conn.poll(0):
                        result = w.conn.recv()
                except (EOFError, OSError):
                    result = "dead"
                if result is None and not w.proc.is_alive():
                    result = "dead"
                if result is None and time.perf_counter() - w.started > timeout_s:
                    result = "hang"
                if result is None:
                    continue
                if not isinstance(result, Outcome):
                    m = make_mutant(all_seeds, seed, w.index)
                    why = ("killed after %.0f s" % timeout_s) if result == "hang" else \
                        f"worker died (exit code {w.proc.exitcode})"
                    result = Outcome(m.index, m.seed, m.kind, m.mutation, m.detail,
                                     "hang" if result == "hang" else "crash", "", why,
                                     time.perf_counter() - w.started)
                    w.kill()
                    pool[i] = _Worker(mpc, seed, kinds, assets)
                else:
                    w.index = None
                report.add(result)
                done += 1
                if progress is not None:
                    progress(done, report.count)
            time.sleep(0.002)
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for w in pool:
            w.proc.join(2)
            if w.proc.is_alive():
                w.kill()
    report.seconds = time.perf_counter() - t0
    return report
