"""VRM expression weights -> what the renderer draws: per-instance morph weights and
material overrides (colour binds, texture transform binds). Pure numpy, no OpenGL.

Rules (VRMC_vrm-1.0 expressions.md, as three-vrm applies them): each active expression adds
``value * bind.weight`` to its morph target (sums clamped to [0, 1]); ``isBinary``
expressions snap at 0.5; an active expression whose ``override*`` is "block" suppresses
the blink / lookAt / mouth presets, "blend" scales them by (1 - value). Material colour
binds move the material's colour toward the target by ``value`` (deltas add up);
texture transform binds move scale and offset the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from avatars import Avatar

_BLINK = ("blink", "blinkLeft", "blinkRight")
_LOOK = ("lookUp", "lookDown", "lookLeft", "lookRight")
_MOUTH = ("aa", "ih", "ou", "ee", "oh")
_COLOR_DEFAULTS = {"color": "base", "shadeColor": "shade", "rimColor": "rim", "emissionColor": "emissive",
                   "outlineColor": "outline", "matcapColor": "matcap"}


@dataclass(frozen=True, eq=False)
class ExpressionFrame:
    """Renderer input derived from expression values.

    Attributes:
        morph_weights: one (T_i,) float32 array per ``avatar.mesh_instances[i]`` (0..1).
        material_overrides: {material index: {"color": (4,), "shadeColor": (3,), ...,
            "uv_scale": (2,), "uv_offset": (2,)}} linear colours (see
            :func:`render.materials.pack_material`).
    """

    morph_weights: tuple[np.ndarray, ...]
    material_overrides: dict[int, dict] = field(default_factory=dict)


def _suppression(avatar: Avatar, active: dict[str, float]) -> dict[str, float]:
    scale = {"blink": 1.0, "look": 1.0, "mouth": 1.0}
    for k, v in active.items():
        if v <= 0:
            continue
        e = avatar.expressions[k]
        for group, mode in (("blink", e.override_blink), ("look", e.override_look_at), ("mouth", e.override_mouth)):
            if mode == "block":
                scale[group] = 0.0
            elif mode == "blend":
                scale[group] = min(scale[group], 1.0 - v)
    return scale


def _base_value(mat, kind: str) -> np.ndarray:
    mt = mat.mtoon
    if kind == "color":
        return np.asarray(mat.base_color_factor, np.float64)[:4]
    if kind == "emissionColor":
        return np.append(np.asarray(mat.emissive_factor, np.float64)[:3], 1.0)
    src = {"shadeColor": "shade_color", "rimColor": "rim_color", "outlineColor": "outline_color",
           "matcapColor": "matcap_color"}.get(kind)
    if mt is None or src is None:
        return np.array([0.0, 0.0, 0.0, 1.0])
    return np.append(np.asarray(getattr(mt, src), np.float64)[:3], 1.0)


def effective_values(avatar: Avatar, values: Mapping[str, float]) -> dict[str, float]:
    """Expression values after clamping to [0, 1], binary snapping and override suppression;
    unknown names are dropped."""
    ex = avatar.expressions
    active = {k: float(np.clip(v, 0.0, 1.0)) for k, v in values.items() if k in ex}
    for k, v in list(active.items()):
        if ex[k].is_binary:
            active[k] = 1.0 if v >= 0.5 else 0.0
    scale = _suppression(avatar, active)
    out = {}
    for k, v in active.items():
        group = "blink" if k in _BLINK else "look" if k in _LOOK else "mouth" if k in _MOUTH else None
        out[k] = v * (scale[group] if group else 1.0)
    return out


def expression_frame(avatar: Avatar, values: Mapping[str, float]) -> ExpressionFrame:
    """Morph weights and material overrides for expression ``values`` (VRM 1.0 names -> 0..1)."""
    node_to_instance = {mi.node: k for k, mi in enumerate(avatar.mesh_instances)}
    weights = [np.asarray(avatar.meshes[mi.mesh].default_weights, np.float32).copy()
               for mi in avatar.mesh_instances]
    overrides: dict[int, dict] = {}
    for name, v in effective_values(avatar, values).items():
        if v <= 0:
            continue
        e = avatar.expressions[name]
        for b in e.morph_target_binds:
            k = node_to_instance.get(b.node)
            if k is not None and 0 <= b.index < len(weights[k]):
                weights[k][b.index] += v * b.weight
        for b in e.material_color_binds:
            if not 0 <= b.material < len(avatar.materials):
                continue
            o = overrides.setdefault(b.material, {})
            base = _base_value(avatar.materials[b.material], b.type)
            cur = o.get(b.type, base.copy())
            target = np.resize(np.asarray(b.target, np.float64), 4)
            o[b.type] = cur + v * (target - base)
        for b in e.texture_transform_binds:
            if not 0 <= b.material < len(avatar.materials):
                continue
            o = overrides.setdefault(b.material, {})
            o["uv_scale"] = o.get("uv_scale", np.ones(2)) + v * (np.asarray(b.scale, np.float64) - 1.0)
            o["uv_offset"] = o.get("uv_offset", np.zeros(2)) + v * np.asarray(b.offset, np.float64)
    for w in weights:
        np.clip(w, 0.0, 1.0, out=w)
    for o in overrides.values():
        for kind in list(o):
            if kind in _COLOR_DEFAULTS:
                o[kind] = np.clip(o[kind], 0.0, None)
    return ExpressionFrame(morph_weights=tuple(weights), material_overrides=overrides)


def expression_weights(avatar: Avatar, values: Mapping[str, float]) -> tuple[np.ndarray, ...]:
    """Per-instance morph weights, one (T_i,) float32 array per ``avatar.mesh_instances[i]``,
    for expression ``values`` such as {"blink": 1.0, "aa": 0.5}."""
    return expression_frame(avatar, values).morph_weights
