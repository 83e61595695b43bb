"""Skin weights of the visible hair mesh over the head and the try-on chains (docs/design.md §9).

Computed per welded graph node (vertices split by UV seams get the same weights, so seams
never open), then copied to the render vertices. Three ingredients:

- *Attachment band* (fixed): hair at a chain's root is rigid on the head, falling off with
  the arc length from the root over ``band_blend`` (smoothstep; hair coming near the head
  farther down a strand, like a bob curling in, is not glued to it); hair of pieces without
  a chain of their own is also rigid within ``band`` of the head envelope.
- *Strand paths* (fixed): the surface path of each chain's strand, past the root
  transition, takes the chain's weights at its arc parameter u (u = i + f on segment i: segment i
  moves with joint i, so joint i peaks at the segment's middle and blends linearly into its
  neighbours, as the generated avatars' strands are skinned; the tip joint carries none).
- *A prior* everywhere else, by skin ownership: a piece of the mesh (a connected part:
  card, lock, sheet) that a chain's strand runs through is shared node by node among its
  own chains, the ``nearest`` by distance to their rest polylines, by inverse squared
  distance; a piece with no chain of its own follows the two chains nearest to it *as a
  whole* (one share for all its nodes, each node at its own u), so it moves coherently and
  does not tear. Pieces held by no attached or joined guide are rigid on the head. A
  detached piece mostly beyond the band, carried by one chain alone that is short (of the
  short-hair choice) or thin beside it (:data:`COMPACT`: a bun, not a tail), moves as a
  rigid body with that chain's root joint (bending a closed bun between joints stretched it
  by 13–16 % on Godette's own buns).
  The same holds for a *loose region* (:func:`~avatars.tryon.graph.loose_regions`: the
  piece's hair beyond the attachment band, split where the piece lies on the head) that
  none of its piece's chains runs through: a layer laid over the head and falling on both
  sides whose one chain hangs on the other side. The region follows the ``follow``
  chain(s) nearest to it on average, whichever piece they belong to, as a whole (before,
  long01's far sides were skinned to their own chain 15–25 cm away across the head; their
  offset turned with the chain and swept through the shoulders). One chain by default: the
  two nearest chains of a layered style can pass on either side of a shoulder, and hair
  halfway between them would then lie inside it.

The free nodes then minimise the screened Dirichlet energy

    Σ_edges |W_i − W_j|² / ℓ_ij²  +  λ Σ_i |W_i − W̃_i|² / h_i²

(ℓ the edge length, h_i the node's mean edge length, W̃ the prior): the first term is the
squared weight gradient along each edge — exactly what turns two chains' different motion
into edge stretch (an edge stretches by about ℓ·|∇W|·|Δx| / ℓ) — so weights change slowly
in metres, smooth along each strand and blended across neighbouring chains, over about
h/√λ; the second keeps nodes far from any path near their prior. (Unit edge weights,
tried, doubled bob01's p99 stretch: short edges need the smaller weight differences.) One sparse LU factorisation per piece,
every weight column used there a right-hand side (harmonic skinning weights; Baran &
Popović 2007, Jacobson et al. 2011 use the same idea with other constraints). The solution
decides how a node's moving part is shared among chains; the head's share is solved
alone with a stronger screen (``screen_head``: diffusing it far from the band would let the
head hold hanging hair), and within a chain the share is given to the
two joints around the node's own u again, since smoothing along a strand would
mix joints that move very differently (and the four-influence cut would then drop
different ones on neighbouring vertices). The u of each chain is itself smoothed the same
way (``screen_u``), pinned on the chain's own strand path: the closest point on a strand
jumps where the strand bends near itself.

*Body anchor* (:func:`body_anchor`, pipeline version 3): long hair rests on the back. A piece
whose lowest point hangs at least ``anchor_reach`` torso lengths (shoulder line to hips) below
the shoulder line gives a share of its chain weight to the humanoid upperChest (else chest,
spine, hips), which does not turn with the head: the share is a smoothstep of height, 0 above
and ``anchor`` (1) below a band ``anchor_ramp`` head heights either side of the middle
between the head bone and the shoulder line; the head's share (the band) is kept.
Pipeline version 6: also a *wide piece resting on the body* however far it hangs (a curtain
or layered shells ending on the upper back, proc_long and proc_layered of the corpus: they end
above the reach, and their chains' frames carry the head's yaw, so hair 5-10 cm to the side of
a chain swept into the shoulders and sheared by 65-183 % p99 over the head turn): a piece
whose nodes below the shoulder line lie mostly within ``anchor_rest`` of a body collider and
that is at least about half a head wide (:func:`resting_share_gate`; a tail or a twin tail
hanging there still swings: narrow pieces with one chain do not shear this way, and anchoring
them measured worse, ponytail01 p99 3.5 → 17.0 %, proc_twintails 13.8 → 52.7 %), over a ramp
:data:`REST_RAMP` times as long. Why: a
spring joint's world rotation is the swing from its rest direction composed with its parent's,
so it carries the head's yaw, and a vertex 20 cm to the side of its chain swings forward with
the head's twist — long01's back sheet (one chain on one side) swept its far side 42 mm into
the right shoulder capsule. Plain linear blend skinning with a humanoid bone: a VRM 1.0 file
carries it and three-vrm draws it the same. The twist is taken up between the nape and the
shoulders (where real hair twists); below, the hair follows the body. The chains keep
swinging (they still drive the hair above the shoulders, and the spring contact sees them).

At most four influences per vertex (the largest), renormalised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix, diags
from scipy.sparse.csgraph import dijkstra
from scipy.sparse.linalg import splu

from ..colliders import collider_world
from .autorig import Chain, _seg_dist, usable_colliders
from .graph import HairGraph, loose_regions
from .head import HeadModel


#: Share of a piece's nodes beyond the band for a short or compact piece to move as a rigid body.
RIGID_LOOSE_SHARE = 0.5
#: The body-anchor ramp of hair resting on the body (:func:`resting_share_gate`) is this many
#: times as long as the ramp of long hair (``WeightOptions.anchor_ramp``), on the same middle.
#: Measured (head turn 4 s + 2 s, spring-edge p99 / worst %, default avatar): 1.0 (the long
#: hair's ramp): proc_long 16.2 / 21.8, proc_layered 25.3 / 38.0; 1.5: 10.2 / 19.4 and
#: 21.8 / 38.1; 2.0: 8.1 / 18.2 and 4.1 / 8.5 but all-edge worst 67 / 139 % (the hair near the
#: head then shears between head and chest) and more hair in the shoulder capsules. Centred on
#: the shoulder line instead: 19.2 / 70.9 and 76.6 / 102.5 (the hair above sweeps into them).
REST_RAMP = 1.5
#: A piece rests on the body only when at least this share of its nodes does (proc_layered's
#: inner layer on the default avatar: 7 of 687; bob01 on Godette: 1 of 2 820, it ends at her
#: shoulder line).
RESTING_MIN = 0.005
#: A piece is compact (a bun, not a tail) when the 90th percentile distance of its nodes from
#: its chain's curve is at least this share of the chain's length.
COMPACT = 0.3


@dataclass(frozen=True)
class WeightOptions:
    """Weighting settings; distances in head heights of the target.

    ``anchor``, ``anchor_ramp``, ``anchor_reach``: the body anchor (module doc): the largest
    share of chain weight given to the body, the half height of its ramp (head heights), and
    the reach below the shoulder line (torso lengths) over which a piece counts as long hair
    (smoothstep; the shared styles: long01 0.92–0.95 default / 1.38–1.40 Godette, ponytail01
    0.08 / 0.55, bob01 and short02 above the shoulders).
    ``anchor_rest``, ``anchor_share``, ``anchor_width``: hair resting on the body
    (:func:`resting_share_gate`, pipeline version 6): a node below the shoulder line rests on
    the body within ``anchor_rest`` head heights of a body collider's surface; a piece is
    anchored by the smoothstep of its resting share over ``anchor_share`` times the
    smoothstep of its width (head widths) over ``anchor_width``; 0 turns it off.
    """

    band: float = 0.1
    band_blend: float = 0.25
    blend: float = 0.02
    nearest: int = 2
    screen: float = 0.01
    screen_u: float = 0.05
    screen_head: float = 0.1
    follow: int = 1
    anchor: float = 1.0
    anchor_ramp: float = 0.8
    anchor_reach: tuple[float, float] = (0.65, 0.85)
    anchor_rest: float = 0.2
    anchor_share: tuple[float, float] = (0.25, 0.5)
    anchor_width: tuple[float, float] = (0.4, 0.6)
    geodesic: bool = True


@dataclass(frozen=True, eq=False)
class BodyAnchor:
    """The body bone that long hair resting on the back is partly skinned to.

    Attributes:
        node: the humanoid upperChest (else chest, spine, hips) node.
        amount: (N,) per graph node, the share of its moving (chain) weight given to ``node``.
    """

    node: int
    amount: np.ndarray


def body_anchor(graph: HairGraph, avatar, head: HeadModel, options: WeightOptions = WeightOptions()) -> BodyAnchor | None:
    """How much of each hair node's chain weight goes to the body (module doc), or None when
    no piece is long enough or the avatar has no torso bone."""
    o = options
    hb = avatar.humanoid
    node = next((hb[b] for b in ("upperChest", "chest", "spine", "hips") if b in hb), None)
    pair = next((p for p in (("leftUpperArm", "rightUpperArm"), ("leftShoulder", "rightShoulder"))
                 if p[0] in hb and p[1] in hb), None)
    if node is None or pair is None or "head" not in hb or "hips" not in hb or o.anchor <= 0.0:
        return None
    y = avatar.skeleton.rest_world[:, 1, 3]
    line = float(np.mean([y[hb[b]] for b in pair]))
    pivot, hips = float(y[hb["head"]]), float(y[hb["hips"]])
    span, torso = pivot - line, line - hips
    if span <= 0.0 or torso <= 0.0:
        return None
    pts = graph.points
    low = np.full(graph.component_count, np.inf)
    np.minimum.at(low, graph.component, pts[:, 1])
    reach = (line - low) / torso        # how far each piece hangs below the shoulders, in torso lengths
    r0, r1 = o.anchor_reach
    gate = _smoothstep((reach - r0) / (r1 - r0))[graph.component]
    mid = 0.5 * (pivot + line)
    half = o.anchor_ramp * float(head.size[1])
    below = _smoothstep((mid + half - pts[:, 1]) / (2.0 * half))
    amount = gate * below
    if o.anchor_rest > 0.0:
        # long hair keeps its own ramp; the resting gate is for the pieces that end above its reach
        rest_gate = resting_share_gate(graph, avatar, head, line, o)[graph.component] * (1.0 - gate)
        wide = REST_RAMP * half
        amount = np.maximum(amount, rest_gate * _smoothstep((mid + wide - pts[:, 1]) / (2.0 * wide)))
    amount = o.anchor * amount
    if not (amount > 0).any():
        return None
    return BodyAnchor(int(node), amount)


def resting_share(graph: HairGraph, avatar, head: HeadModel, line: float, clearance: float) -> np.ndarray:
    """(component_count,) per piece, the share of its nodes below the shoulder line ``line``
    (world height, metres) that lie within ``clearance`` metres of a body collider's surface
    at rest (the avatar's colliders owned by bones outside the head subtree, and the fitted
    torso capsule the hair would get: :func:`avatars.tryon.autorig.usable_colliders`);
    0 for a piece with no node below the line or fewer such nodes than :data:`RESTING_MIN` of
    its nodes."""
    keep, add, _ = usable_colliders(avatar, head)
    rest = avatar.skeleton.rest_world
    head_sub = set(avatar.skeleton.descendants(head.node))
    body = [avatar.colliders[i] for i in keep if avatar.colliders[i].node not in head_sub] + list(add)
    share = np.zeros(graph.component_count)
    low = np.nonzero(graph.points[:, 1] < line)[0]
    if not body or not low.size:
        return share
    p = graph.points[low]
    gap = np.full(len(low), np.inf)
    for c in body:
        a, b, r = collider_world(c, rest)
        np.minimum(gap, _seg_dist(p, a, b) - r, out=gap)
    comp = graph.component[low]
    total = np.bincount(comp, minlength=graph.component_count)
    near = np.bincount(comp, weights=(gap <= clearance).astype(float), minlength=graph.component_count)
    np.divide(near, np.maximum(total, 1), out=share)
    size = np.bincount(graph.component, minlength=graph.component_count)
    # a piece that merely touches the line (bob01's one node on Godette) does not rest there
    share[near < RESTING_MIN * size] = 0.0
    return share


def resting_share_gate(graph: HairGraph, avatar, head: HeadModel, line: float, o: WeightOptions) -> np.ndarray:
    """(component_count,) the body-anchor gate of wide hair that rests on the body (module doc):
    the smoothstep of :func:`resting_share` (clearance ``o.anchor_rest`` head heights) over
    ``o.anchor_share`` times the smoothstep of :func:`piece_widths` (head widths) over
    ``o.anchor_width``. ``line``: the shoulder line's height, metres."""
    share = resting_share(graph, avatar, head, line, o.anchor_rest * float(head.size[1]))
    s0, s1 = o.anchor_share
    w0, w1 = o.anchor_width
    width = piece_widths(graph) / float(head.size[0])
    return _smoothstep((share - s0) / (s1 - s0)) * _smoothstep((width - w0) / (w1 - w0))


