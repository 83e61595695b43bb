"""A small VRM 1.0 test avatar with VRMC_node_constraint: roll, aim and rotation constraints,
chained constraints, and spring chains hanging from constrained nodes (no meshes).

The skeleton is a T-posed humanoid (arms along ±X) whose nodes have non-identity rest
rotations: arm bones keep their local +X along the arm (a different roll about it per bone,
as exporters leave them), every other node gets a fixed pseudo-random rest rotation, so the
constraints' rest-relative formulas are exercised. Node names (``skeleton.find``):

=====================  ==========  ==============================================================
destination            parent      constraint
=====================  ==========  ==============================================================
``CollarTwist``        Chest       roll Y from ``Collar`` (reads another constraint's result)
``SleeveTwist_L``      UpperArm_L  roll X from ``LowerArm_L``, weight 1 (the sleeve follows the
                                   forearm's twist, not its bend); the spring ``Sleeve_L`` hangs
                                   from it
``ForearmTwist_L``     LowerArm_L  roll X from ``Hand_L``, weight 0.5
``ShoulderAim_L``      Chest       aim PositiveX at ``LowerArm_L`` (the elbow); ``ShoulderTip_L``
                                   is its child
``PadAim_L``           Chest       aim NegativeY at ``ShoulderTip_L`` (below another constraint's
                                   destination)
``SubArm_R``           Chest       rotation from ``UpperArm_R``, weight 0.5
``Collar``             Chest       rotation from ``Neck``, weight 0.5; the spring ``Hood`` hangs
                                   from it
``NeckAim``            Chest       aim PositiveZ at ``Head``, weight 0.7; the spring ``Scarf``
                                   hangs from it
``Still``              Head        rotation from ``Head``, weight 0
=====================  ==========  ==============================================================

Constraint nodes come before the constraints they depend on in file order (``CollarTwist``
before ``Collar``, ``PadAim_L`` before ``ShoulderAim_L``, whose child it aims at), so
evaluating in file order would be wrong. The head drive moves ``Neck``/``Head`` every substep, so the
``Collar``, ``NeckAim`` and ``CollarTwist`` results reach the hair solver. Output is
deterministic: :func:`constrained_avatar_json` (the glTF JSON, for tests that edit it) and
:func:`build_constrained_avatar` (GLB bytes).
"""

from __future__ import annotations

import json
import struct

import numpy as np

from .math3d import quat_conj, quat_from_axis_angle, quat_mul, quat_normalize, vec_transform_quat

NAME = "swaycam constrained test"
_SEED = 15

