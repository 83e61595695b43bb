"""Upload an :class:`avatars.Avatar` to the GPU: vertex/index buffers, textures, samplers,
materials, morph and joint textures. :meth:`GpuAvatar.release` frees every GL object.

Attribute locations (glsl/mesh.vert): 0 position, 1 normal, 2 uv0, 3 uv1, 4 colour,
5 joints (uvec4), 6 weights. Missing normals are computed (area-weighted smooth), missing
uvs / colours / skin data become constant attributes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from ._gl import GL

from avatars import Avatar, Primitive, Sampler

from .contact import ContactUniforms
from .gpu import (Buffer, Ledger, SamplerObject, Texture, VertexArray, needs_mipmaps, texture_rgba8,
                  texture_rgba8_steps)
from .materials import SRGB_SLOTS, MaterialTable, has_outline, material_textures, shader_features
from .morphs import MorphTexture
from .skinning import JointPalette

log = logging.getLogger(__name__)


def smooth_normals(positions: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Area-weighted vertex normals (V, 3) float32 of a triangle list."""
    n = np.zeros_like(positions, dtype=np.float64)
    tri = indices[: len(indices) // 3 * 3].reshape(-1, 3)
    if len(tri):
        p = positions.astype(np.float64)
        fn = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
        for k in range(3):
            np.add.at(n, tri[:, k], fn)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 1e-20, n / np.where(length > 0, length, 1), [0.0, 0.0, 1.0])
    return n.astype(np.float32)


@dataclass(eq=False)
class GpuPrimitive:
    """One drawable primitive: its VAO and buffers, material and sorting anchor.

    ``anchor_joint``/``anchor_point``: the skinning matrix (index within the instance) that
    moves most of the primitive and the bind-space centroid it carries, for back-to-front
    sorting of blended primitives. ``count`` indices are drawn; ``file_triangles`` is the
    file's triangle count (more than ``count // 3`` with reduced detail, :mod:`render.detail`).
    """

    instance: int
    mesh_instance_node: int
    material: int
    mode: int
    count: int
    index_type: int
    vao: VertexArray
    buffers: list[Buffer]
    morph: MorphTexture | None
    skinned: bool
    anchor_joint: int
    anchor_point: np.ndarray
    constants: list = field(default_factory=list)
    outline: bool = False
    alpha_mode: str = "OPAQUE"
    double_sided: bool = False
    queue_offset: int = 0
    z_write: bool = True
    features: tuple[str, ...] = ()
    textures: tuple[tuple[int, "Texture", "SamplerObject"], ...] = ()
    file_triangles: int = 0
    #: (mesh instance, primitive index in its mesh): the key of reduced-detail triangle lists
    key: tuple[int, int] = (-1, -1)

    def release(self) -> None:
        self.vao.release()
        for b in self.buffers:
            b.release()
        if self.morph is not None:
            self.morph.release()


def _upload_primitive(ledger: Ledger, prim: Primitive, instance: int, node: int, skinned: bool,
                      table: MaterialTable, features: tuple[str, ...],
                      textures: tuple[tuple[int, Texture, SamplerObject], ...],
                      indices: np.ndarray | None = None) -> GpuPrimitive:
    vao = VertexArray(ledger)
    buffers: list[Buffer] = []
    constants: list[tuple[int, tuple]] = []  # current attribute values are context state: set per draw

    def attr(loc, data, comps, gl_type=GL.GL_FLOAT, integer=False):
        b = Buffer(ledger, GL.GL_ARRAY_BUFFER, np.ascontiguousarray(data))
        buffers.append(b)
        vao.attribute(loc, b, comps, gl_type, integer=integer)

    normals = prim.normals if prim.normals is not None else smooth_normals(prim.positions, prim.indices)
    attr(0, prim.positions.astype(np.float32), 3)
    attr(1, normals.astype(np.float32), 3)
    if prim.uv0 is not None:
        attr(2, prim.uv0.astype(np.float32), 2)
    else:
        constants.append((2, (0, 0, 0, 1)))
    if prim.uv1 is not None:
        attr(3, prim.uv1.astype(np.float32), 2)
    else:
        constants.append((3, (0, 0, 0, 1)))
    if prim.colors is not None:
        attr(4, prim.colors.astype(np.float32), 4)
    else:
        constants.append((4, (1, 1, 1, 1)))
    use_skin = skinned and prim.joints is not None and prim.weights is not None
    if use_skin:
        attr(5, prim.joints.astype(np.uint16), 4, GL.GL_UNSIGNED_SHORT, integer=True)
        attr(6, prim.weights.astype(np.float32), 4)
    else:
        constants.append((6, (1, 0, 0, 0)))  # joints (location 5) keep the default 0
    if indices is None:                # else reduced detail: the same vertices, fewer triangles
        indices = prim.indices
    small = prim.vertex_count < 65536
    idx = indices.astype(np.uint16 if small else np.uint32)
    ib = Buffer(ledger, GL.GL_ELEMENT_ARRAY_BUFFER, idx)
    buffers.append(ib)
    GL.glBindVertexArray(vao.id)
    GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, ib.id)
    GL.glBindVertexArray(0)
    morph = MorphTexture(ledger, prim) if prim.morph_positions.shape[0] > 0 and prim.vertex_count else None

    anchor_joint = 0
    if use_skin and prim.vertex_count:
        totals = np.bincount(prim.joints.ravel().astype(np.int64), weights=prim.weights.ravel().astype(np.float64))
        anchor_joint = int(np.argmax(totals))
    centroid = prim.positions.mean(axis=0).astype(np.float64) if prim.vertex_count else np.zeros(3)
    mat = table.material(prim.material)
    return GpuPrimitive(
        instance=instance, mesh_instance_node=node, material=prim.material, mode=prim.mode,
        count=int(idx.size), index_type=GL.GL_UNSIGNED_SHORT if small else GL.GL_UNSIGNED_INT, vao=vao,
        buffers=buffers, constants=constants, morph=morph, skinned=use_skin, anchor_joint=anchor_joint,
        anchor_point=np.append(centroid, 1.0), outline=has_outline(mat) and prim.mode == 4,
        alpha_mode=mat.alpha_mode, double_sided=mat.double_sided,
        queue_offset=mat.mtoon.render_queue_offset if mat.mtoon is not None and mat.alpha_mode == "BLEND" else 0,
        z_write=mat.alpha_mode != "BLEND" or (mat.mtoon is not None and mat.mtoon.transparent_with_z_write),
        features=features, textures=textures, file_triangles=int(prim.indices.size) // 3,
    )


