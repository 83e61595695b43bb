"""glTF materials, textures, samplers and images, with KHR_materials_unlit,
KHR_texture_transform and MToon (VRMC_materials_mtoon 1.0 and VRM 0.x ``materialProperties``).

VRM 0.x MToon values are migrated to MToon 1.0 terms as UniVRM's ``MToon10Migrator`` does
(``_MainTex`` tiling/offset get glTF's flipped v; a transparent ``renderQueue`` becomes the
render queue offset around 3000):
the 0.x shading range in N·L is [shift, lerp(1, shift, toony)], so
``toony1 = clamp((2 - (max - min)) / 2, 0, 1)`` and ``shift1 = -(max + min) / 2``; 0.x
colours are sRGB and become linear.
"""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
from PIL import Image as PILImage

from .accessors import view_bytes
from .gltf_io import GltfDocument
from .model import Image, Material, MToon, Sampler, Texture, TextureRef, TextureTransform


def srgb_to_linear(c) -> np.ndarray:
    """sRGB-encoded values in [0, 1] -> linear (IEC 61966-2-1)."""
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def build_images(doc: GltfDocument) -> tuple[Image, ...]:
    """Decode every image to RGBA uint8 (H, W, 4). A broken image warns and becomes 1x1 magenta."""
    out = []
    for i, im in enumerate(doc.json.get("images", []) or []):
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


def _mtoon1(doc, ext: dict, elem: str, textures) -> MToon:
    def col(key, default):
        return np.asarray(ext.get(key, default), float)[:3]

    mode = ext.get("outlineWidthMode", "none")
    return MToon(
        shade_color=col("shadeColorFactor", [0, 0, 0]),
        shade_texture=_texref(doc, ext.get("shadeMultiplyTexture"), f"{elem}.shadeMultiplyTexture", textures),
        shading_shift=float(ext.get("shadingShiftFactor", 0.0)),
        shading_toony=float(ext.get("shadingToonyFactor", 0.9)),
        gi_equalization=float(ext.get("giEqualizationFactor", 0.9)),
        matcap_color=col("matcapFactor", [1, 1, 1]),
        rim_color=col("parametricRimColorFactor", [0, 0, 0]),
        rim_fresnel_power=float(ext.get("parametricRimFresnelPowerFactor", 5.0)),
        rim_lift=float(ext.get("parametricRimLiftFactor", 0.0)),
        rim_lighting_mix=float(ext.get("rimLightingMixFactor", 1.0)),
        outline_width_mode=mode if mode in ("none", "worldCoordinates", "screenCoordinates") else "none",
        outline_width=float(ext.get("outlineWidthFactor", 0.0)),
        outline_color=col("outlineColorFactor", [0, 0, 0]),
        outline_lighting_mix=float(ext.get("outlineLightingMixFactor", 1.0)),
        render_queue_offset=int(ext.get("renderQueueOffsetNumber", 0)),
        transparent_with_z_write=bool(ext.get("transparentWithZWrite", False)),
    )


def migrate_shading_0x(toony0: float, shift0: float) -> tuple[float, float]:
    """VRM 0.x (_ShadeToony, _ShadeShift) -> MToon 1.0 (shadingToonyFactor, shadingShiftFactor)."""
    lo = shift0
    hi = 1.0 + (shift0 - 1.0) * toony0
    toony = float(np.clip((2.0 - (hi - lo)) * 0.5, 0.0, 1.0))
    return toony, float(-(hi + lo) * 0.5)


