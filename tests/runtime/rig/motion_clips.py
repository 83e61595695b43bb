"""Clips made by the tests: a glTF animation on an avatar's own skeleton (hair joints
included), the way a rigger exports "the ponytail swings while the body waves"."""

from __future__ import annotations

import base64
import json

import numpy as np

from avatars import Avatar
from avatars.math3d import quat_from_axis_angle, quat_mul


def hair_clip_gltf(avatar: Avatar, path, *, hair_nodes: list[int], duration: float = 2.0, rate: float = 30.0,
                   swing_deg: float = 25.0, spine_deg: float = 6.0, loop: bool = True) -> None:
    """Write ``path`` (.gltf): the avatar's node tree (names, rest TRS; the VRM humanoid in a
    ``VRMC_vrm`` extension) and one animation: the spine sways ``spine_deg`` about Z and every
    node of ``hair_nodes`` swings ``swing_deg`` about its local X, in time with it (sines over
    ``duration``; a whole period, so it loops)."""
    sk = avatar.skeleton
    n = sk.node_count
    nodes = []
    for i in range(n):
        nd = {"name": sk.names[i] or f"node{i}", "translation": sk.rest_translation[i].tolist(),
              "rotation": sk.rest_rotation[i].tolist(), "scale": sk.rest_scale[i].tolist()}
        kids = [int(c) for c in np.nonzero(sk.parents == i)[0]]
        if kids:
            nd["children"] = kids
        nodes.append(nd)
    k = int(round(duration * rate)) + 1
    t = np.linspace(0.0, duration, k)
    phase = np.sin(2 * np.pi * t / duration)
    blobs, views, accessors, samplers, channels = [], [], [], [], []

    def add(arr: np.ndarray, kind: str) -> int:
        a = np.ascontiguousarray(arr, np.float32)
        off = sum(len(b) for b in blobs)
        blobs.append(a.tobytes())
        views.append({"buffer": 0, "byteOffset": off, "byteLength": a.nbytes})
        acc = {"bufferView": len(views) - 1, "componentType": 5126, "count": len(a), "type": kind}
        if kind == "SCALAR":
            acc["min"], acc["max"] = [float(a.min())], [float(a.max())]
        accessors.append(acc)
        return len(accessors) - 1

    time_acc = add(t, "SCALAR")

    def rotate(node: int, axis, deg: np.ndarray) -> None:
        q = quat_from_axis_angle(np.broadcast_to(np.asarray(axis, float), (k, 3)), np.radians(deg))
        out = add(quat_mul(np.broadcast_to(sk.rest_rotation[node], (k, 4)), q), "VEC4")
        samplers.append({"input": time_acc, "output": out, "interpolation": "LINEAR"})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "rotation"}})

    rotate(avatar.humanoid["spine"], (0, 0, 1), spine_deg * phase)
    for j, node in enumerate(hair_nodes):
        rotate(node, (1, 0, 0), swing_deg * np.sin(2 * np.pi * t / duration - 0.4 * j))
    data = b"".join(blobs)
    doc = {"asset": {"version": "2.0"}, "scene": 0,
           "scenes": [{"nodes": [i for i in range(n) if sk.parents[i] < 0]}], "nodes": nodes,
           "extensionsUsed": ["VRMC_vrm"],
           "extensions": {"VRMC_vrm": {"specVersion": "1.0", "humanoid": {"humanBones": {
               b: {"node": int(nd)} for b, nd in avatar.humanoid.items()}}}},
           "buffers": [{"byteLength": len(data),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()}],
           "bufferViews": views, "accessors": accessors,
           "animations": [{"name": "PonytailSwing_Loop" if loop else "PonytailSwing", "samplers": samplers,
                           "channels": channels}]}
    path.write_text(json.dumps(doc))
