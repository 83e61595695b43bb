"""The target head: its skinned surface, scalp triangles, size, crown and envelope.

The head is what the humanoid ``head`` bone carries: the triangles of drawn meshes whose
three vertices are mostly (≥ 50 % of their weight) skinned to the head or to its
descendants that are not spring joints, at the rest pose. Meshes of the avatar's own hair
(:func:`own_hair_instances`) are left out when they are to be hidden.

A *scalp triangle* is a head triangle a hair root may attach to (docs/design.md §9): all three
vertices skinned to the head bone alone (weight ≥ 1 − 1e-6) and moved by no morph target,
so a point at fixed barycentric weights follows the skinned triangle exactly whenever the
head moves; facing outward (normal · direction from the head centre > 0.2); and above the
hairline, a fixed human profile of elevation by azimuth (:data:`HAIRLINE`: high on the
forehead, low at the nape). The profile is a heuristic, like the seed articles' upper/back
scalp mask: it is not a scalp detector for arbitrary characters.

Frames: world rest pose of the avatar (metres, +Y up, facing +Z).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from avatars import Avatar
from avatars.hair import rest_positions

from .errors import NoHeadError
from .geometry import RadialEnvelope, TriangleIndex, sample_triangles

#: Hairline elevation (degrees above the head centre's horizontal plane) by azimuth
#: (degrees from the front, either side): (azimuths, elevations).
HAIRLINE = ((0.0, 25.0, 45.0, 70.0, 95.0, 130.0, 180.0), (28.0, 26.0, 18.0, 0.0, -22.0, -42.0, -55.0))
#: A vertex belongs to the head when at least this share of its weight is on the head set.
HEAD_SHARE = 0.5
#: Weight on the head bone alone for a rigid (scalp-eligible) vertex.
RIGID_WEIGHT = 1.0 - 1e-6


@dataclass(frozen=True, eq=False)
class HeadModel:
    """The target head at rest (module doc).

    Attributes:
        node: the humanoid head node.
        vertices: (V, 3) float64 world rest positions of head-surface vertices.
        faces: (F, 3) int64 head triangles (indices into ``vertices``).
        face_source: (F, 5) int64 per triangle: mesh instance, primitive and the three
            vertex indices in that primitive (what a scalp attachment stores).
        scalp: (S,) int64 indices into ``faces`` of the scalp triangles.
        center: (3,) head centre (middle of the head box), metres.
        size: (3,) width, height (crown to chin), depth of the head box, metres.
        crown: (3,) top of the head envelope above the centre.
        envelope: the :class:`RadialEnvelope` of the head surface around ``center``.
        hidden: mesh instances left out (the avatar's own hair).
    """

    node: int
    vertices: np.ndarray
    faces: np.ndarray
    face_source: np.ndarray
    scalp: np.ndarray
    center: np.ndarray
    size: np.ndarray
    crown: np.ndarray
    envelope: RadialEnvelope
    hidden: tuple[int, ...]

    def index(self) -> TriangleIndex:
        """Closest-point index over every head triangle."""
        return TriangleIndex(self.vertices, self.faces)

    def scalp_index(self) -> TriangleIndex:
        """Closest-point index over the scalp triangles (face ids are positions in ``scalp``)."""
        return TriangleIndex(self.vertices, self.faces[self.scalp])


def spring_joint_nodes(avatar: Avatar, ignore: frozenset[str] | set[str] = frozenset()) -> set[int]:
    """Nodes of the avatar's spring joints (of the springs not named in ``ignore``)."""
    return {int(j.node) for s in avatar.springs if s.name not in ignore for j in s.joints}


def own_hair_instances(avatar: Avatar) -> tuple[int, ...]:
    """Mesh instances that are the avatar's own hair: skinned, every weighted joint is the
    head or a spring joint under the head (or a descendant of one), and some weight is on a
    spring joint."""
    head = avatar.head_node()
    if head < 0:
        return ()
    sk = avatar.skeleton
    springs = {n for n in spring_joint_nodes(avatar) if sk.is_ancestor(head, n)}
    moved = set()
    for n in springs:
        moved.update(sk.descendants(n))
    out = []
    for k, mi in enumerate(avatar.mesh_instances):
        if mi.skin < 0:
            continue
        joints = avatar.skins[mi.skin].joints
        used = set()
        for prim in avatar.meshes[mi.mesh].primitives:
            if prim.joints is None or prim.weights is None:
                continue
            used.update(int(joints[j]) for j in np.unique(prim.joints[prim.weights > 0]))
        if used and used <= (moved | {head}) and used & moved:
            out.append(k)
    return tuple(out)


def hairline_elevation(azimuth_deg: np.ndarray) -> np.ndarray:
    """Hairline elevation (degrees) at azimuths (degrees, 0 = front, ±180 = back)."""
    a = np.abs((np.asarray(azimuth_deg, float) + 180.0) % 360.0 - 180.0)
    return np.interp(a, *HAIRLINE)


def build_head(avatar: Avatar, *, hide: tuple[int, ...] = (), exclude: dict | None = None,
               exclude_triangles: dict | None = None, cleared_springs: tuple[str, ...] = ()) -> HeadModel:
    """The head model of ``avatar`` without the mesh instances in ``hide``, without the
    triangles touching ``exclude`` {(instance, primitive): vertex indices} (a hair being
    rebuilt from this avatar is not part of its head) and without the triangles
    ``exclude_triangles`` {(instance, primitive): (T,) bool} (the avatar's own hair cut out of
    a mesh it shares with the face or body, :mod:`avatars.tryon.own_hair`); the springs named in
    ``cleared_springs`` (those of a hair being rebuilt) count as plain bones: what they weigh
    on besides the hair (a few stray face corners) moves with the head once they are gone.

    Raises:
        NoHeadError: no humanoid head bone, or no drawn triangle skinned to it.
    """
    head = avatar.head_node()
    if head < 0:
        raise NoHeadError(f"{avatar.path}: no humanoid head bone: the hair cannot be fitted")
    sk = avatar.skeleton
    springs = spring_joint_nodes(avatar, set(cleared_springs))
    spring_sub = set()
    for n in springs:
        spring_sub.update(sk.descendants(n))
    head_set = {n for n in sk.descendants(head) if n not in spring_sub}
    verts, faces, source, rigid_v = [], [], [], []
    base = 0
    for k, mi in enumerate(avatar.mesh_instances):
        if k in hide or mi.skin < 0:
            continue
        joints = avatar.skins[mi.skin].joints
        in_head = np.array([int(j) in head_set for j in joints])
        is_head = np.array([int(j) == head for j in joints])
        for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
            if prim.mode != 4 or prim.joints is None or prim.weights is None:
                continue
            j = prim.joints.astype(np.int64)
            w = prim.weights.astype(np.float64)
            share = (w * in_head[j]).sum(axis=1)
            tris = prim.indices.astype(np.int64).reshape(-1, 3)
            keep = (share[tris] >= HEAD_SHARE).all(axis=1)
            if exclude and (k, p) in exclude:
                gone = np.zeros(prim.vertex_count, bool)
                gone[np.asarray(exclude[(k, p)], np.int64)] = True
                keep &= ~gone[tris].any(axis=1)
            if exclude_triangles and (k, p) in exclude_triangles:
                keep &= ~np.asarray(exclude_triangles[(k, p)], bool)
            if not keep.any():
                continue
            tris = tris[keep]
            used = np.unique(tris)
            remap = np.full(prim.vertex_count, -1, np.int64)
            remap[used] = np.arange(len(used)) + base
            morphed = np.zeros(prim.vertex_count, bool)
            if prim.morph_positions.shape[0]:
                morphed = np.abs(prim.morph_positions).sum(axis=(0, 2)) > 0
            rigid = ((w * is_head[j]).sum(axis=1) >= RIGID_WEIGHT) & ~morphed
            verts.append(rest_positions(avatar, k, p)[used])
            rigid_v.append(rigid[used])
            faces.append(remap[tris])
            source.append(np.column_stack([np.full(len(tris), k), np.full(len(tris), p), tris]))
            base += len(used)
    if not faces:
        raise NoHeadError(f"{avatar.path}: no drawn mesh is skinned to the head bone "
                          f"{sk.names[head]!r}: there is no head surface to fit the hair to")
    v = np.concatenate(verts)
    f = np.concatenate(faces)
    src = np.concatenate(source).astype(np.int64)
    rigid_v = np.concatenate(rigid_v)
    lo, hi = v.min(axis=0), v.max(axis=0)
    center = 0.5 * (lo + hi)
    size = hi - lo
    spacing = 0.01 * float(size.max())
    env = RadialEnvelope(center, sample_triangles(v, f, spacing))
    crown = center + np.array([0.0, float(env.radius(np.array([[0.0, 1.0, 0.0]]))[0]), 0.0])
    # scalp triangles
    tri = v[f]
    cen = tri.mean(axis=1)
    d = cen - center
    dn = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-30)
    az = np.degrees(np.arctan2(d[:, 0], d[:, 2]))
    el = np.degrees(np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2])))
    scalp = rigid_v[f].all(axis=1) & (np.sum(nrm * dn, axis=1) > 0.2) & (el >= hairline_elevation(az))
    return HeadModel(node=head, vertices=v, faces=f, face_source=src, scalp=np.nonzero(scalp)[0], center=center,
                     size=size, crown=crown, envelope=env, hidden=tuple(hide))