def _mtoon0(doc, props: dict, elem: str, textures, n_textures: int):
    """VRM 0.x materialProperties entry -> (MToon, overrides for the glTF material)."""
    fp = props.get("floatProperties", {}) or {}
    vp = props.get("vectorProperties", {}) or {}
    tp = props.get("textureProperties", {}) or {}

    def col(key, default):
        return srgb_to_linear(np.asarray(vp.get(key, default), float)[:3])

    toony, shift = migrate_shading_0x(float(fp.get("_ShadeToony", 0.9)), float(fp.get("_ShadeShift", 0.0)))
    wmode = {0: "none", 1: "worldCoordinates", 2: "screenCoordinates"}.get(int(fp.get("_OutlineWidthMode", 0)), "none")
    width = float(fp.get("_OutlineWidth", 0.0)) * 0.01  # 0.x stores centimetres / percent of screen
    if wmode == "screenCoordinates":
        width *= 0.5

    def tex(key):
        t = tp.get(key)
        if isinstance(t, int) and 0 <= t < n_textures:
            return TextureRef(texture=t)
        return None

    mtoon = MToon(
        shade_color=col("_ShadeColor", [0.97, 0.81, 0.86, 1]),
        shade_texture=tex("_ShadeTexture"),
        shading_shift=shift,
        shading_toony=toony,
        rim_color=col("_RimColor", [0, 0, 0, 1]),
        rim_fresnel_power=float(fp.get("_RimFresnelPower", 1.0)),
        rim_lift=float(fp.get("_RimLift", 0.0)),
        rim_lighting_mix=float(fp.get("_RimLightingMix", 0.0)),
        outline_width_mode=wmode,
        outline_width=width,
        outline_color=col("_OutlineColor", [0, 0, 0, 1]),
        outline_lighting_mix=float(fp.get("_OutlineLightingMix", 1.0)),
    )
    blend = int(fp.get("_BlendMode", 0))
    over = {
        "alpha_mode": {0: "OPAQUE", 1: "MASK", 2: "BLEND", 3: "BLEND"}.get(blend, "OPAQUE"),
        "alpha_cutoff": float(fp.get("_Cutoff", 0.5)),
        "double_sided": int(fp.get("_CullMode", 2)) == 0,
    }
    if "_Color" in vp:
        c = np.asarray(vp["_Color"], float)
        over["base_color_factor"] = np.concatenate([srgb_to_linear(c[:3]), c[3:4] if c.size > 3 else [1.0]])
    main = tex("_MainTex")
    if main is not None:
        st = vp.get("_MainTex")
        if st and len(st) == 4 and (st[0], st[1], st[2], st[3]) != (0, 0, 1, 1):
            # stored [offsetX, offsetY, scaleX, scaleY] with Unity's v up; glTF's v points down:
            # v' = sy·v + (1 − sy − oy)
            main = TextureRef(texture=main.texture, transform=TextureTransform(
                offset=np.array([st[0], 1.0 - st[3] - st[1]], float), scale=np.asarray(st[2:], float)))
        over["base_color_texture"] = main
    if "_EmissionColor" in vp:
        over["emissive_factor"] = col("_EmissionColor", [0, 0, 0, 1])
    queue = props.get("renderQueue")
    if blend in (2, 3) and isinstance(queue, int):
        # MToon 1.0 orders transparent materials by renderQueueOffsetNumber in [-9, 9] around 3000
        mtoon = replace(mtoon, render_queue_offset=int(np.clip(queue - 3000, -9, 9)))
    if blend == 3:
        mtoon = replace(mtoon, transparent_with_z_write=True)
    return mtoon, over


def build_materials(doc: GltfDocument, textures, vrm0_props: list | None) -> tuple[Material, ...]:
    """Parse materials; VRM 0.x ``materialProperties`` (matched by name) override MToon parts."""
    props_by_name = {}
    for p in vrm0_props or []:
        if isinstance(p, dict) and p.get("shader", "").startswith("VRM/MToon"):
            props_by_name[p.get("name")] = p
    out = []
    for i, m in enumerate(doc.json.get("materials", []) or []):
        elem = f"materials[{i}]"
        pbr = m.get("pbrMetallicRoughness", {}) or {}
        exts = m.get("extensions", {}) or {}
        alpha = m.get("alphaMode", "OPAQUE")
        if alpha not in ("OPAQUE", "MASK", "BLEND"):
            doc.issues.warn(f"{elem}.alphaMode", f"unknown alphaMode {alpha!r}; OPAQUE used")
            alpha = "OPAQUE"
        fields = dict(
            name=str(m.get("name", f"material{i}")),
            base_color_factor=np.asarray(pbr.get("baseColorFactor", [1, 1, 1, 1]), float),
            base_color_texture=_texref(doc, pbr.get("baseColorTexture"), f"{elem}.pbrMetallicRoughness.baseColorTexture", textures),
            emissive_factor=np.asarray(m.get("emissiveFactor", [0, 0, 0]), float),
            emissive_texture=_texref(doc, m.get("emissiveTexture"), f"{elem}.emissiveTexture", textures),
            normal_texture=_texref(doc, m.get("normalTexture"), f"{elem}.normalTexture", textures),
            metallic_factor=float(pbr.get("metallicFactor", 1.0)),
            roughness_factor=float(pbr.get("roughnessFactor", 1.0)),
            alpha_mode=alpha,
            alpha_cutoff=float(m.get("alphaCutoff", 0.5)),
            double_sided=bool(m.get("doubleSided", False)),
            unlit="KHR_materials_unlit" in exts,
            mtoon=None,
        )
        if "VRMC_materials_mtoon" in exts:
            fields["mtoon"] = _mtoon1(doc, exts["VRMC_materials_mtoon"], f"{elem}.extensions.VRMC_materials_mtoon", textures)
        elif fields["name"] in props_by_name:
            mt, over = _mtoon0(doc, props_by_name[fields["name"]], elem, textures, len(textures))
            fields["mtoon"] = mt
            fields.update(over)
        out.append(Material(**fields))
    return tuple(out)
