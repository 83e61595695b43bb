"""Small clip files written by the tests: BVH text (CMU- and Mixamo-style skeletons) and a
glTF with one animation on any named skeleton (for bone maps and refusals)."""

from __future__ import annotations

import base64
import json

import numpy as np

#: A CMU-style hierarchy (names as the CMU/cgspeed BVH conversion has them), centimetre-ish units.
CMU_JOINTS = [
    # name, parent, offset
    ("Hips", None, (0, 0, 0)),
    ("LHipJoint", "Hips", (0, 0, 0)), ("LeftUpLeg", "LHipJoint", (9, -5, 0)), ("LeftLeg", "LeftUpLeg", (0, -42, 0)),
    ("LeftFoot", "LeftLeg", (0, -40, 0)), ("LeftToeBase", "LeftFoot", (0, -6, 12)),
    ("RHipJoint", "Hips", (0, 0, 0)), ("RightUpLeg", "RHipJoint", (-9, -5, 0)), ("RightLeg", "RightUpLeg", (0, -42, 0)),
    ("RightFoot", "RightLeg", (0, -40, 0)), ("RightToeBase", "RightFoot", (0, -6, 12)),
    ("LowerBack", "Hips", (0, 5, 0)), ("Spine", "LowerBack", (0, 12, 0)), ("Spine1", "Spine", (0, 12, 0)),
    ("Neck", "Spine1", (0, 15, 0)), ("Neck1", "Neck", (0, 5, 0)), ("Head", "Neck1", (0, 8, 0)),
    ("LeftShoulder", "Spine1", (3, 12, 0)), ("LeftArm", "LeftShoulder", (14, 0, 0)),
    ("LeftForeArm", "LeftArm", (27, 0, 0)), ("LeftHand", "LeftForeArm", (25, 0, 0)),
    ("RightShoulder", "Spine1", (-3, 12, 0)), ("RightArm", "RightShoulder", (-14, 0, 0)),
    ("RightForeArm", "RightArm", (-27, 0, 0)), ("RightHand", "RightForeArm", (-25, 0, 0)),
]
#: Mixamo-style names (Spine/Spine1/Spine2, LeftUpLeg...), the same shape.
MIXAMO_RENAME = {"LowerBack": "Spine", "Spine": "Spine1", "Spine1": "Spine2", "Neck1": None}


def bvh_text(*, joints=CMU_JOINTS, frames: int = 30, frame_time: float = 1 / 30, order: str = "ZXY",
             hips_height: float = 92.0, swing_deg: float = 30.0, walk: float = 0.0, hips_path=None) -> str:
    """A BVH file: the root with 6 channels, every joint with 3 rotations in ``order``; the
    left upper leg and right arm swing by ``swing_deg`` (sine over the clip), the hips move
    forward by ``walk`` units per second, or along ``hips_path(t)`` -> (x, y, z) units."""
    children: dict[str | None, list[str]] = {}
    for name, parent, _ in joints:
        children.setdefault(parent, []).append(name)
    offsets = {n: o for n, _, o in joints}
    lines = ["HIERARCHY"]
    chan_order = []

    def emit(name, depth, root=False):
        pad = "  " * depth
        lines.append(f"{pad}{'ROOT' if root else 'JOINT'} {name}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {offsets[name][0]:.4f} {offsets[name][1]:.4f} {offsets[name][2]:.4f}")
        rot = " ".join(f"{a}rotation" for a in order)
        if root:
            lines.append(f"{pad}  CHANNELS 6 Xposition Yposition Zposition {rot}")
            chan_order.append((name, "pos"))
        else:
            lines.append(f"{pad}  CHANNELS 3 {rot}")
        chan_order.append((name, "rot"))
        kids = children.get(name, [])
        for k in kids:
            emit(k, depth + 1)
        if not kids:
            lines.append(f"{pad}  End Site")
            lines.append(pad + "  {")
            lines.append(f"{pad}    OFFSET 0.0000 5.0000 0.0000")
            lines.append(pad + "  }")
        lines.append(pad + "}")

    (root,) = children[None]
    emit(root, 0, root=True)
    lines += ["MOTION", f"Frames: {frames}", f"Frame Time: {frame_time:.8f}"]
    swing = {"LeftUpLeg", "RightArm"}
    for f in range(frames):
        t = f * frame_time
        vals = []
        for name, kind in chan_order:
            if kind == "pos":
                vals += list(hips_path(t)) if hips_path is not None else [0.0, hips_height, walk * t]
            else:
                a = swing_deg * np.sin(2 * np.pi * f / max(frames - 1, 1)) if name in swing else 0.0
                rot = {"X": a, "Y": 0.0, "Z": 0.0}
                vals += [rot[c] for c in order]
        lines.append(" ".join(f"{v:.5f}" for v in vals))
    return "\n".join(lines) + "\n"


