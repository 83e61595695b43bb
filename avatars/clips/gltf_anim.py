"""glTF / GLB skinned humanoid animations -> :class:`Clip` (one per glTF animation).

The skeleton is the file's node tree; its humanoid bones come from, in order: a VRM
humanoid in the file (``VRMC_vrm`` or VRM 0.x ``VRM`` extension), a bone map
(``bone_map=``, or ``CLIP.bonemap.json`` beside the file), or the naming convention
detected on the node names (:mod:`avatars.clips.bonemap`: Rigify ``DEF-*``, Mixamo, VRM,
VRoid, Unity ``HumanBodyBones``). The rest pose is the node transforms; when the file has a
skin whose inverse bind matrices give another pose for the humanoid bones (more than
1 mm or 0.01 rad apart), the bind pose is the rest (it is what the mesh was made in) and a
note says so. A VRM 0.x file faces −Z and is turned like the avatars (via the orientation
fix of :mod:`avatars.clips.build`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..accessors import read_matrices
from ..errors import did_you_mean
from ..gltf_io import read_document
from ..humanoid import build_humanoid
from ..math3d import mat_decompose, quat_normalize
from ..nodes import build_skeleton
from .bonemap import detect_bone_map, read_bone_map, sidecar_bone_map
from .build import build_clip, key_rate
from .channels import read_animation
from .model import Clip, ClipError

#: Bind pose and node rest pose differ when a humanoid joint is this far apart (m, rad).
BIND_POSITION_TOL = 1e-3
BIND_ROTATION_TOL = 1e-2


def _bind_rest(doc, skeleton, bones: dict[str, int]):
    """Rest local TRS from the first skin's inverse bind matrices, when they disagree with the
    node transforms for a humanoid joint; else None."""
    skins = doc.json.get("skins") or []
    if not skins or skins[0].get("inverseBindMatrices") is None:
        return None
    skin = skins[0]
    joints = [j for j in skin.get("joints") or [] if isinstance(j, int) and 0 <= j < skeleton.node_count]
    if len(joints) != len(skin.get("joints") or []):
        return None
    ibm = read_matrices(doc, skin["inverseBindMatrices"], "skins[0].inverseBindMatrices")
    if len(ibm) != len(joints):
        return None
    mesh_nodes = [i for i, nd in enumerate(doc.json.get("nodes") or []) if nd.get("skin") == 0]
    base = skeleton.rest_world[mesh_nodes[0]] if mesh_nodes else np.eye(4)
    bind_world = {j: base @ np.linalg.inv(m) for j, m in zip(joints, ibm)}
    rest_world = skeleton.rest_world
    differs = False
    for n in bones.values():
        if n in bind_world:
            a, b = bind_world[n], rest_world[n]
            if np.abs(a[:3, 3] - b[:3, 3]).max() > BIND_POSITION_TOL or np.abs(a[:3, :3] - b[:3, :3]).max() > BIND_ROTATION_TOL:
                differs = True
    if not differs:
        return None
    world = rest_world.copy()
    for j, m in bind_world.items():
        world[j] = m
    local = world.copy()
    for i in range(skeleton.node_count):
        p = int(skeleton.parents[i])
        if p >= 0:
            local[i] = np.linalg.inv(world[p]) @ world[i]
    t, r, s = mat_decompose(local)
    return t, quat_normalize(r), s


def animation_names(path: str | Path, data: bytes | None = None) -> list[str]:
    """The names of the file's animations, in order ("" where unnamed)."""
    doc = read_document(path, data)
    return [str(a.get("name") or "") for a in doc.json.get("animations") or []]


def _rest_positions(skeleton) -> np.ndarray:
    """(N, 3) world positions of the nodes' own rest transforms."""
    from .channels import world_pose

    _, pos = world_pose(skeleton, np.asarray(skeleton.rest_translation)[None],
                        np.asarray(skeleton.rest_rotation)[None], np.asarray(skeleton.rest_scale)[None])
    return pos[0]


def load_gltf_clips(path: str | Path, data: bytes | None = None, *, names: list[str] | None = None,
                    bone_map: str | Path | dict | None = None, doc=None) -> list[Clip]:
    """The file's animations as clips (all, or those named in ``names``, in that order).

    Args:
        bone_map: {VRM bone: node name}, or a JSON/TOML map file; None: the sidecar map or detection.
        doc: the file already parsed (:func:`avatars.gltf_io.read_document`).

    Raises:
        ClipError: no animation, a name that is not in the file (the message lists them), no
            humanoid-looking skeleton, a broken channel (see :mod:`avatars.clips.channels`).
    """
    src = str(path)
    doc = doc if doc is not None else read_document(path, data)
    skeleton = build_skeleton(doc)
    anims = doc.json.get("animations") or []
    if not anims:
        raise ClipError(src, "animations", "no animation in the file")
    exts = doc.json.get("extensions") or {}
    notes = []
    file_map = None
    if isinstance(bone_map, dict):
        file_map = bone_map
    elif bone_map is not None:
        file_map = read_bone_map(bone_map)
        notes.append(f"bone map {bone_map}")
    elif (side := sidecar_bone_map(path)) is not None:
        file_map = read_bone_map(side)
        notes.append(f"bone map {side.name}")
    vrm1, vrm0 = exts.get("VRMC_vrm"), exts.get("VRM")
    if file_map is None and (isinstance(vrm1, dict) or isinstance(vrm0, dict)):
        bones = build_humanoid(doc, vrm1 if isinstance(vrm1, dict) else None,
                               vrm0 if isinstance(vrm0, dict) and not isinstance(vrm1, dict) else None)
        bmap = detect_bone_map(list(skeleton.names), file_map={b: skeleton.names[n] for b, n in bones.items()},
                               source=src)
        convention = "vrm-humanoid"
    else:
        bmap = detect_bone_map(list(skeleton.names), file_map=file_map, source=src,
                               shape=(list(skeleton.names), skeleton.parents, _rest_positions(skeleton)))
        convention = bmap.convention
    if convention == "topology":
        notes.append("bones by the skeleton's topology and rest pose")
    else:
        notes.append(f"bones by {convention} naming" if convention not in ("file", "vrm-humanoid")
                     else f"bones by {'the bone map' if convention == 'file' else 'the VRM humanoid'}")
    rest = _bind_rest(doc, skeleton, bmap.bones)
    if rest is not None:
        notes.append("rest pose from the skin's inverse bind matrices (the node transforms are posed)")
    all_names = [str(a.get("name") or "") for a in anims]
    if names is None:
        picks = list(range(len(anims)))
    else:
        picks = []
        for nm in names:
            if nm not in all_names:
                raise ClipError(src, "animations", f"no animation named {nm!r} (the file has: "
                                f"{', '.join(repr(x) for x in all_names)})" + did_you_mean(nm, all_names))
            picks.append(all_names.index(nm))
    stem = Path(src).stem
    clips = []
    for a in picks:
        na = read_animation(doc, a, skeleton)
        clip_notes = list(notes)
        if na.step:
            clip_notes.append("STEP keys held with extra keys")
        if na.cubic:
            clip_notes.append("CUBICSPLINE channels evaluated at 60 keys/s")
        clips.append(build_clip(
            name=na.name or (stem if len(anims) == 1 else f"{stem}_{a}"), source=src, skeleton=skeleton,
            bones=bmap.bones, times=na.times, translation=na.translation, rotation=na.rotation, scale=na.scale,
            rest=rest, animated_rotation={k for k, v in na.animated.items() if "rotation" in v},
            frame_rate=key_rate(na.times), notes=clip_notes))
    return clips
