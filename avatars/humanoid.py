"""VRM humanoid bones (VRMC_vrm-1.0 humanoid; VRM 0.x ``humanoid.humanBones``) -> one map.

VRM 0.x thumb names are shifted in 1.0: 0.x ThumbProximal/Intermediate/Distal become
1.0 ThumbMetacarpal/Proximal/Distal (VRMC_vrm-1.0 humanoid.md, "changes from 0.x").
"""

from __future__ import annotations

from .gltf_io import GltfDocument
from .nodes import check_node

_TORSO = ["hips", "spine", "chest", "upperChest", "neck", "head", "leftEye", "rightEye", "jaw"]
_LIMBS = [
    f"{side}{part}"
    for side in ("left", "right")
    for part in ("UpperLeg", "LowerLeg", "Foot", "Toes", "Shoulder", "UpperArm", "LowerArm", "Hand")
]
_FINGERS = [
    f"{side}{finger}{seg}"
    for side in ("left", "right")
    for finger, segs in (
        ("Thumb", ("Metacarpal", "Proximal", "Distal")),
        ("Index", ("Proximal", "Intermediate", "Distal")),
        ("Middle", ("Proximal", "Intermediate", "Distal")),
        ("Ring", ("Proximal", "Intermediate", "Distal")),
        ("Little", ("Proximal", "Intermediate", "Distal")),
    )
    for seg in segs
]
#: The 55 VRM 1.0 humanoid bone names.
HUMAN_BONES: tuple[str, ...] = tuple(_TORSO + _LIMBS + _FINGERS)
#: Bones VRM 1.0 requires.
REQUIRED_BONES: tuple[str, ...] = (
    "hips", "spine", "head",
    "leftUpperLeg", "leftLowerLeg", "leftFoot", "rightUpperLeg", "rightLowerLeg", "rightFoot",
    "leftUpperArm", "leftLowerArm", "leftHand", "rightUpperArm", "rightLowerArm", "rightHand",
)


def vrm0_bone_name(name: str) -> str:
    """Map a VRM 0.x humanoid bone name to its VRM 1.0 name."""
    for side in ("left", "right"):
        if name == f"{side}ThumbProximal":
            return f"{side}ThumbMetacarpal"
        if name == f"{side}ThumbIntermediate":
            return f"{side}ThumbProximal"
    return name


def build_humanoid(doc: GltfDocument, vrm1: dict | None, vrm0: dict | None) -> dict[str, int]:
    """VRM 1.0 bone name -> node index. Unknown bone names and broken node indices warn."""
    bones: dict[str, int] = {}
    if vrm1 is not None:
        entries = ((vrm1.get("humanoid") or {}).get("humanBones") or {}).items()
        base = "VRMC_vrm.humanoid.humanBones"
        items = [(name, (v or {}).get("node"), f"{base}.{name}") for name, v in entries]
    elif vrm0 is not None:
        base = "VRM.humanoid.humanBones"
        items = [
            (vrm0_bone_name(str(b.get("bone"))), b.get("node"), f"{base}[{i}]")
            for i, b in enumerate((vrm0.get("humanoid") or {}).get("humanBones") or [])
        ]
    else:
        return bones
    for name, node, elem in items:
        if name not in HUMAN_BONES:
            doc.issues.warn(elem, f"unknown humanoid bone {name!r}; skipped")
            continue
        n = check_node(doc, node, f"{elem}.node", optional=True)
        if n is not None:
            if name in bones:
                doc.issues.warn(elem, f"bone {name!r} assigned twice; first kept")
                continue
            bones[name] = n
    missing = [b for b in REQUIRED_BONES if b not in bones]
    if missing:
        doc.issues.warn("humanoid", f"required bones missing: {', '.join(missing)}")
    return bones
