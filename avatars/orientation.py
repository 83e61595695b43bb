"""Turn VRM 0.x avatars (which face -Z) to face +Z like VRM 1.0 (docs/design.md §3).

A change of basis by F = Ry(180°) = diag(-1, 1, -1) applied to all data: every local
frame is conjugated (R' = F R F, t' = F t; for quaternions (x, y, z, w) -> (-x, y, -z, w)),
so world matrices become W' = F W F and every vector stored in a local frame (vertices,
normals, morph deltas, collider offsets, virtual tails) and in world space (gravity
directions) maps by F. Skinning stays exact: W' IBM' v' = F (W IBM v) with IBM' = F IBM F.
The scene root stays identity, unlike rotating a root node as three-vrm's rotateVRM0 does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .model import Avatar, Primitive
from .skeleton import Skeleton

FLIP = np.array([-1.0, 1.0, -1.0])
FLIP4 = np.diag([-1.0, 1.0, -1.0, 1.0])


def _v(a: np.ndarray | None, dtype=None) -> np.ndarray | None:
    if a is None:
        return None
    out = a * FLIP.astype(a.dtype)
    return out if dtype is None else out.astype(dtype)


def _prim(p: Primitive) -> Primitive:
    return replace(
        p,
        positions=_v(p.positions),
        normals=_v(p.normals),
        morph_positions=_v(p.morph_positions),
        morph_normals=_v(p.morph_normals),
    )


def turn_to_plus_z(avatar: Avatar) -> Avatar:
    """Return the same avatar expressed in a basis rotated 180° about +Y."""
    sk = avatar.skeleton
    skeleton = Skeleton(
        names=sk.names,
        parents=sk.parents.copy(),
        rest_translation=sk.rest_translation * FLIP,
        rest_rotation=sk.rest_rotation * np.array([-1.0, 1.0, -1.0, 1.0]),
        rest_scale=sk.rest_scale.copy(),
        levels=sk.levels,
    )
    meshes = tuple(replace(m, primitives=tuple(_prim(p) for p in m.primitives)) for m in avatar.meshes)
    skins = tuple(replace(s, inverse_bind=FLIP4 @ s.inverse_bind @ FLIP4) for s in avatar.skins)
    colliders = tuple(
        replace(c, offset=_v(c.offset), tail=_v(c.tail), normal=_v(c.normal)) for c in avatar.colliders
    )
    springs = tuple(
        replace(
            s,
            joints=tuple(replace(j, gravity_dir=_v(j.gravity_dir)) for j in s.joints),
            tail_offset=_v(s.tail_offset),
        )
        for s in avatar.springs
    )
    return replace(avatar, skeleton=skeleton, meshes=meshes, skins=skins, colliders=colliders, springs=springs)


