"""Write any loaded :class:`Avatar` as a VRM 1.0 GLB (the try-on's export, docs/design.md §9).

VRM 0.x inputs are written as VRM 1.0: the loader has already turned them to face +Z and
mapped their humanoid, expressions, MToon materials and springs to VRM 1.0 terms; what a
1.0 file cannot hold is converted first by :func:`to_vrm1` — a 0.x virtual leaf tail (7 cm
along the last bone) becomes a real node at that offset, the chain's next joint. The
in-memory avatar that :func:`to_vrm1` returns and the file :func:`write_vrm1` writes load
to the same skeleton, springs and colliders bit for bit (node TRS are written as JSON
floats, which round-trip exactly; quaternions are kept at a fixed point of the loader's
normalisation), so the hair solver runs identically on both.

Layout: one GLB buffer, 4-byte aligned views (:class:`avatars.generate.writer.GlbWriter`);
vertex attributes float32, JOINTS_0 uint16, indices uint16/uint32, inverse bind matrices
float32, images re-encoded as PNG (lossless), one glTF sampler per distinct sampler.
Extensions: VRMC_vrm (meta, humanoid, expressions), VRMC_springBone (colliders, groups,
springs; inside/plane shapes through VRMC_springBone_extended_collider),
VRMC_materials_mtoon, KHR_materials_unlit, KHR_texture_transform.
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import numpy as np
import pygltflib as g
from PIL import Image as PILImage

from .contact import EXTRAS_KEY, contact_to_json
from .generate.writer import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, FLOAT, UINT, USHORT, GlbWriter
from .model import Avatar, Collider, Material, Spring, SpringJoint, TextureRef
from .skeleton import Skeleton
from .math3d import quat_normalize

#: VRM 1.0 avatarPermission / commercialUsage for VRM 0.x meta values.
_PERMISSION = {"OnlyAuthor": "onlyAuthor", "ExplicitlyLicensedPerson": "onlySeparatelyLicensedPerson",
               "Everyone": "everyone"}
_COMMERCIAL = {"Disallow": "personalNonProfit", "Allow": "personalProfit"}
VRM_LICENSE = "https://vrm.dev/licenses/1.0/"


def _stable_quats(q: np.ndarray) -> np.ndarray:
    """Quaternions at a fixed point of :func:`quat_normalize` (normalised until the bits stop
    changing), so that writing and re-loading them gives the same values."""
    q = np.asarray(q, np.float64)
    for _ in range(8):
        n = quat_normalize(q)
        if np.array_equal(n, q):
            break
        q = n
    return q


def to_vrm1(avatar: Avatar) -> Avatar:
    """``avatar`` as a VRM 1.0 file holds it (module doc): virtual tails become nodes,
    rotations are stabilised, ``vrm_version`` is "1.0". No-op parts are left as they are."""
    sk = avatar.skeleton
    names = list(sk.names)
    parents = list(sk.parents)
    trans = [t for t in sk.rest_translation]
    springs = []
    added = 0
    for s in avatar.springs:
        if s.tail_offset is None:
            springs.append(s)
            continue
        last = s.joints[-1]
        names.append(f"{names[last.node] or 'joint'}_tail")
        parents.append(last.node)
        trans.append(np.asarray(s.tail_offset, np.float64))
        tail = SpringJoint(node=len(names) - 1, hit_radius=last.hit_radius, stiffness=last.stiffness,
                           drag_force=last.drag_force, gravity_power=last.gravity_power,
                           gravity_dir=np.asarray(last.gravity_dir, np.float64).copy())
        springs.append(replace(s, joints=s.joints + (tail,), tail_offset=None))
        added += 1
    rot = _stable_quats(np.concatenate([sk.rest_rotation, np.tile([0.0, 0.0, 0.0, 1.0], (added, 1))]))
    scale = np.concatenate([sk.rest_scale, np.ones((added, 3))])
    skeleton = Skeleton(names=tuple(names), parents=np.asarray(parents, np.int64), rest_translation=np.array(trans),
                        rest_rotation=rot, rest_scale=scale)
    return replace(avatar, skeleton=skeleton, springs=tuple(springs), vrm_version="1.0")


def _f(v) -> list[float]:
    return [float(x) for x in np.asarray(v, np.float64).reshape(-1)]


def _texinfo(ref: TextureRef | None) -> dict | None:
    if ref is None:
        return None
    d = {"index": int(ref.texture), "texCoord": int(ref.texcoord)}
    t = ref.transform
    if t is not None:
        tt = {"offset": _f(t.offset), "rotation": float(t.rotation), "scale": _f(t.scale)}
        if t.texcoord is not None:
            tt["texCoord"] = int(t.texcoord)
        d["extensions"] = {"KHR_texture_transform": tt}
    return d


def _material(m: Material, used: set[str]) -> dict:
    pbr = {"baseColorFactor": _f(m.base_color_factor), "metallicFactor": float(m.metallic_factor),
           "roughnessFactor": float(m.roughness_factor)}
    refs = [m.base_color_texture, m.emissive_texture, m.normal_texture, m.metallic_roughness_texture,
            m.occlusion_texture]
    if m.base_color_texture is not None:
        pbr["baseColorTexture"] = _texinfo(m.base_color_texture)
    if m.metallic_roughness_texture is not None:
        pbr["metallicRoughnessTexture"] = _texinfo(m.metallic_roughness_texture)
    d = {"name": m.name, "pbrMetallicRoughness": pbr, "emissiveFactor": _f(m.emissive_factor),
         "alphaMode": m.alpha_mode, "doubleSided": bool(m.double_sided)}
    if m.alpha_mode == "MASK":
        d["alphaCutoff"] = float(m.alpha_cutoff)
    if m.emissive_texture is not None:
        d["emissiveTexture"] = _texinfo(m.emissive_texture)
    if m.normal_texture is not None:
        d["normalTexture"] = {**_texinfo(m.normal_texture), "scale": float(m.normal_scale)}
    if m.occlusion_texture is not None:
        d["occlusionTexture"] = {**_texinfo(m.occlusion_texture), "strength": float(m.occlusion_strength)}
    ext = {}
    if m.unlit:
        ext["KHR_materials_unlit"] = {}
        used.add("KHR_materials_unlit")
    mt = m.mtoon
    if mt is not None:
        x = {
            "specVersion": "1.0", "transparentWithZWrite": bool(mt.transparent_with_z_write),
            "renderQueueOffsetNumber": int(mt.render_queue_offset), "shadeColorFactor": _f(mt.shade_color),
            "shadingShiftFactor": float(mt.shading_shift), "shadingToonyFactor": float(mt.shading_toony),
            "giEqualizationFactor": float(mt.gi_equalization), "matcapFactor": _f(mt.matcap_color),
            "parametricRimColorFactor": _f(mt.rim_color), "rimLightingMixFactor": float(mt.rim_lighting_mix),
            "parametricRimFresnelPowerFactor": float(mt.rim_fresnel_power),
            "parametricRimLiftFactor": float(mt.rim_lift), "outlineWidthMode": mt.outline_width_mode,
            "outlineWidthFactor": float(mt.outline_width), "outlineColorFactor": _f(mt.outline_color),
            "outlineLightingMixFactor": float(mt.outline_lighting_mix),
            "uvAnimationScrollXSpeedFactor": float(mt.uv_animation_scroll_x_speed),
            "uvAnimationScrollYSpeedFactor": float(mt.uv_animation_scroll_y_speed),
            "uvAnimationRotationSpeedFactor": float(mt.uv_animation_rotation_speed),
        }
        keys = {"shade_texture": "shadeMultiplyTexture", "shading_shift_texture": "shadingShiftTexture",
                "matcap_texture": "matcapTexture", "rim_multiply_texture": "rimMultiplyTexture",
                "outline_width_multiply_texture": "outlineWidthMultiplyTexture",
                "uv_animation_mask_texture": "uvAnimationMaskTexture"}
        for name, ref in mt.textures().items():
            x[keys[name]] = _texinfo(ref)
            refs.append(ref)
        if mt.shading_shift_texture is not None:
            x["shadingShiftTexture"]["scale"] = float(mt.shading_shift_texture_scale)
        ext["VRMC_materials_mtoon"] = x
        used.add("VRMC_materials_mtoon")
    if any(r is not None and r.transform is not None for r in refs):
        used.add("KHR_texture_transform")
    if ext:
        d["extensions"] = ext
    return d


def _collider(c: Collider, used: set[str]) -> dict:
    tail = c.offset if c.tail is None else c.tail
    if c.shape == "sphere":
        return {"node": int(c.node), "shape": {"sphere": {"offset": _f(c.offset), "radius": float(c.radius)}}}
    if c.shape == "capsule":
        return {"node": int(c.node), "shape": {"capsule": {"offset": _f(c.offset), "radius": float(c.radius),
                                                           "tail": _f(tail)}}}
    used.add("VRMC_springBone_extended_collider")
    kind = c.shape.replace("inside_", "")
    shape = {"offset": _f(c.offset), "radius": float(c.radius)}
    if kind == "capsule":
        shape["tail"] = _f(tail)
    if kind == "plane":
        shape = {"offset": _f(c.offset), "normal": _f(c.normal)}
    else:
        shape["inside"] = c.shape.startswith("inside_")
    # VRM 1.0 readers without the extension see a small sphere (the extension's fallback advice)
    return {"node": int(c.node), "shape": {"sphere": {"offset": _f(c.offset), "radius": 0.0}},
            "extensions": {"VRMC_springBone_extended_collider": {"specVersion": "1.0", "shape": {kind: shape}}}}


def _limit(lim) -> dict:
    """A :class:`avatars.model.JointLimit` as the VRMC_springBone_limit draft's joint extension."""
    rot = [float(x) for x in lim.rotation]
    body = ({"pitch": float(lim.angle), "yaw": float(lim.yaw)} if lim.kind == "spherical"
            else {"angle": float(lim.angle)})
    body["rotation"] = rot
    return {"specVersion": "1.0-draft", "limit": {lim.kind: body}}


