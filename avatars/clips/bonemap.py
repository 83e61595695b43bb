"""Skeleton naming conventions -> VRM 1.0 humanoid bone names, and bone-map files.

A glTF or BVH clip names its joints the way its tool does. :func:`detect_bone_map` tries
every known convention on the joint names and keeps the one that maps the most bones:

- ``vrm``: VRM 1.0 bone names as node names (``hips``, ``leftUpperArm``: lowerCamel);
- ``unity``: Unity ``HumanBodyBones`` (``Hips``, ``LeftUpperArm``, ``LeftThumbProximal``...:
  UpperCamel; Unity's thumb Proximal/Intermediate/Distal are VRM 1.0's
  Metacarpal/Proximal/Distal);
- ``vroid``: VRoid's ``J_Bip_C_Hips``, ``J_Bip_L_UpperArm``, ``J_Bip_L_Index1``...;
- ``mixamo``: ``mixamorig:Hips``, ``LeftArm``, ``LeftForeArm``, ``LeftUpLeg``, ``Spine1``...
  (any ``prefix:`` or none: Mixamo-style BVH files use the bare names);
- ``cmu``: CMU motion-capture BVH (``LowerBack``, ``Spine``, ``Spine1``, ``LThumb``...);
- ``rigify``: Blender Rigify deform bones (``DEF-spine.001``, ``DEF-upper_arm.L``,
  ``DEF-f_index.01.L``; ``DEF-hips``/``DEF-neck``/``DEF-head`` or the stock
  ``DEF-spine``/``DEF-spine.004``/``DEF-spine.006``).

A whole convention is the strongest hint: when one gives a humanoid-looking skeleton its
map is kept. Any other skeleton (Unreal's ``pelvis, thigh_l``, a CMU conversion's
``LHipJoint, LeftHip, LeftKnee``, a Blender metarig's ``upper_arm.L``...) is mapped by its
topology and rest pose with names as hints (:mod:`avatars.clips.topology`) when the loader
hands :func:`detect_bone_map` the skeleton's parents and rest positions.

A map file (:func:`read_bone_map`) overrides both: JSON or TOML, ``{"hips": "pelvis",
"leftUpperArm": "upperarm_l", ...}`` (VRM 1.0 bone name -> joint name). A clip
``Walk.glb`` picks up ``Walk.bonemap.json`` (or ``.toml``) beside it by itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import tomllib

from ..humanoid import HUMAN_BONES, REQUIRED_BONES, vrm0_bone_name
from .model import ClipError

_SIDES = (("left", "Left", "L", "l"), ("right", "Right", "R", "r"))
_FINGERS = ("Thumb", "Index", "Middle", "Ring", "Little")
_VRM_SEGS = {"Thumb": ("Metacarpal", "Proximal", "Distal")}
_SEGS = ("Proximal", "Intermediate", "Distal")


def _finger_segs(f: str) -> tuple[str, str, str]:
    return _VRM_SEGS.get(f, _SEGS)


def _vrm() -> dict[str, str]:
    return {b: b for b in HUMAN_BONES}


def _unity() -> dict[str, str]:
    out = {}
    for b in HUMAN_BONES:
        out[b[0].upper() + b[1:]] = b
    # Unity (and VRM 0.x) thumbs are one segment up
    for side, cap, *_ in _SIDES:
        out[f"{cap}ThumbProximal"] = f"{side}ThumbMetacarpal"
        out[f"{cap}ThumbIntermediate"] = f"{side}ThumbProximal"
        out[f"{cap}ThumbDistal"] = f"{side}ThumbDistal"
    return out


def _vroid() -> dict[str, str]:
    out = {f"j_bip_c_{k.lower()}": k for k in ("hips", "spine", "chest", "neck", "head")}
    out["j_bip_c_upperchest"] = "upperChest"
    for side, _cap, s, _l in _SIDES:
        for part, bone in (("Shoulder", "Shoulder"), ("UpperArm", "UpperArm"), ("LowerArm", "LowerArm"),
                           ("Hand", "Hand"), ("UpperLeg", "UpperLeg"), ("LowerLeg", "LowerLeg"),
                           ("Foot", "Foot"), ("ToeBase", "Toes")):
            out[f"j_bip_{s}_{part}".lower()] = f"{side}{bone}"
        for f in _FINGERS:
            for i, seg in enumerate(_finger_segs(f), start=1):
                out[f"j_bip_{s}_{f}{i}".lower()] = f"{side}{f}{seg}"
    out["j_adj_l_faceeye"] = "leftEye"
    out["j_adj_r_faceeye"] = "rightEye"
    return out


def _mixamo(cmu: bool = False) -> dict[str, str]:
    out = {"hips": "hips", "neck": "neck", "head": "head"}
    if cmu:
        out.update({"lowerback": "spine", "spine": "chest", "spine1": "upperChest"})
    else:
        out.update({"spine": "spine", "spine1": "chest", "spine2": "upperChest"})
    for side, cap, _s, _l in _SIDES:
        for part, bone in (("Shoulder", "Shoulder"), ("Arm", "UpperArm"), ("ForeArm", "LowerArm"),
                           ("Hand", "Hand"), ("UpLeg", "UpperLeg"), ("Leg", "LowerLeg"), ("Foot", "Foot"),
                           ("ToeBase", "Toes")):
            out[f"{cap}{part}".lower()] = f"{side}{bone}"
        for f, mf in zip(_FINGERS, ("Thumb", "Index", "Middle", "Ring", "Pinky")):
            for i, seg in enumerate(_finger_segs(f), start=1):
                out[f"{cap}Hand{mf}{i}".lower()] = f"{side}{f}{seg}"
        if cmu:
            # CMU hands: LeftHand -> LeftFingerBase -> LeftHandIndex1, LeftHand -> LThumb
            out[f"{cap[0]}Thumb".lower()] = f"{side}ThumbProximal"
            out[f"{cap}HandIndex1".lower()] = f"{side}IndexProximal"
    return out


def _rigify() -> dict[str, str]:
    out = {"def-hips": "hips", "def-neck": "neck", "def-head": "head",
           "def-spine.001": "spine", "def-spine.002": "chest", "def-spine.003": "upperChest"}
    for side, _cap, s, _l in _SIDES:
        for part, bone in (("shoulder", "Shoulder"), ("upper_arm", "UpperArm"), ("forearm", "LowerArm"),
                           ("hand", "Hand"), ("thigh", "UpperLeg"), ("shin", "LowerLeg"), ("foot", "Foot"),
                           ("toe", "Toes")):
            out[f"def-{part}.{s}".lower()] = f"{side}{bone}"
        for f, rf in zip(_FINGERS, ("thumb", "f_index", "f_middle", "f_ring", "f_pinky")):
            for i, seg in enumerate(_finger_segs(f), start=1):
                out[f"def-{rf}.0{i}.{s}".lower()] = f"{side}{f}{seg}"
    return out


def _rigify_stock() -> dict[str, str]:
    """Rigify's stock metarig: DEF-spine is the hips, .004/.005 the neck, .006 the head."""
    out = _rigify()
    for k in ("def-hips", "def-neck", "def-head"):
        del out[k]
    out.update({"def-spine": "hips", "def-spine.004": "neck", "def-spine.006": "head"})
    return out