def cmu_walk_path(duration: float, *, speed: float = 140.0, ramp: float = 1.5, sway: float = 4.0,
                  bob: float = 2.0, gait: float = 1.1, hips_height: float = 92.0):
    """A CMU-style capture's hips path (units ~ cm): from standing, speeding up to ``speed``
    over ``ramp`` seconds, walking along +Z, slowing to a stop at ``duration``; ``sway``
    side to side once a gait cycle (``gait`` s), ``bob`` up and down twice."""
    ts = np.linspace(0.0, duration, 2001)

    def smooth(u):
        u = np.clip(u, 0.0, 1.0)
        return u * u * (3 - 2 * u)

    v = speed * smooth(ts / ramp) * smooth((duration - ts) / ramp)
    z = np.concatenate([[0.0], np.cumsum((v[1:] + v[:-1]) / 2 * np.diff(ts))])

    def path(t):
        return (sway * np.sin(2 * np.pi * t / gait), hips_height + bob * np.sin(4 * np.pi * t / gait),
                float(np.interp(t, ts, z)))

    return path


def mixamo_joints():
    out = []
    for name, parent, off in CMU_JOINTS:
        new = MIXAMO_RENAME.get(name, name)
        if new is None:
            continue
        p = parent if parent != "Neck1" else "Neck"
        p = MIXAMO_RENAME.get(p, p) if p is not None else None
        out.append((new, p, off))
    return out


def gltf_clip(names: list[str], parents: list[int], translations, *, keys: int = 5, duration: float = 1.0,
              rotation_node: int | None = None, nan_at: int | None = None) -> dict:
    """A .gltf JSON dict (embedded buffer): nodes ``names`` (parents, translations), one
    animation rotating ``rotation_node`` (default the first node) about X; ``nan_at``: that
    key's value is NaN."""
    nodes = [{"name": nm, "translation": list(map(float, translations[i]))} for i, nm in enumerate(names)]
    for i, p in enumerate(parents):
        if p >= 0:
            nodes[p].setdefault("children", []).append(i)
    times = np.linspace(0.0, duration, keys).astype(np.float32)
    ang = np.linspace(0.0, 0.5, keys)
    q = np.stack([np.sin(ang / 2), 0 * ang, 0 * ang, np.cos(ang / 2)], axis=1).astype(np.float32)
    if nan_at is not None:
        q[nan_at, 0] = np.nan
    data = times.tobytes() + q.tobytes()
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [i for i, p in enumerate(parents) if p < 0]}],
        "nodes": nodes,
        "buffers": [{"byteLength": len(data), "uri": "data:application/octet-stream;base64,"
                     + base64.b64encode(data).decode()}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": times.nbytes},
                        {"buffer": 0, "byteOffset": times.nbytes, "byteLength": q.nbytes}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": keys, "type": "SCALAR",
                       "min": [float(times.min())], "max": [float(times.max())]},
                      {"bufferView": 1, "componentType": 5126, "count": keys, "type": "VEC4"}],
        "animations": [{"name": "Swing", "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
                        "channels": [{"sampler": 0, "target": {"node": rotation_node or 0, "path": "rotation"}}]}],
    }
    return doc


def humanoid_skeleton(names_of: dict[str, str]) -> tuple[list[str], list[int], list]:
    """(names, parents, translations) of a 16-joint humanoid (VRM bone -> joint name given by
    ``names_of``; bones it leaves out are not created)."""
    bones = [("hips", None, (0, 0.9, 0)), ("spine", "hips", (0, 0.1, 0)), ("chest", "spine", (0, 0.15, 0)),
             ("neck", "chest", (0, 0.2, 0)), ("head", "neck", (0, 0.1, 0))]
    for s, x in (("left", 1), ("right", -1)):
        bones += [(f"{s}UpperLeg", "hips", (0.09 * x, -0.05, 0)), (f"{s}LowerLeg", f"{s}UpperLeg", (0, -0.42, 0)),
                  (f"{s}Foot", f"{s}LowerLeg", (0, -0.4, 0)), (f"{s}UpperArm", "chest", (0.18 * x, 0.15, 0)),
                  (f"{s}LowerArm", f"{s}UpperArm", (0.27 * x, 0, 0)), (f"{s}Hand", f"{s}LowerArm", (0.25 * x, 0, 0))]
    bones = [b for b in bones if b[0] in names_of]
    index = {b[0]: i for i, b in enumerate(bones)}
    return ([names_of[b[0]] for b in bones], [index[b[1]] if b[1] is not None else -1 for b in bones],
            [b[2] for b in bones])


def write_gltf(path, doc: dict):
    path.write_text(json.dumps(doc))
    return path