def _spring(s: Spring, used: set[str]) -> dict:
    joints = []
    for j in s.joints:
        jd = {"node": int(j.node), "hitRadius": float(j.hit_radius), "stiffness": float(j.stiffness),
              "dragForce": float(j.drag_force), "gravityPower": float(j.gravity_power), "gravityDir": _f(j.gravity_dir)}
        if j.max_bend is not None:
            jd["extras"] = {"swaycamMaxBend": float(j.max_bend)}
        if j.limit is not None and j.limit.source != "fit":
            jd["extensions"] = {"VRMC_springBone_limit": _limit(j.limit)}
            used.add("VRMC_springBone_limit")
        joints.append(jd)
    d = {"name": s.name, "joints": joints, "colliderGroups": [int(k) for k in s.collider_groups]}
    if s.center >= 0:
        d["center"] = int(s.center)
    if s.sheet >= 0:
        d["extras"] = {"swaycamSheet": int(s.sheet)}
    return d


def _links(av: Avatar) -> list[dict]:
    """swaycam's spring links (:class:`avatars.model.SpringLink`) as the ``swaycamSpringLinks``
    list of VRMC_springBone's ``extras``."""
    return [{"springs": [int(x) for x in k.springs], "joints": [[int(a), int(b)] for a, b in k.joints],
             "rest": [float(r) for r in k.rest], "sheet": int(k.sheet), "shared": int(k.shared)}
            for k in av.spring_links]