@dataclass(eq=False)
class GpuAvatar:
    """Everything of one avatar on the GPU. Build with :func:`upload_avatar`."""

    avatar: Avatar
    primitives: list[GpuPrimitive]
    images: dict[tuple[int, bool], Texture]
    samplers: dict[object, SamplerObject]
    texture_units: dict[tuple[int, bool], tuple[Texture, SamplerObject]]
    materials: MaterialTable
    joints: JointPalette
    contacts: ContactUniforms | None = None
    texture_bytes: int = 0
    released: bool = field(default=False)

    def texture(self, index: int, srgb: bool = True) -> tuple[Texture, SamplerObject] | None:
        """(GL texture, sampler) of glTF texture ``index`` (uploaded as sRGB colour or as
        linear data), or None when no material samples it so."""
        return self.texture_units.get((index, srgb))

    def set_triangles(self, detail: Mapping[tuple[int, int], np.ndarray] | None) -> None:
        """Draw other triangles over the same vertices: ``detail``'s lists by (mesh instance,
        primitive index in its mesh) (:func:`render.detail.reduce_avatar`), the file's where a
        primitive has none or ``detail`` is None. Only the index buffers are written (no
        vertex, texture or morph upload): a detail change costs one frame nothing visible."""
        av = self.avatar
        for p in self.primitives:
            k, j = p.key
            prim = av.meshes[av.mesh_instances[k].mesh].primitives[j]
            idx = prim.indices if detail is None else detail.get((k, j), prim.indices)
            idx = idx.astype(np.uint16 if p.index_type == GL.GL_UNSIGNED_SHORT else np.uint32)
            GL.glBindVertexArray(p.vao.id)        # the element binding is the VAO's state
            p.buffers[-1].allocate(idx)
            GL.glBindVertexArray(0)
            p.count = int(idx.size)

    def release(self) -> None:
        """Free every GL object of this avatar. Idempotent."""
        if self.released:
            return
        self.released = True
        for p in self.primitives:
            p.release()
        for t in self.images.values():
            t.release()
        for s in self.samplers.values():
            s.release()
        self.materials.release()
        self.joints.release()
        if self.contacts is not None:
            self.contacts.release()


def _sampler_policy(s: Sampler, force_mipmaps: bool) -> Sampler:
    """The sampler actually used: with ``force_mipmaps``, LINEAR minification becomes
    LINEAR_MIPMAP_LINEAR; NEAREST (pixel art, palettes) is always kept as the file asks."""
    if force_mipmaps and s.min_filter == GL.GL_LINEAR:
        return replace(s, min_filter=GL.GL_LINEAR_MIPMAP_LINEAR)
    return s


def _color_binds(avatar: Avatar) -> dict[int, frozenset[str]]:
    """Material index -> the colour bind kinds any expression sets on it."""
    out: dict[int, set[str]] = {}
    for e in avatar.expressions.values():
        for b in e.material_color_binds:
            out.setdefault(b.material, set()).add(b.type)
    return {k: frozenset(v) for k, v in out.items()}


