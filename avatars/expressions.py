"""VRM expressions (VRMC_vrm-1.0 expressions; VRM 0.x ``blendShapeMaster``) -> one model.

VRM 0.x presets are renamed to VRM 1.0 names (joy->happy, sorrow->sad, fun->relaxed,
a/i/u/e/o->aa/ih/ou/ee/oh, blink_l/blink_r->blinkLeft/blinkRight, lookup->lookUp, ...);
0.x bind weights 0..100 become 0..1; 0.x binds name a mesh, 1.0 binds a node: 0.x binds
are expanded to every node drawing that mesh. Broken binds warn and are skipped.
"""

from __future__ import annotations

import numpy as np

from .gltf_io import GltfDocument
from .model import Expression, MaterialColorBind, MorphTargetBind, TextureTransformBind

PRESETS_1_0 = (
    "happy", "angry", "sad", "relaxed", "surprised", "aa", "ih", "ou", "ee", "oh",
    "blink", "blinkLeft", "blinkRight", "lookUp", "lookDown", "lookLeft", "lookRight", "neutral",
)
PRESET_0X_TO_1_0 = {
    "neutral": "neutral", "a": "aa", "i": "ih", "u": "ou", "e": "ee", "o": "oh",
    "blink": "blink", "joy": "happy", "angry": "angry", "sorrow": "sad", "fun": "relaxed",
    "surprised": "surprised", "lookup": "lookUp", "lookdown": "lookDown", "lookleft": "lookLeft",
    "lookright": "lookRight", "blink_l": "blinkLeft", "blink_r": "blinkRight",
}
_COLOR_PROP_0X = {
    "_Color": "color", "_EmissionColor": "emissionColor", "_ShadeColor": "shadeColor",
    "_RimColor": "rimColor", "_OutlineColor": "outlineColor", "_SphereAdd": "matcapColor",
}
_OVERRIDES = ("none", "block", "blend")


class _Targets:
    """Which (node, morph index) pairs exist, for bind validation."""

    def __init__(self, meshes, instances):
        self.count_by_node = {mi.node: len(meshes[mi.mesh].target_names) for mi in instances}
        self.nodes_by_mesh: dict[int, list[int]] = {}
        for mi in instances:
            self.nodes_by_mesh.setdefault(mi.mesh, []).append(mi.node)


def _override(doc, value, elem) -> str:
    if value in _OVERRIDES:
        return value
    if value is not None:
        doc.issues.warn(elem, f"override {value!r} is not none/block/blend; none used")
    return "none"


def _vrm1_expression(doc, name, e, preset, targets, n_mat, base) -> Expression:
    morphs, colors, uvs = [], [], []
    for k, b in enumerate(e.get("morphTargetBinds", []) or []):
        elem = f"{base}.morphTargetBinds[{k}]"
        node, index = b.get("node"), b.get("index")
        count = targets.count_by_node.get(node)
        if count is None:
            doc.issues.warn(elem, f"node {node} does not draw a mesh; bind skipped")
        elif not isinstance(index, int) or not 0 <= index < count:
            doc.issues.warn(elem, f"morph target {index} does not exist on node {node} ({count} targets); skipped")
        else:
            morphs.append(MorphTargetBind(node=node, index=index, weight=float(b.get("weight", 1.0))))
    for k, b in enumerate(e.get("materialColorBinds", []) or []):
        elem = f"{base}.materialColorBinds[{k}]"
        m = b.get("material")
        if not isinstance(m, int) or not 0 <= m < n_mat:
            doc.issues.warn(elem, f"material {m} does not exist; bind skipped")
            continue
        colors.append(MaterialColorBind(material=m, type=str(b.get("type", "color")),
                                        target=np.asarray(b.get("targetValue", [0, 0, 0, 1]), float)))
    for k, b in enumerate(e.get("textureTransformBinds", []) or []):
        elem = f"{base}.textureTransformBinds[{k}]"
        m = b.get("material")
        if not isinstance(m, int) or not 0 <= m < n_mat:
            doc.issues.warn(elem, f"material {m} does not exist; bind skipped")
            continue
        uvs.append(TextureTransformBind(material=m, scale=np.asarray(b.get("scale", [1, 1]), float),
                                        offset=np.asarray(b.get("offset", [0, 0]), float)))
    return Expression(
        name=name, preset=preset, morph_target_binds=tuple(morphs), material_color_binds=tuple(colors),
        texture_transform_binds=tuple(uvs), is_binary=bool(e.get("isBinary", False)),
        override_blink=_override(doc, e.get("overrideBlink"), f"{base}.overrideBlink"),
        override_look_at=_override(doc, e.get("overrideLookAt"), f"{base}.overrideLookAt"),
        override_mouth=_override(doc, e.get("overrideMouth"), f"{base}.overrideMouth"),
    )


