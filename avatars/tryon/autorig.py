"""Auto-rig: spring chains along chosen guides (DESIGN §9, seed articles).

- *Strands*: an attached guide, continued by the fragments joined to it (the longest line of
  descent).
- *Loose part*: a strand leaves the head where it last lies within the attachment band of
  the head envelope; what comes after moves. Strands whose loose part is shorter than
  ``min_loose`` get no chain in the main choice (below).
- *Short hair*: a style with no strand long enough for the main choice gets chains on its
  strands whose loose part is at least ``short_loose`` (a crop's fringe, short02's locks;
  chosen like the main ones; on a style with long hair, chains on its short pieces — such as
  ponytail01's hair tie — swung them into the long hair: p99 3.3 → 4.4 %); a large piece
  (:data:`SWAY_PIECE` of the hair) still without one, and a style with no chain at all, gets
  one on the end of its longest strand, made loose if nothing leaves the band: a style whose
  pieces are all short still sways (the articles kept short crops rigid).
- *Choice*: at most ``max_chains`` strands. First every loose piece of the mesh (a card, a
  lock, a sheet; the largest first) gets the chain of its longest strand, so hair pieces
  are owned by a chain of their own. Then strands are added where they add the most (loose
  length × distance to the chains in the same piece), never closer than ``separation`` to a
  chain running through the same piece: two chains moving differently inside one bundle
  would tear it, while separate pieces may move apart.
- *Joints*: a root joint parented to the head at the scalp attachment of the strand's exit
  point (triangle + barycentric weights, so the chain root follows the skinned scalp
  exactly), then ``n`` − 1 joints at equal arc length along the loose part to its end;
  ``n`` = clip(round(loose length / ``joint_spacing``) + 1, ``min_joints``, ``max_joints``).
  Identity local rotations; each joint is the child of the one before.
- *Springs*: VRMC_springBone values of the repository's tuned rig (the generated default
  avatar's ponytail) with a stiffer root (:data:`STIFFNESS`), along the chain, gravity down; hitRadius sized to the hair the chain carries once the weights are
  known (:func:`size_hit_radii`), ``hit_heads`` head heights until then.
- *Colliders*: the avatar's colliders plus the fitted torso capsule (when the avatar's own
  colliders leave the torso uncovered), without those that hold more than 5 % of the
  scalp (:data:`SCALP_INSIDE_SHARE`). Which ones a
  chain checks along its segments is decided by ownership and reach, never by names: the
  colliders carried by the head subtree always; body colliders (owned by other bones) only
  when the chain can reach them (distance from its root ≤ its length + hit radius + the
  collider radius) and its tip hangs below their top; chains sharing a piece of the mesh
  then share the union of their sets (hair blended between them must not pass through what
  only one checks). Chains with the same collider set share a collider group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider, ColliderGroup, Spring, SpringJoint

from ..colliders import collider_world, fit_torso_capsule
from .assemble import NewNode
from .guides import Guide
from .head import HeadModel
from .join import JoinResult
from .scalp import Scalp, ScalpAttachment

#: A piece without a chain holding at least this share of the hair gets one on the end of its
#: longest strand even when it lies within the attachment band (it sways).
SWAY_PIECE = 0.1
#: Points kept on a chain's strand curve (weights project hair onto it).
MAX_CURVE_POINTS = 32
#: VRMC_springBone values (root → tip). dragForce, gravityPower and the tip stiffness are the
#: repository's tuned rig (the generated default avatar's ponytail: stiffness 1.2 → 0.6, drag
#: 0.4, gravity 0.1 → 0.3); the root is stiffer (3.0) because a fitted style's chains start
#: where the hair leaves the scalp and carry wide pieces whose vertices blend between chains:
#: while tuning (with an earlier weighting) root stiffness 1.2 / 2.0 / 3.0 / 4.0 gave bob01
#: p99 edge stretch 25 / 16 / 10 / 6.7 % on the standard head turn for tip swings of
#: 37 / 25 / 17 / 11 mm; 3.0 keeps visible motion (avatars/tryon/NOTES.md).
STIFFNESS = (3.0, 0.6)
DRAG = 0.4
GRAVITY = (0.1, 0.3)


@dataclass(frozen=True)
class RigOptions:
    """Auto-rig settings (lengths in head heights of the target).

    Attributes:
        max_chains: most chains (the articles' adapter: 24).
        min_joints, max_joints: joints per chain (the tip joint included).
        joint_spacing: target loose length per segment.
        min_loose: shortest loose part that gets a chain in the main choice.
        short_loose: shortest loose part that gets a chain in a piece left without one
            (short hair: bangs, buns, a crop's fringe).
        separation: smallest distance between the loose parts of two chains (closer
            strands follow the chain already chosen through their weights: chains moving
            differently inside one bundle would tear it).
        band: attachment band: distance from the head envelope within which hair is rigid.
        hit_heads: hitRadius of the chain joints.
        stiffness, drag, gravity: VRM values, (root, tip) or one value.
    """

    max_chains: int = 24
    min_joints: int = 4
    max_joints: int = 8
    joint_spacing: float = 0.2
    min_loose: float = 0.3
    short_loose: float = 0.08
    separation: float = 0.15
    band: float = 0.1
    hit_heads: float = 0.05
    stiffness: tuple[float, float] = STIFFNESS
    drag: float = DRAG
    gravity: tuple[float, float] = GRAVITY


@dataclass(frozen=True, eq=False)
class Chain:
    """One rigged chain.

    Attributes:
        strand: index of its attached guide.
        attachment: the root's scalp attachment.
        joints: (n, 3) joint positions at rest, world metres (root first).
        nodes: (n,) node indices of the joints in the final skeleton.
        piece_ids: graph pieces the strand runs through.
        colliders: collider indices (final avatar) it checks.
        path: graph nodes of the strand's surface path (root first).
        curve: (P, 3) the strand's smooth curve from the root joint on (rest, metres).
        curve_u: (P,) joint parameter along ``curve`` (0 at the root joint, i + f on
            segment i, n − 1 at the tip).
        short: a chain of the short-hair choice (loose part shorter than ``min_loose``): a
            detached piece it carries alone moves as a rigid body (:mod:`avatars.tryon.weights`).
    """

    strand: int
    attachment: ScalpAttachment
    joints: np.ndarray
    nodes: np.ndarray
    piece_ids: tuple[int, ...]
    colliders: tuple[int, ...] = ()
    path: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    curve: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    curve_u: np.ndarray = field(default_factory=lambda: np.zeros(0))
    short: bool = False


@dataclass(frozen=True, eq=False)
class RigResult:
    """Chains and what to add to the avatar (see :func:`avatars.tryon.assemble.assemble`)."""

    chains: list[Chain]
    nodes: list[NewNode]
    springs: list[Spring]
    colliders: list[Collider]
    groups: list[ColliderGroup]
    notes: list[str] = field(default_factory=list)


def size_hit_radii(rig: RigResult, graph, weights_nodes: np.ndarray, skin_nodes: list[int], head_height: float,
                   lo: float = 0.03, hi: float = 0.1) -> RigResult:
    """Set each chain's hitRadius to the hair it carries: the 90th percentile distance, from
    the chain's strand curve, of the graph nodes whose weight is mostly on that chain
    (clamped to [``lo``, ``hi``] head heights). A link kept that far from a collider keeps
    the vertices skinned around it outside too (a ponytail is a thick bundle, a bang thin).

    Args:
        weights_nodes: (N, J) dense weights per graph node over ``skin_nodes``.
    """
    col = {n: j for j, n in enumerate(skin_nodes)}
    springs = []
    for c, spring in zip(rig.chains, rig.springs):
        share = weights_nodes[:, [col[int(n)] for n in c.nodes]].sum(axis=1)
        own = np.nonzero(share >= 0.5)[0]
        r = lo * head_height
        if own.size:
            from .weights import closest_on_polyline

            d, _ = closest_on_polyline(graph.points[own], c.curve)
            r = float(np.clip(np.percentile(d, 90), lo * head_height, hi * head_height))
        springs.append(Spring(name=spring.name, joints=tuple(SpringJoint(
            node=j.node, hit_radius=r, stiffness=j.stiffness, drag_force=j.drag_force, gravity_power=j.gravity_power,
            gravity_dir=j.gravity_dir) for j in spring.joints), collider_groups=spring.collider_groups))
    return RigResult(chains=rig.chains, nodes=rig.nodes, springs=springs, colliders=rig.colliders, groups=rig.groups,
                     notes=rig.notes)


def strands(guides: list[Guide], attached: np.ndarray, join: JoinResult) -> dict[int, list[int]]:
    """For every attached guide, the guide indices of its strand: itself, then the longest
    line of joined fragments below it."""
    children: dict[int, list[int]] = {}
    for i, p in enumerate(join.parent):
        if p >= 0:
            children.setdefault(int(p), []).append(i)

    def longest(i: int) -> list[int]:
        best: list[int] = []
        for c in children.get(i, []):
            line = longest(c)
            if sum(guides[k].length for k in line) > sum(guides[k].length for k in best):
                best = line
        return [i] + best

    return {int(i): longest(int(i)) for i in np.nonzero(attached)[0]}


def strand_curve(guides: list[Guide], line: list[int], join: JoinResult) -> np.ndarray:
    """(P, 3) polyline of a strand (fragments oriented to continue their parent)."""
    parts = []
    for k in line:
        p = guides[k].points
        parts.append(p[::-1] if join.flipped[k] else p)
    return np.concatenate(parts)


def _arc(p: np.ndarray) -> np.ndarray:
    return np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]


def _at(p: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.stack([np.interp(t, s, p[:, k]) for k in range(3)], axis=1)


def _ramp(v, n: int) -> np.ndarray:
    if isinstance(v, (tuple, list)):
        return np.linspace(float(v[0]), float(v[1]), n)
    return np.full(n, float(v))


def _choose(cands: list, guides: list[Guide], limit: int, sep: float, notes: list[str]) -> list:
    """Pick chains (module doc): first the longest strand of every loose piece of the mesh
    (largest pieces first), then more strands where they add the most, never closer than
    ``sep`` to a chosen chain that runs through the same piece."""
    samples = [_loose_samples(c[2], c[3], c[4]) for c in cands]
    pieces = [frozenset(guides[k].piece for k in c[1]) for c in cands]
    size: dict[int, float] = {}
    for c, ps in zip(cands, pieces):
        for q in ps:
            size[q] = max(size.get(q, 0.0), c[5])
    chosen: list[int] = []
    covered: set[int] = set()
    for q in sorted(size, key=lambda q: -size[q]):
        if len(chosen) >= limit:
            break
        if q in covered:
            continue
        best = max((i for i in range(len(cands)) if q in pieces[i] and i not in chosen), key=lambda i: cands[i][5])
        chosen.append(best)
        covered |= pieces[best]
    uncovered = [q for q in size if q not in covered]
    if uncovered:
        notes.append(f"{len(uncovered)} loose pieces have no chain of their own (limit {limit}); they follow the nearest chains")

    ramp = np.maximum(np.linspace(0.0, 1.0, len(samples[0]) if samples else 1), 0.25)

    def gap(i: int) -> float:  # noqa: E306
        # closeness matters toward the tips (near their roots chains move alike)
        same = [j for j in chosen if pieces[j] & pieces[i]]
        if not same:
            return np.inf
        return min(float((np.linalg.norm(samples[i][:, None] - samples[j][None], axis=2).min(axis=1) / ramp).min())
                   for j in same)

    rest = [i for i in range(len(cands)) if i not in chosen]
    while rest and len(chosen) < limit:
        gaps = {i: gap(i) for i in rest}
        rest = [i for i in rest if gaps[i] >= sep]
        if not rest:
            break
        k = max(rest, key=lambda i: cands[i][5] * min(gaps[i], 1e3 * sep))
        rest.remove(k)
        chosen.append(k)
    follow = len(cands) - len(chosen) - len(rest)
    if rest:
        notes.append(f"{len(rest)} more strands could carry a chain (limit {limit})")
    if follow:
        notes.append(f"{follow} strands run within {sep:.3f} m of a chain in their piece and follow it")
    return [cands[i] for i in chosen]


def _sway(c: tuple, o: "RigOptions", H: float) -> tuple:
    """The candidate ``c`` with its last ``short_loose`` head heights (at most half of it)
    made loose when it never leaves the band."""
    i, line, curve, s, exit_i, loose = c
    if loose < o.short_loose * H:
        exit_i = int(np.clip(np.searchsorted(s, s[-1] - min(o.short_loose * H, 0.5 * s[-1])), 0, len(s) - 2))
        loose = s[-1] - s[exit_i]
    return i, line, curve, s, exit_i, loose


def _short_chains(short: list, chosen: list, guides: list[Guide], o: "RigOptions", H: float, notes: list[str],
                  piece_size: dict[int, int]) -> list:
    """Chains for short hair (module doc, *Short hair*): when no strand is long enough for the
    main choice, the strands whose loose part is at least ``short_loose`` (chosen as the main
    ones); then a piece still without a chain that holds at least
    :data:`SWAY_PIECE` of the hair's nodes gets a chain on its longest strand's end (it
    sways), and a style with no chain at all gets one on its longest strand."""
    covered = {guides[k].piece for c in chosen for k in c[1]}
    free = [c for c in short if guides[c[1][0]].piece not in covered]
    budget = o.max_chains - len(chosen)
    # only a style with no long strand at all (a crop, short02): chains on the short pieces of a
    # style that has long ones (ponytail01's hair tie) swing them into the long hair
    out = _choose([c for c in free if c[5] >= o.short_loose * H], guides, budget, o.separation * H, []) \
        if budget > 0 and not chosen else []
    if out:
        notes.append(f"{len(out)} chains on short pieces (loose part {o.short_loose:g}-{o.min_loose:g} head heights)")
    covered |= {guides[k].piece for c in out for k in c[1]}
    total = max(sum(piece_size.values()), 1)
    best: dict[int, tuple] = {}
    for c in free:
        q = guides[c[1][0]].piece
        if q not in covered and (q not in best or c[3][-1] > best[q][3][-1]):
            best[q] = c
    sway = [q for q in best if piece_size.get(q, 0) >= SWAY_PIECE * total or not (chosen or out)]
    sway = sorted(sway, key=lambda q: -piece_size.get(q, 0))[:max(budget - len(out), 0)]
    if not (chosen or out or sway) and best and budget > 0:
        sway = [max(best, key=lambda q: best[q][3][-1])]
    for q in sway:
        out.append(_sway(best[q], o, H))
    if sway:
        notes.append(f"{len(sway)} pieces lie within the attachment band: the end of their longest strand got a "
                     "chain (they sway)")
    return out


def _share_colliders(chains: list[Chain]) -> list[Chain]:
    """Give every chain the union of the collider sets of the chains it shares a mesh piece
    with (transitively)."""
    from dataclasses import replace as _replace

    group = list(range(len(chains)))

    def find(i):
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(len(chains)):
        for j in range(i):
            if set(chains[i].piece_ids) & set(chains[j].piece_ids):
                group[find(i)] = find(j)
    union: dict[int, set] = {}
    for i, c in enumerate(chains):
        union.setdefault(find(i), set()).update(c.colliders)
    return [_replace(c, colliders=tuple(sorted(union[find(i)]))) for i, c in enumerate(chains)]


def _loose_samples(curve: np.ndarray, s: np.ndarray, exit_i: int, n: int = 9) -> np.ndarray:
    """(n, 3) points at equal arc steps along a strand's loose part (its exit to its end)."""
    return _at(curve, s, s[exit_i] + (s[-1] - s[exit_i]) * np.linspace(0.0, 1.0, n))


#: A collider that holds more than this share of the scalp's vertices is not used by the hair
#: (a root there could never be clear of it, e.g. Godette's 1 m sphere above the head).
SCALP_INSIDE_SHARE = 0.05


def usable_colliders(avatar: Avatar, head: HeadModel) -> tuple[list[int], list[Collider], str]:
    """(indices of the avatar's colliders the hair may use, colliders to add, torso note):
    sphere/capsule colliders holding at most :data:`SCALP_INSIDE_SHARE` of the scalp's
    vertices, plus the fitted torso capsule when the avatar's colliders leave the torso
    uncovered."""
    rest = avatar.skeleton.rest_world
    scalp = head.vertices[np.unique(head.faces[head.scalp])] if len(head.scalp) else head.vertices
    keep = []
    for i, c in enumerate(avatar.colliders):
        if c.shape not in ("sphere", "capsule"):
            continue
        a, b, r = collider_world(c, rest)
        if (_seg_dist(scalp, a, b) < r).mean() <= SCALP_INSIDE_SHARE:
            keep.append(i)
    add = []
    torso = fit_torso_capsule(avatar)
    note = torso.reason
    if torso.collider is not None and not torso.covered:
        a, b, r = collider_world(torso.collider, rest)
        if (_seg_dist(scalp, a, b) < r).mean() <= SCALP_INSIDE_SHARE:
            add.append(torso.collider)
            note += "; added for the hair"
    return keep, add, note


def _seg_dist(p, a, b):
    e = b - a
    ee = float(e @ e)
    t = np.zeros(len(p)) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * e), axis=1)


