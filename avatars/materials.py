"""glTF materials, textures, samplers and images, with KHR_materials_unlit,
KHR_texture_transform and MToon (VRMC_materials_mtoon 1.0 and VRM 0.x ``materialProperties``).

VRM 0.x material properties are migrated to MToon 1.0 terms exactly as three-vrm 3.5.5's
``VRMMaterialsV0CompatPlugin`` does (the reference swaycam's rendering is measured against,
see render/eval/): ``VRM/MToon`` and ``VRM/Unlit*`` become MToon (an unlit one as MToon whose
shade is its lit colour), colours are gamma 2.2, ``_MainTex`` tiling/offset becomes a
texture transform with glTF's flipped v, transparent render queues become ordered offsets.
See :func:`_mtoon0`. One deliberate difference: ``shadingShiftTexture`` is sampled as
linear data, as the MToon 1.0 specification says (three-vrm 3.5.5 decodes it as sRGB).
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image as PILImage

from .accessors import view_bytes
from .gltf_io import GltfDocument
from .model import Image, Material, MToon, Sampler, Texture, TextureRef, TextureTransform


def srgb_to_linear(c) -> np.ndarray:
    """sRGB-encoded values in [0, 1] -> linear (IEC 61966-2-1)."""
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def build_images(doc: GltfDocument, *, gate=None) -> tuple[Image, ...]:
    """Decode every image to RGBA uint8 (H, W, 4). A broken image warns and becomes 1x1 magenta.
    ``gate``: called before each image after the first (:func:`avatars.loader.load_avatar`)."""
    out = []
    for i, im in enumerate(doc.json.get("images", []) or []):
        if gate is not None and i:
            gate()
        elem = f"images[{i}]"
        name = str(im.get("name", f"image{i}"))
        try:
            if "bufferView" in im:
                raw = view_bytes(doc, im["bufferView"], elem)
            elif str(im.get("uri", "")).startswith("data:"):
                import base64

                raw = base64.b64decode(im["uri"].split(",", 1)[1])
            elif "uri" in im:
                from pathlib import Path

                from .gltf_io import external_file

                raw = external_file(Path(doc.issues.path).parent, im["uri"]).read_bytes()
            else:
                raise ValueError("no bufferView and no uri")
            with PILImage.open(io.BytesIO(raw)) as pil:
                rgba = np.asarray(pil.convert("RGBA"), dtype=np.uint8).copy()
        except Exception as exc:  # noqa: BLE001 - an unreadable image must not refuse the avatar
            doc.issues.warn(elem, f"cannot decode image ({exc}); a magenta placeholder is used")
            rgba = np.array([[[255, 0, 255, 255]]], np.uint8)
        out.append(Image(name=name, rgba=rgba, mime_type=str(im.get("mimeType", ""))))
    return tuple(out)


def build_textures(doc: GltfDocument, n_images: int) -> tuple[Texture, ...]:
    samplers = doc.json.get("samplers", []) or []
    out = []
    for i, tex in enumerate(doc.json.get("textures", []) or []):
        src = tex.get("source", -1)
        if not isinstance(src, int) or not 0 <= src < n_images:
            doc.issues.warn(f"textures[{i}].source", f"image {src} does not exist; texture ignored")
            src = -1
        s = tex.get("sampler")
        sampler = Sampler()
        if isinstance(s, int) and 0 <= s < len(samplers):
            d = samplers[s]
            sampler = Sampler(
                mag_filter=int(d.get("magFilter", 9729)),
                min_filter=int(d.get("minFilter", 9987)),
                wrap_s=int(d.get("wrapS", 10497)),
                wrap_t=int(d.get("wrapT", 10497)),
            )
        out.append(Texture(image=src, sampler=sampler))
    return tuple(out)


def _texref(doc: GltfDocument, info: dict | None, elem: str, textures) -> TextureRef | None:
    if not info:
        return None
    idx = info.get("index", -1)
    if not isinstance(idx, int) or not 0 <= idx < len(textures) or textures[idx].image < 0:
        doc.issues.warn(f"{elem}.index", f"texture {idx} does not exist or has no image; ignored")
        return None
    tt = (info.get("extensions") or {}).get("KHR_texture_transform")
    transform = None
    if tt:
        transform = TextureTransform(
            offset=np.asarray(tt.get("offset", [0, 0]), float),
            rotation=float(tt.get("rotation", 0.0)),
            scale=np.asarray(tt.get("scale", [1, 1]), float),
            texcoord=tt.get("texCoord"),
        )
    return TextureRef(texture=idx, texcoord=int(info.get("texCoord", 0)), transform=transform)


def _texture_info(doc, ext: dict, key: str, elem: str, textures) -> TextureRef | None:
    return _texref(doc, ext.get(key), f"{elem}.{key}", textures)


def _mtoon1(doc, ext: dict, elem: str, textures) -> MToon:
    """VRMC_materials_mtoon 1.0 -> :class:`MToon` (every property of the schema)."""
    def col(key, default):
        return np.asarray(ext.get(key, default), float)[:3]

    def tex(key):
        return _texture_info(doc, ext, key, elem, textures)

    mode = ext.get("outlineWidthMode", "none")
    if mode not in ("none", "worldCoordinates", "screenCoordinates"):
        doc.issues.warn(f"{elem}.outlineWidthMode", f"unknown outlineWidthMode {mode!r}; no outline")
        mode = "none"
    shift_info = ext.get("shadingShiftTexture") or {}
    return MToon(
        shade_color=col("shadeColorFactor", [0, 0, 0]),
        shade_texture=tex("shadeMultiplyTexture"),
        shading_shift=float(ext.get("shadingShiftFactor", 0.0)),
        shading_shift_texture=tex("shadingShiftTexture"),
        shading_shift_texture_scale=float(shift_info.get("scale", 1.0)) if isinstance(shift_info, dict) else 1.0,
        shading_toony=float(ext.get("shadingToonyFactor", 0.9)),
        gi_equalization=float(ext.get("giEqualizationFactor", 0.9)),
        matcap_color=col("matcapFactor", [1, 1, 1]),
        matcap_texture=tex("matcapTexture"),
        rim_color=col("parametricRimColorFactor", [0, 0, 0]),
        rim_multiply_texture=tex("rimMultiplyTexture"),
        rim_fresnel_power=float(ext.get("parametricRimFresnelPowerFactor", 5.0)),
        rim_lift=float(ext.get("parametricRimLiftFactor", 0.0)),
        rim_lighting_mix=float(ext.get("rimLightingMixFactor", 1.0)),
        outline_width_mode=mode,
        outline_width=float(ext.get("outlineWidthFactor", 0.0)),
        outline_width_multiply_texture=tex("outlineWidthMultiplyTexture"),
        outline_color=col("outlineColorFactor", [0, 0, 0]),
        outline_lighting_mix=float(ext.get("outlineLightingMixFactor", 1.0)),
        uv_animation_mask_texture=tex("uvAnimationMaskTexture"),
        uv_animation_scroll_x_speed=float(ext.get("uvAnimationScrollXSpeedFactor", 0.0)),
        uv_animation_scroll_y_speed=float(ext.get("uvAnimationScrollYSpeedFactor", 0.0)),
        uv_animation_rotation_speed=float(ext.get("uvAnimationRotationSpeedFactor", 0.0)),
        render_queue_offset=int(ext.get("renderQueueOffsetNumber", 0)),
        transparent_with_z_write=bool(ext.get("transparentWithZWrite", False)),
    )


def gamma_to_linear(c) -> np.ndarray:
    """VRM 0.x colour values -> linear, as three-vrm's v0 compatibility does (``pow(c, 2.2)``)."""
    return np.power(np.clip(np.asarray(c, np.float64), 0.0, None), 2.2)