def _vrm0_expression(doc, g, i, targets, materials) -> tuple[str, Expression]:
    base = f"VRM.blendShapeMaster.blendShapeGroups[{i}]"
    preset0 = str(g.get("presetName", "unknown")).lower()
    preset = preset0 in PRESET_0X_TO_1_0
    name = PRESET_0X_TO_1_0[preset0] if preset else str(g.get("name", f"expression{i}"))
    morphs, colors, uvs = [], [], []
    for k, b in enumerate(g.get("binds", []) or []):
        elem = f"{base}.binds[{k}]"
        mesh, index = b.get("mesh"), b.get("index")
        nodes = targets.nodes_by_mesh.get(mesh)
        if not nodes:
            doc.issues.warn(elem, f"mesh {mesh} is not drawn by any node; bind skipped")
            continue
        count = targets.count_by_node[nodes[0]]
        if not isinstance(index, int) or not 0 <= index < count:
            doc.issues.warn(elem, f"morph target {index} does not exist on mesh {mesh} ({count} targets); skipped")
            continue
        for node in nodes:
            morphs.append(MorphTargetBind(node=node, index=index, weight=float(b.get("weight", 100.0)) / 100.0))
    names = {m.name: j for j, m in enumerate(materials)}
    for k, mv in enumerate(g.get("materialValues", []) or []):
        elem = f"{base}.materialValues[{k}]"
        m = names.get(mv.get("materialName"))
        prop = mv.get("propertyName", "")
        val = np.asarray(mv.get("targetValue", [0, 0, 0, 1]), float)
        if m is None:
            doc.issues.warn(elem, f"material {mv.get('materialName')!r} does not exist; skipped")
        elif prop in _COLOR_PROP_0X:
            colors.append(MaterialColorBind(material=m, type=_COLOR_PROP_0X[prop], target=val))
        elif prop.endswith("_ST") and val.size == 4:
            # Unity _ST = (scaleX, scaleY, offsetX, offsetY), v up -> glTF offset v = 1 − sy − oy
            uvs.append(TextureTransformBind(material=m, scale=val[:2].copy(),
                                            offset=np.array([val[2], 1.0 - val[1] - val[3]])))
        else:
            doc.issues.warn(elem, f"material property {prop!r} has no VRM 1.0 bind; skipped")
    return name, Expression(name=name, preset=preset, morph_target_binds=tuple(morphs),
                            material_color_binds=tuple(colors), texture_transform_binds=tuple(uvs),
                            is_binary=bool(g.get("isBinary", False)))


def build_expressions(doc: GltfDocument, vrm1, vrm0, meshes, instances, materials) -> dict[str, Expression]:
    """VRM 1.0 expression name -> Expression (presets and custom)."""
    targets = _Targets(meshes, instances)
    out: dict[str, Expression] = {}
    if vrm1 is not None:
        ex = vrm1.get("expressions") or {}
        for group, preset in (("preset", True), ("custom", False)):
            for name, e in (ex.get(group) or {}).items():
                base = f"VRMC_vrm.expressions.{group}.{name}"
                if preset and name not in PRESETS_1_0:
                    doc.issues.warn(base, f"{name!r} is not a VRM 1.0 preset; kept as custom")
                out[name] = _vrm1_expression(doc, name, e or {}, preset and name in PRESETS_1_0,
                                             targets, len(materials), base)
    elif vrm0 is not None:
        groups = (vrm0.get("blendShapeMaster") or {}).get("blendShapeGroups") or []
        for i, g in enumerate(groups):
            name, e = _vrm0_expression(doc, g or {}, i, targets, materials)
            if name in out:
                doc.issues.warn(f"VRM.blendShapeMaster.blendShapeGroups[{i}]", f"duplicate expression {name!r}; first kept")
                continue
            out[name] = e
    return out
