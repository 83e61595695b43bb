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

With ``BuildOptions.cover_mesh`` (``[hair] cover_mesh``; on by default since 2026-12-04; the
rest-shape mode only: "vrm" keeps three-vrm's radii, "legacy" the baseline's),
:func:`solver.build.pack_avatar` raises the hit radius of each link to the largest
:func:`covered` radius (drawn radius, at most :data:`MAX_COVER` times the file's: a joint
authored with no radius keeps none) at or below it in its chain (:func:`chain_cover`: radii
never grow toward the tip, so a link's root, its parent's tail held at the parent's radius,
is never inside the child's wider tube). Against a collider the chain lies close to at rest
(a strand flat on the scalp and the head sphere) the raised radius is limited to the chain's
rest clearance by a per-(link, collider) cover allowance (:func:`cover_allowances`, layout
section ``cover``), which contact also takes off the root test's radius; no rest overlap is
created. A retune of the hit radii (:meth:`ChainSet.set_overrides`, ``POST /hair``) drops
the covering of the rows it sets.

The cost: the layered avatar's head-turn p99 stretch rises 6.68 -> 6.70 % with the
:data:`COVER_SLACK` (6.73 % covering to the full drawn radius; its limit is 6.7 %); the
default avatar keeps 4.78 % to the bit. docs/history/fastclip-table.md, 2026-12-04.
"""

from __future__ import annotations

import numpy as np

from avatars.model import Avatar
from avatars.skinning import joint_matrices, skin_positions

#: The covered hit radius is at most this many times the file's (model units as the file's).
MAX_COVER = 2.0
#: The covering stops this far (metres at model scale 1; times the joint's scale) short of
#: the drawn radius: the goal it serves is "no drawn hair vertex more than 1 mm inside a collider" (issue 29), and the last half
#: millimetre of covering only pushes links off the body where the mesh is already within
#: that tolerance (layered head turn p99 6.734 % with none, 6.698 % with 0.5 mm; the
#: deepest vertex over the library's clips stays under 1 mm: docs/history/fastclip-table.md).
COVER_SLACK = 0.5e-3


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


def covered(hit: float, drawn: float | None, scale: float = 1.0) -> float:
    """The contact radius of a joint of file radius ``hit`` whose vertices lie up to ``drawn``
    off its link (None: no vertices), world metres: ``max(hit, min(drawn − scale ·
    COVER_SLACK, MAX_COVER · hit))`` (:data:`COVER_SLACK`). ``scale`` is the joint's rest
    scale (:func:`solver.build.joint_scale`), so a model scaled by s is covered s times as
    far (the slack is 0.5 mm of the model at scale 1, like every other length of the build)."""
    if drawn is None:
        return hit
    return max(hit, min(drawn - scale * COVER_SLACK, MAX_COVER * hit))


def chain_cover(file_hits, wants) -> list[float]:
    """The hit radii of one chain's links (root first): a link that wants a covering
    (``wants``: the :func:`covered` radius, or None: none, e.g. an override fixed its radius)
    takes the largest wanted radius at or below it in the chain, capped at
    :data:`MAX_COVER` times its own file radius; the others keep the file's. Radii so never
    grow toward the tip: a link's root (its parent's tail, held out at the parent's radius)
    is not inside its own tube."""
    out = [h for h in file_hits]
    r = 0.0
    for j in range(len(out) - 1, -1, -1):        # from the tip: the largest wanted radius at or below
        if wants[j] is not None:
            r = max(r, wants[j])
            out[j] = max(out[j], min(r, MAX_COVER * out[j]))
    return out


#: Points per link sampled for the rest-pose clearance of a raised link.
CLEAR_SAMPLES = 33
#: A raised radius stays this far (metres at model scale 1) inside the rest clearance it is limited to.
CLEAR_MARGIN = 1e-4


def cover_allowances(F: np.ndarray, I: np.ndarray, file_hit: np.ndarray, colliders, rest_world: np.ndarray,  # noqa: E741
                     scale: float = 1.0) -> np.ndarray:
    """(P,) cover allowance of every (segment, collider) reference, model metres.

    Against collider c, a raised link of chain k uses its raised radius, but no more than the
    chain's rest clearance from c (the smallest distance of its raised links from c in the
    rest pose, less ``scale`` · :data:`CLEAR_MARGIN`; ``scale``: the model's, as
    ``BuildReport``'s teleport unit), and no less than its file radius: a strand lying
    flat on the scalp keeps (nearly) the file radius against the head and the raised one
    against the shoulders; no rest overlap is created; one limit per (chain, collider), so
    the radii still never grow toward the tip. The allowance is the raised radius minus that. ``colliders``: per collider its
    rest world (a, b, r), or None (another shape: the file radius). Contact subtracts it from
    the radius also when it tests the link's root (:func:`solver.kernels.contact.contact`)."""
    from avatars.colliders import point_segment_distance

    from . import layout as L

    hit = L.views(L.SEG_PARAMS, F, I).hit_radius
    tails = L.views(L.SEG_STATE, F, I).tails
    segi = L.views(L.SEG_INT, np.zeros(0), I)
    pairs = L.views(L.PAIRS, np.zeros(0), I).collider
    S = len(hit)
    heads = rest_world[segi.node[:S], :3, 3]
    u = np.linspace(0.0, 1.0, CLEAR_SAMPLES)[:, None]
    clear: dict[tuple[int, int], float] = {}          # (chain, collider) -> rest clearance
    for i in range(S):
        if hit[i] <= file_hit[i]:
            continue
        pts = heads[i] + u * (tails[i] - heads[i])
        for p in range(int(segi.pair_begin[i]), int(segi.pair_end[i])):
            c = int(pairs[p])
            col = colliders[c]
            d = -np.inf if col is None else float((point_segment_distance(pts, col[0], col[1]) - col[2]).min())
            key = (int(segi.chain[i]), c)
            clear[key] = min(clear.get(key, np.inf), d - scale * CLEAR_MARGIN)
    out = np.zeros(int(I[L.H_P]))
    for i in range(S):
        if hit[i] <= file_hit[i]:
            continue
        for p in range(int(segi.pair_begin[i]), int(segi.pair_end[i])):
            r = max(float(file_hit[i]), min(float(hit[i]), clear[(int(segi.chain[i]), int(pairs[p]))]))
            out[p] = hit[i] - r
    return out
