"""The vertex shader's skinning equals the CPU skinning used for hair measurements.

:mod:`avatars.skinning` (numpy) claims to compute exactly what ``render/glsl/mesh.vert`` does:
morph targets first, then linear-blend skinning (glTF 2.0 §3.7.3). Here the shader's
``v_world`` output is captured with transform feedback, from the renderer's own mesh
program variant (same source, defines and uniform block bindings; only the feedback
varying is declared before linking), the renderer's uploaded vertex buffers, joint storage
(uniform block and texture) and morph textures, with the per-primitive uniforms set by the
mesh pass itself (:meth:`render.passes.MeshPass.bind_vertex_inputs`). The pose is not the
rest pose: the head turned 30° and the hair joints moved by the spring solver, with blink
active. Every primitive (hair included) must agree within :data:`TOLERANCE_M`, also for
vertices with all-zero skin weights (both follow the vertex's first listed joint).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from avatars.math3d import quat_from_axis_angle
from avatars.skinning import joint_matrices, skin_positions
from render._gl import GL
from solver.chains import ChainSet
from solver.eval.hair_mesh import find_hair, spring_nodes
from solver.eval.posing import SubtreePoser

TOLERANCE_M = 1e-5          #: max |GPU - CPU| per coordinate, metres (float32 shader vs float64 numpy)
HEAD_YAW_DEG = 30.0
SUBSTEPS = 12               #: solver substeps after the turn (the hair lags the head)
BLINK = 0.8
HAIR_MOVED_M = 1e-3         #: the pose check: some hair joint is this far from its rest-relative place


def _pose(avatar) -> np.ndarray:
    """World matrices: head turned, hair joints solved (off their rest-relative frames)."""
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    world = poser.world(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), np.radians(HEAD_YAW_DEG)))
    cs = ChainSet.from_avatar(avatar)
    for _ in range(SUBSTEPS):
        cs.step(world)
    posed = world.copy()
    cs.apply(posed)
    hair = np.array(sorted(spring_nodes(avatar)), np.int64)
    moved = np.linalg.norm(posed[hair, :3, 3] - world[hair, :3, 3], axis=1).max()
    assert moved > HAIR_MOVED_M, f"hair joints moved only {moved:.2e} m: the pose would not test hair skinning"
    return posed


def _source_primitives(avatar) -> list[tuple[int, int]]:
    """(mesh instance, primitive index) of every uploaded primitive, in upload order
    (:func:`render.upload.upload_avatar` skips primitives without vertices or indices)."""
    return [(k, j) for k, mi in enumerate(avatar.mesh_instances)
            for j, p in enumerate(avatar.meshes[mi.mesh].primitives) if p.vertex_count and p.indices.size]


def _capture_v_world(renderer, world: np.ndarray, weights) -> list[np.ndarray]:
    """The shader's ``v_world`` (V, 3) float32 for every uploaded primitive, in
    ``renderer.gpu.primitives`` order, by transform feedback of GL_POINTS over its vertices."""
    from render.gpu import Buffer
    from render.passes import MeshPass
    from render.shaders import UNIT_JOINTS

    gpu = renderer.gpu
    renderer.draw(world, weights)          # uploads the joint matrices, binds the Frame block
    gpu.joints.bind(UNIT_JOINTS)
    mesh_pass = MeshPass(renderer.programs)
    query = int(np.ravel(GL.glGenQueries(1))[0])
    out = []
    GL.glEnable(GL.GL_RASTERIZER_DISCARD)
    try:
        for p in gpu.primitives:
            count = p.buffers[0].size // 12  # the position buffer: (V, 3) float32
            prog = renderer.programs.mesh_for(p.alpha_mode == "MASK", False, gpu.joints.texture is not None,
                                              feedback=("v_world",))
            prog.use()
            mesh_pass.bind_vertex_inputs(prog, gpu, p, weights)
            with Buffer(renderer.ledger, GL.GL_TRANSFORM_FEEDBACK_BUFFER, size=count * 12,
                        usage=GL.GL_STATIC_READ) as tfb:
                GL.glBindBufferBase(GL.GL_TRANSFORM_FEEDBACK_BUFFER, 0, tfb.id)
                GL.glBeginQuery(GL.GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN, query)
                GL.glBeginTransformFeedback(GL.GL_POINTS)
                GL.glDrawArrays(GL.GL_POINTS, 0, count)  # gl_VertexID = vertex index (morph lookups)
                GL.glEndTransformFeedback()
                GL.glEndQuery(GL.GL_TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN)
                written = int(GL.glGetQueryObjectuiv(query, GL.GL_QUERY_RESULT))
                assert written == count, f"transform feedback wrote {written} of {count} vertices"
                got = np.empty((count, 3), np.float32)
                GL.glBindBuffer(GL.GL_TRANSFORM_FEEDBACK_BUFFER, tfb.id)
                ptr = GL.glMapBufferRange(GL.GL_TRANSFORM_FEEDBACK_BUFFER, 0, got.nbytes, GL.GL_MAP_READ_BIT)
                ctypes.memmove(got.ctypes.data, ptr, got.nbytes)
                GL.glUnmapBuffer(GL.GL_TRANSFORM_FEEDBACK_BUFFER)
                GL.glBindBufferBase(GL.GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0)
            out.append(got)
    finally:
        GL.glDisable(GL.GL_RASTERIZER_DISCARD)
        GL.glBindVertexArray(0)
        GL.glDeleteQueries(1, [query])
    assert GL.glGetError() == GL.GL_NO_ERROR
    return out


@pytest.mark.parametrize("storage", ["ubo", "texture"])
@pytest.mark.parametrize("name", ["godette", "layered"])
def test_shader_skinning_matches_cpu(name, storage, avatars_by_name, make_renderer):
    from render import expression_weights

    avatar = avatars_by_name[name]
    world = _pose(avatar)
    weights = expression_weights(avatar, {"blink": BLINK})
    r = make_renderer((64, 64), samples=0, joint_storage=storage)
    r.set_avatar(avatar)
    assert r.gpu.joints.storage == storage
    sources = _source_primitives(avatar)
    assert len(sources) == len(r.gpu.primitives)
    captured = _capture_v_world(r, world, weights)

    hair = {(h.instance, h.primitive) for h in find_hair(avatar)}
    assert hair and hair <= set(sources), f"{name}: hair primitives {sorted(hair)} not all compared"
    worst, worst_hair, morphed = 0.0, 0.0, 0
    for (k, j), gp, got in zip(sources, r.gpu.primitives, captured):
        mi = avatar.mesh_instances[k]
        prim = avatar.meshes[mi.mesh].primitives[j]
        assert gp.instance == k and len(got) == prim.vertex_count
        jm = joint_matrices(avatar, mi.skin, world) if mi.skin >= 0 else None
        cpu = skin_positions(prim, jm, node_world=world[mi.node], morph_weights=weights[k])
        diff = float(np.abs(got - cpu).max())
        assert diff < TOLERANCE_M, (f"{name} ({storage}) instance {k} primitive {j}: shader and CPU skinning "
                                    f"differ by {diff:.3e} m")
        worst = max(worst, diff)
        if (k, j) in hair:
            worst_hair = max(worst_hair, diff)
        if gp.morph is not None and np.abs(weights[k]).max() > 0:
            # the comparison sees the morphs: without them the CPU result moves
            rest = skin_positions(prim, jm, node_world=world[mi.node])
            morphed += float(np.abs(rest - cpu).max()) > 1e-3
    assert morphed, f"{name}: blink moves no vertex, the morph path is untested"
    print(f"\n{name} ({storage}): max |shader - CPU| {worst:.2e} m, hair {worst_hair:.2e} m")


def test_zero_weight_vertices_follow_their_first_joint(godette, make_renderer):
    """Vertices whose skin weights are all zero (invalid glTF, kept as such by the loader) are
    drawn rigidly with their first listed joint (mesh.vert's fallback); the CPU agrees."""
    from dataclasses import replace

    from render import expression_weights

    k = next(h.instance for h in find_hair(godette))
    mi = godette.mesh_instances[k]
    mesh = godette.meshes[mi.mesh]
    prim = mesh.primitives[0]
    weights = prim.weights.copy()
    zeroed = np.arange(0, prim.vertex_count, 7)
    weights[zeroed] = 0.0
    meshes = list(godette.meshes)
    meshes[mi.mesh] = replace(mesh, primitives=(replace(prim, weights=weights), *mesh.primitives[1:]))
    avatar = replace(godette, meshes=tuple(meshes))
    world = _pose(avatar)
    morphs = expression_weights(avatar, {"blink": BLINK})
    r = make_renderer((64, 64), samples=0)
    r.set_avatar(avatar)
    got = _capture_v_world(r, world, morphs)[_source_primitives(avatar).index((k, 0))]
    jm = joint_matrices(avatar, mi.skin, world)
    cpu = skin_positions(avatar.meshes[mi.mesh].primitives[0], jm, morph_weights=morphs[k])
    assert np.abs(cpu[zeroed]).max() > 0.1, "zero-weight vertices must not collapse to the origin"
    diff = float(np.abs(got - cpu).max())
    assert diff < TOLERANCE_M, f"zero-weight vertices: shader and CPU skinning differ by {diff:.3e} m"
    print(f"\ngodette, {len(zeroed)} zero-weight vertices: max |shader - CPU| {diff:.2e} m")
