"""Colours and MToon materials of the generated avatars.

Colours are written here as sRGB bytes and stored linear, as glTF and VRMC_materials_mtoon
1.0 require. Body, skin and hair get a thin world-space outline (metres); face features are
flat (shade = base colour) without outline. The eye material samples the generated eye
texture (texture index 0).
"""

from __future__ import annotations

import numpy as np

from ..materials import srgb_to_linear

# name: (base sRGB, shade sRGB, outline width metres, rim sRGB)
COLORS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], float, tuple[int, int, int]]] = {
    "skin": ((255, 226, 212), (238, 172, 164), 0.0012, (40, 20, 20)),
    "shirt": ((52, 60, 128), (30, 30, 78), 0.0015, (30, 40, 90)),
    "collar": ((246, 246, 252), (186, 190, 222), 0.0012, (0, 0, 0)),
    "pants": ((58, 58, 74), (34, 32, 48), 0.0015, (0, 0, 0)),
    "shoes": ((110, 66, 48), (66, 36, 30), 0.0015, (0, 0, 0)),
    "hair": ((28, 196, 184), (18, 104, 140), 0.0015, (120, 255, 230)),
    "tie": ((240, 60, 150), (168, 28, 104), 0.0012, (0, 0, 0)),
    "eye": ((255, 255, 255), (255, 255, 255), 0.0, (0, 0, 0)),
    "lash": ((44, 26, 52), (44, 26, 52), 0.0, (0, 0, 0)),
    "brow": ((18, 110, 112), (18, 110, 112), 0.0, (0, 0, 0)),
    "mouth": ((150, 40, 62), (150, 40, 62), 0.0, (0, 0, 0)),
    "blush": ((255, 170, 178), (255, 170, 178), 0.0, (0, 0, 0)),
}
#: Material order in the file.
MATERIAL_ORDER = tuple(COLORS)
EYE_TEXTURE = 0


def _lin(rgb) -> list[float]:
    return [round(float(v), 6) for v in srgb_to_linear(np.asarray(rgb, float) / 255.0)]


def material_json(name: str) -> dict:
    """The glTF material dict of ``name`` with its VRMC_materials_mtoon extension."""
    base, shade, outline, rim = COLORS[name]
    flat = outline == 0.0
    mtoon = {
        "specVersion": "1.0",
        "transparentWithZWrite": False,
        "renderQueueOffsetNumber": 0,
        "shadeColorFactor": _lin(shade),
        "shadingShiftFactor": 0.0 if flat else -0.05,
        "shadingToonyFactor": 0.95,
        "giEqualizationFactor": 0.9,
        "matcapFactor": [0.0, 0.0, 0.0],
        "parametricRimColorFactor": _lin(rim),
        "rimLightingMixFactor": 1.0,
        "parametricRimFresnelPowerFactor": 4.0,
        "parametricRimLiftFactor": 0.05 if name == "hair" else 0.0,
        "outlineWidthMode": "none" if flat else "worldCoordinates",
        "outlineWidthFactor": outline,
        "outlineColorFactor": _lin(np.asarray(shade) * 0.45),
        "outlineLightingMixFactor": 1.0,
    }
    pbr = {"baseColorFactor": _lin(base) + [1.0], "metallicFactor": 0.0, "roughnessFactor": 1.0}
    if name == "eye":
        pbr["baseColorTexture"] = {"index": EYE_TEXTURE, "texCoord": 0}
        mtoon["shadeMultiplyTexture"] = {"index": EYE_TEXTURE, "texCoord": 0}
    return {
        "name": name,
        "pbrMetallicRoughness": pbr,
        "alphaMode": "OPAQUE",
        "doubleSided": False,
        "extensions": {"VRMC_materials_mtoon": mtoon},
    }