def migrate_shading_0x(toony0: float, shift0: float) -> tuple[float, float]:
    """VRM 0.x (_ShadeToony, _ShadeShift) -> MToon 1.0 (shadingToonyFactor, shadingShiftFactor),
    as three-vrm: ``toony = lerp(toony0, 1, 0.5 + 0.5 shift0)``, ``shift = -shift0 - (1 - toony)``
    (the 0.x shading ramp over N·L, [shift0, lerp(1, shift0, toony0)], kept exactly)."""
    toony = toony0 + (1.0 - toony0) * (0.5 + 0.5 * shift0)
    return float(toony), float(-shift0 - (1.0 - toony))


def _v0_queue_offsets(props_list: list) -> dict[int, int]:
    """VRM 0.x ``renderQueue`` -> MToon 1.0 ``renderQueueOffsetNumber`` per material index,
    as three-vrm: the distinct queues of transparent materials, in ascending order, map to
    -(n - 1) .. 0 (without z-write) or 0 .. n - 1 (with z-write), clamped to ±9."""
    plain, zwrite = {}, {}
    for i, p in enumerate(props_list):
        if not isinstance(p, dict) or not isinstance(p.get("renderQueue"), int):
            continue
        transparent, zw = _v0_transparency(p)
        if transparent:
            (zwrite if zw else plain).setdefault(p["renderQueue"], []).append(i)
    out = {}
    for queues, sign in ((plain, -1), (zwrite, 1)):
        order = sorted(queues)
        for k, q in enumerate(order):
            off = k - len(order) + 1 if sign < 0 else k
            for i in queues[q]:
                out[i] = int(np.clip(off, -9, 9))
    return out