def _meta(avatar: Avatar) -> dict:
    """VRMC_vrm meta. VRM 1.0's ``licenseUrl`` is the VRM Public License (readers such as
    three-vrm refuse anything else); another license of the source (e.g. a VRM 0.x CC BY)
    goes to ``otherLicenseUrl``."""
    m = avatar.meta
    other = m.other_license_url
    if m.license_url and m.license_url.rstrip("/") != VRM_LICENSE.rstrip("/") and not other:
        other = m.license_url
    return {
        "name": m.name or Path(avatar.path).stem, "version": m.version, "authors": list(m.authors) or ["unknown"],
        "copyrightInformation": m.copyright, "contactInformation": m.contact, "references": list(m.references),
        "licenseUrl": VRM_LICENSE,
        "avatarPermission": _PERMISSION.get(m.avatar_permission, m.avatar_permission or "onlyAuthor"),
        "commercialUsage": _COMMERCIAL.get(m.commercial_usage, m.commercial_usage or "personalNonProfit"),
        "allowRedistribution": bool(m.allow_redistribution), "modification": m.modification or "prohibited",
        "otherLicenseUrl": other,
    }


def _expression(e) -> dict:
    return {
        "morphTargetBinds": [{"node": int(b.node), "index": int(b.index), "weight": float(b.weight)}
                             for b in e.morph_target_binds],
        "materialColorBinds": [{"material": int(b.material), "type": b.type, "targetValue": _f(b.target)}
                               for b in e.material_color_binds],
        "textureTransformBinds": [{"material": int(b.material), "scale": _f(b.scale), "offset": _f(b.offset)}
                                  for b in e.texture_transform_binds],
        "isBinary": bool(e.is_binary), "overrideBlink": e.override_blink, "overrideLookAt": e.override_look_at,
        "overrideMouth": e.override_mouth,
    }


