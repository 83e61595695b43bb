"""Biovision Hierarchy (``.bvh``) motion capture -> :class:`Clip`.

Format: a ``HIERARCHY`` section (``ROOT``/``JOINT name { OFFSET x y z; CHANNELS n ...;
children; End Site { OFFSET x y z } }``), then ``MOTION``, ``Frames: N``, ``Frame Time: dt``
and N lines of numbers, one per channel in hierarchy order. Rotation channels compose in
the order they are listed (``Zrotation Xrotation Yrotation`` is R = Rz · Rx · Ry, degrees);
a joint with position channels takes them as its local translation (the root's position
in the world), others sit at their OFFSET. Any frame rate; the rest pose is every rotation
zero (usually a T-pose).

Joint names: CMU motion capture (``LowerBack``, ``Spine1``, ``LThumb``...) and Mixamo-style
(``Hips``, ``Spine2``, ``LeftUpLeg``...) are recognised, or any convention of
:mod:`avatars.clips.bonemap`, or a bone map.

Units: ``unit_scale`` metres per file unit; None picks, among metres, centimetres, inches
and the CMU/cgspeed unit (0.056444 m), the one that puts the rest hips 0.6-1.4 m above the
feet (a note says which). Retargeting scales the hips' motion by leg length, so the choice
only changes reported sizes.

The rest hips position: the file's OFFSET of the root rarely stands on the floor (CMU roots
sit at 0, 0, 0 while the motion's hips are ~17 units up), so the clip's rest hips stand
above the first frame's horizontal position at the rest pose's leg height.

Errors name the file and the line: a broken hierarchy (unbalanced braces, a missing
OFFSET or CHANNELS, an unknown keyword or channel), a frame line whose number of values
is not the hierarchy's channel count, a value that is not a number, fewer frame lines than
``Frames:`` says.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..math3d import quat_from_axis_angle, quat_mul, quat_normalize
from ..skeleton import Skeleton
from .bonemap import detect_bone_map, read_bone_map, sidecar_bone_map
from .build import build_clip
from .channels import world_pose
from .model import ClipError

CHANNEL_NAMES = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")
#: Candidate units (metres per unit) tried when none is given, in order of preference.
UNITS = ((1.0, "metres"), (0.01, "centimetres"), (0.0254, "inches"), (0.056444, "CMU units (0.056444 m)"))
_AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}




def _parse_hierarchy(lines: list[str], src: str):
    """(names, parents, offsets, channels per joint, line where MOTION starts), End Sites
    included as joints without channels (named ``<parent>_end``)."""
    toks: list[tuple[str, int]] = []
    motion_line = None
    for i, ln in enumerate(lines, start=1):
        s = ln.strip()
        if s.upper().startswith("MOTION"):
            motion_line = i
            break
        toks.extend((t, i) for t in s.replace("{", " { ").replace("}", " } ").split())
    if not toks or toks[0][0].upper() != "HIERARCHY":
        raise ClipError(src, "line 1", "not a BVH file (it does not start with HIERARCHY)")
    if motion_line is None:
        raise ClipError(src, f"line {len(lines)}", "no MOTION section")
    names, parents, offsets, channels, ends = [], [], [], [], []
    k = 1
    stack: list[int] = []

    def need(what: str) -> tuple[str, int]:
        nonlocal k
        if k >= len(toks):
            raise ClipError(src, f"line {motion_line}", f"hierarchy ends early: expected {what}")
        t = toks[k]
        k += 1
        return t

    def number(what: str) -> float:
        t, ln = need(what)
        try:
            v = float(t)
        except ValueError:
            raise ClipError(src, f"line {ln}", f"{what}: {t!r} is not a number") from None
        if not math.isfinite(v):
            raise ClipError(src, f"line {ln}", f"{what}: {t!r} is not finite")
        return v

    while k < len(toks):
        t, ln = toks[k]
        k += 1
        key = t.upper()
        if key in ("ROOT", "JOINT"):
            if key == "ROOT" and stack:
                raise ClipError(src, f"line {ln}", "ROOT inside another joint")
            if key == "JOINT" and not stack:
                raise ClipError(src, f"line {ln}", "JOINT outside a ROOT")
            name, _ = need("a joint name")
            if name in names:
                raise ClipError(src, f"line {ln}", f"joint {name!r} appears twice")
            brace, bl = need("'{'")
            if brace != "{":
                raise ClipError(src, f"line {bl}", f"expected '{{' after {key} {name}, got {brace!r}")
            names.append(name)
            parents.append(stack[-1] if stack else -1)
            offsets.append(None)
            channels.append(None)
            ends.append(False)
            stack.append(len(names) - 1)
        elif key == "END":
            site, sl = need("'Site'")
            if site.upper() != "SITE" or not stack:
                raise ClipError(src, f"line {sl}", "End must be 'End Site' inside a joint")
            brace, bl = need("'{'")
            if brace != "{":
                raise ClipError(src, f"line {bl}", f"expected '{{' after End Site, got {brace!r}")
            names.append(f"{names[stack[-1]]}_end")
            parents.append(stack[-1])
            offsets.append(None)
            channels.append([])
            ends.append(True)
            stack.append(len(names) - 1)
        elif key == "OFFSET":
            if not stack:
                raise ClipError(src, f"line {ln}", "OFFSET outside a joint")
            j = stack[-1]
            offsets[j] = np.array([number("OFFSET x"), number("OFFSET y"), number("OFFSET z")])
        elif key == "CHANNELS":
            if not stack or ends[stack[-1]]:
                raise ClipError(src, f"line {ln}", "CHANNELS outside a joint")
            cnt, cl = need("a channel count")
            try:
                n = int(cnt)
            except ValueError:
                raise ClipError(src, f"line {cl}", f"channel count {cnt!r} is not a whole number") from None
            if not 0 <= n <= 6:
                raise ClipError(src, f"line {cl}", f"channel count {n} is outside 0..6")
            chans = []
            for _ in range(n):
                c, cl2 = need("a channel name")
                norm = c[0].upper() + c[1:].lower() if c else c
                if norm not in CHANNEL_NAMES:
                    raise ClipError(src, f"line {cl2}", f"unknown channel {c!r} (known: {', '.join(CHANNEL_NAMES)})")
                chans.append(norm)
            channels[stack[-1]] = chans
        elif key == "}":
            if not stack:
                raise ClipError(src, f"line {ln}", "'}' without an open joint")
            j = stack.pop()
            if offsets[j] is None:
                raise ClipError(src, f"line {ln}", f"joint {names[j]!r} has no OFFSET")
            if channels[j] is None:
                raise ClipError(src, f"line {ln}", f"joint {names[j]!r} has no CHANNELS")
        else:
            raise ClipError(src, f"line {ln}", f"unexpected {t!r} in the hierarchy")
    if stack:
        raise ClipError(src, f"line {motion_line}", f"joint {names[stack[-1]]!r} is not closed ('}}' missing) "
                        "before MOTION")
    if not names:
        raise ClipError(src, f"line {motion_line}", "the hierarchy has no joint")
    return names, parents, offsets, channels, motion_line


def _parse_motion(lines: list[str], start: int, nchan: int, src: str) -> tuple[np.ndarray, float]:
    def field(i: int, label: str) -> tuple[str, int]:
        while i <= len(lines) and not lines[i - 1].strip():
            i += 1
        if i > len(lines):
            raise ClipError(src, f"line {i}", f"expected '{label}'")
        s = lines[i - 1].strip()
        head, _, value = s.partition(":")
        if head.strip().lower() != label.lower():
            raise ClipError(src, f"line {i}", f"expected '{label}: ...', got {s[:40]!r}")
        return value.strip(), i

    value, ln = field(start + 1, "Frames")
    try:
        frames = int(value)
    except ValueError:
        raise ClipError(src, f"line {ln}", f"Frames: {value!r} is not a whole number") from None
    if frames < 1:
        raise ClipError(src, f"line {ln}", f"Frames: {frames}: no frame")
    value, ln = field(ln + 1, "Frame Time")
    try:
        dt = float(value)
    except ValueError:
        raise ClipError(src, f"line {ln}", f"Frame Time: {value!r} is not a number") from None
    if not math.isfinite(dt) or dt <= 0:
        raise ClipError(src, f"line {ln}", f"Frame Time: {value} must be a positive number of seconds")
    data = np.zeros((frames, nchan))
    row = 0
    i = ln + 1
    while row < frames:
        if i > len(lines):
            raise ClipError(src, f"line {i}", f"Frames: {frames} but only {row} frame lines")
        s = lines[i - 1].split()
        if s:
            if len(s) != nchan:
                raise ClipError(src, f"line {i}", f"frame {row} has {len(s)} values, the hierarchy declares "
                                f"{nchan} channels")
            try:
                vals = [float(x) for x in s]
            except ValueError:
                bad = next(x for x in s if not _is_number(x))
                raise ClipError(src, f"line {i}", f"frame {row}: {bad!r} is not a number") from None
            if not all(math.isfinite(v) for v in vals):
                raise ClipError(src, f"line {i}", f"frame {row}: a value is not finite")
            data[row] = vals
            row += 1
        i += 1
    return data, dt


def _is_number(x: str) -> bool:
    try:
        float(x)
        return True
    except ValueError:
        return False


def _rotations(chans: list[str], values: np.ndarray) -> np.ndarray:
    """(F, 4) local rotations composed in channel order (degrees)."""
    q = np.zeros((len(values), 4))
    q[:, 3] = 1.0
    for c, col in zip(chans, values.T):
        if c.endswith("rotation"):
            q = quat_mul(q, quat_from_axis_angle(np.broadcast_to(_AXES[c[0]], (len(col), 3)), np.radians(col)))
    return quat_normalize(q)


def _rest_positions(parents, offsets) -> np.ndarray:
    """(J, 3) rest world positions of a BVH hierarchy (offsets summed down the tree; the
    file lists parents before children)."""
    pos = np.zeros((len(parents), 3))
    for j, p in enumerate(parents):
        pos[j] = np.asarray(offsets[j], np.float64) + (pos[p] if p >= 0 else 0.0)
    return pos


def load_bvh(path: str | Path, data: bytes | None = None, *, unit_scale: float | None = None,
             bone_map: str | Path | dict | None = None, name: str | None = None):
    """A ``.bvh`` file as one clip (module doc).

    Args:
        unit_scale: metres per file unit; None: guessed (module doc).
        bone_map: {VRM bone: joint name} or a map file; None: ``CLIP.bonemap.json`` or detection.
        name: the clip's name (default: the file's stem).

    Raises:
        ClipError: naming the line (module doc), or a skeleton that is not humanoid.
    """
    src = str(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ClipError(src, "", f"cannot read the file ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.splitlines()
    names, parents, offsets, channels, mline = _parse_hierarchy(lines, src)
    nchan = sum(len(c) for c in channels)
    frames, dt = _parse_motion(lines, mline, nchan, src)
    n = len(names)
    notes = []
    file_map = None
    if isinstance(bone_map, dict):
        file_map = bone_map
    elif bone_map is not None:
        file_map = read_bone_map(bone_map)
    elif (side := sidecar_bone_map(path)) is not None:
        file_map = read_bone_map(side)
        notes.append(f"bone map {side.name}")
    joint_names = [nm if not nm.endswith("_end") or channels[i] else "" for i, nm in enumerate(names)]
    bmap = detect_bone_map(joint_names, file_map=file_map, source=src, element="HIERARCHY",
                           shape=(names, parents, _rest_positions(parents, offsets)))
    if bmap.convention == "topology":
        notes.append("bones by the skeleton's topology and rest pose")
    elif bmap.convention not in ("file",):
        notes.append(f"bones by {bmap.convention} naming")
    offs = np.array(offsets)
    rest_t = offs.copy()
    rest_r = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    ones = np.ones((n, 3))
    sk = Skeleton(names=tuple(names), parents=np.array(parents, np.int64), rest_translation=rest_t,
                  rest_rotation=rest_r, rest_scale=ones)
    f = len(frames)
    tr = np.broadcast_to(offs, (f, n, 3)).copy()
    rot = np.broadcast_to(rest_r, (f, n, 4)).copy()
    col = 0
    animated = set()
    for j, chans in enumerate(channels):
        vals = frames[:, col:col + len(chans)]
        col += len(chans)
        pos = [c for c in chans if c.endswith("position")]
        if pos:
            t = tr[:, j].copy()
            for c, v in zip(chans, vals.T):
                if c.endswith("position"):
                    t[:, "XYZ".index(c[0])] = v
            tr[:, j] = t
        if any(c.endswith("rotation") for c in chans):
            rot[:, j] = _rotations(chans, vals)
            animated.add(j)
    # units and the rest hips position (module doc)
    _, rest_pos = world_pose(sk, rest_t[None], rest_r[None], ones[None])
    hips = bmap.bones["hips"]
    below = sk.descendants(hips)
    leg = float(rest_pos[0, hips, 1] - min(rest_pos[0, i, 1] for i in below))
    if unit_scale is None:
        good = [(s, label) for s, label in UNITS if 0.6 <= leg * s <= 1.4]
        unit_scale, label = good[0] if good else (1.0, "metres (no unit gave a 0.6-1.4 m leg)")
        notes.append(f"units: {label} (hips {leg * unit_scale:.2f} m above the feet)")
    elif not (math.isfinite(unit_scale) and unit_scale > 0):
        raise ClipError(src, "", f"unit scale {unit_scale!r} must be a positive number (metres per unit)")
    p0 = tr[0, hips]
    hips_rest = np.array([p0[0], leg, p0[2]]) if parents[hips] < 0 else None
    return build_clip(
        name=name or Path(src).stem, source=src, skeleton=sk, bones=bmap.bones, times=np.arange(f) * dt,
        translation=tr, rotation=rot, scale=np.ones((f, n, 3)), rest=(rest_t, rest_r, ones),
        unit_scale=unit_scale, animated_rotation=animated, frame_rate=round(1.0 / dt, 3), notes=notes,
        hips_rest_position=hips_rest)