def _v0_transparency(props: dict) -> tuple[bool, bool]:
    """(alpha blended, with z-write) of a VRM 0.x material (MToon or VRM/Unlit*)."""
    shader = str(props.get("shader", ""))
    kw = props.get("keywordMap", {}) or {}
    fp = props.get("floatProperties", {}) or {}
    if shader.startswith("VRM/Unlit"):
        return shader in ("VRM/UnlitTransparent", "VRM/UnlitTransparentZWrite"), shader == "VRM/UnlitTransparentZWrite"
    if "_ALPHABLEND_ON" in kw:
        blend = bool(kw["_ALPHABLEND_ON"])
    else:  # files without keywords: the blend mode property
        blend = int(fp.get("_BlendMode", 0)) in (2, 3)
    return blend, blend and fp.get("_ZWrite") == 1


def _mtoon0(doc, props: dict, elem: str, textures, queue_offset: int):
    """VRM 0.x ``materialProperties`` entry (VRM/MToon or VRM/Unlit*) -> (MToon, overrides for
    the glTF material), as three-vrm 3.5.5's ``VRMMaterialsV0CompatPlugin`` migrates it.

    Colours are gamma 2.2 (``pow(c, 2.2)``; alpha stays linear); ``_MainTex``'s Unity
    [offsetX, offsetY, scaleX, scaleY] (v up) becomes a KHR_texture_transform with glTF's v
    down, applied to every texture but the matcap; outline width ``_OutlineWidth`` × 0.01
    (centimetres -> metres, or percent of the screen height -> a fraction); the outline
    colour mode 0 (fixed) gives outline lighting mix 0; ``_IndirectLightIntensity`` i gives
    GI equalization 1 - i; UV animation Y speed changes sign (Unity's v points up).
    """
    fp = props.get("floatProperties", {}) or {}
    vp = props.get("vectorProperties", {}) or {}
    tp = props.get("textureProperties", {}) or {}
    kw = props.get("keywordMap", {}) or {}
    shader = str(props.get("shader", ""))
    transform = None
    st = vp.get("_MainTex")
    if st is not None and len(st) == 4 and (st[0], st[1], st[2], st[3]) != (0, 0, 1, 1):
        # v' = sy·v + (1 − sy − oy) (Unity's v up, glTF's v down)
        transform = TextureTransform(offset=np.array([st[0], 1.0 - st[3] - st[1]], float),
                                     scale=np.asarray(st[2:], float))

    def tex(key, with_transform=True):
        t = tp.get(key)
        if isinstance(t, int) and 0 <= t < len(textures) and textures[t].image >= 0:
            return TextureRef(texture=t, transform=transform if with_transform else None)
        if t is not None:
            doc.issues.warn(f"{elem}.textureProperties.{key}", f"texture {t} does not exist; ignored")
        return None

    def col(key, default):
        return gamma_to_linear(np.asarray(vp.get(key, default), float)[:3])

    blend, zwrite = _v0_transparency(props)
    cutout = shader == "VRM/UnlitCutout" or bool(kw.get("_ALPHATEST_ON", False)) or (
        "_ALPHATEST_ON" not in kw and shader == "VRM/MToon" and int(fp.get("_BlendMode", 0)) == 1)
    c = np.asarray(vp.get("_Color", [1, 1, 1, 1]), float)
    base = np.concatenate([gamma_to_linear(c[:3]), c[3:4] if c.size > 3 else [1.0]])
    over = {
        "alpha_mode": "BLEND" if blend else "MASK" if cutout else "OPAQUE",
        "alpha_cutoff": float(fp.get("_Cutoff", 0.5)),
        "base_color_factor": base,
        "base_color_texture": tex("_MainTex"),
        "unlit": False,
    }
    if shader.startswith("VRM/Unlit"):
        # three-vrm: an MToon whose shade is the lit colour (lit everywhere, no outline, no rim)
        return MToon(shade_color=base[:3].copy(), shade_texture=over["base_color_texture"],
                     transparent_with_z_write=zwrite, render_queue_offset=queue_offset), over
    over["double_sided"] = int(fp.get("_CullMode", 2)) == 0
    over["normal_texture"] = tex("_BumpMap")
    over["normal_scale"] = float(fp.get("_BumpScale", 1.0))
    over["emissive_factor"] = col("_EmissionColor", [0, 0, 0, 1])
    over["emissive_texture"] = tex("_EmissionMap")
    toony, shift = migrate_shading_0x(float(fp.get("_ShadeToony", 0.9)), float(fp.get("_ShadeShift", 0.0)))
    width_mode = {1: "worldCoordinates", 2: "screenCoordinates"}.get(int(fp.get("_OutlineWidthMode", 0)), "none")
    gi = fp.get("_IndirectLightIntensity", 0.1)
    matcap = tex("_SphereAdd", with_transform=False)
    mtoon = MToon(
        shade_color=col("_ShadeColor", [0.97, 0.81, 0.86, 1]),
        shade_texture=tex("_ShadeTexture"),
        shading_shift=shift,
        shading_toony=toony,
        gi_equalization=1.0 - float(gi) if gi else 0.9,
        matcap_color=np.ones(3),
        matcap_texture=matcap,
        rim_color=col("_RimColor", [0, 0, 0, 1]),
        rim_multiply_texture=tex("_RimTexture"),
        rim_fresnel_power=float(fp.get("_RimFresnelPower", 1.0)),
        rim_lift=float(fp.get("_RimLift", 0.0)),
        rim_lighting_mix=float(fp.get("_RimLightingMix", 0.0)),
        outline_width_mode=width_mode,
        outline_width=float(fp.get("_OutlineWidth", 0.0)) * 0.01,
        outline_width_multiply_texture=tex("_OutlineWidthTexture"),
        outline_color=col("_OutlineColor", [0, 0, 0]),
        outline_lighting_mix=float(fp.get("_OutlineLightingMix", 1.0)) if int(fp.get("_OutlineColorMode", 0)) == 1
        else 0.0,
        uv_animation_mask_texture=tex("_UvAnimMaskTexture"),
        uv_animation_scroll_x_speed=float(fp.get("_UvAnimScrollX", 0.0)),
        uv_animation_scroll_y_speed=-float(fp.get("_UvAnimScrollY", 0.0)),
        uv_animation_rotation_speed=float(fp.get("_UvAnimRotation", 0.0)),
        render_queue_offset=queue_offset,
        transparent_with_z_write=zwrite,
    )
    return mtoon, over