#: {convention: {lower-case joint name (prefix stripped): VRM 1.0 bone}}
CONVENTIONS: dict[str, dict[str, str]] = {
    "vrm": _vrm(), "unity": _unity(), "vroid": _vroid(), "mixamo": _mixamo(), "cmu": _mixamo(cmu=True),
    "rigify": _rigify(), "rigify-stock": _rigify_stock(),
}
#: Conventions whose names may carry a ``prefix:`` (Mixamo's ``mixamorig:``, Maya namespaces).
_PREFIXED = {"mixamo", "cmu", "unity", "vrm"}
#: Conventions told apart by case alone (VRM's lowerCamel ``leftThumbProximal`` is Unity's
#: ``LeftThumbIntermediate``): matched case-sensitively.
_CASED = {"vrm", "unity"}


@dataclass(frozen=True)
class BoneMap:
    """Which joint drives which humanoid bone.

    Attributes:
        bones: {VRM 1.0 bone name: joint index in the source skeleton}.
        convention: the naming convention detected, or ``"file"`` / ``"vrm-humanoid"``.
        missing_required: VRM's required bones the map lacks (reported by ``swaycam inspect``).
    """

    bones: dict[str, int]
    convention: str
    missing_required: tuple[str, ...]


def _key(name: str, prefixed: bool, cased: bool = False) -> str:
    n = name.strip()
    if prefixed and ":" in n:
        n = n.rsplit(":", 1)[1]
    if prefixed and "|" in n:
        n = n.rsplit("|", 1)[1]
    return n if cased else n.lower()


