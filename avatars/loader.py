"""Load .vrm / .glb / .gltf files into :class:`avatars.model.Avatar` (parse, then build).

The file is parsed by pygltflib (:mod:`avatars.gltf_io`), then one builder per part turns
JSON into plain data: nodes, meshes/skins, materials/images, humanoid, expressions,
springs/colliders, node constraints, meta; VRM 0.x avatars are finally turned to face +Z.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from .constraints import build_constraints
from .contact import EXTRAS_KEY, contact_from_json
from .errors import AvatarError
from .expressions import build_expressions
from .gltf_io import read_document
from .humanoid import build_humanoid
from .lookat import build_look_at
from .materials import build_images, build_materials, build_textures
from .meshes import build_mesh_instances, build_meshes, build_skins
from .meta import build_meta
from .model import Avatar
from .nodes import build_skeleton
from .orientation import turn_to_plus_z
from .springs import build_spring_links, build_springs_0, build_springs_1

log = logging.getLogger(__name__)


def load_avatar(path: str | Path, data: bytes | None = None, *, gate=None) -> Avatar:
    """Load an avatar file.

    Args:
        path: a .vrm (VRM 0.x or 1.0), .glb or .gltf file. The format is detected from the
            content (GLB magic or JSON), not the suffix.
        data: the file's bytes, if already read.
        gate: called between the steps of the load (each image decoded is one), or None: a
            loader on another thread waits there for the render thread's idle time
            (runtime/commands.py ``RenderIdle``).

    Returns:
        An Avatar facing +Z, with ``warnings`` for every optional part that was skipped.

    Raises:
        AvatarError: the file is missing, not glTF, truncated, has bad JSON, an accessor or
            buffer view out of range, a node index that does not exist, a node cycle, a
            spring joint that is not a descendant of the joint before it, NaN/inf in
            transforms. The message names the file and the element.
    """
    step = gate if gate is not None else (lambda: None)
    doc = read_document(path, data)
    step()
    exts = doc.json.get("extensions", {}) or {}
    vrm1 = exts.get("VRMC_vrm")
    vrm0 = exts.get("VRM") if vrm1 is None else None
    if vrm1 is not None and not isinstance(vrm1, dict):
        raise doc.issues.error("extensions.VRMC_vrm", "is not an object")
    if vrm0 is not None and not isinstance(vrm0, dict):
        raise doc.issues.error("extensions.VRM", "is not an object")
    version = "1.0" if vrm1 is not None else ("0.x" if vrm0 is not None else None)
    if vrm1 is not None:
        doc.issues.spec_version("extensions.VRMC_vrm", vrm1)
    if isinstance(exts.get("VRMC_springBone"), dict):
        doc.issues.spec_version("extensions.VRMC_springBone", exts["VRMC_springBone"])

    skeleton = build_skeleton(doc)
    meshes = build_meshes(doc)
    skins = build_skins(doc, skeleton.node_count)
    instances = build_mesh_instances(doc, meshes, skins)
    step()
    images = build_images(doc, gate=step)
    textures = build_textures(doc, len(images))
    materials = build_materials(doc, textures, (vrm0 or {}).get("materialProperties"))
    humanoid = build_humanoid(doc, vrm1, vrm0)
    expressions = build_expressions(doc, vrm1, vrm0, meshes, instances, materials)
    springs, colliders, groups, links = (), (), (), ()
    if "VRMC_springBone" in exts:
        kept: list[int] = []
        springs, colliders, groups = build_springs_1(doc, exts["VRMC_springBone"] or {}, skeleton, kept)
        links = build_spring_links(doc, exts["VRMC_springBone"] or {}, springs, kept)
    elif vrm0 is not None and vrm0.get("secondaryAnimation"):
        springs, colliders, groups = build_springs_0(doc, vrm0["secondaryAnimation"], skeleton)
    step()
    constraints = build_constraints(doc, skeleton, version)
    look_at = build_look_at(doc, vrm1, vrm0)
    if version != "0.x":   # written by swaycam as VRM 1.0 only (a 0.x file would need turning)
        instances = _contacts(doc, instances, skeleton.node_count, len(colliders))

    avatar = Avatar(
        path=str(path), vrm_version=version, meta=build_meta(doc.json, vrm1, vrm0), skeleton=skeleton,
        meshes=meshes, mesh_instances=instances, skins=skins, materials=materials, textures=textures,
        images=images, humanoid=humanoid, expressions=expressions, springs=springs, colliders=colliders, spring_links=links,
        collider_groups=groups, constraints=constraints, look_at=look_at,
    )
    if version == "0.x":
        avatar = turn_to_plus_z(avatar)
    avatar = replace(avatar, warnings=tuple(doc.issues.warnings))
    for w in avatar.warnings:
        log.warning("%s: %s", Path(str(path)).name, w)
    return avatar


def _contacts(doc, instances, node_count: int, collider_count: int):
    """Mesh instances with the per-vertex contact their node's extras carry (swaycam's own
    exports, :mod:`avatars.contact`); a malformed one is skipped with a warning."""
    nodes = doc.json.get("nodes", []) or []
    out = []
    for mi in instances:
        extras = nodes[mi.node].get("extras") if isinstance(nodes[mi.node], dict) else None
        obj = extras.get(EXTRAS_KEY) if isinstance(extras, dict) else None
        if obj is not None:
            try:
                mi = replace(mi, contact=contact_from_json(obj, node_count, collider_count))
            except ValueError as exc:
                doc.issues.warn(f"nodes[{mi.node}].extras.{EXTRAS_KEY}", f"{exc}: skipped")
        out.append(mi)
    return tuple(out)


__all__ = ["load_avatar", "AvatarError"]
