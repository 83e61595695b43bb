"""The drawn radius of a spring joint: how far its skinned hair vertices lie off its link, so
that the link's contact radius can cover the hair as drawn (issue 29: "no link or drawn hair
vertex > 1 mm inside a collider").

Contact (docs/design.md §4.4) keeps a link, the segment from its joint to its tail thickened
by the joint's ``hitRadius``, out of the colliders. The hair mesh is wider than that line: a
strand is a ribbon or a tube swept around its joints (the generated strands are up to 22 mm
wide against a 15 mm hitRadius), so a link resting on a shoulder at exactly its hit radius
leaves the ribbon's edge inside the shoulder by the difference when the strand turns its edge
to it (layered avatar, Death01: 5.8 mm, with every link outside).

For every joint, in the rest pose: the largest distance from the joint's link segment (head to
tail) of the vertices whose dominant skin weight is that joint (the vertices the hair-quality
measure assigns to it: :func:`solver.eval.hair_mesh.find_hair`), over the skinned mesh
instances without a per-vertex contact (a try-on mesh with one, :mod:`avatars.contact`, keeps
its own vertices out). A vertex skinned to one joint keeps its distance from that joint's
link in every pose (both move rigidly with the joint), so a link held that far from a
collider keeps every such vertex out of it (distance to a convex collider is 1-Lipschitz);
blended vertices near a joint stay close to that.

With ``BuildOptions.cover_mesh`` (off by default), :func:`solver.build.pack_avatar` raises a
joint's hit radius to its drawn radius, at most :data:`MAX_COVER` times the file's radius (a
joint authored with no radius keeps none; a wide card skinned to one joint does not turn its
link into a fat tube), where the raised link still clears every collider it references in
the rest pose (sphere and capsule colliders only): a link lying on the scalp keeps the file's
radius, so no rest overlap is created.

Known limit (why it is off by default): a raised link whose simulated parent was not raised
(the first hanging link below the scalp) has its root inside its own radius whenever the
parent rests on a collider at the parent's radius; contact then tests its tail alone and the
raised link passes up to ~8 mm into the head sphere (layered avatar, fast clips). The drawn
vertices stay out; the next step is a per-(link, collider) radius (docs/history/fastclip-table.md).
"""

from __future__ import annotations

import numpy as np

from avatars.model import Avatar
from avatars.skinning import joint_matrices, skin_positions

#: The covered hit radius is at most this many times the file's (model units as the file's).
MAX_COVER = 2.0


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances (V,) of points p (V, 3) from segments a-b (V, 3) each."""
    e = b - a
    ee = np.einsum("ij,ij->i", e, e)
    t = np.where(ee > 1e-30, np.einsum("ij,ij->i", p - a, e) / np.where(ee > 1e-30, ee, 1.0), 0.0)
    q = a + np.clip(t, 0.0, 1.0)[:, None] * e
    return np.linalg.norm(p - q, axis=1)


def drawn_radii(avatar: Avatar, heads: dict[int, np.ndarray], tails: dict[int, np.ndarray]) -> dict[int, float]:
    """{joint node: drawn radius, model metres} for the joints ``heads`` / ``tails`` name (their
    links' rest world ends (3,)), from the rest pose (module doc). A joint no vertex is
    dominated by is left out.
    """
    rest = avatar.skeleton.rest_world
    out: dict[int, float] = {}
    for inst in avatar.mesh_instances:
        if inst.skin < 0 or inst.contact is not None:
            continue
        skin = avatar.skins[inst.skin]
        joints = np.asarray(skin.joints, np.int64)
        mine = np.array([int(n) in heads for n in joints])
        if not mine.any():
            continue
        jm = joint_matrices(avatar, inst.skin, rest)
        for prim in avatar.meshes[inst.mesh].primitives:
            if prim.joints is None or prim.weights is None or prim.vertex_count == 0:
                continue
            dom = prim.joints[np.arange(prim.vertex_count), np.argmax(prim.weights, axis=1)].astype(np.int64)
            verts = np.flatnonzero(mine[dom])
            if verts.size == 0:
                continue
            nodes = joints[dom[verts]]
            p = skin_positions(prim, jm, vertices=verts)
            a = np.array([heads[int(n)] for n in nodes])
            b = np.array([tails[int(n)] for n in nodes])
            d = _segment_distance(p, a, b)
            for n in np.unique(nodes):
                r = float(d[nodes == n].max())
                out[int(n)] = max(out.get(int(n), 0.0), r)
    return out


def covered(hit: float, drawn: float | None) -> float:
    """The contact radius of a joint of file radius ``hit`` whose vertices lie up to ``drawn``
    off its link (None: no vertices): ``max(hit, min(drawn, MAX_COVER · hit))``."""
    if drawn is None:
        return hit
    return max(hit, min(drawn, MAX_COVER * hit))