def _map_with(names: list[str], table: dict[str, str], prefixed: bool, cased: bool = False) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, n in enumerate(names):
        b = table.get(_key(n, prefixed, cased))
        if b is not None and b not in out:
            out[b] = i
    return out


def looks_humanoid(bones: dict[str, int]) -> bool:
    """Hips, head and at least two whole limbs (upper, lower, hand/foot)."""
    limbs = sum(all(f"{side}{p}" in bones for p in parts)
                for side in ("left", "right")
                for parts in (("UpperArm", "LowerArm", "Hand"), ("UpperLeg", "LowerLeg", "Foot")))
    return "hips" in bones and "head" in bones and limbs >= 2


def detect_bone_map(names: list[str], *, file_map: dict[str, str] | None = None, source: str = "",
                    element: str = "nodes", shape=None) -> BoneMap:
    """Map joint ``names`` (index = joint) to humanoid bones (module doc).

    Args:
        names: the source skeleton's joint names.
        file_map: {bone: joint name} from a map file; wins over detection when given.
        source, element: for error messages.
        shape: ``(names, parents (J,), rest world positions (J, 3))`` of the skeleton, for the
            topology mapping when no naming convention fits (None: names only). Its names may
            differ from ``names`` (a BVH's end sites keep theirs, as hints).

    Raises:
        ClipError: no convention gives a humanoid-looking skeleton (hips, head, two whole
            limbs), or a map file names a joint that does not exist or an unknown bone.
    """
    if file_map is not None:
        index = {n: i for i, n in enumerate(names)}
        bones = {}
        for bone, joint in file_map.items():
            b = vrm0_bone_name(bone) if bone not in HUMAN_BONES else bone
            if b not in HUMAN_BONES:
                raise ClipError(source, "bone map", f"{bone!r} is not a VRM humanoid bone name")
            if joint not in index:
                raise ClipError(source, "bone map", f"{bone}: joint {joint!r} is not in {element}")
            bones[b] = index[joint]
        convention = "file"
    else:
        best, convention = {}, ""
        for conv, table in CONVENTIONS.items():
            m = _map_with(names, table, conv in _PREFIXED, conv in _CASED)
            if conv == "mixamo" and any(_key(n, True) == "lowerback" for n in names):
                continue        # a CMU skeleton: "Spine" is its chest
            if len(m) > len(best):
                best, convention = m, conv
        bones = best
        if not looks_humanoid(bones) and shape is not None:
            from .topology import topology_bone_map

            topo = topology_bone_map(*shape)
            if looks_humanoid(topo):
                bones, convention = topo, "topology"
    if not looks_humanoid(bones):
        found = ", ".join(sorted(bones)) or "none"
        raise ClipError(source, element, f"no humanoid-looking skeleton (need hips, head and two whole limbs; "
                        f"bones recognised: {found}); joint names: {', '.join(names[:12])}"
                        f"{'...' if len(names) > 12 else ''}; write a bone map (avatars.clips.bonemap)")
    missing = tuple(b for b in REQUIRED_BONES if b not in bones)
    return BoneMap(bones=bones, convention=convention, missing_required=missing)


def read_bone_map(path: str | Path) -> dict[str, str]:
    """A map file -> {VRM bone name: joint name}. JSON or TOML (by suffix), one flat table.

    Raises:
        ClipError: unreadable, not JSON/TOML, not a flat table of strings.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClipError(p, "", f"cannot read the bone map ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(text) if p.suffix.lower() == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ClipError(p, "", f"not a bone map ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ClipError(p, "", "a bone map is one flat table {\"hips\": \"joint name\", ...}")
    return data


def sidecar_bone_map(clip_path: str | Path) -> Path | None:
    """``CLIP.bonemap.json`` / ``CLIP.bonemap.toml`` beside ``clip_path``, when one exists."""
    p = Path(clip_path)
    stem = re.sub(r"\.(glb|gltf|bvh|vrma)$", "", p.name, flags=re.IGNORECASE)
    for suffix in (".bonemap.json", ".bonemap.toml"):
        cand = p.with_name(stem + suffix)
        if cand.is_file():
            return cand
    return None
