"""Put the fitted, rigged hair into an ordinary :class:`avatars.Avatar`.

The result is what a VRM 1.0 file of the same content loads to (see
:func:`avatars.vrm1.to_vrm1`): the input avatar with

- the new joint nodes appended to the skeleton (identity local rotations, unit scale),
- a new skin (the head, the new joints and, for long hair, the upperChest; inverse bind
  matrices rounded to float32, as a file stores them),
- a new mesh ("TryOnHair": positions, normals, uv, JOINTS_0/WEIGHTS_0) drawn by a new root
  node with an identity transform (bind space = world rest space),
- a new MToon material (the style's diffuse colour, double sided, no outline); a textured
  hair rebuilt on the avatar it came from keeps its own materials (a primitive each),
- the new springs, collider groups and colliders (the fitted torso capsule),
- the avatar's own hair hidden (its mesh instances removed, with the expression binds
  that named them; its triangles cut out of the meshes it shares with the face or body —
  the primitives' index buffers without them, so the renderer needs nothing new; and the
  springs that moved nothing else) and, for a hair rebuilt on the avatar it came from, the
  old triangles and springs removed.

Nothing here decides anything; :mod:`avatars.tryon.pipeline` does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from avatars import (
    Avatar, Collider, ColliderGroup, Material, Mesh, MeshInstance, MToon, Primitive, Skeleton, Skin, Spring,
)
from avatars.hair import HairMesh
from avatars.meshes import stable_weights

#: Name of the node and mesh that draw the try-on hair.
HAIR_NODE = "TryOnHair"


@dataclass(frozen=True, eq=False)
class NewNode:
    """A node to append: ``parent`` is a node index of the final skeleton (existing nodes
    keep their indices; new nodes follow in order), ``translation`` (3,) in the parent frame."""

    name: str
    parent: int
    translation: np.ndarray


def hair_material(color: np.ndarray, name: str = "tryon_hair") -> Material:
    """A double-sided MToon hair material of linear RGBA ``color`` (shade 45 % darker)."""
    c = np.asarray(color, np.float64)
    return Material(
        name=name, base_color_factor=np.array([c[0], c[1], c[2], 1.0]), metallic_factor=0.0, roughness_factor=1.0,
        double_sided=True,
        mtoon=MToon(shade_color=c[:3] * 0.45, shading_shift=-0.05, shading_toony=0.9, rim_color=c[:3] * 0.6,
                    rim_fresnel_power=4.0, rim_lift=0.05),
    )


def vertex_normals(positions: np.ndarray, triangles: np.ndarray, weld: np.ndarray) -> np.ndarray:
    """(V, 3) float32 area-weighted normals, shared by welded vertices (smooth across UV seams)."""
    _, key = np.unique(weld, return_inverse=True)
    key = key.reshape(-1)
    tri = positions[triangles]
    fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    acc = np.zeros((key.max() + 1, 3))
    for k in range(3):
        np.add.at(acc, key[triangles[:, k]], fn)
    n = acc[key]
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(ln > 1e-30, n / np.maximum(ln, 1e-30), [0.0, 1.0, 0.0])
    return n.astype(np.float32)


def hidden_springs(avatar: Avatar, hide: tuple[int, ...], hide_triangles: dict | None = None) -> set[str]:
    """Names of the springs that move nothing visible: their joints (and descendants) weigh
    only on vertices of the hidden mesh instances, or mostly (more than half of those
    vertices) on vertices whose every triangle is hidden (``hide_triangles`` {(instance,
    primitive): (T,) bool}; a few stray face corners weighted to a bang do not keep its
    spring: without it they stay where the bone holds them, on the head)."""
    if not hide and not hide_triangles:
        return set()
    hide_triangles = hide_triangles or {}
    sk = avatar.skeleton
    visible_v: dict[tuple[int, int], np.ndarray] = {}
    for (k, p), mask in hide_triangles.items():
        prim = avatar.meshes[avatar.mesh_instances[k].mesh].primitives[p]
        vis = np.zeros(prim.vertex_count, bool)
        vis[prim.indices.astype(np.int64).reshape(-1, 3)[~np.asarray(mask, bool)].reshape(-1)] = True
        visible_v[(k, p)] = vis
    out = set()
    for s in avatar.springs:
        moved = set()
        for j in s.joints:
            moved.update(sk.descendants(j.node))
        seen_hidden = seen_visible = 0
        for k, mi in enumerate(avatar.mesh_instances):
            if mi.skin < 0:
                continue
            in_skin = np.array([int(n) in moved for n in avatar.skins[mi.skin].joints])
            if not in_skin.any():
                continue
            for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
                if prim.joints is None or prim.weights is None:
                    continue
                hit = ((prim.weights > 0) & in_skin[prim.joints.astype(np.int64)]).any(axis=1)
                if hide_triangles:          # only the vertices a primitive draws (a shared vertex buffer)
                    used = np.zeros(prim.vertex_count, bool)
                    used[prim.indices.astype(np.int64)] = True
                    hit &= used
                if k in hide:
                    seen_hidden += int(hit.sum())
                elif (k, p) in visible_v:
                    vis = visible_v[(k, p)]
                    seen_hidden += int((hit & ~vis).sum())
                    seen_visible += int((hit & vis).sum())
                else:
                    seen_visible += int(hit.sum())
        if seen_hidden and (not seen_visible or (hide_triangles and seen_visible < seen_hidden)):
            out.add(s.name)
    return out


def hide_triangles(avatar: Avatar, masks: dict) -> tuple[Avatar, tuple[int, ...]]:
    """(the avatar with the triangles ``masks`` {(instance, primitive): (T,) bool} removed
    from their primitives' index buffers, the instances left with no triangle): the renderer
    then draws the rest of a mesh the hair shared (vertices, skin and morph targets
    untouched). A mesh drawn by several instances is copied for the one that hides."""
    if not masks:
        return avatar, ()
    meshes = list(avatar.meshes)
    instances = list(avatar.mesh_instances)
    emptied = []
    for k in sorted({k for k, _ in masks}):
        mi = instances[k]
        mesh = meshes[mi.mesh]
        prims = list(mesh.primitives)
        for p, prim in enumerate(prims):
            if (k, p) not in masks:
                continue
            tris = prim.indices.reshape(-1, 3)[~np.asarray(masks[(k, p)], bool)]
            prims[p] = replace(prim, indices=tris.reshape(-1).astype(prim.indices.dtype))
        kept = tuple(pr for pr in prims if len(pr.indices) or pr.mode != 4)
        new = replace(mesh, primitives=kept)
        shared = sum(1 for m in instances if m.mesh == mi.mesh) > 1
        if shared:
            meshes.append(new)
            instances[k] = replace(mi, mesh=len(meshes) - 1)
        else:
            meshes[mi.mesh] = new
        if not kept:
            emptied.append(k)
    return replace(avatar, meshes=tuple(meshes), mesh_instances=tuple(instances)), tuple(emptied)


def _strip_origin(avatar: Avatar, hair: HairMesh) -> Avatar:
    """Remove the hair's origin triangles (and vertices no longer used) from their primitives."""
    by_prim: dict[tuple[int, int], np.ndarray] = {}
    for o in hair.origin:
        by_prim[(o.instance, o.primitive)] = o.triangles
    meshes = list(avatar.meshes)
    for (k, p), tri_sel in by_prim.items():
        mi = avatar.mesh_instances[k]
        mesh = meshes[mi.mesh]
        prim = mesh.primitives[p]
        tris = prim.indices.astype(np.int64).reshape(-1, 3)
        keep = np.ones(len(tris), bool)
        keep[tri_sel] = False
        tris = tris[keep]
        used = np.unique(tris)
        remap = np.full(prim.vertex_count, -1, np.int64)
        remap[used] = np.arange(len(used))

        def cut(a, axis=0):
            if a is None:
                return None
            return np.take(a, used, axis=axis)

        new = replace(prim, positions=cut(prim.positions), normals=cut(prim.normals), uv0=cut(prim.uv0),
                      uv1=cut(prim.uv1), colors=cut(prim.colors), joints=cut(prim.joints), weights=cut(prim.weights),
                      indices=remap[tris].reshape(-1).astype(np.uint32),
                      morph_positions=prim.morph_positions[:, used] if prim.morph_positions.shape[0] else
                      np.zeros((0, len(used), 3), np.float32),
                      morph_normals=cut(prim.morph_normals, axis=1))
        prims = list(mesh.primitives)
        prims[p] = new
        meshes[mi.mesh] = replace(mesh, primitives=tuple(prims))
    return replace(avatar, meshes=tuple(meshes))


def _textured(avatar: Avatar, hair: HairMesh) -> bool:
    """True when a hair taken from this avatar draws with a base colour texture (its look is
    the texture, not a colour) and has the UVs for it."""
    tm = hair.triangle_material
    return (tm is not None and hair.uv is not None and len(tm) == hair.triangle_count
            and any(0 <= m < len(avatar.materials) and avatar.materials[m].base_color_texture is not None
                    for m in np.unique(tm)))


def assemble(avatar: Avatar, hair: HairMesh, positions: np.ndarray, *, nodes: list[NewNode],
             skin_nodes: list[int], joints: np.ndarray, weights: np.ndarray, springs: list[Spring],
             colliders: list[Collider], groups: list[ColliderGroup], hide: tuple[int, ...] = (),
             hide_tris: dict | None = None, strip_origin: bool = False, color: np.ndarray | None = None,
             name: str = "") -> Avatar:
    """The avatar with the try-on hair (module doc).

    Args:
        positions: (V, 3) world rest positions of the hair's render vertices, metres.
        nodes: joint nodes to append (their indices are ``N, N+1, ...``), then the hair node.
        skin_nodes: (J,) node indices of the new skin's joints.
        joints: (V, 4) int indices into ``skin_nodes``; weights: (V, 4) float, rows sum to 1.
        springs: springs over the new joints (collider group indices of the final avatar).
        colliders: colliders to append (e.g. the fitted torso capsule).
        groups: collider groups to append (collider indices of the final avatar).
        hide: mesh instances to drop (the avatar's own hair).
        hide_tris: the avatar's own hair cut out of shared meshes, {(instance, primitive):
            (T,) bool} triangles to remove (:func:`hide_triangles`).
        strip_origin: remove the hair's origin triangles and cleared springs from the avatar.
    """
    if strip_origin and hair.origin:   # (``hide_tris`` never names a primitive the hair came from)
        avatar = _strip_origin(avatar, hair)
    gone = hidden_springs(avatar, hide, hide_tris)
    if hide_tris:
        avatar, emptied = hide_triangles(avatar, hide_tris)
        hide = tuple(sorted(set(hide) | set(emptied)))
    sk = avatar.skeleton
    names = list(sk.names) + [nd.name for nd in nodes] + [HAIR_NODE]
    parents = np.concatenate([sk.parents, [nd.parent for nd in nodes], [-1]]).astype(np.int64)
    trans = np.concatenate([sk.rest_translation, np.array([nd.translation for nd in nodes]).reshape(-1, 3),
                            np.zeros((1, 3))])
    rot = np.concatenate([sk.rest_rotation, np.tile([0.0, 0.0, 0.0, 1.0], (len(nodes) + 1, 1))])
    scale = np.concatenate([sk.rest_scale, np.ones((len(nodes) + 1, 3))])
    skeleton = Skeleton(names=tuple(names), parents=parents, rest_translation=trans, rest_rotation=rot,
                        rest_scale=scale)
    world = skeleton.rest_world
    ibm = np.linalg.inv(world[np.asarray(skin_nodes, np.int64)]).astype(np.float32).astype(np.float64)
    skin = Skin(name="tryon_hair", joints=np.asarray(skin_nodes, np.int64), inverse_bind=ibm)
    pos32 = np.asarray(positions, np.float32)
    w = np.asarray(weights, np.float64)
    w = stable_weights((w / w.sum(axis=1, keepdims=True)).astype(np.float32))   # as a reload normalises them
    common = dict(positions=pos32, normals=vertex_normals(pos32.astype(np.float64), hair.triangles, hair.weld),
                  uv0=None if hair.uv is None else hair.uv.astype(np.float32), joints=np.asarray(joints, np.uint16),
                  weights=w)
    if strip_origin and color is None and _textured(avatar, hair):
        # a hair rebuilt on its own avatar keeps its own (textured) materials: a primitive per material
        new_materials = ()
        prims = tuple(Primitive(indices=hair.triangles[hair.triangle_material == m].reshape(-1).astype(np.uint32),
                                material=int(m), **common) for m in np.unique(hair.triangle_material))
    else:
        new_materials = (hair_material(hair.color if color is None else color),)
        prims = (Primitive(indices=hair.triangles.reshape(-1).astype(np.uint32), material=len(avatar.materials),
                           **common),)
    mesh = Mesh(name=name or HAIR_NODE, primitives=prims)
    hidden_nodes = {avatar.mesh_instances[k].node for k in hide}
    instances = tuple(mi for k, mi in enumerate(avatar.mesh_instances) if k not in hide)
    instances += (MeshInstance(node=len(names) - 1, mesh=len(avatar.meshes), skin=len(avatar.skins)),)
    expressions = {
        k: replace(e, morph_target_binds=tuple(b for b in e.morph_target_binds if b.node not in hidden_nodes))
        for k, e in avatar.expressions.items()
    }
    gone |= set(hair.cleared_springs) if strip_origin else set()
    old_springs = tuple(s for s in avatar.springs if s.name not in gone)
    return replace(
        avatar, skeleton=skeleton, meshes=avatar.meshes + (mesh,), mesh_instances=instances,
        skins=avatar.skins + (skin,), materials=avatar.materials + new_materials, expressions=expressions,
        springs=old_springs + tuple(springs), colliders=avatar.colliders + tuple(colliders),
        collider_groups=avatar.collider_groups + tuple(groups), vrm_version="1.0", warnings=(),
    )