# (name, parent, world position, arm side: +1 left arm chain (local X along +X), -1 right, 0 other)
_BODY = [
    ("Root", None, (0.0, 0.0, 0.0), 0),
    ("Hips", "Root", (0.0, 0.95, 0.0), 0),
    ("Spine", "Hips", (0.0, 1.05, 0.0), 0),
    ("Chest", "Spine", (0.0, 1.20, 0.0), 0),
    ("Neck", "Chest", (0.0, 1.38, -0.01), 0),
    ("Head", "Neck", (0.0, 1.48, 0.0), 0),
    ("CollarTwist", "Chest", (0.0, 1.32, 0.05), 0),
    ("UpperArm_L", "Chest", (0.18, 1.36, 0.0), 1),
    ("SleeveTwist_L", "UpperArm_L", (0.45, 1.36, 0.0), 1),
    ("LowerArm_L", "UpperArm_L", (0.45, 1.36, 0.0), 1),
    ("ForearmTwist_L", "LowerArm_L", (0.57, 1.36, 0.0), 1),
    ("Hand_L", "LowerArm_L", (0.70, 1.36, 0.0), 1),
    ("UpperArm_R", "Chest", (-0.18, 1.36, 0.0), -1),
    ("LowerArm_R", "UpperArm_R", (-0.45, 1.36, 0.0), -1),
    ("Hand_R", "LowerArm_R", (-0.70, 1.36, 0.0), -1),
    ("PadAim_L", "Chest", (0.12, 1.30, 0.06), 0),
    ("ShoulderAim_L", "Chest", (0.16, 1.40, 0.0), 0),
    ("ShoulderTip_L", "ShoulderAim_L", (0.26, 1.40, 0.0), 0),
    ("SubArm_R", "Chest", (-0.15, 1.25, 0.02), 0),
    ("Collar", "Chest", (0.0, 1.34, 0.06), 0),
    ("NeckAim", "Chest", (0.0, 1.36, -0.06), 0),
    ("Still", "Head", (0.0, 1.60, 0.0), 0),
    ("UpperLeg_L", "Hips", (0.09, 0.90, 0.0), 0),
    ("LowerLeg_L", "UpperLeg_L", (0.09, 0.50, 0.0), 0),
    ("Foot_L", "LowerLeg_L", (0.09, 0.08, 0.0), 0),
    ("UpperLeg_R", "Hips", (-0.09, 0.90, 0.0), 0),
    ("LowerLeg_R", "UpperLeg_R", (-0.09, 0.50, 0.0), 0),
    ("Foot_R", "LowerLeg_R", (-0.09, 0.08, 0.0), 0),
    # spring chains (hair and cloth); each hangs from the node before its first joint
    ("Hair_1", "Head", (0.0, 1.58, -0.09), 0),
    ("Hair_2", "Hair_1", (0.0, 1.50, -0.13), 0),
    ("Hair_3", "Hair_2", (0.0, 1.40, -0.14), 0),
    ("Sleeve_L_1", "SleeveTwist_L", (0.46, 1.33, 0.03), 1),
    ("Sleeve_L_2", "Sleeve_L_1", (0.47, 1.27, 0.03), 1),
    ("Sleeve_L_3", "Sleeve_L_2", (0.48, 1.21, 0.03), 1),
    ("Hood_1", "Collar", (0.0, 1.36, -0.10), 0),
    ("Hood_2", "Hood_1", (0.0, 1.30, -0.13), 0),
    ("Hood_3", "Hood_2", (0.0, 1.24, -0.14), 0),
    ("Scarf_1", "NeckAim", (0.03, 1.33, 0.08), 0),
    ("Scarf_2", "Scarf_1", (0.04, 1.25, 0.09), 0),
    ("Scarf_3", "Scarf_2", (0.05, 1.17, 0.09), 0),
]

HUMANOID = {
    "hips": "Hips", "spine": "Spine", "chest": "Chest", "neck": "Neck", "head": "Head",
    "leftUpperArm": "UpperArm_L", "leftLowerArm": "LowerArm_L", "leftHand": "Hand_L",
    "rightUpperArm": "UpperArm_R", "rightLowerArm": "LowerArm_R", "rightHand": "Hand_R",
    "leftUpperLeg": "UpperLeg_L", "leftLowerLeg": "LowerLeg_L", "leftFoot": "Foot_L",
    "rightUpperLeg": "UpperLeg_R", "rightLowerLeg": "LowerLeg_R", "rightFoot": "Foot_R",
}

#: destination -> (kind, source, axis or None, weight)
CONSTRAINTS = {
    "CollarTwist": ("roll", "Collar", "Y", 1.0),
    "SleeveTwist_L": ("roll", "LowerArm_L", "X", 1.0),
    "ForearmTwist_L": ("roll", "Hand_L", "X", 0.5),
    "ShoulderAim_L": ("aim", "LowerArm_L", "PositiveX", 1.0),
    "PadAim_L": ("aim", "ShoulderTip_L", "NegativeY", 1.0),
    "SubArm_R": ("rotation", "UpperArm_R", None, 0.5),
    "Collar": ("rotation", "Neck", None, 0.5),
    "NeckAim": ("aim", "Head", "PositiveZ", 0.7),
    "Still": ("rotation", "Head", None, 0.0),
}

SPRINGS = {"Hair": ("Hair_1", "Hair_2", "Hair_3"), "Sleeve_L": ("Sleeve_L_1", "Sleeve_L_2", "Sleeve_L_3"),
           "Hood": ("Hood_1", "Hood_2", "Hood_3"), "Scarf": ("Scarf_1", "Scarf_2", "Scarf_3")}


