"""Materials on the GPU: one std140 ``Material`` uniform block per material (glsl/common.glsl)
and the shader features each material needs.

Lighting model per material (glsl/mesh.frag): MToon when the material has MToon parameters
(VRM 0.x ``materialProperties`` or ``VRMC_materials_mtoon``), else unlit for
``KHR_materials_unlit``, else glTF metallic-roughness PBR. Which textures, rim, matcap and
UV animation a material uses are compile-time features (``#define``s, see
:func:`shader_features`): a software rasteriser runs every instruction of a shader whatever a
uniform says, so a material pays only for what it uses. Expression material colour binds and
texture transform binds are applied with :meth:`MaterialTable.set_overrides`; MToon UV
animation with :meth:`MaterialTable.set_time`.
"""

from __future__ import annotations

import math

import numpy as np
from ._gl import GL

from avatars import Material, TextureRef

from .gpu import Buffer, Ledger

#: Textures a material may sample, in the order of their transforms in the block and of the
#: bits of ``m_flags.z`` (texture coordinate set 1). Index -> (name in the shader, colour data?).
TEXTURE_SLOTS = ("base", "shade", "emissive", "normal", "shading_shift", "matcap", "rim", "outline_width",
                 "uv_mask", "metallic_roughness", "occlusion")
SRGB_SLOTS = frozenset({"base", "shade", "emissive", "matcap", "rim"})
#: Slots moved by expression texture transform binds (three-vrm's list for MToon, plus the PBR maps).
UV_BIND_SLOTS = frozenset({"base", "shade", "emissive", "normal", "rim", "outline_width", "uv_mask",
                           "metallic_roughness"})
BLOCK_SIZE = 160 + 32 * len(TEXTURE_SLOTS)  #: bytes of one Material block (std140)
ALPHA_MODES = {"OPAQUE": 0, "MASK": 1, "BLEND": 2}
LIGHTING_UNLIT, LIGHTING_PBR, LIGHTING_MTOON = 0, 1, 2
LIGHTING_DEFINES = ("LIGHTING_UNLIT", "LIGHTING_PBR", "LIGHTING_MTOON")
#: UV animation offsets are reduced by this period when no mask scales them (REPEAT and
#: MIRRORED_REPEAT both repeat every 2), so float32 keeps its precision in long runs.
_SCROLL_PERIOD = 2.0


def lighting_model(mat: Material) -> int:
    if mat.mtoon is not None:
        return LIGHTING_MTOON
    return LIGHTING_UNLIT if mat.unlit else LIGHTING_PBR


def has_outline(mat: Material) -> bool:
    """True when the material asks for an MToon inverted-hull outline (not drawn for BLEND)."""
    m = mat.mtoon
    return (m is not None and m.outline_width_mode != "none" and m.outline_width > 0
            and mat.alpha_mode != "BLEND")


def material_textures(mat: Material) -> dict[str, TextureRef]:
    """The textures ``mat`` samples, by slot name (:data:`TEXTURE_SLOTS`), for its lighting model."""
    model = lighting_model(mat)
    out = {"base": mat.base_color_texture}
    if model != LIGHTING_UNLIT:
        out["emissive"] = mat.emissive_texture
        out["normal"] = mat.normal_texture
    if model == LIGHTING_PBR:
        out["metallic_roughness"] = mat.metallic_roughness_texture
        out["occlusion"] = mat.occlusion_texture
    mt = mat.mtoon
    if mt is not None:
        out.update(shade=mt.shade_texture, shading_shift=mt.shading_shift_texture, matcap=mt.matcap_texture,
                   rim=mt.rim_multiply_texture, outline_width=mt.outline_width_multiply_texture,
                   uv_mask=mt.uv_animation_mask_texture if mt.uv_animated else None)
    return {k: v for k, v in out.items() if v is not None}