def upload_avatar(ledger: Ledger, avatar: Avatar, *, force_mipmaps: bool = True,
                  joint_storage: str = "auto",
                  detail: Mapping[tuple[int, int], np.ndarray] | None = None) -> GpuAvatar:
    """Upload ``avatar`` (the context must be current). Only textures used by materials are
    uploaded: colour textures (base, shade, emissive, matcap, rim) as sRGB, data textures
    (normal, shading shift, outline width, UV animation mask, metallic-roughness, occlusion)
    as linear; an image used both ways is uploaded twice.

    Args:
        force_mipmaps: upgrade LINEAR minification to LINEAR_MIPMAP_LINEAR (exporters such as
            UniVRM 0.x write LINEAR, which aliases when a 1024 px texture covers 100 px of a
            bust shot; Unity-based VRM apps mipmap every texture). NEAREST stays NEAREST (pixel
            art, palettes) and wrap modes and magnification filters always follow the file.
            False: the file's samplers exactly, as three.js.
        joint_storage: skinning matrix storage, see :class:`render.skinning.JointPalette`.
        detail: triangle lists to draw instead of the file's, by (mesh instance, primitive
            index in its mesh), over the primitives' own vertices (reduced detail,
            :func:`render.detail.reduce_avatar`); None (default): the file's triangles.
    """
    steps = avatar_upload_steps(ledger, avatar, [], force_mipmaps=force_mipmaps, joint_storage=joint_storage,
                                detail=detail, staged=False)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def avatar_upload_steps(ledger: Ledger, avatar: Avatar, made: list, *, force_mipmaps: bool = True,
                        joint_storage: str = "auto",
                        detail: Mapping[tuple[int, int], np.ndarray] | None = None, staged: bool = True):
    """:func:`upload_avatar` as a generator that yields between small pieces of GL work (the
    material table, the joint palette, each primitive; with ``staged`` each texture's row
    bands and mipmap levels too, :func:`render.gpu.texture_rgba8_steps`), for an upload
    spread over frames (:class:`render.staged.AvatarUpload`). Every GL owner is appended to
    ``made`` as it is created, so a caller that stops early can release them. The return
    value (``StopIteration.value``) is the :class:`GpuAvatar`; the arguments are
    :func:`upload_avatar`'s."""
    textures_needed: dict[tuple[int, bool], bool] = {}    # (image, srgb) -> mipmapped
    samplers: dict[object, SamplerObject] = {}
    units: dict[tuple[int, bool], tuple[object, SamplerObject]] = {}

    def bound(ref, srgb: bool):
        t = ref.texture
        if not 0 <= t < len(avatar.textures):
            return None
        tex = avatar.textures[t]
        if not 0 <= tex.image < len(avatar.images):
            return None
        got = units.get((t, srgb))
        if got is not None:
            return got
        sampler = _sampler_policy(tex.sampler, force_mipmaps)
        key = (tex.image, srgb)
        textures_needed[key] = textures_needed.get(key, False) or needs_mipmaps(sampler)
        if sampler not in samplers:
            samplers[sampler] = SamplerObject(ledger, sampler)
            made.append(samplers[sampler])
        units[(t, srgb)] = (key, samplers[sampler])
        return units[(t, srgb)]

    from .shaders import MATERIAL_UNITS

    table = MaterialTable(ledger, avatar.materials)
    made.append(table)
    binds = _color_binds(avatar)
    per_material: dict[int, tuple[tuple[str, ...], list[tuple[str, object]]]] = {}
    for k, mat in enumerate(table.materials):
        index = k if k < len(table.materials) - 1 else -1
        refs = []
        for slot, ref in material_textures(mat).items():
            srgb = slot in SRGB_SLOTS
            if bound(ref, srgb) is not None:
                refs.append((slot, ref, srgb))
        per_material[index] = (shader_features(mat, binds.get(index, frozenset())), refs)
    images: dict[tuple[int, bool], Texture] = {}
    nbytes = 0
    for key, mips in textures_needed.items():      # first use order, as the units were bound
        yield
        rgba = avatar.images[key[0]].rgba
        if staged:
            steps = texture_rgba8_steps(ledger, rgba, srgb=key[1], mipmaps=mips)
            made.append(next(steps))
            images[key] = yield from steps
        else:
            images[key] = texture_rgba8(ledger, rgba, srgb=key[1], mipmaps=mips)
            made.append(images[key])
        nbytes += rgba.nbytes * (4 / 3 if mips else 1)
    units = {k: (images[key], s) for k, (key, s) in units.items()}
    yield
    joints = JointPalette(ledger, avatar, storage=joint_storage)
    made.append(joints)
    prims = []
    for k, mi in enumerate(avatar.mesh_instances):
        mesh = avatar.meshes[mi.mesh]
        for j, p in enumerate(mesh.primitives):
            if p.vertex_count == 0 or p.indices.size == 0:
                continue
            yield
            features, refs = per_material.get(p.material if 0 <= p.material < len(avatar.materials) else -1)
            textures = tuple((MATERIAL_UNITS[slot], *units[(ref.texture, srgb)]) for slot, ref, srgb in refs)
            prims.append(_upload_primitive(ledger, p, k, mi.node, mi.skin >= 0, table, features, textures,
                                           None if detail is None else detail.get((k, j))))
            made.append(prims[-1])
            prims[-1].key = (k, j)
    yield
    contacts = ContactUniforms(ledger, avatar)
    made.append(contacts)
    log.debug("uploaded %s: %d primitives, %d images (%.1f MB)", avatar.path, len(prims), len(images), nbytes / 1e6)
    return GpuAvatar(avatar=avatar, primitives=prims, images=images, samplers=samplers, texture_units=units,
                     materials=table, joints=joints, contacts=contacts, texture_bytes=int(nbytes))
