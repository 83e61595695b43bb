"""Every MToon property is read, from VRMC_materials_mtoon 1.0 and from VRM 0.x material
properties (migrated as three-vrm 3.5.5's VRMMaterialsV0CompatPlugin does)."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.materials import gamma_to_linear, migrate_shading_0x
from tests.avatars.glb import join, split

TOL = 1e-9


@pytest.fixture(scope="module")
def default_bytes():
    from avatars.generate import default_avatar_path

    return default_avatar_path().read_bytes()


def test_vrm1_every_mtoon_property_is_read(default_bytes):
    doc, b = split(default_bytes)
    n_tex = len(doc["textures"])
    assert n_tex >= 1
    t = {"index": 0}
    ext = {
        "specVersion": "1.0", "transparentWithZWrite": True, "renderQueueOffsetNumber": 3,
        "shadeColorFactor": [0.1, 0.2, 0.3], "shadeMultiplyTexture": dict(t),
        "shadingShiftFactor": -0.2, "shadingShiftTexture": {"index": 0, "scale": 0.7},
        "shadingToonyFactor": 0.6, "giEqualizationFactor": 0.4,
        "matcapFactor": [0.5, 0.6, 0.7], "matcapTexture": dict(t),
        "parametricRimColorFactor": [0.3, 0.2, 0.1], "rimMultiplyTexture": dict(t), "rimLightingMixFactor": 0.25,
        "parametricRimFresnelPowerFactor": 3.0, "parametricRimLiftFactor": 0.15,
        "outlineWidthMode": "screenCoordinates", "outlineWidthFactor": 0.004, "outlineWidthMultiplyTexture": dict(t),
        "outlineColorFactor": [0.9, 0.8, 0.7], "outlineLightingMixFactor": 0.35,
        "uvAnimationMaskTexture": dict(t), "uvAnimationScrollXSpeedFactor": 0.5,
        "uvAnimationScrollYSpeedFactor": -0.25, "uvAnimationRotationSpeedFactor": 2.0,
    }
    m = doc["materials"][0]
    m["extensions"]["VRMC_materials_mtoon"] = ext
    m["normalTexture"] = {"index": 0, "scale": 0.8}
    m["emissiveTexture"] = dict(t)
    m["emissiveFactor"] = [0.1, 0.0, 0.2]
    mat = load_avatar("x.vrm", data=join(doc, b)).materials[0]
    mt = mat.mtoon
    assert mt.transparent_with_z_write and mt.render_queue_offset == 3
    assert np.allclose(mt.shade_color, [0.1, 0.2, 0.3]) and mt.shade_texture.texture == 0
    assert mt.shading_shift == -0.2 and mt.shading_shift_texture.texture == 0 and mt.shading_shift_texture_scale == 0.7
    assert mt.shading_toony == 0.6 and mt.gi_equalization == 0.4
    assert np.allclose(mt.matcap_color, [0.5, 0.6, 0.7]) and mt.matcap_texture.texture == 0
    assert np.allclose(mt.rim_color, [0.3, 0.2, 0.1]) and mt.rim_multiply_texture.texture == 0
    assert (mt.rim_lighting_mix, mt.rim_fresnel_power, mt.rim_lift) == (0.25, 3.0, 0.15)
    assert mt.outline_width_mode == "screenCoordinates" and mt.outline_width == 0.004
    assert mt.outline_width_multiply_texture.texture == 0
    assert np.allclose(mt.outline_color, [0.9, 0.8, 0.7]) and mt.outline_lighting_mix == 0.35
    assert mt.uv_animation_mask_texture.texture == 0
    assert (mt.uv_animation_scroll_x_speed, mt.uv_animation_scroll_y_speed, mt.uv_animation_rotation_speed) == (
        0.5, -0.25, 2.0)
    assert mat.normal_texture.texture == 0 and mat.normal_scale == 0.8
    assert mat.emissive_texture.texture == 0 and np.allclose(mat.emissive_factor, [0.1, 0.0, 0.2])


def test_vrm0_every_mtoon_property_is_read_as_three_vrm_migrates_it(godette_path):
    doc, b = split(godette_path.read_bytes())
    props = doc["extensions"]["VRM"]["materialProperties"]
    face = props[0]
    assert doc["materials"][0]["name"] == face["name"] == "Face"
    fp, vp, tp = face["floatProperties"], face["vectorProperties"], face["textureProperties"]
    fp.update({"_BumpScale": 0.6, "_ShadeShift": -0.3, "_ShadeToony": 0.7, "_IndirectLightIntensity": 0.3,
               "_RimLightingMix": 0.4, "_RimFresnelPower": 4.0, "_RimLift": 0.2, "_OutlineWidthMode": 1,
               "_OutlineWidth": 0.3, "_OutlineColorMode": 1, "_OutlineLightingMix": 0.6, "_UvAnimScrollX": 0.1,
               "_UvAnimScrollY": 0.2, "_UvAnimRotation": 0.3, "_CullMode": 0})
    vp.update({"_Color": [0.5, 0.4, 0.3, 0.9], "_ShadeColor": [0.2, 0.3, 0.4, 1], "_RimColor": [0.7, 0.6, 0.5, 1],
               "_EmissionColor": [0.1, 0.2, 0.3, 1], "_OutlineColor": [0.3, 0.2, 0.1, 1],
               "_MainTex": [0.25, 0.1, 2.0, 0.5]})
    for key in ("_BumpMap", "_EmissionMap", "_SphereAdd", "_RimTexture", "_OutlineWidthTexture",
                "_UvAnimMaskTexture"):
        tp[key] = 0
    mat = load_avatar("g.vrm", data=join(doc, b)).materials[0]
    mt = mat.mtoon
    toony, shift = migrate_shading_0x(0.7, -0.3)
    assert abs(mt.shading_toony - toony) < TOL and abs(mt.shading_shift - shift) < TOL
    assert np.allclose(mat.base_color_factor, [*gamma_to_linear([0.5, 0.4, 0.3]), 0.9])
    assert np.allclose(mt.shade_color, gamma_to_linear([0.2, 0.3, 0.4]))
    assert np.allclose(mt.rim_color, gamma_to_linear([0.7, 0.6, 0.5]))
    assert np.allclose(mat.emissive_factor, gamma_to_linear([0.1, 0.2, 0.3]))
    assert np.allclose(mt.outline_color, gamma_to_linear([0.3, 0.2, 0.1]))
    assert abs(mt.gi_equalization - 0.7) < TOL
    assert (mt.rim_lighting_mix, mt.rim_fresnel_power, mt.rim_lift) == (0.4, 4.0, 0.2)
    assert mt.outline_width_mode == "worldCoordinates" and abs(mt.outline_width - 0.003) < TOL
    assert mt.outline_lighting_mix == 0.6
    assert (mt.uv_animation_scroll_x_speed, mt.uv_animation_scroll_y_speed, mt.uv_animation_rotation_speed) == (
        0.1, -0.2, 0.3)
    assert mat.double_sided and mat.normal_scale == 0.6
    for ref in (mat.base_color_texture, mat.normal_texture, mat.emissive_texture, mt.shade_texture,
                mt.rim_multiply_texture, mt.outline_width_multiply_texture, mt.uv_animation_mask_texture):
        assert ref is not None and ref.texture == 0
        assert list(ref.transform.offset) == [0.25, 0.4] and list(ref.transform.scale) == [2.0, 0.5]
    assert mt.matcap_texture.texture == 0 and mt.matcap_texture.transform is None  # matcap uvs are not tiled
    assert np.allclose(mt.matcap_color, 1.0)


@pytest.mark.parametrize("mode,mix", [(0, 0.0), (1, 0.6)])
def test_vrm0_outline_colour_mode(godette_path, mode, mix):
    """_OutlineColorMode 0 (fixed colour): outline lighting mix 0; 1 (mixed): _OutlineLightingMix."""
    doc, b = split(godette_path.read_bytes())
    fp = doc["extensions"]["VRM"]["materialProperties"][0]["floatProperties"]
    fp.update({"_OutlineColorMode": mode, "_OutlineLightingMix": 0.6})
    assert load_avatar("g.vrm", data=join(doc, b)).materials[0].mtoon.outline_lighting_mix == mix


def test_vrm0_screen_outline_width_is_a_hundredth(godette_path):
    """three-vrm: _OutlineWidth × 0.01 in both modes (screen: a fraction of the screen height)."""
    mats = {m.name: m for m in load_avatar(godette_path).materials}
    assert mats["Face"].mtoon.outline_width_mode == "screenCoordinates"
    assert abs(mats["Face"].mtoon.outline_width - 0.0025) < TOL and abs(mats["Body"].mtoon.outline_width - 0.005) < TOL


def test_vrm0_unlit_shaders_become_mtoon_lit_like_their_base(godette_path):
    doc, b = split(godette_path.read_bytes())
    props = doc["extensions"]["VRM"]["materialProperties"]
    props[1] = {"name": props[1]["name"], "shader": "VRM/UnlitCutout", "floatProperties": {"_Cutoff": 0.3},
                "vectorProperties": {"_Color": [0.5, 0.5, 0.5, 1]}, "textureProperties": {"_MainTex": 0},
                "keywordMap": {}, "renderQueue": 2450}
    mat = load_avatar("g.vrm", data=join(doc, b)).materials[1]
    assert mat.alpha_mode == "MASK" and mat.alpha_cutoff == 0.3 and not mat.unlit
    assert np.allclose(mat.mtoon.shade_color, mat.base_color_factor[:3]) and mat.mtoon.shade_texture.texture == 0
    assert mat.mtoon.outline_width_mode == "none"


def test_gltf_pbr_inputs_are_read(godette_path):
    mats = {m.name: m for m in load_avatar(godette_path).materials}
    bp = mats["Backpack"]
    assert bp.mtoon is None and not bp.unlit
    assert bp.metallic_roughness_texture is not None and bp.metallic_factor == 1.0 and bp.roughness_factor == 1.0