def shader_features(mat: Material, color_binds: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ``#define``s of the mesh program that draws ``mat`` (sorted; the program cache key).

    ``color_binds``: material colour bind kinds expressions may set on ``mat`` ("rimColor",
    "matcapColor", "emissionColor", ...), so a rim that is black at rest is still compiled in.
    """
    f = {LIGHTING_DEFINES[lighting_model(mat)]}
    f.update(f"HAS_{slot.upper()}_TEX" for slot in material_textures(mat))
    mt = mat.mtoon
    if mt is not None:
        if np.any(np.asarray(mt.rim_color) > 0) or mt.matcap_texture is not None or "rimColor" in color_binds:
            f.add("MTOON_RIM")
        if mt.uv_animated:
            f.add("UV_ANIMATION")
        if mt.outline_width_mode == "screenCoordinates":
            f.add("OUTLINE_SCREEN")
    return tuple(sorted(f))


def _rgb(a, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    a = np.asarray(default if a is None else a, np.float64).ravel()
    return np.resize(a[:3], 3) if a.size >= 3 else np.asarray(default, np.float64)


def uv_animation(mat: Material, time_s: float) -> tuple[float, float, float]:
    """MToon UV animation at ``time_s`` seconds: (scroll x, scroll y, rotation phase) =
    speeds × time (VRMC_materials_mtoon 1.0 "UV Animation"; three-vrm accumulates the same).
    Without a mask texture the values are reduced modulo their period (2 for scrolls, 2π for
    the rotation), which changes no sampled texel."""
    mt = mat.mtoon
    if mt is None or not mt.uv_animated:
        return 0.0, 0.0, 0.0
    t = float(time_s)
    x, y, r = mt.uv_animation_scroll_x_speed * t, mt.uv_animation_scroll_y_speed * t, mt.uv_animation_rotation_speed * t
    if mt.uv_animation_mask_texture is None:
        x, y, r = math.fmod(x, _SCROLL_PERIOD), math.fmod(y, _SCROLL_PERIOD), math.fmod(r, 2.0 * math.pi)
    return x, y, r


def pack_material(mat: Material, overrides: dict | None = None, time_s: float = 0.0) -> bytes:
    """The std140 bytes of ``mat`` (see glsl/common.glsl).

    Args:
        mat: the material.
        overrides: optional expression results: {"color": (4,), "shadeColor", "rimColor",
            "emissionColor", "outlineColor", "matcapColor": (3+,), "uv_scale": (2,),
            "uv_offset": (2,)}, all linear.
        time_s: MToon UV animation time, seconds.
    """
    o = overrides or {}
    f = np.zeros(BLOCK_SIZE // 4, np.float32)
    i = f.view(np.int32)
    mt = mat.mtoon
    f[0:4] = np.asarray(o.get("color", mat.base_color_factor), np.float64)[:4]
    f[4:7] = _rgb(o.get("shadeColor", None if mt is None else mt.shade_color))
    f[7] = 1.0 if mt is None else mt.shading_shift_texture_scale
    f[8:11] = _rgb(o.get("rimColor", None if mt is None else mt.rim_color))
    f[11] = 5.0 if mt is None else mt.rim_fresnel_power
    f[12:15] = _rgb(o.get("emissionColor", mat.emissive_factor))
    f[15] = mat.normal_scale
    f[16:19] = _rgb(o.get("outlineColor", None if mt is None else mt.outline_color))
    f[19] = 1.0 if mt is None else mt.outline_lighting_mix
    f[20:23] = _rgb(o.get("matcapColor", None if mt is None else mt.matcap_color))
    f[23] = mat.occlusion_strength
    if mt is not None:
        f[24:28] = (mt.shading_shift, mt.shading_toony, mt.rim_lift, mt.rim_lighting_mix)
    f[28:32] = (mat.alpha_cutoff, 0.0 if mt is None else mt.outline_width, mat.metallic_factor, mat.roughness_factor)
    f[32:35] = uv_animation(mat, time_s)
    textures = material_textures(mat)
    texcoord_bits = 0
    bind = None
    if "uv_scale" in o or "uv_offset" in o:
        s = np.asarray(o.get("uv_scale", (1.0, 1.0)), np.float64)
        t = np.asarray(o.get("uv_offset", (0.0, 0.0)), np.float64)
        bind = np.array([[s[0], 0, t[0]], [0, s[1], t[1]], [0, 0, 1]])
    rows = f[40:].reshape(len(TEXTURE_SLOTS), 2, 4)
    for k, slot in enumerate(TEXTURE_SLOTS):
        ref = textures.get(slot)
        m = np.eye(3)
        if ref is not None:
            tr = ref.transform
            texcoord = ref.texcoord if tr is None or tr.texcoord is None else tr.texcoord
            texcoord_bits |= (1 << k) if texcoord == 1 else 0
            if tr is not None:
                m = tr.matrix()
        if bind is not None and slot in UV_BIND_SLOTS:
            m = bind @ m
        rows[k, :, :3] = m[:2]
    i[36:40] = (ALPHA_MODES.get(mat.alpha_mode, 0), int(bool(mat.double_sided)), texcoord_bits, 0)
    return f.tobytes()


class MaterialTable:
    """All materials of an avatar (plus the glTF default material, index -1) in one UBO.

    Blocks are placed at ``GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT``-aligned offsets and bound with
    ``glBindBufferRange`` per draw.
    """

    def __init__(self, ledger: Ledger, materials: tuple[Material, ...]):
        align = int(GL.glGetIntegerv(GL.GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT))
        self.stride = (BLOCK_SIZE + align - 1) // align * align
        self.materials = tuple(materials) + (Material(name="default"),)
        data = bytearray(self.stride * len(self.materials))
        for k, m in enumerate(self.materials):
            data[k * self.stride: k * self.stride + BLOCK_SIZE] = pack_material(m)
        self.buffer = Buffer(ledger, GL.GL_UNIFORM_BUFFER, np.frombuffer(bytes(data), np.uint8))
        self._overrides: dict[int, dict] = {}
        self._uploaded: dict[int, bytes] = {}
        self._time_s = 0.0
        #: materials whose block changes with time (MToon UV animation)
        self.animated = frozenset(k for k, m in enumerate(self.materials[:-1]) if m.mtoon is not None
                                  and m.mtoon.uv_animated)

    def material(self, index: int) -> Material:
        return self.materials[index]

    def bind(self, index: int, binding: int) -> None:
        """Bind material ``index`` (-1: default material) to uniform block ``binding``."""
        GL.glBindBufferRange(GL.GL_UNIFORM_BUFFER, binding, self.buffer.id, (index % len(self.materials)) * self.stride,
                             BLOCK_SIZE)

    def _refresh(self, indices) -> None:
        for k in indices:
            if 0 <= k < len(self.materials) - 1:
                packed = pack_material(self.materials[k], self._overrides.get(k), self._time_s)
                if self._uploaded.get(k) != packed:
                    self.buffer.update(np.frombuffer(packed, np.uint8), k * self.stride)
                    self._uploaded[k] = packed

    def set_overrides(self, overrides: dict[int, dict]) -> None:
        """Apply expression overrides {material index: overrides (see :func:`pack_material`)};
        materials overridden before and absent now are restored."""
        changed = set(overrides) | set(self._overrides)
        self._overrides = {k: v for k, v in overrides.items() if v}
        self._refresh(changed)

    def set_time(self, time_s: float) -> None:
        """Advance MToon UV animation to ``time_s`` seconds (the run's clock)."""
        if time_s != self._time_s:
            self._time_s = float(time_s)
            self._refresh(self.animated)

    def release(self) -> None:
        self.buffer.release()