def piece_widths(graph: HairGraph) -> np.ndarray:
    """(component_count,) per piece its side-to-side extent (world x, 5th to 95th
    percentile of its nodes), metres."""
    out = np.zeros(graph.component_count)
    x = graph.points[:, 0]
    order = np.argsort(graph.component, kind="stable")
    bounds = np.searchsorted(graph.component[order], np.arange(graph.component_count + 1))
    for q in range(graph.component_count):
        xs = x[order[bounds[q]:bounds[q + 1]]]
        if xs.size:
            lo, hi = np.percentile(xs, [5.0, 95.0])
            out[q] = hi - lo
    return out


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def closest_on_polyline(p: np.ndarray, joints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distance (P,), u (P,)) of points ``p`` (P, 3) to the polyline ``joints`` (n, 3);
    u = i + f on segment i (0 ≤ u ≤ n − 1)."""
    a = joints[:-1]
    e = joints[1:] - a
    ee = np.maximum(np.einsum("sk,sk->s", e, e), 1e-30)
    pa = p[:, None] - a[None]                                  # (P, S, 3)
    dot = np.einsum("psk,sk->ps", pa, e)
    t = np.clip(dot / ee, 0.0, 1.0)
    d2 = np.einsum("psk,psk->ps", pa, pa) - t * (2.0 * dot - t * ee)   # |pa − t e|², no (P, S, 3) temporaries
    k = np.argmin(d2, axis=1)
    rows = np.arange(len(p))
    return np.sqrt(np.maximum(d2[rows, k], 0.0)), k + t[rows, k]


def chain_joint_weights(u: np.ndarray, n: int) -> np.ndarray:
    """(P, n) weights of the n joints of a chain at arc parameters ``u`` (module doc)."""
    m = np.arange(n - 1) + 0.5
    uc = np.clip(u, m[0], m[-1])
    w = np.maximum(0.0, 1.0 - np.abs(uc[:, None] - m[None]))
    w = np.concatenate([w, np.zeros((len(u), 1))], axis=1)
    return w / w.sum(axis=1, keepdims=True)


def hair_weights(graph: HairGraph, head: HeadModel, chains: list[Chain], bound_pieces: np.ndarray,
                 options: WeightOptions = WeightOptions(), anchor: BodyAnchor | None = None,
                 ) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Skin weights of the render vertices (module doc).

    Args:
        bound_pieces: (component_count,) bool, pieces held by an attached or joined guide.

    Returns:
        (skin_nodes [head, chain joints...], joints (V, 4) int indices into skin_nodes,
        weights (V, 4) float64, dense node weights (N, J) before the four-influence cut).
    """
    o = options
    H = float(head.size[1])
    pts = graph.points
    n = len(pts)
    skin_nodes = [head.node] + [int(x) for c in chains for x in c.nodes]
    cols = len(skin_nodes)
    prior = np.zeros((n, cols))
    out_dist = -head.envelope.depth(pts)
    band_rigid = 1.0 - _smoothstep((out_dist - o.band * H) / (o.band_blend * H))
    free_piece = ~bound_pieces[graph.component]
    comp = graph.component
    fixed = np.zeros(n, bool)
    fixed_w = np.zeros((n, cols))
    rigid_piece = np.zeros(n, bool)
    if not chains:
        rigid = np.ones(n)
    else:
        dist = np.empty((n, len(chains)))
        us = np.empty((n, len(chains)))
        arc = np.empty((n, len(chains)))
        for k, c in enumerate(chains):
            # position along the strand's smooth curve (a coarse joint polyline cuts corners,
            # and its closest point jumps where it bends)
            d, uc = closest_on_polyline(pts, c.curve)
            dist[:, k] = d
            us[:, k] = np.interp(uc, np.arange(len(c.curve), dtype=float), c.curve_u)
            seg = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(c.curve, axis=0), axis=1))]
            arc[:, k] = np.interp(uc, np.arange(len(c.curve), dtype=float), seg)
        own_dist = dist
        if o.geodesic:
            own_dist, us, arc = _geodesic(graph, chains, dist, us, arc)
        starts = np.cumsum([1] + [len(c.nodes) for c in chains])[:-1]
        owners: dict[int, list[int]] = {}
        region = loose_regions(graph, out_dist > o.band * H)
        region_owned = np.zeros(int(region.max(initial=-1)) + 1, bool)
        for k, c in enumerate(chains):
            beyond = c.path[out_dist[c.path] > o.band * H]
            for q in np.unique(comp[beyond]):
                owners.setdefault(int(q), []).append(k)
            region_owned[region[beyond][region[beyond] >= 0]] = True
        # loose regions of an owned piece that no chain of theirs runs through (the far side of
        # a layer laid over the head) follow the nearest chains as a whole, like pieces without
        # a chain: their own chain hangs on the other side of the head
        follower = np.zeros(n, bool)
        alpha = np.zeros_like(dist)
        for q in range(graph.component_count):
            nodes = np.nonzero(comp == q)[0]
            if free_piece[nodes[0]]:
                continue
            own = owners.get(q)
            if own:   # the piece's own chains share it node by node
                d = own_dist[np.ix_(nodes, own)]
                nn = np.argsort(d, axis=1)[:, :o.nearest]
                dn = np.take_along_axis(d, nn, axis=1)
                inv = 1.0 / (dn * dn + (o.blend * H) ** 2)
                a = np.zeros_like(d)
                np.put_along_axis(a, nn, inv, axis=1)
                alpha[np.ix_(nodes, own)] = a / a.sum(axis=1, keepdims=True)
                for r in np.unique(region[nodes]):
                    if r < 0 or region_owned[r]:
                        continue
                    part = nodes[region[nodes] == r]
                    md = dist[part].mean(axis=0)
                    nn = np.argsort(md)[:o.follow]
                    inv = 1.0 / (md[nn] ** 2 + (o.blend * H) ** 2)
                    alpha[part] = 0.0
                    alpha[np.ix_(part, nn)] = inv / inv.sum()
                    follower[part] = True
            else:     # a piece without a chain follows the nearest ones as a whole (coherently)
                loose = nodes[band_rigid[nodes] < 1.0]
                probe = loose if loose.size else nodes
                md = dist[probe].mean(axis=0)
                nn = np.argsort(md)[:2]
                inv = 1.0 / (md[nn] ** 2 + (o.blend * H) ** 2)
                alpha[np.ix_(nodes, nn)] = inv / inv.sum()
        # rigid near a chain's root (by arc length along it), not wherever hair comes near the head
        root_rigid = (alpha * (1.0 - _smoothstep(arc / (o.band_blend * H)))).sum(axis=1)
        owned = np.isin(comp, list(owners))
        rigid = np.where(owned & ~follower, root_rigid, np.maximum(root_rigid, band_rigid))
        for k, c in enumerate(chains):
            m = len(c.nodes)
            prior[:, starts[k]:starts[k] + m] = alpha[:, k:k + 1] * chain_joint_weights(us[:, k], m)
        prior *= (1.0 - rigid)[:, None]
        # strand paths past the root transition carry their own chain's weights
        for k, c in enumerate(chains):
            path = np.unique(c.path)
            path = path[(arc[path, k] > 1.5 * o.band_blend * H) & (comp[path] != -1) & ~free_piece[path]
                        & (dist[path, k] < o.band * H)]
            if path.size == 0:
                continue
            m = len(c.nodes)
            fixed[path] = True
            fixed_w[path] = 0.0
            fixed_w[path, starts[k]:starts[k] + m] = chain_joint_weights(us[path, k], m)
        # pieces without a chain keep their coherent prior exactly
        orphan = (~owned | follower) & ~fixed
        fixed[orphan] = True
        fixed_w[orphan] = prior[orphan]
        fixed_w[orphan, 0] += rigid[orphan]
        # a detached short piece (a bun, a lock) carried by one short chain alone moves as a rigid
        # body with the chain's root joint: bending a closed bun between joints stretches it
        for q, own in owners.items():
            c = chains[own[0]]
            nodes = np.nonzero(comp == q)[0]
            if len(own) != 1 or follower[nodes].any() or np.mean(out_dist[nodes] > o.band * H) < RIGID_LOOSE_SHARE:
                continue       # (a layer whose far side follows another chain is no bun)
            length = float(np.sum(np.linalg.norm(np.diff(c.curve, axis=0), axis=1)))
            compact = np.percentile(dist[nodes, own[0]], 90) >= COMPACT * max(length, 1e-9)
            if c.short or compact:
                fixed[nodes] = True
                fixed_w[nodes] = 0.0
                fixed_w[nodes, starts[own[0]]] = 1.0
                rigid_piece[nodes] = True
                rigid[nodes] = 0.0
    rigid[free_piece] = 1.0
    hold = ((rigid >= 1.0 - 1e-9) | free_piece) & ~rigid_piece
    fixed[hold] = True
    fixed_w[hold] = 0.0
    fixed_w[hold, 0] = 1.0
    prior[:, 0] += rigid
    w_nodes = np.maximum(_screened(graph, fixed, fixed_w, prior, o.screen), 0.0)
    if chains:
        # the closest point on a strand jumps where the strand bends near itself, or where it
        # bends near itself: smooth each chain's u over the pieces it moves, pinned on its own
        # strand path (unpinned, smoothing would pull the u of strand ends toward the middle)
        for k, c in enumerate(chains):
            where = alpha[:, k] > 0
            if not where.any():
                continue
            pin = np.zeros(n, bool)
            pin[c.path] = True
            pin &= where
            part = np.isin(comp, np.unique(comp[pin]))      # pieces the strand runs through
            sub = _screened(graph, pin | ~part, us[:, k:k + 1], us[:, k:k + 1], o.screen_u)
            us[:, k] = np.where(part, sub[:, 0], us[:, k])
        # the smoothing decides how much each chain (and the head) carries; along a chain the
        # share goes to the two joints around the node's own u (smoothing along a strand
        # would spread it over joints that move very differently)
        # and the head's share is smoothed with a stronger screen (diffusing it far from the
        # band would let the head hold hanging hair)
        shares = np.stack([w_nodes[:, starts[k]:starts[k] + len(c.nodes)].sum(axis=1) for k, c in enumerate(chains)],
                          axis=1)
        tot = shares.sum(axis=1, keepdims=True)
        mix = np.where(tot > 1e-12, shares / np.maximum(tot, 1e-12), alpha)
        head = _screened(graph, fixed, fixed_w[:, :1], prior[:, :1], o.screen_head)[:, 0]
        head = np.clip(head, 0.0, 1.0)
        out = np.zeros_like(w_nodes)
        out[:, 0] = head
        for k, c in enumerate(chains):
            m = len(c.nodes)
            out[:, starts[k]:starts[k] + m] = ((1.0 - head) * mix[:, k])[:, None] * chain_joint_weights(us[:, k], m)
        out[rigid_piece] = fixed_w[rigid_piece]
        w_nodes = out
        if anchor is not None:
            give = anchor.amount * w_nodes[:, 1:].sum(axis=1)
            w_nodes[:, 1:] *= (1.0 - anchor.amount)[:, None]
            w_nodes = np.concatenate([w_nodes, give[:, None]], axis=1)
            skin_nodes.append(anchor.node)
    if w_nodes.shape[1] < 4:
        w_nodes = np.concatenate([w_nodes, np.zeros((n, 4 - w_nodes.shape[1]))], axis=1)
    top = np.argsort(-w_nodes, axis=1, kind="stable")[:, :4]
    w = np.take_along_axis(w_nodes, top, axis=1)
    w[w < 1e-6] = 0.0
    s = w.sum(axis=1, keepdims=True)
    bad = s[:, 0] <= 0
    w[bad] = (1.0, 0.0, 0.0, 0.0)
    top[bad] = 0
    w /= w.sum(axis=1, keepdims=True)
    top = np.where(w > 0, top, top[:, :1])
    return skin_nodes, top[graph.node], w[graph.node], w_nodes


