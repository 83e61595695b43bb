"""Hair mesh detection: the skinned vertices whose dominant skin weight belongs to a spring joint.

Seed articles' measurement (docs/design.md §4.5): edges of hair triangles, with rest lengths from
the rest pose; used by :mod:`solver.eval.quality` for stretch, penetration and settling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from avatars import Avatar

from avatars.skinning import joint_matrices, skin_positions


@dataclass(frozen=True, eq=False)
class HairPart:
    """Hair vertices of one primitive.

    Attributes:
        instance: index into ``avatar.mesh_instances``.
        primitive: primitive index in its mesh.
        vertices: (H,) int64 vertex indices (dominant weight on a spring joint).
        edges: (E, 2) int64 positions into ``vertices`` (both ends are hair vertices).
        rest_lengths: (E,) float64 metres, from the rest pose.
        dominant_joint: (H,) int64 node index of each vertex's dominant joint.
    """

    instance: int
    primitive: int
    vertices: np.ndarray
    edges: np.ndarray
    rest_lengths: np.ndarray
    dominant_joint: np.ndarray


def spring_nodes(avatar: Avatar) -> set[int]:
    return {j.node for s in avatar.springs for j in s.joints}


def triangle_edges(indices: np.ndarray, mode: int = 4) -> np.ndarray:
    """Unique undirected edges (E, 2) of a triangle list (mode 4), strip (5) or fan (6)."""
    idx = np.asarray(indices, np.int64)
    if mode == 4:
        tri = idx[: len(idx) // 3 * 3].reshape(-1, 3)
    elif mode == 5:
        tri = np.stack([idx[:-2], idx[1:-1], idx[2:]], axis=1)
    elif mode == 6:
        tri = np.stack([np.full(len(idx) - 2, idx[0]), idx[1:-1], idx[2:]], axis=1)
    else:
        return np.zeros((0, 2), np.int64)
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    e.sort(axis=1)
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(e, axis=0)


def find_hair(avatar: Avatar, world: np.ndarray | None = None) -> list[HairPart]:
    """Hair parts of every skinned primitive (empty when the avatar has no springs).

    Args:
        world: (N, 4, 4) world matrices of the pose defining rest lengths (default: rest pose).
    """
    nodes = spring_nodes(avatar)
    if not nodes:
        return []
    world = avatar.skeleton.rest_world if world is None else world
    parts = []
    for k, inst in enumerate(avatar.mesh_instances):
        if inst.skin < 0:
            continue
        skin = avatar.skins[inst.skin]
        is_spring = np.array([int(n) in nodes for n in skin.joints])
        jm = joint_matrices(avatar, inst.skin, world)
        for p, prim in enumerate(avatar.meshes[inst.mesh].primitives):
            if prim.joints is None or prim.weights is None:
                continue
            dom = prim.joints[np.arange(prim.vertex_count), np.argmax(prim.weights, axis=1)].astype(np.int64)
            hair = np.nonzero(is_spring[dom])[0]
            if hair.size == 0:
                continue
            pos = np.full(prim.vertex_count, -1, np.int64)
            pos[hair] = np.arange(hair.size)
            edges = triangle_edges(prim.indices, prim.mode)
            edges = pos[edges]
            edges = edges[(edges >= 0).all(axis=1)]
            z = skin_positions(prim, jm, vertices=hair)
            rest = np.linalg.norm(z[edges[:, 0]] - z[edges[:, 1]], axis=1)
            keep = rest > 1e-9
            if not keep.any():
                continue
            parts.append(HairPart(instance=k, primitive=p, vertices=hair, edges=edges[keep],
                                  rest_lengths=rest[keep], dominant_joint=skin.joints[dom[hair]]))
    return parts
