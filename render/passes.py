"""The mesh pass: draws an uploaded avatar's primitives in the right order and state.

Order: opaque, then alpha-tested (MASK: its shader may discard, which turns off early depth
tests), then MToon outlines (inverted hull: front faces culled, vertices pushed out along
their normals), then blended primitives back to front (by the view depth of each
primitive's anchor point, after the MToon render queue offset) with depth writes off
unless the material asks for ``transparentWithZWrite``. The caller binds the framebuffer,
the Frame block, and sets depth test and clear state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from ._gl import GL

from .morphs import active_targets
from .shaders import MATERIAL_BINDING, MAX_MORPHS, UNIT_JOINTS, UNIT_MORPHS, Program, Programs
from .upload import GpuAvatar, GpuPrimitive


class MeshPass:
    """Draws avatars with the mesh programs of ``programs``."""

    def __init__(self, programs: Programs):
        self.programs = programs
        self._morph_index = np.zeros(MAX_MORPHS, np.int32)
        self._morph_weight = np.zeros(MAX_MORPHS, np.float32)
        self._program: Program | None = None
        #: triangles drawn by the last :meth:`draw` (outlines included)
        self.triangles = 0

    def link(self, gpu: GpuAvatar) -> int:
        """Link every program ``gpu`` will draw with now (at upload, not in the first frame).
        Returns the number of programs."""
        steps = self.link_steps(gpu)
        for s in steps:
            s()
        return len(steps)

    def link_steps(self, gpu: GpuAvatar) -> list:
        """One callable per program ``gpu`` will draw with, each linking it (a no-op once
        linked): :meth:`link` spread over frames (:class:`render.staged.AvatarUpload`)."""
        keys = set()
        for p in gpu.primitives:
            keys.add((p.alpha_mode == "MASK", False, p.features))
            if p.outline:
                keys.add((p.alpha_mode == "MASK", True, p.features))
        textured = gpu.joints.texture is not None
        return [lambda m=mask, o=outline, f=features: self.programs.mesh_for(m, o, textured, features=f)
                for mask, outline, features in sorted(keys)]

    def draw(self, gpu: GpuAvatar, weights: Sequence[np.ndarray | None] | None, view: np.ndarray,
             hidden: set[int], *, outlines: bool = True) -> tuple[int, int, int]:
        """Draw every primitive of ``gpu`` not in a ``hidden`` mesh instance.

        Args:
            gpu: the uploaded avatar, its joint matrices already updated for this frame.
            weights: per mesh instance morph weights (None: mesh defaults).
            view: (4, 4) world -> view matrix, for sorting blended primitives.
            hidden: mesh instance indices to skip.
            outlines: draw MToon outlines (:mod:`render.quality`).

        Returns:
            (opaque and masked draws, outline draws, blended draws).
        """
        self._program = None
        self.triangles = 0
        gpu.joints.bind(UNIT_JOINTS)
        prims = [p for p in gpu.primitives if p.instance not in hidden]
        opaque = [p for p in prims if p.alpha_mode == "OPAQUE"] + [p for p in prims if p.alpha_mode == "MASK"]
        for p in opaque:
            self._draw(gpu, p, weights, outline=False)
        outlined = [p for p in opaque if p.outline] if outlines else []
        for p in outlined:
            self._draw(gpu, p, weights, outline=True)
        blended = sort_back_to_front(gpu, [p for p in prims if p.alpha_mode == "BLEND"], view)
        if blended:
            GL.glEnable(GL.GL_BLEND)
            GL.glBlendFunc(GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA)  # premultiplied colour
            for p in blended:
                GL.glDepthMask(GL.GL_TRUE if p.z_write else GL.GL_FALSE)
                self._draw(gpu, p, weights, outline=False)
            GL.glDepthMask(GL.GL_TRUE)
            GL.glDisable(GL.GL_BLEND)
        GL.glDisable(GL.GL_CULL_FACE)
        self._program = None
        return len(opaque), len(outlined), len(blended)

    def draw_calls(self, gpu: GpuAvatar, *, outlines: bool = True) -> list[tuple[GpuPrimitive, bool]]:
        """(primitive, outline) of each draw call :meth:`draw` makes for ``gpu`` (unsorted)."""
        calls = [(p, False) for p in gpu.primitives]
        return calls + [(p, True) for p in gpu.primitives if outlines and p.outline and p.alpha_mode != "BLEND"]

    def draw_one(self, gpu: GpuAvatar, p: GpuPrimitive, *, outline: bool) -> None:
        """One draw call of :meth:`draw` alone, with the blend and depth state it has there
        (the framebuffer, frame uniforms and joints are the caller's): a software
        rasteriser's shader variant for it is compiled by this call (render/staged.py)."""
        self._program = None
        gpu.joints.bind(UNIT_JOINTS)
        blend = p.alpha_mode == "BLEND" and not outline
        if blend:
            GL.glEnable(GL.GL_BLEND)
            GL.glBlendFunc(GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA)
            GL.glDepthMask(GL.GL_TRUE if p.z_write else GL.GL_FALSE)
        self._draw(gpu, p, None, outline=outline)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDisable(GL.GL_BLEND)
        GL.glDisable(GL.GL_CULL_FACE)
        self._program = None

    def _draw(self, gpu: GpuAvatar, p: GpuPrimitive, weights, *, outline: bool) -> None:
        prog = self.programs.mesh_for(p.alpha_mode == "MASK", outline, gpu.joints.texture is not None,
                                      features=p.features)
        if prog is not self._program:
            prog.use()
            self._program = prog
        gpu.materials.bind(p.material, MATERIAL_BINDING)
        for unit, texture, sampler in p.textures:
            texture.bind(unit)
            sampler.bind(unit)
        if outline:
            GL.glEnable(GL.GL_CULL_FACE)
            GL.glCullFace(GL.GL_FRONT)
        elif p.double_sided:
            GL.glDisable(GL.GL_CULL_FACE)
        else:
            GL.glEnable(GL.GL_CULL_FACE)
            GL.glCullFace(GL.GL_BACK)
        self.bind_vertex_inputs(prog, gpu, p, weights)
        GL.glDrawElements(p.mode, p.count, p.index_type, None)
        self.triangles += p.count // 3

    def bind_vertex_inputs(self, prog: Program, gpu: GpuAvatar, p: GpuPrimitive, weights) -> None:
        """Everything ``mesh.vert`` reads for primitive ``p`` (besides the Frame block and the
        joint storage, bound once per pass): skinning and morph uniforms, the morph texture,
        constant attributes and the VAO. ``prog`` is in use; ``weights`` as in :meth:`draw`."""
        prog.set_int("u_joint_base", gpu.joints.instance_base[p.instance])
        prog.set_int("u_skinned", 1 if p.skinned else 0)
        gpu.contacts.bind(prog, p.instance)
        n = 0
        if p.morph is not None:
            w = None if weights is None else weights[p.instance]
            if w is None:
                w = gpu.avatar.meshes[gpu.avatar.mesh_instances[p.instance].mesh].default_weights
            n = active_targets(w, self._morph_index, self._morph_weight)
        prog.set_int("u_morph_count", n)
        if n:
            p.morph.texture.bind(UNIT_MORPHS)
            GL.glBindSampler(UNIT_MORPHS, 0)
            prog.set_int("u_morph_vertices", p.morph.vertices)
            prog.set_int("u_morph_normal_base", p.morph.normal_base)
            prog.set_ints("u_morph_index", self._morph_index[:n])
            prog.set_floats("u_morph_weight", self._morph_weight[:n])
        for loc, value in p.constants:  # current attribute values are context state
            GL.glVertexAttrib4f(loc, *value)
        p.vao.bind()


def sort_back_to_front(gpu: GpuAvatar, prims: list[GpuPrimitive], view: np.ndarray) -> list[GpuPrimitive]:
    """Blended primitives in MToon's render queue order (VRMC_materials_mtoon 1.0: those with
    ``transparentWithZWrite`` first, then the others; within each, by render queue offset),
    then by view depth far to near.
    Each primitive's depth is that of its bind-space centroid carried by its most
    influential joint (this frame's skinning matrices)."""
    if len(prims) < 2:
        return prims
    mats = gpu.joints.current
    keys = []
    for p in prims:
        m = mats[gpu.joints.instance_base[p.instance] + (p.anchor_joint if p.skinned else 0)]
        z = (view @ (m @ p.anchor_point))[2]  # the camera looks down -z: farther is more negative
        keys.append((not p.z_write, p.queue_offset, z))
    order = sorted(range(len(prims)), key=lambda k: keys[k])
    return [prims[k] for k in order]
