"""VRM Animation (``.vrma``, ``VRMC_vrm_animation`` 1.0) -> :class:`Clip`.

The extension (VRMC_vrm_animation-1.0 README and schema) is a glTF whose root extension
names the humanoid bones (``humanoid.humanBones.<bone>.node``), optional expression proxy
nodes (``expressions.preset|custom.<name>.node``: the weight is the node's translation x,
clamped to [0, 1]) and a lookAt proxy node (``lookAt.node``: its rotation); the glTF
animations move those nodes. The humanoid's rest pose is the file's node transforms: a
T-pose facing +Z with the character's left at +X (the VRM 1.0 convention). Only hips may
carry translation; other bones' translation tracks are ignored with a note.

``specVersion`` must be "1.0"; files without it (UniGLTF exports before it was required)
load with a note, as does any other version (read as 1.0).

Refused (ClipError, naming the file and element): no ``VRMC_vrm_animation`` extension, a
humanoid without a hips (or head) bone or with a node that does not exist, channels with
NaN/inf, a clip shorter than one frame. An animation that does not move the hips (pixiv's
``test.vrma`` moves one arm, an expression and the lookAt) plays with a note.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..gltf_io import read_document
from ..humanoid import HUMAN_BONES
from ..nodes import build_skeleton
from .build import build_clip, key_rate
from .channels import read_animation
from .model import Clip, ClipError

EXTENSION = "VRMC_vrm_animation"
SPEC_VERSION = "1.0"


def load_vrma(path: str | Path, data: bytes | None = None, *, doc=None, animate_helpers: bool = True) -> list[Clip]:
    """Every animation of a ``.vrma`` file as a clip (usually one); ``doc``: the file already
    parsed (:func:`avatars.gltf_io.read_document`). ``animate_helpers``: nodes between
    humanoid bones (``torso_1`` between hips and spine in pixiv's ``idle_loop.vrma``) move
    with their tracks, as the file's own pose has them (the world-space truth); False holds
    them at rest, which is what three-vrm-animation plays (it reads humanoid tracks only).
    Raises ClipError (module doc)."""
    doc = doc if doc is not None else read_document(path, data)
    src = str(path)
    ext = (doc.json.get("extensions") or {}).get(EXTENSION)
    if not isinstance(ext, dict):
        raise ClipError(src, "extensions", f"no {EXTENSION} extension: not a VRM animation "
                        "(play glTF animations of other skeletons as .glb/.gltf)")
    notes = []
    spec = ext.get("specVersion")
    if spec is None:
        notes.append(f"{EXTENSION} has no specVersion (an export from before it was required): read as "
                     f"{SPEC_VERSION}")
    elif spec != SPEC_VERSION:
        notes.append(f"{EXTENSION} specVersion {spec!r} is not {SPEC_VERSION!r}: read as {SPEC_VERSION}")
    skeleton = build_skeleton(doc)
    n = skeleton.node_count
    human = ((ext.get("humanoid") or {}).get("humanBones")) or {}
    if not isinstance(human, dict):
        raise ClipError(src, f"extensions.{EXTENSION}.humanoid.humanBones", "is not an object")
    bones: dict[str, int] = {}
    for name, entry in human.items():
        elem = f"extensions.{EXTENSION}.humanoid.humanBones.{name}"
        if name not in HUMAN_BONES:
            notes.append(f"{elem}: unknown bone {name!r} skipped")
            continue
        node = (entry or {}).get("node") if isinstance(entry, dict) else None
        if not isinstance(node, int) or isinstance(node, bool) or not 0 <= node < n:
            raise ClipError(src, f"{elem}.node", f"node {node!r} does not exist ({n} nodes)")
        bones[name] = node
    if "hips" not in bones:
        raise ClipError(src, f"extensions.{EXTENSION}.humanoid.humanBones", "has no hips bone")
    if "head" not in bones:
        raise ClipError(src, f"extensions.{EXTENSION}.humanoid.humanBones", "has no head bone")
    expr_nodes: dict[int, str] = {}
    for kind in ("preset", "custom"):
        for name, entry in ((ext.get("expressions") or {}).get(kind) or {}).items():
            node = (entry or {}).get("node") if isinstance(entry, dict) else None
            if isinstance(node, int) and 0 <= node < n:
                expr_nodes[node] = name
            else:
                notes.append(f"expressions.{kind}.{name}: node {node!r} does not exist; skipped")
    look = (ext.get("lookAt") or {}).get("node")
    look = look if isinstance(look, int) and 0 <= look < n else None
    anims = doc.json.get("animations") or []
    if not anims:
        raise ClipError(src, "animations", "no animation in the file")
    clips = []
    stem = Path(src).stem
    for a in range(len(anims)):
        na = read_animation(doc, a, skeleton)
        elem = f"animations[{a}]"
        hips = bones["hips"]
        clip_notes = list(notes)
        if not animate_helpers:
            humanoid_nodes = set(bones.values())
            for node in list(na.animated):
                if node not in humanoid_nodes:
                    na.translation[:, node] = skeleton.rest_translation[node]
                    na.rotation[:, node] = skeleton.rest_rotation[node]
        if not na.animated.get(hips):
            clip_notes.append(f"{elem}: no hips track: the hips stay at rest")
        for b, node in bones.items():
            if b != "hips" and "translation" in na.animated.get(node, ()):
                clip_notes.append(f"{elem}: translation track of {b} ignored (only hips may move)")
                na.translation[:, node] = skeleton.rest_translation[node]
        expressions = {name: np.clip(na.translation[:, node, 0], 0.0, 1.0) for node, name in expr_nodes.items()
                       if "translation" in na.animated.get(node, ())}
        look_at = na.rotation[:, look].copy() if look is not None and "rotation" in na.animated.get(look, ()) \
            else None
        if na.step:
            clip_notes.append("STEP keys held with extra keys")
        if na.cubic:
            clip_notes.append("CUBICSPLINE channels evaluated at 60 keys/s")
        proxies = set(expr_nodes) | ({look} if look is not None else set())
        name = na.name or (stem if len(anims) == 1 else f"{stem}_{a}")
        clips.append(build_clip(
            name=name, source=src, skeleton=skeleton, bones=bones, times=na.times, translation=na.translation,
            rotation=na.rotation, scale=na.scale,
            animated_rotation={k for k, v in na.animated.items() if "rotation" in v and k not in proxies},
            frame_rate=key_rate(na.times), notes=clip_notes, expressions=expressions, look_at=look_at))
    return clips