def _geodesic(graph: HairGraph, chains: list[Chain], dist: np.ndarray, us: np.ndarray, arc: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distance, u, arc) (N, C) over the surface: for the nodes of the pieces a chain's strand
    path runs through, the geodesic (shortest surface path) distance to the nearest node of
    that path and the path node's u and arc; elsewhere the Euclidean ones given (module doc).
    Across a sheet, the nearest chain by surface path is the neighbouring one (a chain across
    a gap of air — the fringe and the far end of a chain that wraps around a bob — is far)."""
    gd = dist.copy()
    gu = us.copy()
    ga = arc.copy()
    for k, c in enumerate(chains):
        src = np.unique(c.path)
        if src.size == 0:
            continue
        d, _, near = dijkstra(graph.matrix, directed=False, indices=src, min_only=True, return_predecessors=True)
        ok = np.isfinite(d) & (near >= 0)
        gd[ok, k] = d[ok] + dist[near[ok], k]
        gu[ok, k] = us[near[ok], k]
        ga[ok, k] = arc[near[ok], k]
    return gd, gu, ga


def _screened(graph: HairGraph, fixed: np.ndarray, fixed_w: np.ndarray, prior: np.ndarray, lam: float) -> np.ndarray:
    """Minimise Σ |W_i − W_j|²/ℓ² + λ Σ |W_i − W̃_i|²/h_i² over the free nodes (module doc).

    The energy has no term between pieces of the mesh, so each piece is solved alone, and
    only for the weight columns that are non-zero somewhere in it."""
    n = graph.node_count
    out = np.where(fixed[:, None], fixed_w, prior)
    if not (~fixed).any() or len(graph.edges) == 0:
        return out
    e, ln = graph.edges, graph.lengths
    c = 1.0 / (ln * ln)
    a = coo_matrix((np.r_[c, c], (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])), shape=(n, n)).tocsr()
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    cnt = np.bincount(np.r_[e[:, 0], e[:, 1]], minlength=n)
    hsum = np.bincount(np.r_[e[:, 0], e[:, 1]], weights=np.r_[ln, ln], minlength=n)
    h = np.where(cnt > 0, hsum / np.maximum(cnt, 1), 1.0)
    screen = lam / (h * h)
    lap = (diags(deg + screen) - a).tocsr()
    order = np.argsort(graph.component, kind="stable")
    bounds = np.searchsorted(graph.component[order], np.arange(graph.component_count + 1))
    for q in range(graph.component_count):
        nodes = order[bounds[q]:bounds[q + 1]]
        free = nodes[~fixed[nodes]]
        if free.size == 0:
            continue
        fx = nodes[fixed[nodes]]
        cols = np.nonzero((np.abs(prior[nodes]).sum(axis=0) + np.abs(fixed_w[nodes]).sum(axis=0)) > 0)[0]
        rhs = screen[free, None] * prior[np.ix_(free, cols)]
        if fx.size:
            rhs = rhs + a[free][:, fx] @ fixed_w[np.ix_(fx, cols)]
        lff = lap[free][:, free].tocsc()
        sol = splu(lff, permc_spec="MMD_AT_PLUS_A").solve(np.asarray(rhs)) if free.size > 1 else rhs / lff[0, 0]
        out[np.ix_(free, cols)] = sol
        rest = np.setdiff1d(np.arange(out.shape[1]), cols)
        out[np.ix_(free, rest)] = 0.0
    return out
