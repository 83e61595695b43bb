"""A summary of a loaded avatar, as a dict (for ``swaycam inspect --json``) and as text.

The count keys are stable: ``springs``, ``joints``, ``colliders``, ``expressions``,
``humanoid_bones``, ``vertices``, ``constraints`` (plus ``meshes``, ``materials``, ``warnings``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .humanoid import HUMAN_BONES, REQUIRED_BONES
from .model import Avatar


def summarize(avatar: Avatar) -> dict:
    """Everything ``swaycam inspect`` reports, JSON-serializable."""
    m = avatar.meta
    meshes = []
    for inst in avatar.mesh_instances:
        mesh = avatar.meshes[inst.mesh]
        meshes.append({
            "node": inst.node, "name": mesh.name, "skinned": inst.skin >= 0, "vertices": mesh.vertex_count,
            "primitives": len(mesh.primitives), "morph_targets": len(mesh.target_names),
        })
    springs = []
    for s in avatar.springs:
        j0 = s.joints[0]
        springs.append({
            "name": s.name, "joints": [int(j.node) for j in s.joints], "segments": s.segment_count,
            "virtual_tail": s.tail_offset is not None, "center": s.center,
            "collider_groups": list(s.collider_groups),
            "stiffness": j0.stiffness, "drag_force": j0.drag_force, "gravity_power": j0.gravity_power,
            "gravity_dir": [round(float(x), 6) for x in j0.gravity_dir], "hit_radius": j0.hit_radius,
        })
    colliders = [
        {"node": c.node, "shape": c.shape, "offset": [round(float(x), 6) for x in c.offset], "radius": c.radius}
        for c in avatar.colliders
    ]
    names = avatar.skeleton.names
    constraints = [
        {"node": c.node, "name": names[c.node], "kind": c.kind, "source": c.source, "source_name": names[c.source],
         "axis": getattr(c, "roll_axis", None) or getattr(c, "aim_axis", None), "weight": c.weight}
        for c in avatar.constraints
    ]
    expressions = {
        name: {"preset": e.preset, "morph_binds": len(e.morph_target_binds),
               "material_color_binds": len(e.material_color_binds),
               "texture_transform_binds": len(e.texture_transform_binds), "is_binary": e.is_binary}
        for name, e in avatar.expressions.items()
    }
    materials = [
        {"name": mat.name, "alpha_mode": mat.alpha_mode, "double_sided": mat.double_sided,
         "unlit": mat.unlit, "mtoon": mat.mtoon is not None,
         "textured": mat.base_color_texture is not None}
        for mat in avatar.materials
    ]
    return {
        "path": avatar.path,
        "format": avatar.format_name,
        "vrm_version": avatar.vrm_version,
        "meta": {
            "name": m.name, "version": m.version, "authors": list(m.authors), "license_name": m.license_name,
            "license_url": m.license_url, "avatar_permission": m.avatar_permission,
            "commercial_usage": m.commercial_usage, "allow_redistribution": m.allow_redistribution,
            "other_license_url": m.other_license_url,
        },
        "nodes": avatar.skeleton.node_count,
        "humanoid_bones": len(avatar.humanoid),
        "humanoid": {
            "bones": dict(sorted(avatar.humanoid.items())),
            "missing_required": [b for b in REQUIRED_BONES if b not in avatar.humanoid],
            "coverage": f"{len(avatar.humanoid)}/{len(HUMAN_BONES)}",
        },
        "meshes": meshes,
        "vertices": int(sum(x["vertices"] for x in meshes)),
        "materials": materials,
        "textures": len(avatar.textures),
        "images": [list(np.shape(i.rgba)[:2]) for i in avatar.images],
        "expressions": len(avatar.expressions),
        "expression_list": expressions,
        "springs": len(avatar.springs),
        "joints": avatar.spring_joint_count(),
        "spring_list": springs,
        "angle_limits": angle_limits(avatar),
        "colliders": len(avatar.colliders),
        "collider_shapes": dict(Counter(c.shape for c in avatar.colliders)),
        "collider_list": colliders,
        "collider_groups": [{"name": g.name, "colliders": list(g.colliders)} for g in avatar.collider_groups],
        "constraints": len(constraints),
        "constraint_list": constraints,
        "warnings": [str(w) for w in avatar.warnings],
        "drivable": avatar.head_node() >= 0,
    }


def angle_limits(avatar) -> list[dict]:
    """Every joint's angle limit as the file gives it (:class:`avatars.model.JointLimit`, the
    VRMC_springBone_limit draft or an ``angleLimit``), and the try-on auto-rig's root-bend cones
    (``max_bend``): [{"spring", "node", "kind", "angle_deg", "yaw_deg", "rotation", "source"}].
    A limit on a spring's last VRM 1.0 joint (no segment) is listed too; it limits nothing."""
    out = []
    for sp in avatar.springs:
        for j in sp.joints:
            if j.limit is not None:
                out.append({"spring": sp.name, "node": int(j.node), **j.limit.as_dict()})
            elif j.max_bend is not None:
                out.append({"spring": sp.name, "node": int(j.node), "kind": "cone",
                            "angle_deg": float(np.degrees(j.max_bend)), "yaw_deg": 0.0,
                            "rotation": [0.0, 0.0, 0.0, 1.0], "source": "fit"})
    return out