def build_rig(avatar: Avatar, head: HeadModel, scalp: Scalp, guides: list[Guide], attachments: list,
              join: JoinResult, options: RigOptions = RigOptions(), *, name_prefix: str = "J_TryOn") -> RigResult:
    """Choose chains and build their joints, springs and colliders (module doc).

    Args:
        attachments: per guide its :class:`ScalpAttachment` or None.
    """
    o = options
    H = float(head.size[1])
    attached = np.array([a is not None for a in attachments])
    lines = strands(guides, attached, join)
    cands, short = [], []
    for i, line in lines.items():
        curve = strand_curve(guides, line, join)
        s = _arc(curve)
        depth = head.envelope.depth(curve)      # > 0 inside, −distance outside
        near = depth >= -o.band * H
        exit_i = 0
        while exit_i + 1 < len(curve) and near[exit_i + 1]:
            exit_i += 1
        loose = s[-1] - s[exit_i]
        (cands if loose >= o.min_loose * H else short).append((i, line, curve, s, exit_i, loose))
    notes = []
    chosen = _choose(cands, guides, o.max_chains, o.separation * H, notes)
    piece_size = {int(q): int(n) for q, n in zip(*np.unique(np.concatenate(
        [np.full(len(g.path), g.piece) for g in guides]) if guides else np.zeros(0, int), return_counts=True))}
    n_main = len(chosen)
    chosen += _short_chains(short, chosen, guides, o, H, notes, piece_size)
    keep, add, torso_note = usable_colliders(avatar, head)
    notes.append(f"torso: {torso_note}")
    rest = avatar.skeleton.rest_world
    n_old_col = len(avatar.colliders)
    col_all = [(i, avatar.colliders[i]) for i in keep] + [(n_old_col + j, c) for j, c in enumerate(add)]
    head_sub = set(avatar.skeleton.descendants(head.node))
    n0 = avatar.skeleton.node_count
    nodes: list[NewNode] = []
    chains: list[Chain] = []
    springs: list[Spring] = []
    group_of: dict[tuple[int, ...], int] = {}
    groups: list[ColliderGroup] = []
    head_inv = np.linalg.inv(rest[head.node])
    for ci, (i, line, curve, s, exit_i, loose) in enumerate(chosen):
        att = None
        for k in range(exit_i, -1, -1):      # the exit point, else the nearest attachable point toward the root
            att = scalp.attach(curve[k:k + 1], np.inf)[0]
            if att is not None and att.distance <= max(attachments[i].distance, o.band * H):
                break
            att = None
        if att is None:
            att, exit_i = attachments[i], 0
        n = int(np.clip(round(loose / (o.joint_spacing * H)) + 1, o.min_joints, o.max_joints))
        t = s[exit_i] + (s[-1] - s[exit_i]) * np.arange(1, n) / (n - 1)
        pts = np.concatenate([att.point[None], _at(curve, s, t)])
        base = n0 + len(nodes)
        idx = np.arange(base, base + n)
        for k in range(n):
            parent = head.node if k == 0 else int(idx[k - 1])
            # identity local rotations: every joint has the head's world rotation and scale
            if k == 0:
                local = head_inv[:3, :3] @ pts[0] + head_inv[:3, 3]
            else:
                local = head_inv[:3, :3] @ (pts[k] - pts[k - 1])
            nodes.append(NewNode(f"{name_prefix}{ci:02d}_{k}", parent, local))
        # colliders: head-owned always, body-owned when reachable and hung over
        length = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
        hit = o.hit_heads * H
        refs = []
        for gi, col in col_all:
            a, b, r = collider_world(col, rest)
            if col.node in head_sub:
                refs.append(gi)
                continue
            reach = _seg_dist(pts[:1], a, b)[0] <= length + hit + r
            below = pts[:, 1].min() < max(a[1], b[1]) + r
            if reach and below:
                refs.append(gi)
        key = tuple(sorted(refs))
        pieces = tuple(sorted({guides[k].piece for k in line}))
        path = np.concatenate([guides[k].path[::-1] if join.flipped[k] else guides[k].path for k in line])
        sub = np.concatenate([att.point[None], curve[exit_i:]])
        root_gap = float(np.linalg.norm(curve[exit_i] - att.point))
        if len(sub) > MAX_CURVE_POINTS:     # enough to follow the strand; cheaper to project on
            keep = np.unique(np.round(np.linspace(0, len(sub) - 1, MAX_CURVE_POINTS)).astype(int))
            sub = sub[keep]
        sub_s = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(sub, axis=0), axis=1))]
        joint_s = np.r_[0.0, t - s[exit_i] + root_gap]
        curve_u = np.interp(sub_s, joint_s, np.arange(n, dtype=float))
        chains.append(Chain(strand=i, attachment=att, joints=pts, nodes=idx, piece_ids=pieces, colliders=key,
                            short=ci >= n_main and loose < o.min_loose * H,
                            path=path, curve=sub, curve_u=curve_u))
    # chains sharing a piece of the mesh share their colliders: hair blended between two
    # chains must not pass through what only one of them checks
    chains = _share_colliders(chains)
    for ci, c in enumerate(chains):
        key = c.colliders
        if key not in group_of:
            group_of[key] = len(groups)
            groups.append(ColliderGroup(name=f"tryon{len(groups)}", colliders=key))
        n = len(c.nodes)
        stiff, grav = _ramp(o.stiffness, n), _ramp(o.gravity, n)
        joints = tuple(SpringJoint(node=int(c.nodes[k]), hit_radius=o.hit_heads * H, stiffness=float(stiff[k]),
                                   drag_force=float(o.drag), gravity_power=float(grav[k]),
                                   gravity_dir=np.array([0.0, -1.0, 0.0])) for k in range(n))
        springs.append(Spring(name=f"TryOn{ci:02d}", joints=joints,
                              collider_groups=(len(avatar.collider_groups) + group_of[key],)))
    return RigResult(chains=chains, nodes=nodes, springs=springs, colliders=add, groups=groups, notes=notes)