def _world_rotations(rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for _name, _parent, _pos, side in _BODY:
        if side:
            # local +X along the arm (world ±X), rolled about it by a per-node angle
            align = np.array([0.0, 0.0, 0.0, 1.0]) if side > 0 else quat_from_axis_angle([0.0, 1.0, 0.0], np.pi)
            roll = quat_from_axis_angle([1.0, 0.0, 0.0], rng.uniform(-np.pi, np.pi))
            out.append(quat_mul(align, roll))
        else:
            axis = rng.normal(size=3)
            out.append(quat_from_axis_angle(axis / np.linalg.norm(axis), rng.uniform(0.2, 1.2)))
    return out


def constrained_avatar_json() -> dict:
    """The test avatar's glTF JSON (no buffers; a fresh dict on every call)."""
    rng = np.random.default_rng(_SEED)
    index = {name: i for i, (name, *_rest) in enumerate(_BODY)}
    world_q = _world_rotations(rng)
    nodes = []
    for i, (name, parent, pos, _side) in enumerate(_BODY):
        if parent is None:
            t, q = np.asarray(pos, float), world_q[i]
        else:
            p = index[parent]
            inv = quat_conj(world_q[p])
            t = vec_transform_quat(np.asarray(pos, float) - np.asarray(_BODY[p][2], float), inv)
            q = quat_normalize(quat_mul(inv, world_q[i]))
        node = {"name": name, "translation": [round(float(v), 12) + 0.0 for v in t],
                "rotation": [float(v) for v in q]}
        kids = [k for k, row in enumerate(_BODY) if row[1] == name]
        if kids:
            node["children"] = kids
        nodes.append(node)
    for dst, (kind, src, axis, weight) in CONSTRAINTS.items():
        body = {"source": index[src], "weight": weight}
        if kind == "roll":
            body["rollAxis"] = axis
        elif kind == "aim":
            body["aimAxis"] = axis
        nodes[index[dst]]["extensions"] = {"VRMC_node_constraint": {"specVersion": "1.0", "constraint": {kind: body}}}
    springs = [{"name": name, "joints": [{"node": index[j], "hitRadius": 0.01, "stiffness": 1.0, "dragForce": 0.4,
                                           "gravityPower": 0.2, "gravityDir": [0.0, -1.0, 0.0]} for j in joints]}
               for name, joints in SPRINGS.items()]
    return {
        "asset": {"version": "2.0", "generator": "swaycam avatars.constraint_avatar"},
        "scene": 0,
        "scenes": [{"name": "constrained", "nodes": [index["Root"]]}],
        "nodes": nodes,
        "extensionsUsed": ["VRMC_vrm", "VRMC_springBone", "VRMC_node_constraint"],
        "extensions": {
            "VRMC_vrm": {
                "specVersion": "1.0",
                "meta": {"name": NAME, "version": "1", "authors": ["swaycam"], "licenseUrl":
                         "https://vrm.dev/licenses/1.0/", "avatarPermission": "everyone",
                         "commercialUsage": "personalNonProfit"},
                "humanoid": {"humanBones": {bone: {"node": index[n]} for bone, n in HUMANOID.items()}},
            },
            "VRMC_springBone": {"specVersion": "1.0", "springs": springs},
        },
    }


def glb_from_json(doc: dict) -> bytes:
    """A GLB container holding ``doc`` as its only (JSON) chunk (glTF 2.0 §4.4)."""
    j = json.dumps(doc, separators=(",", ":")).encode()
    j += b" " * (-len(j) % 4)
    return struct.pack("<4sII", b"glTF", 2, 12 + 8 + len(j)) + struct.pack("<II", len(j), 0x4E4F534A) + j


def build_constrained_avatar() -> bytes:
    """The test avatar as VRM 1.0 GLB bytes (deterministic)."""
    return glb_from_json(constrained_avatar_json())