def write_vrm1(avatar: Avatar, generator: str = "swaycam avatars.vrm1") -> bytes:
    """The VRM 1.0 GLB bytes of ``to_vrm1(avatar)`` (module doc)."""
    av = to_vrm1(avatar)
    out = GlbWriter()
    out.gltf.asset = g.Asset(version="2.0", generator=generator)
    gl = out.gltf
    sk = av.skeleton
    mesh_of = {mi.node: mi for mi in av.mesh_instances}
    for i in range(sk.node_count):
        node = g.Node(name=sk.names[i], translation=_f(sk.rest_translation[i]), rotation=_f(sk.rest_rotation[i]),
                      scale=_f(sk.rest_scale[i]))
        node.children = [int(c) for c in np.nonzero(sk.parents == i)[0]]
        if i in mesh_of:
            node.mesh = int(mesh_of[i].mesh)
            if mesh_of[i].skin >= 0:
                node.skin = int(mesh_of[i].skin)
            if mesh_of[i].contact is not None:   # swaycam's per-vertex contact (avatars.contact)
                node.extras = {EXTRAS_KEY: contact_to_json(mesh_of[i].contact)}
        gl.nodes.append(node)
    for mesh in av.meshes:
        prims = []
        for p in mesh.primitives:
            a = g.Attributes(POSITION=out.accessor(p.positions, FLOAT, "VEC3", ARRAY_BUFFER, minmax=True))
            if p.normals is not None:
                a.NORMAL = out.accessor(p.normals, FLOAT, "VEC3", ARRAY_BUFFER)
            if p.uv0 is not None:
                a.TEXCOORD_0 = out.accessor(p.uv0, FLOAT, "VEC2", ARRAY_BUFFER)
            if p.uv1 is not None:
                a.TEXCOORD_1 = out.accessor(p.uv1, FLOAT, "VEC2", ARRAY_BUFFER)
            if p.colors is not None:
                a.COLOR_0 = out.accessor(p.colors, FLOAT, "VEC4", ARRAY_BUFFER)
            if p.joints is not None and p.weights is not None:
                a.JOINTS_0 = out.accessor(p.joints, USHORT, "VEC4", ARRAY_BUFFER)
                a.WEIGHTS_0 = out.accessor(p.weights, FLOAT, "VEC4", ARRAY_BUFFER)
            ctype = USHORT if p.vertex_count < 65536 else UINT
            prim = g.Primitive(attributes=a, indices=out.accessor(p.indices, ctype, "SCALAR", ELEMENT_ARRAY_BUFFER),
                               mode=int(p.mode))
            if p.material >= 0:
                prim.material = int(p.material)
            targets = []
            for t in range(p.morph_positions.shape[0]):
                d = p.morph_positions[t]
                # a target that does not move this primitive: an accessor of zeros without data
                pa = out.accessor(d, FLOAT, "VEC3", ARRAY_BUFFER, minmax=True) if np.any(d) else out.zeros(p.vertex_count)
                ta = g.Attributes(POSITION=pa)
                if p.morph_normals is not None and np.any(p.morph_normals[t]):
                    ta.NORMAL = out.accessor(p.morph_normals[t], FLOAT, "VEC3", ARRAY_BUFFER)
                targets.append(ta)
            if targets:
                prim.targets = targets
            prims.append(prim)
        gm = g.Mesh(name=mesh.name, primitives=prims)
        if mesh.target_names:
            gm.weights = _f(mesh.default_weights)
            gm.extras = {"targetNames": list(mesh.target_names)}
        gl.meshes.append(gm)
    for s in av.skins:
        ibm = np.transpose(np.asarray(s.inverse_bind, np.float64), (0, 2, 1)).reshape(-1, 16)
        skin = g.Skin(name=s.name, joints=[int(j) for j in s.joints],
                      inverseBindMatrices=out.accessor(ibm, FLOAT, "MAT4"))
        if s.skeleton >= 0:
            skin.skeleton = int(s.skeleton)
        gl.skins.append(skin)
    used: set[str] = {"VRMC_vrm", "VRMC_springBone"}
    gl.materials = [g.Material(**_material(m, used)) for m in av.materials]
    samplers: list[tuple] = []
    for tex in av.textures:
        sm = tex.sampler
        key = (sm.mag_filter, sm.min_filter, sm.wrap_s, sm.wrap_t)
        if key not in samplers:
            samplers.append(key)
        gl.textures.append(g.Texture(sampler=samplers.index(key), source=int(tex.image) if tex.image >= 0 else None))
    gl.samplers = [g.Sampler(magFilter=k[0], minFilter=k[1], wrapS=k[2], wrapT=k[3]) for k in samplers]
    for im in av.images:
        buf = io.BytesIO()
        PILImage.fromarray(np.ascontiguousarray(im.rgba, np.uint8), "RGBA").save(buf, format="PNG")
        out.png(im.name, buf.getvalue())
    vrm = {"specVersion": "1.0", "meta": _meta(av),
           "humanoid": {"humanBones": {name: {"node": int(n)} for name, n in av.humanoid.items()}},
           "expressions": {"preset": {k: _expression(e) for k, e in av.expressions.items() if e.preset},
                           "custom": {k: _expression(e) for k, e in av.expressions.items() if not e.preset}}}
    springs = {"specVersion": "1.0", "colliders": [_collider(c, used) for c in av.colliders],
               "colliderGroups": [{"name": gr.name, "colliders": [int(c) for c in gr.colliders]}
                                  for gr in av.collider_groups],
               "springs": [_spring(s, used) for s in av.springs]}
    if av.spring_links:
        springs["extras"] = {"swaycamSpringLinks": _links(av)}
    roots = [int(i) for i in np.nonzero(sk.parents < 0)[0]]
    gl.scenes = [g.Scene(name=av.meta.name or "scene", nodes=roots)]
    gl.scene = 0
    gl.extensions = {"VRMC_vrm": vrm, "VRMC_springBone": springs}
    gl.extensionsUsed = sorted(used)
    return out.to_bytes()


def save_vrm1(avatar: Avatar, path: str | Path) -> Path:
    """Write :func:`write_vrm1` bytes to ``path`` (atomically: a temporary file, then rename)."""
    import os
    import tempfile

    p = Path(path)
    data = write_vrm1(avatar)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}-", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p