def format_summary(s: dict) -> str:
    """Human-readable text of :func:`summarize`'s dict."""
    m = s["meta"]
    lines = [
        f"{s['path']}",
        f"  format      {s['format']}",
        f"  name        {m['name'] or '-'}  (version {m['version'] or '-'})",
        f"  authors     {', '.join(m['authors']) or '-'}",
        f"  license     {m['license_name'] or '-'} {m['license_url']}".rstrip(),
        f"  permission  avatar: {m['avatar_permission'] or '-'}, commercial: {m['commercial_usage'] or '-'}, "
        f"redistribution: {m['allow_redistribution']}",
        f"  nodes       {s['nodes']}",
        f"  humanoid    {s['humanoid']['coverage']} bones"
        + (f"; missing required: {', '.join(s['humanoid']['missing_required'])}" if s["humanoid"]["missing_required"] else ""),
        f"  meshes      {len(s['meshes'])} drawn, {s['vertices']} vertices",
    ]
    for mesh in s["meshes"]:
        lines.append(f"    node {mesh['node']:>3} {mesh['name']:<24} {mesh['vertices']:>7} verts, "
                     f"{mesh['morph_targets']} morphs{', skinned' if mesh['skinned'] else ''}")
    lines.append(f"  materials   {len(s['materials'])}")
    for mat in s["materials"]:
        flags = [mat["alpha_mode"]] + [k for k in ("double_sided", "unlit", "mtoon", "textured") if mat[k]]
        lines.append(f"    {mat['name']:<28} {' '.join(flags)}")
    lines.append(f"  expressions {s['expressions']}: {', '.join(s['expression_list'])}")
    lines.append(f"  springs     {s['springs']} chains, {s['joints']} joints")
    for sp in s["spring_list"]:
        lines.append(
            f"    {sp['name']:<32} joints {sp['joints']}{' +tail' if sp['virtual_tail'] else ''} "
            f"stiffness {sp['stiffness']:g} drag {sp['drag_force']:g} gravity {sp['gravity_power']:g} "
            f"hitRadius {sp['hit_radius']:g} groups {sp['collider_groups']}")
    lines.append(f"  angle limits {len(s['angle_limits'])}")
    for a in s["angle_limits"]:
        yaw = f" yaw {a['yaw_deg']:.3g}°" if a["kind"] == "spherical" else ""
        lines.append(f"    {a['spring']:<32} joint node {a['node']:>3} {a['kind']:<9} {a['angle_deg']:.3g}°{yaw} "
                     f"({a['source']})")
    shapes = ", ".join(f"{n} {k}" for k, n in s["collider_shapes"].items()) or "none"
    lines.append(f"  colliders   {s['colliders']} ({shapes}) in {len(s['collider_groups'])} groups")
    for c in s["collider_list"]:
        lines.append(f"    node {c['node']:>3} {c['shape']:<14} offset {c['offset']} radius {c['radius']:g}")
    lines.append(f"  constraints {s['constraints']} (VRMC_node_constraint, in evaluation order)")
    for c in s["constraint_list"]:
        axis = f" {c['axis']}" if c["axis"] else ""
        lines.append(f"    node {c['node']:>3} {c['name'] or '-':<24} {c['kind']}{axis} from node {c['source']} "
                     f"({c['source_name'] or '-'}) weight {c['weight']:g}")
    if not s["drivable"]:
        lines.append("  note        no humanoid head bone: swaycam can show this file but not drive its head")
    lines.append(f"  warnings    {len(s['warnings'])}")
    lines.extend(f"    {w}" for w in s["warnings"])
    return "\n".join(lines)