def build_materials(doc: GltfDocument, textures, vrm0_props: list | None) -> tuple[Material, ...]:
    """Parse materials. VRM 0.x ``materialProperties`` entry i (VRM/MToon or VRM/Unlit*)
    replaces material i's shading, as three-vrm does; ``VRM_USE_GLTFSHADER`` keeps the glTF
    material (PBR metallic-roughness, or unlit with ``KHR_materials_unlit``)."""
    props_list = list(vrm0_props or [])
    queue_offsets = _v0_queue_offsets(props_list)
    out = []
    for i, m in enumerate(doc.json.get("materials", []) or []):
        elem = f"materials[{i}]"
        pbr = m.get("pbrMetallicRoughness", {}) or {}
        exts = m.get("extensions", {}) or {}
        alpha = m.get("alphaMode", "OPAQUE")
        if alpha not in ("OPAQUE", "MASK", "BLEND"):
            doc.issues.warn(f"{elem}.alphaMode", f"unknown alphaMode {alpha!r}; OPAQUE used")
            alpha = "OPAQUE"
        normal = m.get("normalTexture") or {}
        occlusion = m.get("occlusionTexture") or {}
        fields = dict(
            name=str(m.get("name", f"material{i}")),
            base_color_factor=np.asarray(pbr.get("baseColorFactor", [1, 1, 1, 1]), float),
            base_color_texture=_texref(doc, pbr.get("baseColorTexture"), f"{elem}.pbrMetallicRoughness.baseColorTexture", textures),
            emissive_factor=np.asarray(m.get("emissiveFactor", [0, 0, 0]), float),
            emissive_texture=_texref(doc, m.get("emissiveTexture"), f"{elem}.emissiveTexture", textures),
            normal_texture=_texref(doc, normal, f"{elem}.normalTexture", textures),
            normal_scale=float(normal.get("scale", 1.0)) if isinstance(normal, dict) else 1.0,
            metallic_factor=float(pbr.get("metallicFactor", 1.0)),
            roughness_factor=float(pbr.get("roughnessFactor", 1.0)),
            metallic_roughness_texture=_texref(doc, pbr.get("metallicRoughnessTexture"),
                                               f"{elem}.pbrMetallicRoughness.metallicRoughnessTexture", textures),
            occlusion_texture=_texref(doc, occlusion, f"{elem}.occlusionTexture", textures),
            occlusion_strength=float(occlusion.get("strength", 1.0)) if isinstance(occlusion, dict) else 1.0,
            alpha_mode=alpha,
            alpha_cutoff=float(m.get("alphaCutoff", 0.5)),
            double_sided=bool(m.get("doubleSided", False)),
            unlit="KHR_materials_unlit" in exts,
            mtoon=None,
        )
        props = props_list[i] if i < len(props_list) and isinstance(props_list[i], dict) else None
        shader = str(props.get("shader", "")) if props else ""
        if "VRMC_materials_mtoon" in exts:
            if isinstance(exts["VRMC_materials_mtoon"], dict):
                doc.issues.spec_version(f"{elem}.extensions.VRMC_materials_mtoon", exts["VRMC_materials_mtoon"])
            fields["mtoon"] = _mtoon1(doc, exts["VRMC_materials_mtoon"], f"{elem}.extensions.VRMC_materials_mtoon", textures)
            fields["unlit"] = False  # MToon wins over KHR_materials_unlit (its fallback)
        elif shader == "VRM/MToon" or shader.startswith("VRM/Unlit"):
            mt, over = _mtoon0(doc, props, f"extensions.VRM.materialProperties[{i}]", textures,
                               queue_offsets.get(i, 0))
            fields["mtoon"] = mt
            fields.update(over)
        elif props is not None and shader not in ("VRM_USE_GLTFSHADER", ""):
            doc.issues.warn(f"extensions.VRM.materialProperties[{i}].shader",
                            f"unknown shader {shader!r}; the glTF material is used")
        out.append(Material(**fields))
    return tuple(out)
