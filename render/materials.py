"""Materials on the GPU: one std140 ``Material`` uniform block per material (glsl/common.glsl).

Lighting model per material: MToon when the material has MToon parameters (VRM 0.x
``materialProperties`` or ``VRMC_materials_mtoon``), else unlit for ``KHR_materials_unlit``,
else Lambert (glTF PBR is approximated: base colour x (ambient + light x N.L)). Expression
material colour binds and texture transform binds are applied with :meth:`MaterialTable.set_overrides`.
"""

from __future__ import annotations

import numpy as np
from ._gl import GL

from avatars import Material

from .gpu import Buffer, Ledger

BLOCK_SIZE = 192  #: bytes of one Material block (std140)
ALPHA_MODES = {"OPAQUE": 0, "MASK": 1, "BLEND": 2}
OUTLINE_MODES = {"none": 0, "worldCoordinates": 1, "screenCoordinates": 2}
LIGHTING_UNLIT, LIGHTING_LAMBERT, LIGHTING_MTOON = 0, 1, 2


def lighting_model(mat: Material) -> int:
    if mat.mtoon is not None:
        return LIGHTING_MTOON
    return LIGHTING_UNLIT if mat.unlit else LIGHTING_LAMBERT


def has_outline(mat: Material) -> bool:
    """True when the material asks for an MToon inverted-hull outline (not drawn for BLEND)."""
    m = mat.mtoon
    return (m is not None and m.outline_width_mode != "none" and m.outline_width > 0
            and mat.alpha_mode != "BLEND")


def _rgb(a, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    a = np.asarray(default if a is None else a, np.float64).ravel()
    return np.resize(a[:3], 3) if a.size >= 3 else np.asarray(default, np.float64)


def pack_material(mat: Material, overrides: dict | None = None) -> bytes:
    """The std140 bytes of ``mat`` (see glsl/common.glsl).

    Args:
        mat: the material.
        overrides: optional expression results: {"color": (4,), "shadeColor": (3+,),
            "rimColor", "emissionColor", "outlineColor": (3+,), "uv_scale": (2,), "uv_offset": (2,)},
            all linear.
    """
    o = overrides or {}
    f = np.zeros(BLOCK_SIZE // 4, np.float32)
    i = f.view(np.int32)
    mt = mat.mtoon
    f[0:4] = np.asarray(o.get("color", mat.base_color_factor), np.float64)[:4]
    f[4:7] = _rgb(o.get("shadeColor", None if mt is None else mt.shade_color))
    f[8:11] = _rgb(o.get("rimColor", None if mt is None else mt.rim_color))
    f[11] = 5.0 if mt is None else mt.rim_fresnel_power
    f[12:15] = _rgb(o.get("emissionColor", mat.emissive_factor))
    f[16:19] = _rgb(o.get("outlineColor", None if mt is None else mt.outline_color))
    f[19] = 1.0 if mt is None else mt.outline_lighting_mix
    if mt is not None:
        f[20:24] = (mt.shading_shift, mt.shading_toony, mt.rim_lift, mt.rim_lighting_mix)
    f[24] = mat.alpha_cutoff
    f[25] = 0.0 if mt is None else mt.outline_width
    f[26] = 0.9 if mt is None else mt.gi_equalization
    base = mat.base_color_texture
    tr = base.transform if base is not None else None
    texcoord = base.texcoord if base is not None else 0
    if tr is not None and tr.texcoord is not None:
        texcoord = tr.texcoord
    i[28:32] = (ALPHA_MODES.get(mat.alpha_mode, 0), lighting_model(mat),
                OUTLINE_MODES.get(mt.outline_width_mode if mt else "none", 0), 1 if texcoord == 1 else 0)
    i[32:36] = (base is not None, mt is not None and mt.shade_texture is not None,
                mat.emissive_texture is not None, mat.double_sided)
    uv = np.eye(3) if tr is None else tr.matrix()
    if "uv_scale" in o or "uv_offset" in o:
        s = np.asarray(o.get("uv_scale", (1.0, 1.0)), np.float64)
        t = np.asarray(o.get("uv_offset", (0.0, 0.0)), np.float64)
        uv = np.array([[s[0], 0, t[0]], [0, s[1], t[1]], [0, 0, 1]]) @ uv
    cols = f[36:48].reshape(3, 4)
    cols[:, :3] = uv.T  # column-major mat3, each column padded to a vec4
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
        self._overridden: set[int] = set()
        self._uploaded: dict[int, bytes] = {}

    def material(self, index: int) -> Material:
        return self.materials[index]

    def bind(self, index: int, binding: int) -> None:
        """Bind material ``index`` (-1: default material) to uniform block ``binding``."""
        GL.glBindBufferRange(GL.GL_UNIFORM_BUFFER, binding, self.buffer.id, (index % len(self.materials)) * self.stride,
                             BLOCK_SIZE)

    def set_overrides(self, overrides: dict[int, dict]) -> None:
        """Apply expression overrides {material index: overrides (see :func:`pack_material`)};
        materials overridden before and absent now are restored."""
        for k in set(overrides) | self._overridden:
            if 0 <= k < len(self.materials) - 1:
                packed = pack_material(self.materials[k], overrides.get(k))
                if self._uploaded.get(k) != packed:
                    self.buffer.update(np.frombuffer(packed, np.uint8), k * self.stride)
                    self._uploaded[k] = packed
        self._overridden = {k for k, v in overrides.items() if v}

    def release(self) -> None:
        self.buffer.release()
